import LuaHost
import SensorKitModel

/// `set:summarize{…}` and `groups:summarize{…}`: several aggregates from one pass
/// (`SampleSet.summarize`), one Lua row per group.
extension Bindings {
    func defineSummarize() {
        sampleSetClass.method("summarize") { s, call in
            let aggregates = try Bindings.summaryAggregates(call, 2, reserved: nil)
            let row = try s.summarize(aggregates, by: nil)[0]
            call.push(Bindings.summaryRow(row, aggregates, key: nil))
            return 1
        }
        groupsClass.method("summarize") { g, call in
            let keyName = Bindings.keyName(g.grouping)
            let aggregates = try Bindings.summaryAggregates(call, 2, reserved: keyName)
            let rows = try g.set.summarize(aggregates, by: g.grouping)
            call.push(.array(rows.map { Bindings.summaryRow($0, aggregates, key: keyName) }))
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
    static func summaryRow(_ row: SummaryRow, _ aggregates: [SummaryAggregate], key: String?) -> LuaValue {
        var out: [String: LuaValue] = [:]
        if let key { out[key] = .string(row.label) }
        for (a, v) in zip(aggregates, row.values) {
            let integral: Bool = switch a.kind {
            case .count, .sum: v.rounded() == v && abs(v) < 9e15
            default: false
            }
            out[a.name] = integral ? .integer(Int64(v)) : .number(v)
        }
        return .dictionary(out)
    }

    /// The aggregates of a summary spec at argument `index`: a table of
    /// `name = { how, field, extra, where = { field, op, value } | { {…}, … } }`, in name
    /// order. Throws `LuaArgumentError` naming the aggregate for anything malformed.
    static func summaryAggregates(_ call: LuaCall, _ index: Int32, reserved: String?) throws -> [SummaryAggregate] {
        let spec = try call.table(index)
        var out: [SummaryAggregate] = []
        for entry in spec.entries {
            guard case .string(let name) = entry.key else {
                throw LuaArgumentError(index: index, message: "summarize expects named aggregates, e.g. { steps = {\"sum\", \"numberOfSteps\"} }")
            }
            func bad(_ message: String) -> LuaArgumentError {
                LuaArgumentError(index: index, message: "aggregate '\(name)': \(message)")
            }
            if name == reserved { throw bad("'\(name)' names the group's key in each row; choose another name") }
            guard let t = entry.value.tableValue else { throw bad("expected a table such as {\"mean\", \"field\"}") }
            guard let how = t[1]?.stringValue else { throw bad("the first element must name the aggregate: " + summaryKinds) }
            let field = t[2]?.stringValue
            if t[2] != nil && field == nil { throw bad("the field (second element) must be a string") }
            let kind: SummaryAggregate.Kind
            switch how {
            case "count": kind = .count
            case "sum": kind = .sum
            case "mean": kind = .mean
            case "min": kind = .min
            case "max": kind = .max
            case "stddev": kind = .stddev
            case "quantile":
                guard let q = t[3]?.doubleValue, (0...1).contains(q) else { throw bad("quantile needs q between 0 and 1 as the third element") }
                kind = .quantile(q)
            case "weightedMean":
                if t[3] != nil && t[3]?.stringValue == nil { throw bad("the weight (third element) must be a field name") }
                kind = .weightedMean(weight: t[3]?.stringValue ?? "duration")
            default: throw bad("unknown aggregate '\(how)' (one of: \(summaryKinds))")
            }
            if how != "count" && field == nil { throw bad("'\(how)' needs a field as the second element") }
            var filters: [RowFilter] = []
            if let w = t["where"] {
                guard let wt = w.tableValue, let list = wt.arrayValue, !list.isEmpty else {
                    throw bad("where must be {field, op, value} or a list of them")
                }
                let conditions = list.allSatisfy { $0.tableValue != nil } ? list.compactMap(\.tableValue) : [wt]
                for c in conditions {
                    guard let f = c[1]?.stringValue, let opText = c[2]?.stringValue, let value = c[3],
                          let op = RowFilter.Op(rawValue: opText == "!=" ? "~=" : opText) else {
                        throw bad("where must be {field, op, value} with op one of < <= > >= == ~=")
                    }
                    let operand: RowFilter.Operand
                    if let s = value.stringValue {
                        operand = .text(s)
                    } else if let x = value.doubleValue {
                        operand = .number(x)
                    } else {
                        throw bad("where compares with a number or a string")
                    }
                    filters.append(RowFilter(field: f, op: op, operand: operand))
                }
            }
            out.append(SummaryAggregate(name: name, kind: kind, field: field, filters: filters))
        }
        return out.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    static let summaryKinds = "count, sum, mean, min, max, stddev, quantile, weightedMean"
}

private extension LuaTable {
    subscript(position: Int) -> LuaValue? {
        entries.first { if case .integer(let k) = $0.key { k == Int64(position) } else { false } }?.value
    }
}
