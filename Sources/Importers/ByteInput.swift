import CIsal
import CZstd
import Foundation
import StudyStore
#if canImport(Glibc)
import Glibc
#endif

/// Where bytes come from: a plain file or a gzip- or zstd-compressed one, read in blocks.
package protocol ByteSource: AnyObject {
    /// Fills up to `count` bytes at `into`; 0 at the end.
    func read(into: UnsafeMutableRawPointer, count: Int) throws -> Int
    /// Bytes of the underlying file consumed so far (compressed bytes for gzip and zstd).
    var fileBytesRead: Int64 { get }
    /// The compression the source undoes ("gzip", "zstd"), nil for a plain file: error
    /// messages say whether the bytes they speak of are the file's or its decompressed content.
    var compression: String? { get }
}

extension ByteSource {
    package var compression: String? { nil }
}

package final class FileSource: ByteSource {
    package let path: String
    private let fd: Int32
    package var descriptor: Int32 { fd }
    /// The file's length in bytes (0 when unknown).
    package var size: Int {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int(st.st_size) : 0
    }
    package private(set) var fileBytesRead: Int64 = 0

    package init(path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ImportError(file: path, "cannot open: \(String(cString: strerror(errno)))") }
    }

    deinit { close(fd) }

    /// Up to `count` bytes from the file's start, without moving the read position (fewer
    /// for a shorter file; none when it cannot be read: `read` then reports why).
    package func leadingBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, count - got, off_t(got)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            got += n
        }
        return Array(bytes.prefix(got))
    }

    package func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
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
    var compression: String? { "gzip" }

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

/// zstd compression through libzstd's streaming API (`ZSTD_compressStream2`), each frame
/// with its content checksum, as MyHeartCounts uploads are written: for `bench store`, the
/// tests and the fuzzer (which compress text inputs rather than keep compressed files).
public enum ZstdCompressor {
    /// libzstd's default level (3), the one a producer that picks none gets.
    public static let defaultLevel: Int32 = 3

    /// `bytes` as one zstd frame.
    public static func compress(_ bytes: [UInt8], level: Int32 = defaultLevel) throws -> [UInt8] {
        let context = try makeContext(level: level, what: "in memory")
        defer { ZSTD_freeCCtx(context) }
        var out = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let written = bytes.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { target in
                ZSTD_compress2(context, target.baseAddress, target.count, source.baseAddress, source.count)
            }
        }
        guard ZSTD_isError(written) == 0 else {
            throw ImportError(file: "(in memory)", "zstd compression failed: \(String(cString: ZSTD_getErrorName(written)))")
        }
        return Array(out.prefix(written))
    }

    /// Compresses the file at `source` into `target` (one frame, streamed in 1 MiB blocks);
    /// returns the bytes written. `workers`: libzstd's compression threads (0: this thread
    /// alone; more, where libzstd was built with them, still one frame).
    @discardableResult
    public static func compressFile(_ source: String, to target: String, level: Int32 = defaultLevel, workers: Int = 0) throws -> Int64 {
        let input = try FileSource(path: source)
        let context = try makeContext(level: level, what: target)
        defer { ZSTD_freeCCtx(context) }
        if workers > 0 { ZSTD_CCtx_setParameter(context, ZSTD_c_nbWorkers, Int32(min(workers, 64))) }
        guard FileManager.default.createFile(atPath: target, contents: nil), let output = FileHandle(forWritingAtPath: target) else {
            throw ImportError(file: target, "cannot write")
        }
        defer { try? output.close() }
        let blockBytes = 1 << 20
        let inBuf = UnsafeMutableRawPointer.allocate(byteCount: blockBytes, alignment: 16)
        let outCapacity = ZSTD_CStreamOutSize()
        let outBuf = UnsafeMutableRawPointer.allocate(byteCount: outCapacity, alignment: 16)
        defer { inBuf.deallocate(); outBuf.deallocate() }
        var written: Int64 = 0
        while true {
            let n = try input.read(into: inBuf, count: blockBytes)
            let mode = n == 0 ? ZSTD_e_end : ZSTD_e_continue
            var inBuffer = ZSTD_inBuffer(src: inBuf, size: n, pos: 0)
            while true {
                var outBuffer = ZSTD_outBuffer(dst: outBuf, size: outCapacity, pos: 0)
                let remaining = ZSTD_compressStream2(context, &outBuffer, &inBuffer, mode)
                guard ZSTD_isError(remaining) == 0 else {
                    throw ImportError(file: target, "zstd compression failed: \(String(cString: ZSTD_getErrorName(remaining)))")
                }
                try output.write(contentsOf: Data(bytesNoCopy: outBuf, count: outBuffer.pos, deallocator: .none))
                written += Int64(outBuffer.pos)
                // Done with this block once its input is taken (and, at the end, all flushed).
                if mode == ZSTD_e_end ? remaining == 0 : inBuffer.pos == inBuffer.size { break }
            }
            if n == 0 { return written }
        }
    }

    private static func makeContext(level: Int32, what: String) throws -> OpaquePointer {
        guard let context = ZSTD_createCCtx() else { throw ImportError(file: what, "zstd: out of memory for a compression context") }
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
        return context
    }
}

/// Opens `path`, recognising compression by the file's first bytes whatever its name
/// (gzip `1f 8b`, zstd `28 b5 2f fd`): a compressed file is decompressed on a thread of its
/// own (`ReadAheadSource` for gzip; `ZstdSource` reads ahead itself); any other file is read
/// as it is. (A zstd stream may also start with a skippable frame, `5X 2A 4D 18`:
/// recognised as zstd too.) `readAhead: false`: decompress on the reading thread, only as
/// far as it reads (for a look at a header: no thread, nothing decompressed in vain).
/// `lookahead`: decompressed bytes the thread may hold ahead of the reader (zstd: beyond the
/// frame's window; gzip: at least `ReadAheadSource`'s default blocks).
func openByteSource(_ path: String, readAhead: Bool = true, lookahead: Int = ZstdSource.lookahead) throws -> ByteSource {
    let file = try FileSource(path: path)
    switch LeadingBytes(file.leadingBytes(4), complete: false) {
    case .gzip:
        guard readAhead else { return try GzipSource(path: path) }
        return ReadAheadSource(try GzipSource(path: path), depth: ReadAheadSource.depth(lookahead: lookahead))
    case .zstd: return try ZstdSource(path: path, readAhead: readAhead, lookahead: lookahead)
    case .text, .binary, .otherEncoding: return file
    }
}

/// Reads the file at `path` through the importers' decoder (opened as `openByteSource`
/// opens it, decoding on the calling thread) to its end, throwing the bytes away: what
/// decoding alone costs, for `sensorium bench store`'s floor of a compressed import.
/// Returns the bytes decoded; throws the decoder's error.
package func decodeToEnd(_ path: String) throws -> Int64 {
    let source = try openByteSource(path, readAhead: false)
    let size = 1 << 20
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
    defer { buffer.deallocate() }
    var total: Int64 = 0
    while true {
        let n = try source.read(into: buffer, count: size)
        if n == 0 { return total }
        total += Int64(n)
    }
}

/// What the first bytes of a file (or of its decompressed content) are, in the words of an
/// error message: a reader that meets bytes that are not text says "zstd-compressed",
/// "gzip-compressed" or "not UTF-8 text (binary data at byte N)", and never prints them.
enum LeadingBytes: Equatable {
    case gzip
    case zstd
    /// UTF-8 text with no control bytes but tab, line feed and carriage return (a UTF-8
    /// byte-order mark first is text too: `ByteWindow` passes over it).
    case text
    /// Text in another Unicode encoding, by its byte-order mark ("UTF-16LE", …).
    case otherEncoding(String)
    /// Not UTF-8 text: `offset` is the first byte that is not.
    case binary(offset: Int)

    static let gzipMagic: [UInt8] = [0x1F, 0x8B]
    static let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    /// Whether `bytes` (up to 4) begin the magic of a zstd skippable frame, 0x184D2A50 to
    /// 0x184D2A5F little-endian (`5X 2A 4D 18`): a zstd stream may start with one.
    static func isSkippableFramePrefix<Bytes: Collection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        guard let first = bytes.first, first & 0xF0 == 0x50 else { return false }
        return [0x2A, 0x4D, 0x18].starts(with: bytes.dropFirst())
    }

    /// The length of the longest prefix of `b`, in whole eight-byte words, whose bytes are
    /// all printable ASCII (0x20–0x7E), tab, line feed or carriage return.
    static func plainASCIIPrefix(_ b: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = b.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= b.count {
            let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            // Any byte ≥ 0x80, or below 0x20, or 0x7F: look at this word byte by byte.
            let high = w & 0x8080_8080_8080_8080
            let low = (w &- 0x2020_2020_2020_2020) & ~w & 0x8080_8080_8080_8080
            let del = ((w ^ 0x7F7F_7F7F_7F7F_7F7F) &- 0x0101_0101_0101_0101) & ~(w ^ 0x7F7F_7F7F_7F7F_7F7F) & 0x8080_8080_8080_8080
            if high | low | del != 0 {
                for k in 0..<8 {
                    let c = base[i + k]
                    guard (c >= 0x20 && c < 0x7F) || c == 0x09 || c == 0x0A || c == 0x0D else { return i }
                }
            }
            i += 8
        }
        return i
    }

    /// The offset of the first byte of `b` that is not UTF-8 text, or nil when there is none.
    /// Overlong forms, surrogates and values past U+10FFFF are not UTF-8. `controls`: control
    /// bytes other than tab, line feed and carriage return are not text either. `cutIsText`: a
    /// sequence cut short by the end of `b` is text that continues (else it is not text).
    /// Printable ASCII is passed eight bytes at a time (`plainASCIIPrefix`): most text is all of it.
    static func firstNotText(_ b: UnsafeBufferPointer<UInt8>, controls: Bool, cutIsText: Bool) -> Int? {
        var i = plainASCIIPrefix(b)
        while i < b.count {
            let c = b[i]
            if c < 0x80 {
                if controls, (c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0D) || c == 0x7F { return i }
                i += 1
                continue
            }
            // A UTF-8 sequence: its length by its lead byte, then continuation bytes.
            let length: Int, low: UInt8, high: UInt8
            switch c {
            case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
            case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, low, high) = (3, 0x80, 0xBF)
            case 0xED: (length, low, high) = (3, 0x80, 0x9F)
            case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
            case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
            case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
            default: return i
            }
            for k in 1..<length {
                guard i + k < b.count else { return cutIsText ? nil : i }
                let d = b[i + k]
                guard k == 1 ? (d >= low && d <= high) : (d >= 0x80 && d <= 0xBF) else { return i }
            }
            i += length
        }
        return nil
    }

    /// Why the text `b` (a string of the input, a field) is not UTF-8, in the words the
    /// importers use for a file that is not text: "not UTF-8 text (byte 0xFF at byte 2 of
    /// it)"; nil when it is UTF-8. Control bytes are not looked at here.
    static func notUTF8(_ b: UnsafeBufferPointer<UInt8>) -> String? {
        guard let at = firstNotText(b, controls: false, cutIsText: false) else { return nil }
        return "not UTF-8 text (byte \(String(format: "0x%02X", b[at])) at byte \(at + 1) of it)"
    }

    /// How many leading bytes a reader classifies (`ByteWindow.leadingBytes`).
    static let sampleBytes = 4096

    /// The byte-order mark of UTF-8 (U+FEFF), which some editors write before the text.
    static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    /// The byte-order marks of the encodings that are not UTF-8, UTF-32's first.
    static let otherByteOrderMarks: [([UInt8], String)] = [
        ([0xFF, 0xFE, 0x00, 0x00], "UTF-32LE"), ([0x00, 0x00, 0xFE, 0xFF], "UTF-32BE"),
        ([0xFF, 0xFE], "UTF-16LE"), ([0xFE, 0xFF], "UTF-16BE"),
    ]

    /// Classifies `bytes`, the start of a file or stream. `complete`: they are the whole of
    /// it (otherwise a UTF-8 sequence cut at their end is taken as text that continues).
    init<Bytes: Collection>(_ bytes: Bytes, complete: Bool) where Bytes.Element == UInt8 {
        if bytes.starts(with: LeadingBytes.gzipMagic) { self = .gzip; return }
        if bytes.starts(with: LeadingBytes.zstdMagic) { self = .zstd; return }
        if bytes.count >= 4 && LeadingBytes.isSkippableFramePrefix(bytes.prefix(4)) { self = .zstd; return }
        // UTF-32 first: its little-endian mark begins with UTF-16's.
        for (mark, encoding) in LeadingBytes.otherByteOrderMarks where bytes.starts(with: mark) {
            self = .otherEncoding(encoding)
            return
        }
        let b = Array(bytes)
        let offset = b.withUnsafeBufferPointer { LeadingBytes.firstNotText($0, controls: true, cutIsText: !complete) }
        if let offset { self = .binary(offset: offset); return }
        self = .text
    }

    /// The first `sampleBytes` bytes of the file at `path` as stored (not decompressed);
    /// `.text` when it cannot be read (the reader then says why).
    init(path: String) {
        guard let file = try? FileSource(path: path) else { self = .text; return }
        let bytes = file.leadingBytes(LeadingBytes.sampleBytes)
        self.init(bytes, complete: bytes.count < LeadingBytes.sampleBytes)
    }

    /// What the bytes are, for an error message: nil for text; otherwise "zstd-compressed",
    /// "gzip-compressed" or "not UTF-8 text (binary data at byte N)".
    var notText: String? {
        switch self {
        case .text: return nil
        case .gzip: return "gzip-compressed"
        case .zstd: return "zstd-compressed"
        case .binary(let offset): return "not UTF-8 text (binary data at byte \(offset))"
        case .otherEncoding(let encoding): return "\(encoding) text, not UTF-8 (save it as UTF-8)"
        }
    }

    /// A sentence part for an error about the content of a file read through a source that
    /// undid `compression` (nil: a plain file), or nil for text: "the file is not UTF-8 text
    /// (binary data at byte 12)", "the file's zstd-decompressed content is gzip-compressed".
    func problem(compression: String?) -> String? {
        guard let what = notText else { return nil }
        guard let compression else { return "the file is \(what)" }
        if case .binary(let offset) = self {
            return "the file's \(compression)-decompressed content is not UTF-8 text (binary data at byte \(offset) of the decompressed content)"
        }
        if case .otherEncoding = self { return "the file's \(compression)-decompressed content is \(what)" }
        return "the file's \(compression)-decompressed content is \(what) (compressed twice?)"
    }
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
    let compression: String?

    /// The blocks a gzip file is read ahead in: 8 of 1 MiB.
    static let defaultBlockBytes = 1 << 20
    static let defaultDepth = 8

    /// Blocks of the default size that hold `lookahead` bytes, at least the default depth.
    static func depth(lookahead: Int) -> Int { max(defaultDepth, lookahead / defaultBlockBytes) }

    init(_ inner: ByteSource, blockBytes: Int = ReadAheadSource.defaultBlockBytes, depth: Int = ReadAheadSource.defaultDepth) {
        blocks = (0..<depth).map { _ in .allocate(byteCount: blockBytes, alignment: 64) }
        compression = inner.compression
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

    /// What the source's first bytes are (`LeadingBytes.sampleBytes` of them, or fewer when
    /// the first read gave fewer): set by the first read, or at once for a mapping.
    private(set) var leadingBytes: LeadingBytes?
    /// Whether the source's bytes are a file's first (a UTF-8 byte-order mark there is
    /// passed over), not the rest of a file read from the middle.
    let atFileStart: Bool
    /// Whether the bytes began with a UTF-8 byte-order mark, which the window passed over
    /// (`start` 3 after the first read): the readers never see it.
    private(set) var byteOrderMarkSkipped = false
    /// The import summary's name of that form (`ImportStats.forms`).
    static let byteOrderMarkForm = "text after a UTF-8 byte-order mark (passed over)"

    /// Why the bytes are not text, for an error message (nil while they look like text):
    /// "the file is not UTF-8 text (binary data at byte 3)", "the file is gzip-compressed"…
    /// A reader says this instead of what it found, so that it never prints binary bytes.
    var contentProblem: String? { leadingBytes?.problem(compression: source.compression) }

    /// Classifies the window's bytes when they are the source's first (the first read), and
    /// passes over a UTF-8 byte-order mark at a file's start.
    private func noteLeadingBytes() {
        guard leadingBytes == nil, start == 0 else { return }
        let n = min(end, LeadingBytes.sampleBytes)
        leadingBytes = LeadingBytes(UnsafeBufferPointer(start: base, count: n), complete: eof && n == end)
        let mark = LeadingBytes.utf8ByteOrderMark
        if atFileStart, end >= mark.count, UnsafeBufferPointer(start: base, count: mark.count).elementsEqual(mark) {
            start = mark.count
            byteOrderMarkSkipped = true
        }
    }

    /// Bytes of a mapped file (`init(mapping:)`), its whole length; nil for a read window.
    private let mappedBytes: Int?
    /// Mapped bytes before this offset were handed back to the system (`fill`).
    private var released = 0
    /// Mapped bytes before this offset were asked of the disk ahead of the parser (`fill`).
    private var prefetched = 0

    /// `atFileStart`: false for the rest of a file read from its middle.
    init(_ source: ByteSource, capacity: Int = 1 << 20, atFileStart: Bool = true) {
        self.source = source
        self.capacity = capacity
        self.atFileStart = atFileStart
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
        atFileStart = true
        base = region.assumingMemoryBound(to: UInt8.self)
        capacity = total - 1
        mappedBytes = total
        end = size
        eof = true
        noteLeadingBytes()
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
        if leadingBytes == nil {
            try noteFirstBytes()
            // Passing over a byte-order mark took bytes the caller asked for.
            if end - start < n, !eof { try fill(atLeast: n) }
        }
    }

    /// After the first read: reads on while fewer bytes than a byte-order mark came and more
    /// may come, then classifies them (`noteLeadingBytes`).
    private func noteFirstBytes() throws {
        while start == 0, end < LeadingBytes.utf8ByteOrderMark.count, !eof, try readOnce() {}
        noteLeadingBytes()
    }

    /// Reads once more after `end`; false at the end of input or when the window is full.
    private func readOnce() throws -> Bool {
        guard end < capacity else { return false }
        let k = try source.read(into: base + end, count: capacity - end)
        if k == 0 { eof = true } else { end += k }
        base[end] = 0
        return k > 0
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
        if n == 0 { eof = true; base[end] = 0; if leadingBytes == nil { noteLeadingBytes() }; return false }
        end += n
        base[end] = 0
        if leadingBytes == nil {
            try noteFirstBytes()
            // The bytes read were a byte-order mark alone: read on.
            if start == end { return try refill() }
        }
        return true
    }
}
