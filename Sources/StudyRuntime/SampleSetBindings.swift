import LuaHost
import SensorKitModel

/// The `SampleSet` and `GroupedSampleSet` types: filters, groupings and aggregates.
extension Bindings {
    func defineSampleSet() {
        let c = sampleSetClass
        c.describe = { set in
            // A set whose filters fail shows 0; a store that cannot be read ends the run.
            let n: Int
            do { n = try set.count() } catch let e as LuaUncatchableError { throw e } catch { n = 0 }
            return "SampleSet(\(set.sensor.rawValue), \(n) samples\(set.filters.isEmpty ? "" : ", filtered"))"
        }
        c.method("count") { s, call in call.push(try s.count()); return 1 }
        for (name, pick) in Bindings.statPickers {
            c.method(name) { s, call in
                call.push(pick(try s.stats(try call.string(2))))
                return 1
            }
        }
        c.method("quantile") { s, call in
            let q = try call.double(3)
            guard (0...1).contains(q) else { throw LuaArgumentError(index: 3, message: "quantile must be between 0 and 1") }
            call.push(try s.quantile(try call.string(2), q))
            return 1
        }
        c.method("weightedMean") { s, call in
            call.push(try s.weightedMean(try call.string(2), weight: try call.optionalString(3) ?? "duration"))
            return 1
        }
        c.method("where") { [unowned self] s, call in
            let field = try call.string(2)
            let opText = try call.string(3)
            guard let op = RowFilter.Op(rawValue: opText == "!=" ? "~=" : opText) else {
                throw LuaArgumentError(index: 3, message: "operator must be one of < <= > >= == ~=")
            }
            let operand: RowFilter.Operand
            switch call.typeName(4) {
            case "string": operand = .text(try call.string(4))
            case "boolean":
                // A boolean field (onWrist) holds 1 for true and 0 for false; only equality makes sense.
                guard op == .eq || op == .ne else {
                    throw LuaArgumentError(index: 4, message: "a boolean compares only with == or ~=, not \(opText)")
                }
                operand = .number(call.boolean(4) ? 1 : 0)
            default: operand = .number(try call.double(4))
            }
            call.push(s.filtered(RowFilter(field: field, op: op, operand: operand)), as: self.sampleSetClass)
            return 1
        }
        for (name, grouping) in Bindings.namedGroupings {
            c.method(name) { [unowned self] s, call in
                call.push(GroupedSet(set: s, grouping: grouping), as: self.groupsClass)
                return 1
            }
        }
        c.method("byWindow") { [unowned self] s, call in
            let seconds = try call.double(2)
            guard InputLimits.window.contains(seconds) else { throw LuaArgumentError(index: 2, message: "window length: \(InputLimits.window.refusal(seconds))") }
            let origin = try call.optionalDouble(3) ?? self.run.settings.start
            guard InputLimits.instant.contains(origin) else { throw LuaArgumentError(index: 3, message: "origin: \(InputLimits.instant.refusal(origin))") }
            call.push(GroupedSet(set: s, grouping: .window(seconds: seconds, origin: origin)), as: self.groupsClass)
            return 1
        }
        c.method("column") { s, call in
            let field = try call.string(2)
            switch try s.column(field) {
            case .double(let v): call.push(.array(v.map { .number($0) }))
            case .int(let v): call.push(.array(v.map { .integer($0) }))
            case .intRuns(let v): call.push(.array(v.map { .integer($0) }))
            case .bool(let v): call.push(.array(v.map { .boolean($0) }))
            case .string(let v): call.push(.array(v.map { .string($0) }))
            case .value(let v): call.push(.array(v.map(Bindings.fieldValue)))
            }
            return 1
        }
        c.method("first") { s, call in
            let n = try call.isNil(2) ? 1 : Int(call.integer(2))
            let batch = try s.materialize(limit: max(n, 0))
            call.push(.array((0..<batch.count).map { Bindings.rowValue(batch, $0, rowTime: s.rowTimeField?.name) }))
            return 1
        }
        c.method("rows") { s, call in
            let batch = try s.materialize()
            var i = 0
            call.push(function: { inner in
                guard i < batch.count else { inner.pushNil(); return 1 }
                inner.push(Bindings.rowValue(batch, i, rowTime: s.rowTimeField?.name))
                i += 1
                return 1
            })
            return 1
        }
        c.method("fields") { s, call in
            call.push(.array((s.fieldSchemas.map(\.name) + ["time", "writeTime"] + s.windowFields).map { .string($0) }))
            return 1
        }
        c.method("distinct") { [unowned self] s, call in
            call.push(s.distinct(), as: self.sampleSetClass)
            return 1
        }
        groupsClass.describe = { "GroupedSampleSet(\($0.set.sensor.rawValue))" }
        for (name, make) in Bindings.groupAggregates {
            groupsClass.method(name) { g, call in
                guard let aggregate = make(try call.optionalString(2)) else { throw call.argumentError(2, expected: "field name") }
                let integral: Bool = switch aggregate {
                case .count, .sum: true
                default: false
                }
                call.push(Bindings.groupsValue(try g.set.grouped(by: g.grouping, aggregate: aggregate), integral: integral))
                return 1
            }
        }
        groupsClass.method("quantiles") { g, call in
            let field = try call.string(2)
            let qs = try call.table(3).arrayValue?.compactMap(\.doubleValue) ?? []
            guard !qs.isEmpty, qs.allSatisfy({ (0...1).contains($0) }) else {
                throw LuaArgumentError(index: 3, message: "expected a list of quantiles between 0 and 1, e.g. {0.05, 0.5, 0.95}")
            }
            let groups = try g.set.grouped(by: g.grouping, aggregate: .quantiles(field, qs))
            call.push(.array(groups.map { r in
                .dictionary(["key": .string(r.label), "start": .number(r.start), "count": .integer(Int64(r.count)),
                             "values": .array(r.values.map { .number($0) })])
            }))
            return 1
        }
        groupsClass.method("quantile") { g, call in
            let q = try call.double(3)
            guard (0...1).contains(q) else { throw LuaArgumentError(index: 3, message: "quantile must be between 0 and 1") }
            call.push(Bindings.groupsValue(try g.set.grouped(by: g.grouping, aggregate: .quantile(try call.string(2), q))))
            return 1
        }
    }

    /// `SampleSet` methods that group without arguments (`byWindow` takes a length and an origin).
    /// A grouping over a sample whose time the calendar cannot place raises `GroupingError`.
    static let namedGroupings: [(String, Grouping)] = [("byHour", .localHour), ("byDay", .localDay), ("byHourOfDay", .hourOfDay)]

    /// `GroupedSampleSet` aggregates that take a field name (optional for `count`), besides
    /// `quantile`, `quantiles` and `summarize`. Values are IEEE arithmetic over the present
    /// values (NaN is no value): a sum may be `inf`, a stddev over infinities `nan`.
    static let groupAggregates: [(String, @Sendable (String?) -> GroupAggregate?)] = [
        ("count", { _ in .count }), ("sum", { $0.map { .sum($0) } }), ("mean", { $0.map { .mean($0) } }),
        ("min", { $0.map { .min($0) } }), ("max", { $0.map { .max($0) } }), ("stddev", { $0.map { .stddev($0) } }),
    ]

    /// `SampleSet` aggregates of one field (besides `count`, `quantile`, `weightedMean`, `summarize`).
    static let statPickers: [(String, @Sendable (RunningStats) -> Double)] = [
        ("sum", { $0.sum }), ("mean", { $0.mean }), ("min", { $0.min }), ("max", { $0.max }), ("stddev", { $0.standardDeviation }),
    ]

    /// Groups as a Lua list of `{ key, start, count, value }`; counts and whole-number sums are integers.
    static func groupsValue(_ groups: [GroupResult], integral: Bool = false) -> LuaValue {
        .array(groups.map { g in
            let value: LuaValue = integral && g.value.rounded() == g.value && abs(g.value) < 9e15 ? .integer(Int64(g.value)) : .number(g.value)
            return .dictionary(["key": .string(g.label), "start": .number(g.start), "count": .integer(Int64(g.count)), "value": value])
        })
    }
}

/// A SampleSet with a grouping chosen, waiting for its aggregate.
final class GroupedSet {
    let set: SampleSet
    let grouping: Grouping
    init(set: SampleSet, grouping: Grouping) {
        self.set = set
        self.grouping = grouping
    }
}
