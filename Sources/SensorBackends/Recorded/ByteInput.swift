import CZlib
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where bytes come from: a plain file or a gzip-compressed one, read in blocks.
protocol ByteSource: AnyObject {
    /// Fills up to `count` bytes at `into`; 0 at the end.
    func read(into: UnsafeMutableRawPointer, count: Int) throws -> Int
    /// Bytes of the underlying file consumed so far (compressed bytes for gzip).
    var fileBytesRead: Int64 { get }
}

final class FileSource: ByteSource {
    let path: String
    private let fd: Int32
    var descriptor: Int32 { fd }
    /// The file's length in bytes (0 when unknown).
    var size: Int {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }
    private(set) var fileBytesRead: Int64 = 0

    init(path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ImportError(file: path, "cannot open: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
        while true {
            let n = Glibc.read(fd, p, count)
            if n < 0 {
                if errno == EINTR { continue }
                throw ImportError(file: path, "read failed: \(String(cString: strerror(errno)))")
            }
            fileBytesRead += Int64(n)
            return n
        }
    }
}

/// gzip through Debian's zlib; concatenated members are read as one stream. A file that
/// ends inside a member is an error ("truncated"), never a silently short input.
final class GzipSource: ByteSource {
    let path: String
    private let file: FileSource
    private var stream = z_stream()
    private let inBuf: UnsafeMutableRawPointer
    private let inSize = 1 << 18
    private var inputDone = false
    private var memberEnded = true
    private var started = false
    var fileBytesRead: Int64 { file.fileBytesRead }

    init(path: String) throws {
        self.path = path
        file = try FileSource(path: path)
        inBuf = UnsafeMutableRawPointer.allocate(byteCount: inSize, alignment: 16)
        let rc = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { inBuf.deallocate(); throw ImportError(file: path, "zlib could not start (\(rc))") }
    }

    deinit {
        inflateEnd(&stream)
        inBuf.deallocate()
    }

    func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
        stream.next_out = p.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(count)
        while stream.avail_out > 0 {
            if stream.avail_in == 0 && !inputDone {
                let n = try file.read(into: inBuf, count: inSize)
                if n == 0 { inputDone = true } else {
                    stream.next_in = inBuf.assumingMemoryBound(to: Bytef.self)
                    stream.avail_in = uInt(n)
                }
            }
            if stream.avail_in == 0 && inputDone {
                if !memberEnded || !started {
                    if !started { throw ImportError(file: path, "empty file: expected gzip-compressed data") }
                    throw ImportError(file: path, "truncated gzip file: the data ends after \(file.fileBytesRead) compressed bytes, inside the compressed stream (the download or copy was cut short)")
                }
                break
            }
            if memberEnded {
                if started {
                    // Another gzip member follows (or trailing garbage, which zlib rejects below).
                    inflateReset(&stream)
                }
                memberEnded = false
                started = true
            }
            let rc = inflate(&stream, Z_NO_FLUSH)
            switch rc {
            case Z_STREAM_END: memberEnded = true
            case Z_OK: break
            case Z_BUF_ERROR: if stream.avail_in != 0 { throw ImportError(file: path, "gzip data could not be decompressed") }
            case Z_DATA_ERROR:
                let msg = stream.msg.map { String(cString: $0) } ?? "invalid data"
                throw ImportError(file: path, "not valid gzip data (\(msg)) near compressed byte \(file.fileBytesRead - Int64(stream.avail_in))")
            default:
                throw ImportError(file: path, "gzip decompression failed (zlib code \(rc))")
            }
        }
        return count - Int(stream.avail_out)
    }
}

/// Opens `path`, decompressing `.gz` files.
func openByteSource(_ path: String) throws -> ByteSource {
    path.hasSuffix(".gz") ? try GzipSource(path: path) : try FileSource(path: path)
}

/// A growable window over a byte source, for the parsers.
final class ByteWindow {
    let source: ByteSource
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    /// Valid bytes are `base[start..<end]`; `base[end]` is always a 0 byte (a sentinel
    /// that stops digit scans without a bounds check).
    var start = 0
    var end = 0
    private(set) var eof = false
    /// Called before the window's bytes move or are read into (`fill`, `refill`): a reader
    /// of them on another thread stops there.
    var willMove: (() -> Void)?

    /// Bytes of a mapped file (`init(mapping:)`), its whole length; nil for a read window.
    private let mappedBytes: Int?
    /// Mapped bytes before this offset were handed back to the system (`fill`).
    private var released = 0
    /// Mapped bytes before this offset were asked of the disk ahead of the parser (`fill`).
    private var prefetched = 0

    init(_ source: ByteSource, capacity: Int = 1 << 20) {
        self.source = source
        self.capacity = capacity
        mappedBytes = nil
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + 1)
        base[0] = 0
    }

    /// The whole of a plain (uncompressed) file, mapped into memory instead of read: no
    /// copies, no refills; `base[end]` is a 0 byte (past the file's end the mapping reads as
    /// zeros: the last page's tail, or one page more mapped anonymously when the file fills
    /// its pages). Nil when the file cannot be mapped (the caller reads it instead).
    init?(mapping source: FileSource) {
        let size = source.size
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard size > 0, size < Int.max / 2 else { return nil }
        let total = (size / page + 1) * page
        guard let region = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), region != MAP_FAILED else { return nil }
        guard let file = mmap(region, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, source.descriptor, 0), file == region else {
            munmap(region, total)
            return nil
        }
        madvise(region, size, MADV_SEQUENTIAL)
        self.source = source
        base = region.assumingMemoryBound(to: UInt8.self)
        capacity = total - 1
        mappedBytes = total
        end = size
        eof = true
    }

    deinit {
        if let mappedBytes { munmap(base, mappedBytes) } else { base.deallocate() }
    }

    /// Bytes of the file consumed so far (compressed bytes for gzip; for a mapping, the
    /// bytes before `start`).
    var fileBytesRead: Int64 { mappedBytes == nil ? source.fileBytesRead : Int64(start) }

    /// Reads until at least `n` bytes are unread or the input ends, moving the unread bytes
    /// to the front and growing the window as needed.
    func fill(atLeast n: Int) throws {
        if mappedBytes != nil {
            // Read pages are handed back every 16 MiB, so that they do not stay resident.
            let step = 1 << 24
            if start - released >= step {
                let upTo = start / step * step
                madvise(base + released, upTo - released, MADV_DONTNEED)
                released = upTo
            }
            // The next 64 MiB are asked of the disk ahead of the parser (asynchronous
            // read-ahead), so that a file not in the page cache is not read a page fault at a
            // time by the threads parsing it.
            if let total = mappedBytes, prefetched - start < 4 * step, prefetched < end {
                let from = max(prefetched, start / step * step)
                let upTo = min(from + 8 * step, total)
                madvise(base + from, upTo - from, MADV_WILLNEED)
                prefetched = upTo
            }
            return
        }
        guard end - start < n, !eof else { return }
        willMove?()
        if start > 0 {
            if end > start { memmove(base, base + start, end - start) }
            end -= start
            start = 0
        }
        if capacity < n {
            let nb = UnsafeMutablePointer<UInt8>.allocate(capacity: n + 1)
            nb.update(from: base, count: end)
            base.deallocate()
            base = nb
            capacity = n
        }
        while end < n {
            let k = try source.read(into: base + end, count: capacity - end)
            if k == 0 { eof = true; break }
            end += k
        }
        base[end] = 0
    }

    /// Moves the unread bytes to the front and reads more; false at the end of input.
    /// Grows the window when it is full of one unfinished item.
    @discardableResult
    func refill() throws -> Bool {
        if eof { return false }
        willMove?()
        if start > 0 {
            let n = end - start
            if n > 0 { memmove(base, base + start, n) }
            start = 0
            end = n
        }
        if end == capacity {
            let bigger = capacity * 2
            let nb = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger + 1)
            nb.update(from: base, count: end)
            base.deallocate()
            base = nb
            capacity = bigger
        }
        let n = try source.read(into: base + end, count: capacity - end)
        if n == 0 { eof = true; base[end] = 0; return false }
        end += n
        base[end] = 0
        return true
    }
}
