@_spi(Bindings) import LuaHost
import SensorKitModel

/// `set:summarize{…}` and `groups:summarize{…}`: several aggregates from one pass
/// (`SampleSet.summarize`), one Lua row per group. Their results are deferred tables, as
/// grouped aggregates' are: summaries asked of one set before any is used share one pass.
extension Bindings {
    func defineSummarize() {
        sampleSetClass.method("summarize", settles: false) { [unowned self] s, call in
            let aggregates = try Bindings.summaryAggregates(call, 2, reserved: nil)
            self.summaries.push(SummaryRequest(set: s, aggregates: aggregates, grouping: nil),
                                shape: { Bindings.summaryRow($0[0], aggregates, key: nil) }, call: call)
            return 1
        }
        groupsClass.method("summarize", settles: false) { [unowned self] g, call in
            let keyName = Bindings.keyName(g.grouping)
            let aggregates = try Bindings.summaryAggregates(call, 2, reserved: keyName)
            self.summaries.push(SummaryRequest(set: g.set, aggregates: aggregates, grouping: g.grouping),
                                shape: { .array($0.map { Bindings.summaryRow($0, aggregates, key: keyName) }) }, call: call)
            return 1
        }
    }

    /// The name a summary row gives its group's label: `day`, `hour` (byHour and
    /// byHourOfDay) or `window`.
    static func keyName(_ grouping: Grouping) -> String {
        switch grouping {
        case .localDay: "day"
        case .localHour, .hourOfDay: "hour"
        case .window: "window"
        }
    }

    /// One Lua row: the group's label under `key` (none ungrouped) and each aggregate
    /// under its name; counts and whole-number sums are integers.
    static func summaryRow(_ row: SummaryRow, _ columns: [SummaryColumn], key: String?) -> LuaValue {
        var out: [String: LuaValue] = [:]
        if let key { out[key] = .string(row.label) }
        for (c, v) in zip(columns, row.values) { out[c.name] = Bindings.aggregateValue(v, integral: c.aggregate.isIntegral) }
        return .dictionary(out)
    }

    /// The aggregates of a summary spec at argument `index`: a table of
    /// `name = { how, field, extra, where = { field, op, value } | { {…}, … } }`, in name
    /// order. Throws `LuaArgumentError` naming the aggregate for anything malformed.
    static func summaryAggregates(_ call: LuaCall, _ index: Int32, reserved: String?) throws -> [SummaryColumn] {
        let spec = try call.table(index)
        var out: [SummaryColumn] = []
        for entry in spec.entries {
            guard case .string(let entryName) = entry.key else {
                throw LuaArgumentError(index: index, message: "summarize expects named aggregates, e.g. { steps = {\"sum\", \"numberOfSteps\"} }")
            }
            func bad(_ message: String) -> LuaArgumentError {
                LuaArgumentError(index: index, message: "aggregate '\(entryName)': \(message)")
            }
            if entryName == reserved { throw bad("'\(entryName)' names the group's key in each row; choose another name") }
            guard let t = entry.value.tableValue else { throw bad("expected a table such as {\"mean\", \"field\"}") }
            guard let how = t[1]?.stringValue else { throw bad("the first element must name the aggregate: " + Aggregate.Name.list) }
            let field = t[2]?.stringValue
            if t[2] != nil && field == nil { throw bad("the field (second element) must be a string") }
            guard let name = Aggregate.Name(rawValue: how) else { throw bad("unknown aggregate '\(how)' (one of: \(Aggregate.Name.list))") }
            let aggregate: Aggregate
            switch name {
            case .quantile:
                guard let q = t[3]?.doubleValue, (0...1).contains(q) else { throw bad("quantile needs q between 0 and 1 as the third element") }
                aggregate = .quantile(q)
            case .weightedMean:
                if t[3] != nil && t[3]?.stringValue == nil { throw bad("the weight (third element) must be a field name") }
                aggregate = .weightedMean(weight: t[3]?.stringValue ?? "duration")
            case .count, .sum, .mean, .min, .max, .stddev: aggregate = Aggregate(plain: name)!
            }
            if name != .count && field == nil { throw bad("'\(how)' needs a field as the second element") }
            var filters: [RowFilter] = []
            if let w = t["where"] {
                guard let wt = w.tableValue, let list = wt.arrayValue, !list.isEmpty else {
                    throw bad("where must be {field, op, value} or a list of them")
                }
                let conditions = list.allSatisfy { $0.tableValue != nil } ? list.compactMap(\.tableValue) : [wt]
                for c in conditions {
                    switch Bindings.rowFilter(field: c[1], op: c[2], value: c[3]) {
                    case .success(let f): filters.append(f)
                    case .failure(let e): throw bad("where {field, op, value}: \(e.message)")
                    }
                }
            }
            out.append(SummaryColumn(name: entryName, aggregate: aggregate, field: field, filters: filters))
        }
        return out.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }
}

private extension LuaTable {
    subscript(position: Int) -> LuaValue? {
        entries.first { if case .integer(let k) = $0.key { k == Int64(position) } else { false } }?.value
    }
}
