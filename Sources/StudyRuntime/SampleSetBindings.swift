@_spi(Bindings) import LuaHost
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
        for name in Aggregate.Name.allCases {
            c.method(name.rawValue) { s, call in
                switch name {
                case .count: call.push(try s.count())
                case .quantile: call.push(try s.quantile(try call.string(2), try Bindings.quantile(call, 3)))
                case .weightedMean: call.push(try s.weightedMean(try call.string(2), weight: try call.optionalString(3) ?? "duration"))
                case .sum, .mean, .min, .max, .stddev: call.push(Aggregate(plain: name)!.value(of: try s.stats(try call.string(2)))!)
                }
                return 1
            }
        }
        c.method("where", settles: false) { [unowned self] s, call in
            // Tables and functions are refused by type; reading them whole would only cost time.
            func argument(_ i: Int32) -> LuaValue {
                switch call.typeName(i) {
                case "nil", "no value", "boolean", "number", "string": call.value(i)
                case let other: .opaque(other)
                }
            }
            let filter: RowFilter
            switch Bindings.rowFilter(field: argument(2), op: argument(3), value: argument(4)) {
            case .success(let f): filter = f
            case .failure(let e): throw LuaArgumentError(index: 1 + Int32(e.element), message: e.message)
            }
            call.push(s.filtered(filter), as: self.sampleSetClass)
            return 1
        }
        for (name, grouping) in Bindings.namedGroupings {
            c.method(name, settles: false) { [unowned self] s, call in
                // `set:byDay("lux")` means `set:byDay():mean("lux")` or the like: say so rather than ignore it.
                if call.count > 1 {
                    throw LuaScriptError("\(name) takes no arguments (got \(call.count - 1)): group first, then aggregate a field, "
                        + "as in set:\(name)():mean(\"field\") or set:\(name)():count()")
                }
                call.push(GroupedSet(set: s, grouping: grouping), as: self.groupsClass)
                return 1
            }
        }
        c.method("byWindow", settles: false) { [unowned self] s, call in
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
        // Grouped sets have every aggregate but weightedMean (summarize has it). Their
        // results are deferred tables: the aggregates asked of one set before any is used
        // are answered by one pass (`DeferredSummaries`).
        for name in Aggregate.Name.allCases where name != .weightedMean {
            groupsClass.method(name.rawValue, settles: false) { [unowned self] g, call in
                let aggregate: Aggregate, field: String?
                switch name {
                case .count: (aggregate, field) = (.count, nil)
                case .quantile: (aggregate, field) = (.quantile(try Bindings.quantile(call, 3)), try call.string(2))
                default:
                    guard let f = try call.optionalString(2) else { throw call.argumentError(2, expected: "field name") }
                    (aggregate, field) = (Aggregate(plain: name)!, f)
                }
                let integral = aggregate.isIntegral
                self.summaries.push(SummaryRequest(set: g.set, aggregates: GroupResult.columns(aggregate, of: field), grouping: g.grouping),
                                    shape: { Bindings.groupsValue(GroupResult.of($0), integral: integral) }, call: call)
                return 1
            }
        }
        groupsClass.method("quantiles", settles: false) { [unowned self] g, call in
            let field = try call.string(2)
            let qs = try call.table(3).arrayValue?.compactMap(\.doubleValue) ?? []
            guard !qs.isEmpty, qs.allSatisfy({ (0...1).contains($0) }) else {
                throw LuaArgumentError(index: 3, message: "expected a list of quantiles between 0 and 1, e.g. {0.05, 0.5, 0.95}")
            }
            self.summaries.push(SummaryRequest(set: g.set, aggregates: GroupResult.columns(quantiles: qs, of: field), grouping: g.grouping),
                                shape: { rows in
                                    .array(GroupResult.of(rows, keepingValues: true).map { r in
                                        .dictionary(["key": .string(r.label), "start": .number(r.start), "count": .integer(Int64(r.count)),
                                                     "values": .array(r.values.map { .number($0) })])
                                    })
                                }, call: call)
            return 1
        }
    }

    /// The one reading of a row filter `field op value`, for `set:where(field, op, value)` and
    /// `summarize`'s `where = { field, op, value }` alike: the field a string; the operator
    /// one of `< <= > >= == ~=` (`!=` reads as `~=`); the value a number, a string (text
    /// fields, `==` and `~=`) or a boolean (boolean fields such as `onWrist` hold 1 for true
    /// and 0 for false: `==` and `~=` only). A failure names the element (1 field, 2
    /// operator, 3 value) and what was expected.
    static func rowFilter(field: LuaValue?, op: LuaValue?, value: LuaValue?) -> Result<RowFilter, RowFilterSyntaxError> {
        func fail(_ element: Int, _ message: String) -> Result<RowFilter, RowFilterSyntaxError> {
            .failure(RowFilterSyntaxError(element: element, message: message))
        }
        guard let name = field?.stringValue else { return fail(1, "expected a field name (string), got \(field?.typeName ?? "nil")") }
        guard let opText = op?.stringValue, let op = RowFilter.Op(rawValue: opText == "!=" ? "~=" : opText) else {
            return fail(2, "operator must be one of < <= > >= == ~=")
        }
        let operand: RowFilter.Operand
        switch value {
        case .string, .bytes: operand = .text(value!.stringValue!)
        case .integer, .number: operand = .number(value!.doubleValue!)
        case .boolean(let b):
            guard op == .eq || op == .ne else { return fail(3, "a boolean compares only with == or ~=, not \(opText)") }
            operand = .number(b ? 1 : 0)
        default: return fail(3, "expected a number, a string or a boolean to compare with, got \(value?.typeName ?? "nil")")
        }
        return .success(RowFilter(field: name, op: op, operand: operand))
    }

    /// `SampleSet` methods that group without arguments (`byWindow` takes a length and an origin).
    /// A grouping over a sample whose time the calendar cannot place raises `GroupingError`.
    static let namedGroupings: [(String, Grouping)] = [("byHour", .localHour), ("byDay", .localDay), ("byHourOfDay", .hourOfDay)]

    /// The quantile argument at `index`: a number in 0…1. Aggregate values are IEEE
    /// arithmetic over the present values (NaN is no value): a sum may be `inf`, a stddev
    /// over infinities `nan`.
    static func quantile(_ call: LuaCall, _ index: Int32) throws -> Double {
        let q = try call.double(index)
        guard (0...1).contains(q) else { throw LuaArgumentError(index: index, message: "quantile must be between 0 and 1") }
        return q
    }

    /// Groups as a Lua list of `{ key, start, count, value }`; counts and whole-number sums are integers.
    static func groupsValue(_ groups: [GroupResult], integral: Bool = false) -> LuaValue {
        .array(groups.map { g in
            .dictionary(["key": .string(g.label), "start": .number(g.start), "count": .integer(Int64(g.count)),
                         "value": aggregateValue(g.value, integral: integral)])
        })
    }

    /// An aggregate's value for Lua: an integer when `integral` (`Aggregate.isIntegral`) and
    /// the value is a whole number below 9e15, else a float.
    static func aggregateValue(_ v: Double, integral: Bool) -> LuaValue {
        integral && v.rounded() == v && abs(v) < 9e15 ? .integer(Int64(v)) : .number(v)
    }
}

/// A row filter written wrongly: which element of `field, op, value` (1…3) and why.
struct RowFilterSyntaxError: Error {
    var element: Int
    var message: String
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
