import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel
import StudyReport

/// `report.chart(spec)`: the host side of the stdlib `plot` module (stdlib/plot.lua),
/// which turns a protocol's values into the explicit spec read here:
///
///     { kind = "line"|"step"|"bars"|"heatmap"|"actogram"|"scatter", name = "file_stem",
///       title = "…", xlabel = "…", ylabel = "…", unit = "…",
///       series = { { label = "P1", x = { n = N, … }, y = { n = N, … } }, … },
///       categories = { … }, rows = { … }, columns = { … },
///       cells = { { n = N, … }, … }, fit = true, log = true, xclock = true, yclock = true }
///
/// Value lists carry their length in `n` so that missing values may be nil (or false).
/// Line, step, bar and scatter charts of one name collect a series per call; heatmaps
/// and actograms are one chart per participant, named `name_<participant>`.
extension Bindings {
    func chartFunctions() -> [(String, LuaFunction)] {
        [("chart", { [unowned self] call in
            let spec = try call.table(1)
            let chart = try self.chart(from: spec)
            do { try self.run.report.addChart(chart) } catch let e as ReportError { throw LuaScriptError("plot: \(e.message)") }
            return 0
        })]
    }

    /// Reads and checks a chart spec (errors name the field and what it should hold).
    func chart(from spec: LuaTable) throws -> Chart {
        guard let kindName = spec["kind"]?.stringValue, let kind = Chart.Kind(rawValue: kindName) else {
            throw LuaScriptError("plot: kind must be one of \(Chart.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let name = spec["name"]?.stringValue else { throw LuaScriptError("plot.\(kindName): the chart needs a name (a string; its file is NAME.svg)") }
        func text(_ key: String) throws -> String? {
            guard let v = spec[key], !v.isNil else { return nil }
            guard let s = v.stringValue else { throw LuaScriptError("plot.\(kindName) '\(name)': \(key) must be a string, got \(v.typeName)") }
            return s
        }
        let perParticipant = kind == .heatmap || kind == .actogram
        let title = try text("title") ?? name
        var chart = Chart(name: perParticipant ? "\(name)_\(run.setup.id)" : name, kind: kind,
                          title: perParticipant ? "\(title) — \(run.setup.id)" : title, timeZone: run.clock.timeZone)
        chart.xLabel = try text("xlabel")
        chart.yLabel = try text("ylabel")
        chart.unit = try text("unit")
        chart.fit = spec["fit"]?.boolValue ?? false
        chart.logScale = spec["log"]?.boolValue ?? false
        chart.xClock = spec["xclock"]?.boolValue ?? false
        chart.yClock = spec["yclock"]?.boolValue ?? false
        if perParticipant { chart.panel = Chart.Panel(name: name, participant: run.setup.id) }
        let context = "plot.\(kindName) '\(name)'"
        chart.categories = try strings(spec["categories"], "\(context): categories")
        chart.rows = try strings(spec["rows"], "\(context): rows")
        chart.columns = try strings(spec["columns"], "\(context): columns")
        if let cells = spec["cells"]?.tableValue {
            for (i, row) in cells.entries.enumerated() {
                chart.cells.append(try numbers(row.value, "\(context): cells[\(i + 1)]"))
            }
        }
        for (i, entry) in (spec["series"]?.tableValue?.entries ?? []).enumerated() {
            guard let s = entry.value.tableValue else { throw LuaScriptError("\(context): series[\(i + 1)] must be a table") }
            let y = try numbers(s["y"] ?? .nil, "\(context): series[\(i + 1)].y")
            let x = try numbers(s["x"] ?? .nil, "\(context): series[\(i + 1)].x")
            guard kind == .bars || x.count == y.count else {
                throw LuaScriptError("\(context): series[\(i + 1)] has \(x.count) x values and \(y.count) y values")
            }
            guard kind == .bars || x.allSatisfy({ $0 != nil }) else { throw LuaScriptError("\(context): series[\(i + 1)].x has a missing value") }
            if kind == .bars, y.count != chart.categories.count {
                throw LuaScriptError("\(context): \(chart.categories.count) categories but \(y.count) values")
            }
            chart.series.append(Chart.Series(label: s["label"]?.stringValue ?? run.setup.id, x: x.map { $0 ?? 0 }, y: y))
        }
        return chart
    }

    /// A list of strings (numbers are written as they print).
    func strings(_ value: LuaValue?, _ what: String) throws -> [String] {
        guard let value, !value.isNil else { return [] }
        guard let t = value.tableValue, let items = t.arrayValue else { throw LuaScriptError("\(what) must be a list of strings") }
        return try items.map {
            if let s = $0.stringValue { return s }
            if let i = $0.integerValue { return String(i) }
            throw LuaScriptError("\(what) must be a list of strings, got a \($0.typeName)")
        }
    }

    /// A list of numbers of length `n` (or its largest index), nil/false where missing.
    func numbers(_ value: LuaValue, _ what: String) throws -> [Double?] {
        guard !value.isNil else { return [] }
        guard let t = value.tableValue else { throw LuaScriptError("\(what) must be a list of numbers, got \(value.typeName)") }
        var byIndex: [Int: Double] = [:]
        var count = 0
        for e in t.entries {
            if e.key.stringValue == "n" {
                guard let n = e.value.integerValue, n >= 0, n <= 10_000_000 else { throw LuaScriptError("\(what).n must be a count") }
                count = max(count, Int(n))
                continue
            }
            guard let k = e.key.integerValue, k >= 1, k <= 10_000_000 else { throw LuaScriptError("\(what) must be a list (keys 1, 2, …)") }
            switch e.value {
            case .boolean(false), .nil: break
            default:
                guard let d = e.value.doubleValue else { throw LuaScriptError("\(what)[\(k)] must be a number, got \(e.value.typeName)") }
                byIndex[Int(k)] = d
            }
            count = max(count, Int(k))
        }
        return (0..<count).map { byIndex[$0 + 1] }
    }
}
