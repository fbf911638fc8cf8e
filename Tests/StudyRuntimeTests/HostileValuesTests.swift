import CivilTime
import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel
import XCTest
@testable import StudyRuntime
@testable import StudyReport
@testable import StudyWorlds

/// Values a store or a scenario can hold — NaN, ±inf, ±1e300, times before 1970 or past
/// 2100 — as sample times and as field values, through every grouping and every aggregate
/// (enumerated from the bindings' own tables, so a new one is covered). A Swift trap would
/// kill the test runner: that the tests finish is the no-trap assertion; each call must
/// return a value or fail with a message naming what was wrong, and ordinary inputs must
/// give what a brute-force computation gives.
final class HostileValuesTests: XCTestCase {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2026-03-27 00:00 UTC: three days around Berlin's spring-forward night (2026-03-29).
    static let base = 1_774_569_600.0
    /// Times that are not a time, or beyond the calendar (years 1 to 9999).
    static let unsupportedTimes: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, 1e12, -1e12, .greatestFiniteMagnitude]
    /// Extreme but supported times: 1938, 2128, the calendar's first and last seconds.
    static let extremeTimes: [Double] = [-1e9, 5e9, -62_135_596_800, 253_402_300_799]
    static let hostileValues: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, -1e9, 5e9, 1e12, .greatestFiniteMagnitude, -0.0, Double.leastNonzeroMagnitude]

    /// Every grouping: the named ones and a 15-minute window.
    static var groupings: [(String, Grouping)] {
        Bindings.namedGroupings + [("byWindow", .window(seconds: 900, origin: base))]
    }

    /// One grouped call: an aggregate of a field (none for count), or several quantiles.
    enum GroupCall {
        case one(Aggregate, String?)
        case quantiles(String, [Double])

        func run(_ set: SampleSet, _ grouping: Grouping) throws -> [GroupResult] {
            switch self {
            case .one(let a, let f): try set.grouped(by: grouping, a, of: f)
            case .quantiles(let f, let qs): try set.grouped(by: grouping, quantiles: qs, of: f)
            }
        }
    }

    /// Every grouped aggregate over field `f`: the plain ones by name, then the quantiles.
    static func aggregates(_ f: String) -> [(String, GroupCall)] {
        Aggregate.Name.plain.map { ($0.rawValue, GroupCall.one(Aggregate(plain: $0)!, $0 == .count ? nil : f)) }
            + [("quantile", .one(.quantile(0.3), f)), ("quantiles", .quantiles(f, [0, 0.5, 0.95, 1]))]
    }

    /// Every `summarize` aggregate, by the one name table.
    static func summaryAggregates(_ f: String) -> [SummaryColumn] {
        Aggregate.Name.allCases.map { name in
            let aggregate = Aggregate(plain: name) ?? (name == .quantile ? .quantile(0.75) : .weightedMean(weight: f))
            return SummaryColumn(name: name.rawValue, aggregate: aggregate, field: f)
        }
    }

    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
        mutating func pick<T>(_ a: [T]) -> T { a[below(a.count)] }
    }

    /// Ambient-light rows: times and lux, cut into chunks of random sizes.
    static func batches(_ times: [Double], _ lux: [Double], _ g: inout Generator) -> [SampleBatch] {
        var out: [SampleBatch] = []
        var i = 0
        while i < times.count {
            let n = min(times.count - i, 1 + g.below(12))
            let writes = (i..<(i + n)).map { base + 86_400 * 4 + Double($0) }
            out.append(SampleBatch(sensor: .ambientLightSensor, writeTimes: writes, times: Array(times[i..<(i + n)]),
                                   columns: [Column(name: "lux", data: .double(Array(lux[i..<(i + n)])))]))
            i += n
        }
        return out
    }

    /// The label of `t`'s group, computed from Foundation's calendar directly.
    static func bruteLabel(_ t: Double, _ grouping: Grouping) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = berlin
        let c = cal.dateComponents([.year, .month, .day, .hour], from: Date(timeIntervalSince1970: t))
        switch grouping {
        case .localDay: return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
        case .localHour: return String(format: "%04d-%02d-%02d %02d:00", c.year!, c.month!, c.day!, c.hour!)
        case .hourOfDay: return String(format: "%02d", c.hour!)
        case .window(let s, let o): return LocalTime.wallLabel(o + ((t - o) / s).rounded(.down) * s, "%Y-%m-%dT%H:%M:%SZ")
        }
    }

    /// R type 7 quantile of sorted values.
    static func type7(_ sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let h = Double(sorted.count - 1) * q
        let lo = Int(h.rounded(.down)), hi = min(lo + 1, sorted.count - 1)
        return sorted[lo] + (h - Double(lo)) * (sorted[hi] - sorted[lo])
    }

    static func brute(_ call: GroupCall, _ values: [Double], rows: Int) -> [Double] {
        let v = values.filter { !$0.isNaN }
        let n = Double(v.count), mean = v.reduce(0, +) / n
        switch call {
        case .one(.count, _): return [Double(rows)]
        case .one(.sum, _): return [v.reduce(0, +)]
        case .one(.mean, _): return [v.isEmpty ? .nan : mean]
        case .one(.min, _): return [v.min() ?? .nan]
        case .one(.max, _): return [v.max() ?? .nan]
        case .one(.stddev, _): return [v.count > 1 ? (v.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / (n - 1)).squareRoot() : .nan]
        case .one(.quantile(let q), _): return [type7(v.sorted(), q)]
        case .one(.weightedMean, _): XCTFail("grouped sets have no weightedMean"); return []
        case .quantiles(_, let qs): return qs.map { type7(v.sorted(), $0) }
        }
    }

    static func same(_ a: Double, _ b: Double) -> Bool {
        a.isNaN ? b.isNaN : (a == b || abs(a - b) <= 1e-9 * max(1, abs(a), abs(b)))
    }

    /// A few hundred random batches through every grouping × aggregate, and every summarize kind.
    func testEveryGroupingAndAggregateIsTotalAndExact() throws {
        var g = Generator(state: 21)
        var (ordinaryCases, refused, extremeCases) = (0, 0, 0)
        for _ in 0..<300 {
            let n = 1 + g.below(40)
            let kind = g.below(4)            // 0 ordinary, 1 hostile values, 2 unsupported times, 3 extreme times
            var times = (0..<n).map { _ in HostileValuesTests.base + Double(g.below(3 * 86_400 * 4)) / 4 }
            if g.chance(50) { times.sort() }
            var lux = (0..<n).map { _ in Double(g.below(2000)) / 8 }
            if kind == 1 { for i in lux.indices where g.chance(30) { lux[i] = g.pick(HostileValuesTests.hostileValues) } }
            if kind == 2 { for i in times.indices where g.chance(20) || i == n / 2 { times[i] = g.pick(HostileValuesTests.unsupportedTimes) } }
            if kind == 3 { for i in times.indices where g.chance(30) { times[i] = g.pick(HostileValuesTests.extremeTimes) } }
            let set = SampleSet(sensor: .ambientLightSensor, timeZone: HostileValuesTests.berlin,
                                batches: HostileValuesTests.batches(times, lux, &g))
            let firstBad = times.first { LocalTime.rangeProblem($0) != nil }

            // Ungrouped aggregates never look at the calendar: they always answer, as IEEE arithmetic does.
            let stats = try set.stats("lux")
            let present = lux.filter { !$0.isNaN }
            XCTAssertEqual(stats.count, present.count)
            XCTAssertEqual(try set.count(), n)
            if !present.isEmpty {
                XCTAssertEqual(stats.min, present.min()!)
                XCTAssertEqual(stats.max, present.max()!)
            }
            _ = try set.summarize(HostileValuesTests.summaryAggregates("lux"), by: nil)
            _ = try SampleSetDisplay.summary(set, rows: 3)
            _ = try set.filtered(RowFilter(field: "time", op: .gt, operand: .number(.nan))).count()

            for (gname, grouping) in HostileValuesTests.groupings {
                var calls: [() throws -> [GroupResult]] = HostileValuesTests.aggregates("lux").map { _, a in { try a.run(set, grouping) } }
                calls.append {
                    try set.summarize(HostileValuesTests.summaryAggregates("lux"), by: grouping)
                        .map { GroupResult(label: $0.label, start: $0.start, count: $0.rows, value: $0.values[0], values: $0.values) }
                }
                for (k, call) in calls.enumerated() {
                    let aggName = k < HostileValuesTests.aggregates("lux").count ? HostileValuesTests.aggregates("lux")[k].0 : "summarize"
                    if let bad = firstBad {
                        XCTAssertThrowsError(try call(), "\(gname) \(aggName) over time \(bad)") { error in
                            let expected = "cannot group ambientLightSensor samples \(grouping.phrase): sample time "
                                + (bad.isFinite ? "\(NumberText.plain(bad)) is outside the calendar (the years 1 to 9999: -62135596800 to 253402300799 seconds since 1970)"
                                                : "\(NumberText.plain(bad)) is not a time (expected a finite number of seconds since 1970)")
                            XCTAssertEqual("\(error)", expected)
                        }
                        refused += 1
                        continue
                    }
                    let groups = try call()
                    // A field aggregate's count is of present values (NaN is none); count and summarize count rows.
                    if kind != 1 || aggName == "count" || aggName == "summarize" {
                        XCTAssertEqual(groups.map(\.count).reduce(0, +), n, "\(gname) \(aggName): every row in one group")
                    }
                    if kind == 3 { extremeCases += 1; continue }
                    // Brute force: rows by their label, in time order of first appearance.
                    var byLabel: [String: [Double]] = [:], rows: [String: Int] = [:]
                    for (t, x) in zip(times, lux) {
                        let label = HostileValuesTests.bruteLabel(t, grouping)
                        byLabel[label, default: []].append(x)
                        rows[label, default: 0] += 1
                    }
                    XCTAssertEqual(Set(groups.map(\.label)), Set(byLabel.keys), "\(gname) \(aggName)")
                    XCTAssertEqual(groups.map(\.label), groups.map(\.label).sorted(), "\(gname) \(aggName): groups in order")
                    for group in groups {
                        if kind == 0 { XCTAssertEqual(group.count, rows[group.label], "\(gname) \(aggName) \(group.label)") }
                        guard k < HostileValuesTests.aggregates("lux").count else { continue }
                        let agg = HostileValuesTests.aggregates("lux")[k].1
                        let want = HostileValuesTests.brute(agg, byLabel[group.label] ?? [], rows: group.count)
                        let got = group.values.isEmpty ? [group.value] : group.values
                        if kind == 0 {
                            XCTAssertEqual(got.count, want.count)
                            for (a, b) in zip(got, want) {
                                XCTAssertTrue(HostileValuesTests.same(a, b), "\(gname) \(aggName) \(group.label): \(a) vs brute force \(b)")
                            }
                            ordinaryCases += 1
                        } else if case .one(.min, _) = agg {
                            XCTAssertTrue(HostileValuesTests.same(got[0], want[0]), "min over hostile values: \(got[0]) vs \(want[0])")
                        } else if case .one(.max, _) = agg {
                            XCTAssertTrue(HostileValuesTests.same(got[0], want[0]), "max over hostile values: \(got[0]) vs \(want[0])")
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(ordinaryCases, 1000)
        XCTAssertGreaterThan(refused, 500)
        XCTAssertGreaterThan(extremeCases, 100)
    }

    /// Labels, day starts and `CivilDays` over every hostile value: no trap; outside the calendar
    /// the label is the number itself.
    func testCalendarFunctionsAreTotal() {
        let all = HostileValuesTests.unsupportedTimes + HostileValuesTests.extremeTimes + HostileValuesTests.hostileValues
        for t in all {
            let inside = LocalTime.supportedInstants.contains(t)
            XCTAssertEqual(LocalTime.rangeProblem(t) == nil, inside)
            let label = LocalTime.dayLabel(t, HostileValuesTests.berlin)
            XCTAssertEqual(label == NumberText.plain(t), !inside, "\(t): \(label)")
            _ = LocalTime.minuteLabel(t, HostileValuesTests.berlin)
            _ = LocalTime.wallLabel(t, "%Y-%m-%d")
            _ = LocalTime.startOfDay(t, HostileValuesTests.berlin)
            _ = LocalTime.nextDay(t, HostileValuesTests.berlin)
            let clock = ZoneTimeline(home: HostileValuesTests.berlin, changes: []).clock(from: HostileValuesTests.base, to: HostileValuesTests.base + 86_400)
            _ = clock.day(containing: t)
        }
        XCTAssertEqual(LocalTime.dayLabel(-1e9, TimeZone(identifier: "UTC")!), "1938-04-24")
        XCTAssertEqual(LocalTime.wallLabel(.nan, "%Y"), "nan")
        for d: Int64 in [.min, .max, .min + 1, -1, 0, 1 << 62] {
            _ = CivilDays.date(d)
            _ = CivilDays.days(year: d, month: d, day: d)
            _ = CivilDays.isoWeekday(d)
        }
        XCTAssertEqual(CivilDays.floorDiv(.min, 86_400), -106_751_991_167_301)
        XCTAssertEqual(CivilDays.floorDiv(-1, 86_400), -1)
        XCTAssertEqual(CivilDays.floorDiv(-86_400, 86_400), -1)
    }

    /// Charts over non-finite and huge values render, with only finite numbers in attributes.
    func testChartsRenderValidSVGOverHostileValues() {
        let values: [Double?] = [.nan, .infinity, -.infinity, 1e300, -1e300, 1.7e308, -1.7e308, 0, Double.leastNonzeroMagnitude, nil, 3]
        let xs: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, -1e9, 5e9, 1e12, HostileValuesTests.base, HostileValuesTests.base + 3600, 0]
        for kind in Chart.Kind.allCases {
            for shift in 0..<values.count {
                var chart = Chart(name: "c", kind: kind, title: "hostile", timeZone: HostileValuesTests.berlin)
                let ys = (0..<values.count).map { values[($0 + shift) % values.count] }
                chart.series = [Chart.Series(label: "a", x: kind == .bars ? [] : xs, y: ys), Chart.Series(label: "b", x: kind == .bars ? [] : Array(xs.reversed()), y: ys.reversed())]
                chart.categories = (0..<values.count).map { "c\($0)" }
                chart.rows = ["r1", "r2"]
                chart.columns = ["00", "01"]
                chart.cells = [Array(ys.prefix(6)), Array(ys.suffix(5))]
                chart.fit = true
                chart.logScale = shift % 2 == 0
                let svg = ChartSVG.render(chart)
                XCTAssertTrue(svg.hasSuffix("</svg>\n"))
                // Every attribute value that starts like a number is a finite number.
                let pattern = try! NSRegularExpression(pattern: #"(?:x|y|x1|y1|x2|y2|cx|cy|width|height|d)="([^"]*)""#)
                for m in pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)) {
                    let text = String(svg[Range(m.range(at: 1), in: svg)!])
                    XCTAssertFalse(text.lowercased().contains("nan") || text.lowercased().contains("inf"), "\(kind): \(text)")
                }
            }
        }
        XCTAssertEqual(ChartNumber.value(.nan), "nan")
        XCTAssertEqual(ChartNumber.coord(.infinity), "1000000")
        XCTAssertEqual(ChartNumber.ticks(0, Double.leastNonzeroMagnitude).values, [0, Double.leastNonzeroMagnitude])
        XCTAssertEqual(ChartNumber.ticks(-1.7e308, 1.7e308).values, [-1.7e308, 1.7e308])
    }

    // MARK: from Lua

    /// A world whose one phone holds ambient-light samples with the given times and lux,
    /// written one a second from the start of day 2 (so a fetch on day 3 gets them all).
    struct HostileWorld: CohortWorld, WorkerWorld, SampleSource {
        let start: Double
        let times: [Double]
        let lux: [Double]
        var source: any SampleSource { self }
        func open(fresh: Bool) -> any WorkerWorld { self }
        func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange] { [] }
        func devices(participant: String) -> [SRDevice] { [.defaultPhone] }
        func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double) -> SampleBatch {
            let rows = times.indices.filter { i in let w = start + 86_400 + Double(i); return w > after && w <= through }
            guard sensor == .ambientLightSensor, !rows.isEmpty else { return SampleBatch(sensor: sensor) }
            return SampleBatch(sensor: sensor, writeTimes: rows.map { start + 86_400 + Double($0) }, times: rows.map { times[$0] },
                               columns: [Column(name: "lux", data: .double(rows.map { lux[$0] }))])
        }
    }

    struct HostilePlanner: CohortPlanner {
        let times: [Double]
        let lux: [Double]
        func plan(_ options: StudyOptions) throws -> CohortPlan {
            let utc = TimeZone(identifier: "UTC")!
            let start = LocalTime.parse("2026-03-02", utc)!
            let settings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                       start: start, days: 3, seed: 7, limits: options.limits, switches: WorldSwitches(), failFast: false)
            return CohortPlan(settings: settings, setups: [ParticipantSetup(id: "P1", timeZone: HostileValuesTests.berlin)],
                              world: HostileWorld(start: start, times: times, lux: lux), facts: [], warnings: [])
        }
    }

    /// The protocol: every SampleSet aggregate and every grouping × aggregate (names from the
    /// bindings' tables), `where`, the display, `time`/`os.date`/`string.format` over each
    /// hostile value, and plots of them; one line per call, "ok" or the error.
    static var luaSweep: String {
        let list = { (names: [String]) in names.map { "\"\($0)\"" }.joined(separator: ", ") }
        return """
        local T = require "t"
        local plot = require "plot"
        local stdtime = require "time"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        local hostile = { 0/0, math.huge, -math.huge, 1e300, -1e300, -1e9, 5e9, 1e12, math.maxinteger, math.mininteger }
        local function try(label, f, ...)
          local ok, r = pcall(f, ...)
          print(label .. " " .. (ok and "ok" or ("error: " .. tostring(r))))
        end
        schedule.at("day 3 12:00", function(now)
          local set = light:samples { from = time.studyStart(), to = now }
          print("rows " .. set:count())
          for _, name in ipairs { \(list(Aggregate.Name.plain.map(\.rawValue))) } do try("set:" .. name, set[name], set, "lux") end
          try("set:quantile", set.quantile, set, "lux", 0.5)
          try("set:weightedMean", set.weightedMean, set, "lux", "lux")
          try("set:summarize", set.summarize, set, { n = { "count" }, m = { "mean", "lux" } })
          try("set:where", function() return set:where("lux", ">", 0/0):count() + set:where("time", "<", math.huge):count() end)
          try("set:display", __test.metamethod("SampleSet.__inspect"), set)
          try("set:first", set.first, set, 3)
          local groupings = {}
          for _, name in ipairs { \(list(Bindings.namedGroupings.map(\.0))) } do groupings[#groupings + 1] = { name, set[name](set) } end
          groupings[#groupings + 1] = { "byWindow", set:byWindow(900) }
          for _, pair in ipairs(groupings) do
            local name, g = pair[1], pair[2]
            for _, agg in ipairs { \(list(Aggregate.Name.plain.map(\.rawValue))) } do try(name .. ":" .. agg, g[agg], g, "lux") end
            try(name .. ":quantile", g.quantile, g, "lux", 0.5)
            try(name .. ":quantiles", g.quantiles, g, "lux", { 0.1, 0.9 })
            try(name .. ":summarize", g.summarize, g, { n = { "count" }, q = { "quantile", "lux", 0.5 } })
          end
          for i, v in ipairs(hostile) do
            try("time.day " .. i, time.day, v)
            try("time.startOfDay " .. i, time.startOfDay, v)
            try("time.format " .. i, time.format, v)
            try("time.hourOfDay " .. i, stdtime.hourOfDay, v)
            try("time.week " .. i, stdtime.week, v)
            try("time.studyDay " .. i, stdtime.studyDay, v)
            try("os.date " .. i, os.date, "*t", v)
            try("os.date! " .. i, os.date, "!%Y-%m-%d %H:%M:%S", v)
            try("string.format " .. i, string.format, "%d", v)
            try("os.time " .. i, os.time, { year = v, month = 1, day = 1 })
            try("report.row " .. i, report.row, "hostile", { value = v })
          end
          try("time.daysBetween", stdtime.daysBetween, -1e300, 1e300)
          try("plot.line", plot.line, "line", { x = hostile, y = hostile })
          try("plot.scatter", plot.scatter, "scatter", { x = hostile, y = hostile })
          try("plot.bars", plot.bars, "bars", { x = { "a", "b", "c" }, y = { 0/0, math.huge, -1e300 } })
          try("plot.hourByDay", plot.hourByDay, "hbd", { { start = 0/0, value = 1 } }, { from = time.studyStart(), to = now })
          print("done")
        end)
        """
    }

    /// Runs the sweep over one world; returns the printed lines and the runner.
    func runSweep(times: [Double], lux: [Double]) throws -> (lines: [String], runner: StudyRunner) {
        setenv("SENSORIUM_TEST_BUILTINS", "1", 1)
        defer { unsetenv("SENSORIUM_TEST_BUILTINS") }
        let h = try ProtocolHarness()
        let path = try h.write("protocol.lua", HostileValuesTests.luaSweep)
        var options = StudyOptions(protocolPath: path, moduleDirectories: [h.folder.path, ProtocolHarness.stdlibFolder])
        options.limits.timeLimitMilliseconds = 0
        let runner = StudyRunner(options: options, planner: HostilePlanner(times: times, lux: lux))
        var output = ""
        try runner.run { output += $0 }
        return (output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("[") }, runner)
    }

    /// From Lua: a NaN sample time makes every grouping raise an error naming the sensor and
    /// the time, while ungrouped aggregates, filters and the display answer; time, date and
    /// format functions raise clear errors over hostile values; plots render valid SVG.
    func testLuaSweepOverHostileTimesAndValues() throws {
        let base = 1_772_496_000.0     // 2026-03-03 00:00 UTC
        let times = [base, .nan, base + 60, 1e300, -1e9]
        let lux = [10, .infinity, .nan, 1e300, -1e300]
        let (lines, runner) = try runSweep(times: times, lux: lux)
        XCTAssertTrue(lines.first?.hasPrefix("rows ") == true)
        XCTAssertEqual(lines.last, "done")
        let result = Dictionary(lines.compactMap { line -> (String, String)? in
            guard let space = line.firstIndex(of: " ") else { return nil }
            // Labels may hold one space ("time.day 1"): split at " ok" / " error: ".
            if let r = line.range(of: " ok", options: .backwards), r.upperBound == line.endIndex { return (String(line[..<r.lowerBound]), "ok") }
            if let r = line.range(of: " error: ") { return (String(line[..<r.lowerBound]), String(line[r.upperBound...])) }
            return (String(line[..<space]), String(line[line.index(after: space)...]))
        }, uniquingKeysWith: { a, _ in a })
        // Every grouping × aggregate: the NaN time (the second row) is named.
        for name in Bindings.namedGroupings.map(\.0) + ["byWindow"] {
            for agg in Aggregate.Name.plain.map(\.rawValue) + ["quantile", "quantiles", "summarize"] {
                let r = try XCTUnwrap(result["\(name):\(agg)"], "\(name):\(agg) missing")
                XCTAssertTrue(r.hasSuffix("cannot group ambientLightSensor samples \(name == "byWindow" ? "by 900 s windows" : name == "byHour" ? "by hour" : name == "byDay" ? "by day" : "by hour of day"): sample time nan is not a time (expected a finite number of seconds since 1970)"), "\(name):\(agg): \(r)")
            }
        }
        for name in Aggregate.Name.allCases.map(\.rawValue) + ["summarize", "where", "display", "first"] {
            XCTAssertEqual(result["set:\(name)"], "ok", "set:\(name)")
        }
        XCTAssertTrue(result["time.day 1"]?.contains("expected a time: nan is not a time") == true, "\(result["time.day 1"] ?? "")")
        XCTAssertTrue(result["time.startOfDay 4"]?.contains("expected a time: 1e+300 is outside the calendar (the years 1 to 9999") == true)
        XCTAssertEqual(result["time.day 6"], "ok")                          // 1938
        XCTAssertEqual(result["time.day 7"], "ok")                          // 2128
        XCTAssertTrue(result["time.day 8"]?.contains("outside the calendar") == true) // year 33658
        XCTAssertTrue(result["os.date 1"]?.contains("number has no integer representation") == true, "\(result["os.date 1"] ?? "")")
        XCTAssertEqual(result["os.date 8"], "ok")
        XCTAssertTrue(result["os.date 9"]?.contains("number has no integer representation") == true, "\(result["os.date 9"] ?? "")")
        XCTAssertTrue(result["string.format 4"]?.contains("number has no integer representation") == true)
        XCTAssertTrue(result["os.time 4"]?.contains("not an integer") == true, "\(result["os.time 4"] ?? "")")
        XCTAssertTrue(result["os.time 9"]?.contains("out-of-bound") == true, "\(result["os.time 9"] ?? "")")
        XCTAssertTrue(result["time.daysBetween"]?.contains("outside the calendar") == true)
        XCTAssertTrue(result["time.studyDay 8"]?.contains("1000000000000 is outside the calendar") == true, "\(result["time.studyDay 8"] ?? "")")
        XCTAssertEqual(result["time.studyDay 6"], "ok")
        XCTAssertTrue(result["time.hourOfDay 1"]?.contains("number has no integer representation") == true)
        XCTAssertTrue(result["time.week 4"]?.contains("number has no integer representation") == true)
        XCTAssertTrue(result["plot.hourByDay"]?.contains("nan is not a time") == true, "\(result["plot.hourByDay"] ?? "")")
        XCTAssertEqual(result["report.row 1"], "ok")
        for name in ["plot.line", "plot.scatter", "plot.bars", "plot.hourByDay"] {
            XCTAssertNotNil(result[name], name)
        }
        for chart in runner.report.charts {
            let svg = ChartSVG.render(chart)
            XCTAssertFalse(svg.contains("\"nan") || svg.contains("\"inf") || svg.contains("\"-inf"), chart.name)
        }
        _ = runner.report.renderText()
    }

    /// Random batches from Lua, times and values mixed: the run survives, a grouping either
    /// answers or raises the grouping error, and ungrouped aggregates always answer.
    func testLuaSweepOverRandomBatches() throws {
        var g = Generator(state: 2121)
        let base = 1_772_496_000.0
        for _ in 0..<12 {
            let n = 1 + g.below(12)
            let times = (0..<n).map { _ in g.chance(25) ? g.pick(HostileValuesTests.unsupportedTimes + HostileValuesTests.extremeTimes) : base + Double(g.below(86_400)) }
            let lux = (0..<n).map { _ in g.chance(30) ? g.pick(HostileValuesTests.hostileValues) : Double(g.below(1000)) }
            let (lines, _) = try runSweep(times: times, lux: lux)
            // SensorKit may deliver a result twice (the duplicate switch): at least every row.
            XCTAssertGreaterThanOrEqual(Int(lines.first?.dropFirst(5) ?? "") ?? 0, n, lines.first ?? "")
            XCTAssertEqual(lines.last, "done")
            let grouped = lines.filter { $0.hasPrefix("by") }
            XCTAssertEqual(grouped.count, 4 * (Aggregate.Name.plain.count + 3))
            let bad = times.contains { LocalTime.rangeProblem($0) != nil }
            for line in grouped {
                if bad { XCTAssertTrue(line.contains("error: ") && line.contains("cannot group ambientLightSensor samples"), line) }
                else { XCTAssertTrue(line.hasSuffix(" ok"), line) }
            }
            for line in lines where line.hasPrefix("set:") { XCTAssertTrue(line.hasSuffix(" ok"), line) }
        }
    }
}
