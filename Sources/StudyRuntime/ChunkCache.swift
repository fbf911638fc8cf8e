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
final class ChunkCache: @unchecked Sendable {
    let budget: ChunkBudget
    private let lock = NSLock()
    private var chunks: [SampleBatch]?
    private var bytes = 0
    private var recording = false

    init(budget: ChunkBudget) { self.budget = budget }

    deinit { budget.release(bytes) }

    /// The chunks: replayed when a complete read is kept, else `upstream`'s, recorded when
    /// no other read is recording. A read that throws is abandoned, never kept.
    func iterator(_ upstream: () -> BatchIterator) -> BatchIterator {
        lock.lock()
        if let chunks {
            lock.unlock()
            return BatchIterator(chunks)
        }
        let record = !recording
        recording = true
        lock.unlock()
        let source = upstream()
        guard record else { return source }
        let recorder = Recorder(cache: self)
        return BatchIterator {
            guard let batch = try source.next() else { recorder.finish(); return nil }
            recorder.add(batch)
            return batch
        }
    }

    /// A complete read: keep it (its bytes are already reserved).
    fileprivate func keep(_ kept: [SampleBatch], bytes: Int) {
        lock.lock()
        chunks = kept
        self.bytes = bytes
        recording = false
        lock.unlock()
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
    var kept: [SampleBatch] = []
    var bytes = 0
    var fits = true
    var done = false

    init(cache: ChunkCache) { self.cache = cache }

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
            cache.keep(kept, bytes: bytes)
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
