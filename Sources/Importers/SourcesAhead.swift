import CZstd
import Foundation

/// How far an import opens its files ahead of the one it reads: up to `files` following
/// files are opened, and a compressed one decompresses on a thread of its own, while one is
/// parsed and stored.
package struct ReadAhead: Sendable, Equatable, CustomStringConvertible {
    /// Files open ahead of the one being read, at most (at least 1).
    package var files: Int
    /// Bytes the decoded buffers of the file being read and the files ahead may take
    /// together (`SourcesAhead.decodedBufferBytes`). The next file is opened ahead whatever
    /// its size (one file ahead, as imports always did); each further one only while the
    /// total stays within this.
    package var budgetBytes: Int

    package init(files: Int, budgetBytes: Int = ReadAhead.defaultBudgetBytes) {
        self.files = max(1, files)
        self.budgetBytes = budgetBytes
    }

    /// 256 MB.
    package static let defaultBudgetBytes = 256 << 20

    /// Files ahead on a machine of `cores` cores: an import keeps about two busy (its parser
    /// and the thread that stores), so one file per further core decompresses beside them;
    /// at least one, at most 8.
    package static func files(forCores cores: Int) -> Int { max(1, min(8, cores - 2)) }

    /// This machine's: `files(forCores:)` of its active cores, the default budget. On two
    /// cores: one file ahead.
    package static var forThisMachine: ReadAhead {
        ReadAhead(files: files(forCores: ProcessInfo.processInfo.activeProcessorCount))
    }

    /// Decompressed bytes a file's thread may decode ahead of its reader (beyond a zstd
    /// frame's window): a share of the budget, at most 32 MiB, at least
    /// `ZstdSource.lookahead` (2 MiB). So an upload ahead decompresses whole on a core of its
    /// own, and a large file's next parsing window (8 MiB or more, `MDHPipeline`) is decoded
    /// while the current one is parsed; with 2 MiB the parsers and the decoder took turns.
    package var lookaheadBytes: Int {
        max(ZstdSource.lookahead, min(32 << 20, budgetBytes / (files + 1)))
    }

    package var description: String {
        "\(files) file\(files == 1 ? "" : "s") ahead, each decoding up to \(lookaheadBytes >> 20) MiB ahead, decoded buffers within \(budgetBytes >> 20) MiB"
    }
}

/// Opens the files of an import ahead of the one being read, in their order: while one is
/// parsed and stored, up to `limit.files` following ones are open and a compressed one
/// decompresses on its own thread (as far as its read-ahead: `ZstdSource`'s ring, or
/// `ReadAheadSource`'s blocks; a small upload decompresses whole), so that cores do not idle
/// at every file's start and end, and several small uploads decode at once where cores allow.
/// Memory: each open file's decoded buffer (`decodedBufferBytes`), within `limit.budgetBytes`
/// beyond the first file ahead.
///
/// Nothing of a file ahead is seen before its turn: a problem opening it ahead is met again
/// (and thrown) when it is opened in turn, and one decoding it reaches its reader after the
/// bytes before it, in its turn, as when it is not opened ahead; the caller stores files in
/// order, so what it stored and the errors it reports are those of reading one file at a time.
/// Dropping this drops (stops) the sources opened ahead.
final class SourcesAhead {
    let paths: [String]
    let limit: ReadAhead
    /// Files opened ahead and not yet taken, by index: the source and its decoded buffer.
    private var ahead: [Int: (source: ByteSource, bytes: Int)] = [:]
    /// The next index to consider opening ahead.
    private var nextAhead = 0
    /// The decoded buffer of the file being read (handed out by the last `open`).
    private var currentBytes = 0

    init(_ paths: [String], limit: ReadAhead) {
        self.paths = paths
        self.limit = limit
    }

    /// Files open ahead now (for the tests of the memory bound).
    var openAhead: Int { ahead.count }
    /// Their decoded buffers and the current file's, bytes.
    var bytesInFlight: Int { currentBytes + ahead.values.reduce(0) { $0 + $1.bytes } }

    /// The source of `paths[index]` (opened ahead when an earlier call could), after opening
    /// the files that follow it ahead as far as `limit` allows. Files are taken in order.
    func open(_ index: Int) throws -> ByteSource {
        let source: ByteSource
        if let opened = ahead.removeValue(forKey: index) {
            source = opened.source
            currentBytes = opened.bytes
        } else {
            currentBytes = SourcesAhead.decodedBufferBytes(paths[index], lookahead: limit.lookaheadBytes)
            source = try openByteSource(paths[index], lookahead: limit.lookaheadBytes)
        }
        // Files before this one are no longer wanted ahead (a caller that skipped one).
        for k in ahead.keys where k < index { ahead[k] = nil }
        nextAhead = max(nextAhead, index + 1)
        var inFlight = bytesInFlight
        while nextAhead < paths.count && nextAhead <= index + limit.files {
            let k = nextAhead
            let bytes = SourcesAhead.decodedBufferBytes(paths[k], lookahead: limit.lookaheadBytes)
            // The next file always; further ones within the budget.
            guard k == index + 1 || inFlight + bytes <= limit.budgetBytes else { break }
            nextAhead += 1
            // A file that cannot be opened now is opened (and its error thrown) in its turn.
            guard let opened = try? openByteSource(paths[k], lookahead: limit.lookaheadBytes) else { continue }
            ahead[k] = (opened, bytes)
            inFlight += bytes
        }
        return source
    }

    /// The bytes a file's decompression holds while it is read or read ahead with
    /// `lookahead`, from its first bytes: for zstd, the ring `ZstdDecoder` makes for its first
    /// frame (`ZstdDecoder.ringBytes`); for gzip, `ReadAheadSource`'s blocks; 0 for a plain
    /// file (mapped or read in place) or one that cannot be read (its error comes in its turn).
    static func decodedBufferBytes(_ path: String, lookahead: Int = ZstdSource.lookahead) -> Int {
        guard let file = try? FileSource(path: path) else { return 0 }
        let head = file.leadingBytes(Int(ZSTD_FRAMEHEADERSIZE_MAX))
        switch LeadingBytes(head, complete: false) {
        case .gzip: return ReadAheadSource.defaultBlockBytes * ReadAheadSource.depth(lookahead: lookahead)
        case .zstd:
            var header = ZSTD_frameHeader()
            let rc = head.withUnsafeBytes { ZSTD_getFrameHeader(&header, $0.baseAddress, $0.count) }
            guard ZSTD_isError(rc) == 0, rc == 0, header.frameType == ZSTD_frame else {
                // A skippable frame first, or a damaged header: as much as a default frame's.
                return Int(ZSTD_BLOCKSIZE_MAX) * 2 + lookahead
            }
            return ZstdDecoder.ringBytes(header, lookahead: lookahead)
        case .text, .binary, .otherEncoding: return 0
        }
    }
}
