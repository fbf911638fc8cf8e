import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Text of whole lines, owned by one parse at a time: `base[0..<count]`, then a 0 byte
/// (the sentinel the number parsers stop at). Reused from block to block.
final class TextBlock: @unchecked Sendable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0
    /// Bytes of the file consumed when this block was read (progress).
    var fileBytesRead: Int64 = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(capacity: capacity + 1)
        base[0] = 0
    }

    deinit { base.deallocate() }

    /// Room for `n` bytes in all, keeping the first `count`.
    func reserve(_ n: Int) {
        guard n > capacity else { return }
        let c = max(n, capacity * 2)
        let b = UnsafeMutablePointer<UInt8>.allocate(capacity: c + 1)
        b.update(from: base, count: count)
        base.deallocate()
        base = b
        capacity = c
    }

    /// Bytes `from..<count` as an array.
    func bytes(from: Int) -> [UInt8] { Array(UnsafeBufferPointer(start: base + from, count: count - from)) }
}

/// Cuts the rest of a reader's input into blocks of whole lines (about `size` bytes each, more
/// when one line is longer), in order: what its window holds, then its source. A block ends
/// with a line break, except the last one of the input when the input does not.
///
/// Lines are cut at every `\n`, quotes or not: a block is only a guess at record boundaries,
/// right while every line is a record (what the fast row parsers check; anything else is read
/// again by the generic reader from `rest`).
final class LineBlocks {
    let source: ByteSource
    let size: Int
    /// Bytes read after the last line break handed out.
    private var carry: [UInt8]
    private var eof = false

    init(after csv: CSVReader, size: Int = 1 << 20) {
        let w = csv.window
        source = w.source
        self.size = size
        carry = Array(UnsafeBufferPointer(start: w.base + w.start, count: w.end - w.start))
        w.start = w.end
        eof = w.eof
    }

    /// Fills `block` with the next lines; false (block empty) at the end of the input.
    /// Throws what the source throws (the bytes read before it stay in `takeCarry()`).
    func next(into block: TextBlock) throws -> Bool {
        block.count = 0
        var limit = size
        block.reserve(limit)
        var searched = 0
        while true {
            // Bytes read before come first; the source only once they are all handed out.
            if !carry.isEmpty {
                let take = min(carry.count, limit - block.count)
                carry.withUnsafeBufferPointer { block.base.advanced(by: block.count).update(from: $0.baseAddress!, count: take) }
                block.count += take
                carry.removeFirst(take)
            }
            while carry.isEmpty && !eof && block.count < limit {
                let n: Int
                do {
                    n = try source.read(into: block.base + block.count, count: limit - block.count)
                } catch {
                    // What was read before the failure stays for a reader of the rest.
                    carry = block.bytes(from: 0)
                    block.count = 0
                    throw error
                }
                if n == 0 { eof = true } else { block.count += n }
            }
            // The last line break: the block ends after it, the rest waits for the next block.
            var k = block.count
            while k > searched && block.base[k - 1] != 10 { k -= 1 }
            if k > searched {
                carry.insert(contentsOf: UnsafeBufferPointer(start: block.base + k, count: block.count - k), at: 0)
                block.count = k
                break
            }
            if eof && carry.isEmpty { break }
            // One line longer than the block: read on.
            searched = block.count
            limit *= 2
            block.reserve(limit)
        }
        block.base[block.count] = 0
        block.fileBytesRead = source.fileBytesRead
        return block.count > 0
    }

    /// What has been read and not handed out (for a reader of the rest).
    func takeCarry() -> [UInt8] {
        defer { carry = [] }
        return carry
    }
}

/// Bytes already read (pieces in order), then the rest of a source: the input of a reader
/// that takes over the rest of a file from where block parsing stopped. `failure`: the error
/// reading the source ahead gave; thrown after the pieces instead of reading on.
final class ChainSource: ByteSource {
    private var pieces: [[UInt8]]
    private var offset = 0
    let rest: ByteSource
    let failure: Error?
    var fileBytesRead: Int64 { rest.fileBytesRead }

    init(_ pieces: [[UInt8]], then rest: ByteSource, failure: Error? = nil) {
        self.pieces = pieces.filter { !$0.isEmpty }
        self.rest = rest
        self.failure = failure
    }

    func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
        guard let first = pieces.first else {
            if let failure { throw failure }
            return try rest.read(into: p, count: count)
        }
        let n = min(count, first.count - offset)
        first.withUnsafeBytes { p.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        if offset == first.count {
            pieces.removeFirst()
            offset = 0
        }
        return n
    }
}
