import Foundation
import SensorKitModel

/// Bytes of memory that the chunk caches of one participant run may hold together.
public final class ChunkBudget: @unchecked Sendable {
    public let limit: Int
    private var used = 0
    private let lock = NSLock()

    public init(limit: Int) { self.limit = limit }

    /// Takes `bytes` from the budget; false (nothing taken) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard used + bytes <= limit else { return false }
        used += bytes
        return true
    }

    func release(_ bytes: Int) {
        lock.lock()
        used -= bytes
        lock.unlock()
    }

    /// Bytes held now.
    public var held: Int {
        lock.lock()
        defer { lock.unlock() }
        return used
    }
}

/// The chunks of one fetch, kept after a first complete read so that the set's later
/// aggregates (and `tostring`, `#set`) replay them instead of reading the source again.
/// A read is kept only while its chunks fit the shared `ChunkBudget`; a fetch too large
/// for it is read from the source each time, so memory stays bounded whatever the range.
/// The bytes return to the budget when the cache (its SampleSet) is collected.
///
/// Reads are projected (`ColumnProjection`): a pass asks only for the columns it reads. A
/// kept read is replayed only to a pass whose columns it holds (it asked for them, or every
/// chunk has them); a pass that needs more reads the source, asking for its columns and
/// the kept read's, and that read, once complete, replaces the kept one.
final class ChunkCache: @unchecked Sendable {
    let budget: ChunkBudget
    private let lock = NSLock()
    private var chunks: [SampleBatch]?
    /// The columns the kept read asked for, and those every kept chunk holds.
    private var keptColumns = ColumnProjection.all
    private var heldNames: Set<String> = []
    private var bytes = 0
    private var recording = false

    init(budget: ChunkBudget) { self.budget = budget }

    deinit { budget.release(bytes) }

    /// The chunks, holding at least `columns`: replayed when a complete read that holds them
    /// is kept, else `upstream`'s, recorded when no other read is recording. A read that
    /// throws is abandoned, never kept.
    func iterator(_ columns: ColumnProjection, _ upstream: (ColumnProjection) -> BatchIterator) -> BatchIterator {
        lock.lock()
        if let chunks, holds(columns) {
            let kept = keptColumns
            lock.unlock()
            return BatchIterator(columns: kept, chunks)
        }
        let record = !recording
        recording = true
        // A read that will replace the kept one asks for what that one held too.
        let asked = record && chunks != nil ? columns.union(keptColumns) : columns
        lock.unlock()
        let source = upstream(asked)
        guard record else { return source }
        let recorder = Recorder(cache: self, columns: source.columns)
        return BatchIterator(columns: source.columns) {
            guard let batch = try source.next() else { recorder.finish(); return nil }
            recorder.add(batch)
            return batch
        }
    }

    /// Whether the kept read holds `columns` (call with the lock held).
    private func holds(_ columns: ColumnProjection) -> Bool {
        if chunks?.isEmpty == true || keptColumns.covers(columns) { return true }
        return columns.names.map { heldNames.isSuperset(of: $0) } ?? false
    }

    /// A complete read: keep it (its bytes are already reserved) in place of the kept one.
    fileprivate func keep(_ kept: [SampleBatch], bytes: Int, columns: ColumnProjection) {
        var held: Set<String>?
        for batch in kept {
            let names = Set(batch.columns.map(\.name))
            held = held.map { $0.intersection(names) } ?? names
        }
        lock.lock()
        let replaced = self.bytes
        chunks = kept
        self.bytes = bytes
        keptColumns = columns
        heldNames = held ?? []
        recording = false
        lock.unlock()
        budget.release(replaced)
    }

    fileprivate func stopRecording() {
        lock.lock()
        recording = false
        lock.unlock()
    }

    /// Estimated bytes of a batch's storage.
    static func bytes(of b: SampleBatch) -> Int {
        var n = b.count * 16 + 64
        for c in b.columns {
            switch c.data {
            case .double, .int: n += 8 * b.count
            case .intRuns(let v): n += 16 * v.runCount
            case .bool: n += b.count
            case .string: n += 32 * b.count
            case .value: n += 64 * b.count
            }
            if c.present != nil { n += b.count }
        }
        return n
    }
}

/// One recording read: the chunks seen so far, dropped (and their bytes released) when
/// the budget runs out or the read is abandoned before its end.
private final class Recorder {
    let cache: ChunkCache
    /// The columns the read asked for.
    let columns: ColumnProjection
    var kept: [SampleBatch] = []
    var bytes = 0
    var fits = true
    var done = false

    init(cache: ChunkCache, columns: ColumnProjection) {
        self.cache = cache
        self.columns = columns
    }

    func add(_ batch: SampleBatch) {
        guard fits, !done else { return }
        let n = ChunkCache.bytes(of: batch)
        if cache.budget.reserve(n) {
            kept.append(batch)
            bytes += n
        } else {
            fits = false
            drop()
        }
    }

    func finish() {
        guard !done else { return }
        done = true
        if fits {
            cache.keep(kept, bytes: bytes, columns: columns)
            kept = []
            bytes = 0
        } else {
            cache.stopRecording()
        }
    }

    private func drop() {
        cache.budget.release(bytes)
        kept = []
        bytes = 0
    }

    deinit {
        if !done {
            drop()
            cache.stopRecording()
        }
    }
}
