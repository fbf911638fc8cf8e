import CZstd
import Foundation
import StudyStore
#if canImport(Glibc)
import Glibc
#endif

/// A zstd-compressed file as a byte source, decoded by libzstd's buffer-less streaming API
/// (`ZSTD_decompressContinue`) straight into a ring that the reader copies from: one copy of
/// the decompressed bytes, as a plain file's `read` makes, where `ZSTD_decompressStream`
/// decodes into a window of its own and copies out again (a third of the decoding thread's
/// time, which bounds the import of a large upload on two cores).
///
/// The compressed file is mapped (read whole when it cannot be), so that every piece libzstd
/// asks for is contiguous. Concatenated frames are read as one stream, skippable frames are
/// passed over, each frame's content checksum is verified when the frame carries one, and
/// its declared content size when it declares one. A file that ends inside a frame is an
/// error ("truncated"), and so are bytes after the last frame that do not start another, a
/// frame whose window is over 128 MiB (libzstd's default limit) and an empty file: never a
/// silently short input. Errors name the file and the compressed bytes of the failed step;
/// the reader gets every byte decoded before an error, then the error.
///
/// `readAhead` (the default): a thread of its own decodes up to `lookahead` bytes ahead of
/// the reader. Otherwise the reader's thread decodes, a block at a time, only as far as it
/// reads. Memory: the frame's window (or its content size, when smaller) plus `lookahead`.
final class ZstdSource: ByteSource {
    let path: String
    var compression: String? { "zstd" }
    /// Compressed bytes decoded when the bytes read so far were decoded.
    private(set) var fileBytesRead: Int64 = 0

    private let shared: ZstdRing
    /// The decoder, when this thread decodes (`readAhead: false`).
    private let decoder: ZstdDecoder?
    /// The chunk being read: ring offset, count, and how much of it was read.
    private var current: ZstdRing.Chunk?
    private var offset = 0

    /// Bytes the reading thread decodes ahead of the reader (beyond the frame's window).
    static let lookahead = 2 << 20

    init(path: String, readAhead: Bool = true, lookahead: Int = ZstdSource.lookahead) throws {
        self.path = path
        let decoder = try ZstdDecoder(path: path, lookahead: lookahead)
        shared = ZstdRing()
        guard readAhead else {
            self.decoder = decoder
            return
        }
        self.decoder = nil
        let shared = self.shared
        let box = ZstdDecoder.Handle(decoder)
        Thread {
            let decoder = box.decoder
            do {
                while try decoder.decodeNext(into: shared) {}
                shared.finish(nil)
            } catch {
                shared.finish(error)
            }
        }.start()
    }

    deinit {
        if decoder == nil { shared.cancelAndWait() }
    }

    /// Bytes of the ring decoded into so far (0 before the first frame's header is read).
    var ringBytes: Int { shared.size }

    func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
        var done = 0
        while done < count {
            if let chunk = current, offset < chunk.count {
                let k = min(count - done, chunk.count - offset)
                (p + done).copyMemory(from: shared.ring! + chunk.offset + offset, byteCount: k)
                offset += k
                done += k
                continue
            }
            if let chunk = current {
                current = nil
                shared.release(chunk)
            }
            if let decoder, !shared.hasChunk {
                // Decode here, one block, only when nothing was read yet (a header's reader
                // decodes no more than it needs); a failure is thrown after the bytes before it.
                if done > 0 { return done }
                do {
                    if try !decoder.decodeNext(into: shared) { shared.finish(nil) }
                } catch {
                    shared.finish(error)
                }
            }
            switch shared.take(waitFor: decoder == nil ? min(count - done, 1 << 20) : 1) {
            case .chunk(let chunk):
                current = chunk
                offset = 0
                fileBytesRead = chunk.compressedEnd
            case .end(let compressedBytes):
                fileBytesRead = compressedBytes
                return done
            case .failure(let error):
                if done > 0 { return done }
                throw error
            }
        }
        return done
    }
}

/// What a zstd source's reader and decoder share: the ring the decoder writes into, and the
/// chunks of it decoded and not yet released by the reader (in order, a circular interval of
/// the ring from `oldest`), under one condition.
final class ZstdRing: @unchecked Sendable {
    /// Decoded bytes at `ring[offset..<offset+count]`; `compressedEnd`: the compressed bytes
    /// consumed once they were decoded.
    struct Chunk {
        var offset: Int
        var count: Int
        var compressedEnd: Int64
    }

    enum Taken {
        case chunk(Chunk)
        case end(compressedBytes: Int64)
        case failure(Error)
    }

    private let cond = NSCondition()
    /// Written by the decoder only while no byte of it is held (`pending == 0`).
    private(set) var ring: UnsafeMutablePointer<UInt8>?
    private(set) var size = 0
    /// Decoded chunks not yet taken (from `head`).
    private var chunks: [Chunk] = []
    private var head = 0
    /// Bytes of the chunks not taken.
    private var queued = 0
    /// Bytes decoded and not released (queued or being read), from ring offset `oldest`.
    private var pending = 0
    private var oldest = 0
    private var ended = false
    private var failure: Error?
    private var compressedBytes: Int64 = 0
    private var cancelled = false
    private var finished = false
    /// Bytes the reader waits for (0: not waiting); whether the decoder waits for room.
    private var readerWants = 0
    private var decoderWaits = false

    deinit { if let ring { ZstdRings.shared.give(ring, size: size) } }

    var hasChunk: Bool {
        cond.lock()
        defer { cond.unlock() }
        return head < chunks.count || ended
    }

    // MARK: the decoder's side

    /// A ring of at least `bytes`, waiting until the reader holds none of the old one.
    /// Returns false when cancelled.
    func ensure(_ bytes: Int) -> Bool {
        guard bytes > size else { return true }
        cond.lock()
        defer { cond.unlock() }
        while pending > 0 && !cancelled {
            decoderWaits = true
            // A reader waiting for more than the ring holds takes what there is.
            if readerWants > 0 { cond.broadcast() }
            cond.wait()
        }
        decoderWaits = false
        if cancelled { return false }
        if let ring { ZstdRings.shared.give(ring, size: size) }
        ring = ZstdRings.shared.take(bytes)
        size = bytes
        return true
    }

    /// Waits until `ring[at..<at+count]` holds no byte the reader has not released; false
    /// when cancelled. When it must wait, it waits until half the ring is free, so that the
    /// two threads do not wake each other for every block.
    func waitForRoom(at: Int, count: Int) -> Bool {
        cond.lock()
        defer { cond.unlock() }
        if isFree(at, count) { return !cancelled }
        while !cancelled && !(isFree(at, count) && pending <= size / 2) {
            decoderWaits = true
            if readerWants > 0 { cond.broadcast() }
            cond.wait()
        }
        decoderWaits = false
        return !cancelled
    }

    /// Whether `[at, at+count)` misses the circular interval of `pending` bytes from `oldest`.
    private func isFree(_ at: Int, _ count: Int) -> Bool {
        guard pending > 0 else { return true }
        let newest = (oldest + pending) % size
        if oldest < newest { return at + count <= oldest || at >= newest }
        // Wrapped (or full): the free part is newest..<oldest.
        return at >= newest && at + count <= oldest
    }

    /// Hands `count` bytes decoded at ring offset `at` to the reader.
    func publish(at: Int, count: Int, compressedEnd: Int64) {
        cond.lock()
        if pending == 0 { oldest = at }
        // Bytes skipped at the ring's end (a block did not fit there) count as pending, so
        // that `oldest + pending` stays the end of the newest chunk.
        let skipped = pending == 0 ? 0 : (at - (oldest + pending) % size + size) % size
        pending += skipped + count
        if head > 64 && head * 2 > chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
        chunks.append(Chunk(offset: at, count: count, compressedEnd: compressedEnd))
        queued += count
        if readerWants > 0 && queued >= readerWants { cond.broadcast() }
        cond.unlock()
    }

    /// The end (nil) or the error that ends decoding; every chunk before it is read first.
    func finish(_ error: Error?) {
        cond.lock()
        ended = true
        failure = error
        finished = true
        cond.broadcast()
        cond.unlock()
    }

    /// Notes the compressed bytes of the whole input (the reader's count at the end).
    func noteInputEnd(_ bytes: Int64) {
        cond.lock()
        compressedBytes = bytes
        cond.unlock()
    }

    // MARK: the reader's side

    /// The next chunk, waiting (while decoding goes on) until `bytes` are queued, the
    /// decoder waits for room, or decoding ended; then the end or the error. The reader holds
    /// no chunk when it calls this.
    func take(waitFor bytes: Int) -> Taken {
        cond.lock()
        defer { cond.unlock() }
        let want = max(bytes, 1)
        while !ended && (head == chunks.count || (queued < want && !decoderWaits)) {
            readerWants = want
            cond.wait()
        }
        readerWants = 0
        if head < chunks.count {
            let chunk = chunks[head]
            head += 1
            queued -= chunk.count
            return .chunk(chunk)
        }
        if let failure { return .failure(failure) }
        return .end(compressedBytes: compressedBytes)
    }

    /// The reader is done with `chunk`: its bytes (and any skipped before it) are free.
    func release(_ chunk: Chunk) {
        cond.lock()
        let end = (chunk.offset + chunk.count) % size
        let freed = (end - oldest + size) % size
        pending -= freed == 0 && pending > 0 ? pending : freed
        if pending < 0 { pending = 0 }
        oldest = end
        if decoderWaits && (pending <= size / 2) { cond.broadcast() }
        cond.unlock()
    }

    /// Stops the decoder and waits until its thread has ended.
    func cancelAndWait() {
        cond.lock()
        cancelled = true
        cond.broadcast()
        while !finished { cond.wait() }
        cond.unlock()
    }
}

/// The decoding half of a `ZstdSource`: the mapped compressed file, a decompression context
/// and the position in both. One thread at a time uses it.
final class ZstdDecoder {
    /// Hands a decoder to the thread that decodes (which alone uses it from then on).
    final class Handle: @unchecked Sendable {
        let decoder: ZstdDecoder
        init(_ decoder: ZstdDecoder) { self.decoder = decoder }
    }

    let path: String
    private let input: ZstdInputBytes
    private let context: OpaquePointer
    private let lookahead: Int
    /// The next compressed byte to decode.
    private var position = 0
    /// Compressed bytes before this offset were handed back to the system.
    private var released = 0
    private var inFrame = false
    private var started = false
    /// The current frame's largest block (decompressed), and where the next one goes.
    private var blockMax = 0
    private var writeAt = 0

    /// libzstd's default limit on a frame's window (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`, 2^27).
    static let windowLimit: UInt64 = 1 << 27

    init(path: String, lookahead: Int) throws {
        self.path = path
        self.lookahead = lookahead
        input = try ZstdInputBytes(path: path)
        guard let context = ZstdContexts.shared.take() else { throw ImportError(file: path, "zstd: out of memory for a decompression context") }
        self.context = context
    }

    deinit { ZstdContexts.shared.give(context) }

    /// Decodes until one block of output is handed to `ring` (true), or the input ends
    /// between frames (false). Throws the input's first problem, or `CancellationError` when
    /// the reader went away.
    func decodeNext(into ring: ZstdRing) throws -> Bool {
        let size = input.count
        while true {
            if !inFrame {
                if position == size {
                    guard started else { throw ImportError(file: path, "empty file: expected zstd-compressed data") }
                    ring.noteInputEnd(Int64(size))
                    return false
                }
                try beginFrame(ring)
            }
            let need = ZSTD_nextSrcSizeToDecompress(context)
            if need == 0 {
                inFrame = false
                continue
            }
            guard size - position >= need else { throw truncated() }
            let kind = ZSTD_nextInputType(context)
            let src = input.base + position
            if kind == ZSTDnit_block || kind == ZSTDnit_lastBlock {
                let at = ring.size - writeAt >= blockMax ? writeAt : 0
                guard ring.waitForRoom(at: at, count: blockMax) else { throw CancellationError() }
                let n = ZSTD_decompressContinue(context, ring.ring! + at, blockMax, src, need)
                if ZSTD_isError(n) != 0 { throw failure(n, count: need) }
                position += need
                releaseInput()
                if n > 0 {
                    writeAt = at + n
                    ring.publish(at: at, count: n, compressedEnd: Int64(position))
                    return true
                }
            } else {
                // A header, a block header, a checksum or a skippable frame's content: no output.
                let n = ZSTD_decompressContinue(context, nil, 0, src, need)
                if ZSTD_isError(n) != 0 { throw failure(n, count: need) }
                position += need
            }
        }
    }

    /// Starts the frame at `position`: checks that one starts there, reads its header (the
    /// window it needs) and makes the ring large enough.
    private func beginFrame(_ ring: ZstdRing) throws {
        let available = input.count - position
        let head = UnsafeBufferPointer(start: input.base + position, count: min(4, available))
        guard LeadingBytes.zstdMagic.starts(with: head) || LeadingBytes.isSkippableFramePrefix(head) else {
            throw ImportError(file: path, started
                ? "not valid zstd data (bytes after the end of the compressed stream that do not start another frame) near compressed byte \(position)"
                : "not valid zstd data (the file does not start with a zstd frame)")
        }
        var header = ZSTD_frameHeader()
        let rc = ZSTD_getFrameHeader(&header, input.base + position, available)
        if ZSTD_isError(rc) != 0 { throw failure(rc, count: min(available, Int(ZSTD_FRAMEHEADERSIZE_MAX))) }
        if rc > 0 { throw truncated() }
        if header.frameType == ZSTD_frame {
            guard header.windowSize <= ZstdDecoder.windowLimit else {
                throw ImportError(file: path, "not valid zstd data (\(String(cString: ZSTD_getErrorString(ZSTD_error_frameParameter_windowTooLarge)))): the frame at compressed byte \(position) asks for a \(header.windowSize)-byte window, more than the \(ZstdDecoder.windowLimit) bytes allowed")
            }
            blockMax = Int(header.blockSizeMax)
            let bytes = ZstdDecoder.ringBytes(header, lookahead: lookahead)
            if bytes > ring.size {
                guard ring.ensure(bytes) else { throw CancellationError() }
                writeAt = 0
            }
        } else {
            blockMax = 0
        }
        let begun = ZSTD_decompressBegin(context)
        if ZSTD_isError(begun) != 0 { throw failure(begun, count: 0) }
        inFrame = true
        started = true
    }

    /// The ring a frame with `header` (a frame, not a skippable one, its window within
    /// `windowLimit`) is decoded into: a round buffer as libzstd's rule sizes it, plus
    /// `lookahead`; a frame that declares a smaller content fits whole (it then never wraps).
    static func ringBytes(_ header: ZSTD_frameHeader, lookahead: Int) -> Int {
        let window = min(header.windowSize, windowLimit)
        let bytes = ZSTD_decodingBufferSize_min(window, UInt64.max) + lookahead
        if header.frameContentSize != UInt64.max && header.frameContentSize < UInt64(bytes) {
            return Int(header.frameContentSize) + Int(header.blockSizeMax) + 64
        }
        return bytes
    }

    /// Hands the compressed bytes already decoded back to the system every 4 MiB (a mapping:
    /// its pages would otherwise stay resident, up to the file's size).
    private func releaseInput() {
        let step = 1 << 22
        guard position - released >= 2 * step else { return }
        let upTo = position / step * step - step
        input.release(from: released, to: upTo)
        released = upTo
    }

    private func truncated() -> ImportError {
        ImportError(file: path, "truncated zstd file: the data ends after \(input.count) compressed bytes, inside a zstd frame (the download or copy was cut short)")
    }

    /// The error for libzstd's result `rc` (an error code) on the `count` compressed bytes
    /// from `position`: its own words, a checksum mismatch in plain ones, and where.
    private func failure(_ rc: Int, count: Int) -> ImportError {
        let what = ZSTD_getErrorCode(rc) == ZSTD_error_checksum_wrong
            ? "incorrect checksum: the decompressed data does not match the frame's content checksum"
            : String(cString: ZSTD_getErrorName(rc))
        return ImportError(file: path, "not valid zstd data (\(what)) near compressed bytes \(position)–\(position + count)")
    }
}

/// The bytes of a compressed file, contiguous: mapped, or read whole when it cannot be mapped.
final class ZstdInputBytes {
    let base: UnsafePointer<UInt8>
    let count: Int
    private let mapped: Bool

    init(path: String) throws {
        let file = try FileSource(path: path)
        let size = file.size
        if size > 0, let region = mmap(nil, size, PROT_READ, MAP_PRIVATE, file.descriptor, 0), region != MAP_FAILED {
            madvise(region, size, MADV_SEQUENTIAL)
            base = UnsafePointer(region.assumingMemoryBound(to: UInt8.self))
            count = size
            mapped = true
            return
        }
        // Not mappable (empty, or not a regular file): read it whole.
        var bytes: [UInt8] = []
        let block = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { block.deallocate() }
        while true {
            let n = try file.read(into: block, count: 1 << 20)
            if n == 0 { break }
            bytes += UnsafeRawBufferPointer(start: block, count: n)
        }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
        copy.initialize(from: bytes, count: bytes.count)
        base = UnsafePointer(copy)
        count = bytes.count
        mapped = false
    }

    deinit {
        if mapped { munmap(UnsafeMutableRawPointer(mutating: base), count) } else { base.deallocate() }
    }

    /// Bytes `from..<to` will not be read again (a mapping gives their pages back).
    func release(from: Int, to: Int) {
        guard mapped, to > from else { return }
        madvise(UnsafeMutableRawPointer(mutating: base + from), to - from, MADV_DONTNEED)
    }
}

/// Decompression contexts kept for the next file (creating one allocates libzstd's tables).
/// Rings of decoded bytes handed from one file's decoder to the next (`ZstdRing.ensure`):
/// a ring of 32 MiB or more is a mapping of its own, which the system zeroes page by page
/// as it is first written, so an import of many uploads paid that for every file (48
/// half-hour uploads: 1.41 CPU-s against 1.04 with the rings kept). Only rings of the very
/// size asked are reused (the memory `SourcesAhead` counts stays exact); at most four are
/// kept, and an import hands them back to the system when it ends (`drain`).
final class ZstdRings: @unchecked Sendable {
    static let shared = ZstdRings()
    private let lock = NSLock()
    private var free: [(ring: UnsafeMutablePointer<UInt8>, size: Int)] = []

    /// A ring of exactly `bytes`: a kept one, or a new one.
    func take(_ bytes: Int) -> UnsafeMutablePointer<UInt8> {
        lock.lock()
        let kept = free.firstIndex { $0.size == bytes }.map { free.remove(at: $0).ring }
        lock.unlock()
        return kept ?? .allocate(capacity: bytes)
    }

    /// Keeps `ring` (of `size` bytes) for the next file, or frees it when four are kept.
    func give(_ ring: UnsafeMutablePointer<UInt8>, size: Int) {
        lock.lock()
        defer { lock.unlock() }
        if free.count < 4 { free.append((ring, size)) } else { ring.deallocate() }
    }

    /// Frees every kept ring.
    func drain() {
        lock.lock()
        let rings = free
        free = []
        lock.unlock()
        for r in rings { r.ring.deallocate() }
    }

    /// Rings kept (for tests).
    var keptCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return free.count
    }
}

final class ZstdContexts: @unchecked Sendable {
    static let shared = ZstdContexts()
    private let lock = NSLock()
    private var free: [OpaquePointer] = []

    func take() -> OpaquePointer? {
        lock.lock()
        let context = free.popLast()
        lock.unlock()
        return context ?? ZSTD_createDCtx()
    }

    func give(_ context: OpaquePointer) {
        lock.lock()
        defer { lock.unlock() }
        if free.count < 4 { free.append(context) } else { ZSTD_freeDCtx(context) }
    }
}
