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

    /// Answers every pending summary of `lineage` (one pass), each keeping its outcome.
    /// When the pass fails, each is run alone so that each has its own result or error.
    fileprivate func answer(_ lineage: SampleSet.Lineage) {
        guard let due = pending.removeValue(forKey: ObjectIdentifier(lineage)), !due.isEmpty else { return }
        if due.count > 1, let rows = try? SampleSet.summarize(due.map(\.request)) {
            for (summary, rows) in zip(due, rows) { summary.outcome = .success(summary.shape(rows)) }
            return
        }
        for summary in due {
            summary.outcome = Result {
                summary.shape(try summary.request.set.summarize(summary.request.aggregates, by: summary.request.grouping))
            }
        }
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
