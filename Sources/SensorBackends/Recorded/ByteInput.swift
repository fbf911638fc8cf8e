import CIsal
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

/// gzip through Intel ISA-L's inflate (Debian's libisal: several times zlib's speed, which
/// bounded the import of a compressed export); concatenated members are read as one stream,
/// each member's CRC-32 and length checked. A file that ends inside a member is an error
/// ("truncated"), and so are bytes after the last member that do not start another: never
/// a silently short input.
final class GzipSource: ByteSource {
    let path: String
    private let file: FileSource
    /// ISA-L's inflate state (about 100 KB: on the heap).
    private let state: UnsafeMutablePointer<inflate_state>
    private let inBuf: UnsafeMutablePointer<UInt8>
    private let inSize = 1 << 18
    private var inputDone = false
    /// Between members: the last one ended (or none started).
    private var memberEnded = true
    private var started = false
    var fileBytesRead: Int64 { file.fileBytesRead }

    init(path: String) throws {
        self.path = path
        file = try FileSource(path: path)
        inBuf = .allocate(capacity: inSize)
        state = .allocate(capacity: 1)
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_GZIP)
    }

    deinit {
        state.deallocate()
        inBuf.deallocate()
    }

    /// The offset in the file of the next compressed byte not yet decompressed.
    private var compressedOffset: Int64 { file.fileBytesRead - Int64(state.pointee.avail_in) }

    func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let s = state
        s.pointee.next_out = p.assumingMemoryBound(to: UInt8.self)
        s.pointee.avail_out = UInt32(min(count, Int(UInt32.max)))
        let asked = s.pointee.avail_out
        while s.pointee.avail_out > 0 {
            if s.pointee.avail_in == 0 && !inputDone {
                let n = try file.read(into: inBuf, count: inSize)
                if n == 0 { inputDone = true } else {
                    s.pointee.next_in = inBuf
                    s.pointee.avail_in = UInt32(n)
                }
            }
            if memberEnded {
                if s.pointee.avail_in == 0 {
                    // The input ended between members.
                    if !started { throw ImportError(file: path, "empty file: expected gzip-compressed data") }
                    break
                }
                if started {
                    // Another member must follow: its header starts with 1f 8b.
                    let next = s.pointee.next_in!
                    guard next[0] == 0x1f && (s.pointee.avail_in < 2 || next[1] == 0x8b) else {
                        throw ImportError(file: path, "not valid gzip data (bytes after the end of the compressed stream that do not start another) near compressed byte \(compressedOffset)")
                    }
                    isal_inflate_reset(s)
                    s.pointee.crc_flag = UInt32(ISAL_GZIP)
                }
                memberEnded = false
                started = true
            }
            let before = s.pointee.avail_out
            let rc = isal_inflate(s)
            guard rc == ISAL_DECOMP_OK else { throw failure(rc) }
            if s.pointee.block_state == ISAL_BLOCK_FINISH {
                memberEnded = true
                continue
            }
            if inputDone && s.pointee.avail_in == 0 && s.pointee.avail_out == before {
                throw ImportError(file: path, "truncated gzip file: the data ends after \(file.fileBytesRead) compressed bytes, inside the compressed stream (the download or copy was cut short)")
            }
        }
        return Int(asked - s.pointee.avail_out)
    }

    /// The error for ISA-L's code `rc` (zlib's words where it had them).
    private func failure(_ rc: Int32) -> ImportError {
        let what: String
        switch rc {
        case ISAL_INVALID_WRAPPER: what = "incorrect header check"
        case ISAL_UNSUPPORTED_METHOD: what = "unknown compression method"
        case ISAL_INCORRECT_CHECKSUM: what = "incorrect data check"
        case ISAL_INVALID_BLOCK: what = "invalid block"
        case ISAL_INVALID_SYMBOL: what = "invalid code"
        case ISAL_INVALID_LOOKBACK: what = "invalid distance too far back"
        default: return ImportError(file: path, "gzip decompression failed (ISA-L code \(rc))")
        }
        return ImportError(file: path, "not valid gzip data (\(what)) near compressed byte \(compressedOffset)")
    }
}

/// Opens `path`, decompressing `.gz` files on a thread of their own (`ReadAheadSource`).
func openByteSource(_ path: String) throws -> ByteSource {
    path.hasSuffix(".gz") ? ReadAheadSource(try GzipSource(path: path)) : try FileSource(path: path)
}

/// Reads another source on a thread of its own, up to `depth` blocks ahead of its reader:
/// inflating a gzip file then runs beside the parsing of what it already gave, instead of
/// between two of its windows. The bytes, their order and every error are the inner
/// source's: an error reaches the reader after the bytes before it. Memory: `depth` blocks.
final class ReadAheadSource: ByteSource {
    /// What the two threads share (the reading thread holds this, not the source, so that
    /// dropping the source stops it).
    private final class Shared: @unchecked Sendable {
        let cond = NSCondition()
        /// Filled blocks in order: bytes, count (0: the end), the inner source's count of
        /// file bytes read after it.
        var filled: [(UnsafeMutableRawPointer, Int, Int64)] = []
        var free: [UnsafeMutableRawPointer] = []
        var failure: Error?
        var cancelled = false
        var finished = false
    }

    /// The inner source, handed to the reading thread (which alone reads it from then on).
    private final class SourceHandle: @unchecked Sendable {
        let source: ByteSource
        init(_ source: ByteSource) { self.source = source }
    }

    private let shared = Shared()
    private let blocks: [UnsafeMutableRawPointer]
    /// The block being read from, its count, and how much of it was read.
    private var current: UnsafeMutableRawPointer?
    private var currentCount = 0
    private var offset = 0
    private var atEnd = false
    private(set) var fileBytesRead: Int64 = 0

    init(_ inner: ByteSource, blockBytes: Int = 1 << 20, depth: Int = 8) {
        blocks = (0..<depth).map { _ in .allocate(byteCount: blockBytes, alignment: 64) }
        shared.free = blocks
        let shared = self.shared
        let source = SourceHandle(inner)
        let thread = Thread {
            let inner = source.source
            while true {
                shared.cond.lock()
                while shared.free.isEmpty && !shared.cancelled { shared.cond.wait() }
                if shared.cancelled { break }
                let block = shared.free.removeLast()
                shared.cond.unlock()
                var n = 0
                var failure: Error?
                do {
                    while n < blockBytes {
                        let k = try inner.read(into: block + n, count: blockBytes - n)
                        if k == 0 { break }
                        n += k
                    }
                } catch {
                    failure = error
                }
                shared.cond.lock()
                if n > 0 { shared.filled.append((block, n, inner.fileBytesRead)) } else { shared.free.append(block) }
                if failure != nil || n < blockBytes {
                    // The end (a 0-byte block), or the error after the bytes before it.
                    shared.failure = failure
                    if failure == nil { shared.filled.append((block, 0, inner.fileBytesRead)) }
                    break
                }
                shared.cond.broadcast()
                shared.cond.unlock()
            }
            shared.finished = true
            shared.cond.broadcast()
            shared.cond.unlock()
        }
        thread.start()
    }

    deinit {
        shared.cond.lock()
        shared.cancelled = true
        shared.cond.broadcast()
        while !shared.finished { shared.cond.wait() }
        shared.cond.unlock()
        for b in blocks { b.deallocate() }
    }

    func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
        var done = 0
        while done < count && !atEnd {
            if let block = current, offset < currentCount {
                let k = min(count - done, currentCount - offset)
                (p + done).copyMemory(from: block + offset, byteCount: k)
                offset += k
                done += k
                continue
            }
            // The next block: hand this one back, wait for one, or for the end or an error.
            shared.cond.lock()
            if let block = current {
                shared.free.append(block)
                current = nil
                shared.cond.broadcast()
            }
            while shared.filled.isEmpty && shared.failure == nil && !shared.finished { shared.cond.wait() }
            if !shared.filled.isEmpty {
                let (block, n, read) = shared.filled.removeFirst()
                shared.cond.unlock()
                fileBytesRead = read
                if n == 0 { atEnd = true } else { (current, currentCount, offset) = (block, n, 0) }
                continue
            }
            let failure = shared.failure
            shared.cond.unlock()
            // The bytes before an error first; the error on the next call.
            if done > 0 { return done }
            throw failure ?? CancellationError()
        }
        return done
    }
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
