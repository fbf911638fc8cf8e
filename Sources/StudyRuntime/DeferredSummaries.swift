@_spi(Bindings) import LuaHost

/// Grouped aggregates a script asked for and has not used yet (`set:byDay():mean(f)`,
/// `:count()`, `:quantiles(…)`…). Each is handed to the script as a deferred table
/// (`LuaDeferred`); when the first of them is needed, every pending one of the same
/// lineage (a set and the sets `where` made of it) is answered by one pass over the
/// chunks (`SampleSet.summarize(_:)` of requests). So four statements over one week read
/// it once, as one `summarize` would, with the results each statement would have had.
final class DeferredSummaries {
    /// Pending summaries by lineage, in the order they were asked for.
    private var pending: [ObjectIdentifier: [PendingSummary]] = [:]

    /// Hands `request` to the script: pushes its deferred table. [-0, +1]
    /// `shape`: its rows as the Lua value the eager method returns.
    func push(_ request: SummaryRequest, shape: @escaping ([SummaryRow]) -> LuaValue, call: LuaCall) {
        let summary = PendingSummary(request: request, shape: shape, position: call.scriptPosition(), owner: self)
        pending[ObjectIdentifier(request.set.lineage), default: []].append(summary)
        call.state.pushDeferred(summary)
    }

    /// Quantile pools one pass may fill at once: each holds a group's values (a day of 50 Hz
    /// accelerometer is 4.3 M values, 35 MB), so summaries asked together share passes of at
    /// most this many pools, and memory stays within a few times what one summary takes.
    static let poolsPerPass = 4

    /// Answers every pending summary of `lineage` (one pass for each batch of at most
    /// `poolsPerPass` quantile pools), each keeping its outcome. When a pass fails, each of
    /// its summaries is run alone so that each has its own result or error.
    fileprivate func answer(_ lineage: SampleSet.Lineage) {
        guard let due = pending.removeValue(forKey: ObjectIdentifier(lineage)), !due.isEmpty else { return }
        for batch in DeferredSummaries.batches(due.map { SummaryLayout($0.request.aggregates).pools.count }).map({ $0.map { due[$0] } }) {
            if batch.count > 1, let rows = try? SampleSet.summarize(batch.map(\.request)) {
                for (summary, rows) in zip(batch, rows) { summary.outcome = .success(summary.shape(rows)) }
                continue
            }
            for summary in batch {
                summary.outcome = Result {
                    summary.shape(try summary.request.set.summarize(summary.request.aggregates, by: summary.request.grouping))
                }
            }
        }
    }

    /// The requests (by index, in order) cut into runs whose pools (`pools[i]` each) add up
    /// to at most `poolsPerPass`; a request with more goes alone.
    static func batches(_ pools: [Int]) -> [[Int]] {
        var out: [[Int]] = [], current: [Int] = [], held = 0
        for (i, n) in pools.enumerated() {
            if !current.isEmpty && held + n > poolsPerPass {
                out.append(current)
                current = []
                held = 0
            }
            current.append(i)
            held += n
        }
        if !current.isEmpty { out.append(current) }
        return out
    }
}

/// One grouped aggregate asked for and not yet used (see `DeferredSummaries`).
private final class PendingSummary: LuaDeferred {
    let request: SummaryRequest
    let shape: ([SummaryRow]) -> LuaValue
    let position: String?
    weak var owner: DeferredSummaries?
    var outcome: Result<LuaValue, any Error>?

    init(request: SummaryRequest, shape: @escaping ([SummaryRow]) -> LuaValue, position: String?, owner: DeferredSummaries) {
        self.request = request
        self.shape = shape
        self.position = position
        self.owner = owner
    }

    func resolve() throws -> LuaValue {
        if outcome == nil { owner?.answer(request.set.lineage) }
        if outcome == nil {
            // Its owner is gone (the run ended): computed alone.
            outcome = Result { shape(try request.set.summarize(request.aggregates, by: request.grouping)) }
        }
        return try outcome!.get()
    }
}
