import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest
@testable import StudyRuntime
@testable import StudyReport
import SensorKitModel
import JSONText

/// Charts (stdlib `plot` → `report.chart` → `ChartSVG`) and the HTML run report.
final class ChartTests: XCTestCase {
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// Parses `text` as XML; fails the test with the parser's message otherwise.
    func parseXML(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> XMLDocument? {
        do { return try XMLDocument(data: Data(text.utf8)) } catch {
            XCTFail("not well-formed XML: \(error)", file: file, line: line)
            return nil
        }
    }

    func elements(_ doc: XMLDocument?, _ name: String) -> [XMLElement] {
        ((try? doc?.nodes(forXPath: "//*[local-name()='\(name)']")) ?? []).compactMap { $0 as? XMLElement }
    }

    func lineChart(_ y: [Double?], title: String = "Steps") -> Chart {
        var c = Chart(name: "steps", kind: .line, title: title, timeZone: berlin)
        let start = 1_774_738_800.0 - 2 * 86_400   // 2026-03-27 00:00 Berlin
        c.series = [Chart.Series(label: "P1", x: y.indices.map { start + Double($0) * 43_200 }, y: y)]
        c.unit = "steps"
        return c
    }

    func testEveryKindRendersWellFormedDeterministicSVG() throws {
        var charts: [Chart] = [lineChart([1, 2, nil, 4, 5])]
        var step = lineChart([3, 1, 4]); step.kind = .step; charts.append(step)
        var bars = Chart(name: "b", kind: .bars, title: "Bars", timeZone: berlin)
        bars.categories = ["Mon", "Tue"]
        bars.series = [.init(label: "A", x: [], y: [1, -2]), .init(label: "B", x: [], y: [nil, 3])]
        charts.append(bars)
        var heat = Chart(name: "h", kind: .heatmap, title: "Heat", timeZone: berlin)
        heat.rows = ["d1", "d2"]; heat.columns = ["00", "01"]; heat.cells = [[1, nil], [10, 100]]; heat.logScale = true
        charts.append(heat)
        var acto = Chart(name: "a", kind: .actogram, title: "Acto", timeZone: berlin)
        acto.rows = ["d1", "d2"]; acto.cells = [[0, 5, nil, 1], [2, 0, 0, 9]]
        charts.append(acto)
        var scatter = Chart(name: "s", kind: .scatter, title: "Scatter", timeZone: berlin)
        scatter.series = [.init(label: "P1", x: [1, 2, 3, 4], y: [2, 4, 6, 8])]
        scatter.fit = true
        charts.append(scatter)
        for chart in charts {
            let svg = ChartSVG.render(chart)
            XCTAssertEqual(svg, ChartSVG.render(chart), "\(chart.kind) is deterministic")
            let doc = parseXML(svg)
            XCTAssertEqual(doc?.rootElement()?.name, "svg", "\(chart.kind)")
            XCTAssertFalse(svg.contains("nan") || svg.contains("inf"), "\(chart.kind) has no non-finite coordinates")
        }
        // The fit of y = 2x is exact, and its text says so.
        XCTAssertTrue(ChartSVG.render(scatter).contains("P1: y = 0 + 2·x, r = 1.00, n = 4"), ChartSVG.render(scatter))
    }

    func testTitlesAndLabelsAreEscaped() {
        let svg = ChartSVG.render(lineChart([1, 2], title: "a < b & \"c\""))
        XCTAssertTrue(svg.contains("a &lt; b &amp; &quot;c&quot;"))
        XCTAssertNotNil(parseXML(svg))
    }

    /// A missing value breaks the line instead of being drawn as zero.
    func testMissingValueBreaksTheLine() {
        let doc = parseXML(ChartSVG.render(lineChart([1, 2, nil, 4, 5])))
        XCTAssertEqual(elements(doc, "path").count, 2)
        let whole = parseXML(ChartSVG.render(lineChart([1, 2, 3, 4, 5])))
        XCTAssertEqual(elements(whole, "path").count, 1)
    }

    /// Heatmap cells without data are grey "no data", not the colour of the lowest value.
    func testHeatmapMissingCellsAreNotZero() {
        var heat = Chart(name: "h", kind: .heatmap, title: "Heat", timeZone: berlin)
        heat.rows = ["d1"]; heat.columns = ["00", "01", "02"]; heat.cells = [[0, nil, 10]]
        let rects = elements(parseXML(ChartSVG.render(heat)), "rect")
        let titled = rects.filter { $0.stringValue?.hasPrefix("d1 ") == true }
        XCTAssertEqual(titled.map { $0.stringValue ?? "" }, ["d1 00: 0", "d1 01: no data", "d1 02: 10"])
        func fill(_ e: XMLElement) -> String? { e.attributes?.first { $0.localName == "fill" || $0.name == "fill" }?.stringValue }
        XCTAssertEqual(titled.map(fill), [ChartSVG.ramp(0), ChartSVG.missing, ChartSVG.ramp(1)])
    }

    /// Time axes tick at local midnights, also around the spring-forward day (23 hours).
    func testTimeTicksAreLocalMidnightsAcrossDST() {
        let from = 1_774_566_000.0        // 2026-03-27 00:00 CET
        let ticks = ChartSVG.timeTicks(from, from + 4 * 86_400, berlin)
        // Four 24-hour spans from Mar 27 00:00 CET end at Mar 31 01:00 CEST: five local midnights.
        XCTAssertEqual(ticks.marks, [from, from + 86_400, from + 2 * 86_400, from + 3 * 86_400 - 3600, from + 4 * 86_400 - 3600])
        // Labels sit mid-day: 11.5 hours into the 23-hour day of the change.
        XCTAssertEqual(ticks.labels.map(\.1), ["Mar 27", "Mar 28", "Mar 29", "Mar 30"])
        XCTAssertEqual(ticks.labels.map(\.0), [from + 43_200, from + 86_400 + 43_200, from + 2 * 86_400 + 41_400,
                                               from + 3 * 86_400 - 3600 + 43_200])
        let day = ChartSVG.timeTicks(from, from + 86_400, berlin)
        XCTAssertEqual(day.labels.map(\.1), ["00:00", "03:00", "06:00", "09:00", "12:00", "15:00", "18:00", "21:00", "00:00"])
        XCTAssertEqual(day.marks, day.labels.map(\.0))
    }

    func testNumberFormattingIsFixed() {
        XCTAssertEqual(ChartNumber.coord(-0.04), "0")
        XCTAssertEqual(ChartNumber.coord(12.25), "12.3")
        XCTAssertEqual(ChartNumber.coord(7), "7")
        let t = ChartNumber.ticks(0, 9_800)
        XCTAssertEqual(t.values, [0, 2000, 4000, 6000, 8000])
        XCTAssertEqual(ChartNumber.ticks(0, 0.9).decimals, 1)
        XCTAssertEqual(ChartNumber.label(15_000, decimals: 0, scale: ChartNumber.scale(for: [0, 5000, 15_000], decimals: 0)), "15k")
        XCTAssertEqual(ChartNumber.label(5000, decimals: 0, scale: 1e3), "5k")
    }

    /// Through Lua: series of one name gather across participants; a heatmap is one per
    /// participant; bad specs are errors naming the chart and what was expected.
    func testPlotModuleThroughTheRuntime() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local plot = require "plot"
        local time = require "time"
        T.study({ "ambientLightSensor" })
        local d = time.studyStart()
        plot.line("l", { x = { d, d + 3600, d + 7200 }, y = { 1, nil, 3 }, unit = "lux" })
        plot.line("days", { rows = { { day = "2026-03-02", v = 1 }, { day = "2026-03-03", v = 2 } }, x = "day", y = "v" })
        plot.bars("b", { categories = { "a", "b" }, values = { 1, 2 }, label = "mine " .. sensorkit.participant() })
        plot.line("grow", { x = { d + 7200 }, y = { 2 } })            -- a series built a point at a time,
        plot.line("grow", { x = { d }, y = { 1 } })                   -- out of order
        T.log(pcall(plot.bars, "b", { categories = { "a", "b" }, values = { 1, 2 }, label = "mine " .. sensorkit.participant() }))
        plot.hourByDay("hm", { { start = d + 3600, value = 5 } }, { from = d, to = d + days(2) })
        plot.actogram("ac", { { start = d, value = 1 } }, { from = d, to = d + days(1), bin = 3600, empty = 0 })
        plot.scatter("s", { x = { 1, 2, 3 }, y = { 1, "x", 3 } })
        local ok, err = pcall(plot.line, "bad", { x = { "soon" }, y = { 1 } })
        T.log(ok, err)
        ok, err = pcall(plot.bars, "b", { categories = { "x" }, values = { 1 } })
        T.log(ok, err)
        ok, err = pcall(plot.line, "b", { x = { d }, y = { 1 } })
        T.log(ok, err)
        """#, days: 2, participants: 2, stdlib: true)
        let book = o.runner.report
        XCTAssertEqual(book.charts.map(\.name), ["l", "days", "b", "grow", "hm_P1", "ac_P1", "s", "hm_P2", "ac_P2"])
        let l = try XCTUnwrap(book.charts.first { $0.name == "l" })
        XCTAssertEqual(l.series.map(\.label), ["P1", "P2"])
        XCTAssertEqual(l.series[0].y, [1, nil, 3])
        XCTAssertEqual(book.charts.first { $0.name == "b" }?.series.map(\.label), ["mine P1", "mine P2"])
        let grow = try XCTUnwrap(book.charts.first { $0.name == "grow" })
        XCTAssertEqual(grow.series.map(\.label), ["P1", "P2"])
        XCTAssertEqual(grow.series[0].y, [2, 1])
        // Drawn in time order: one path from the earlier point to the later one.
        let path = try XCTUnwrap(ChartSVG.render(grow).split(separator: "\n").first { $0.hasPrefix("<path") })
        let d = try XCTUnwrap(path.split(separator: "\"").dropFirst().first)      // the d attribute
        let numbers = d.split(whereSeparator: { !"0123456789.".contains($0) }).compactMap { Double($0) }
        XCTAssertEqual(numbers.count, 4, String(path))                 // x1 y1 x2 y2
        XCTAssertLessThan(numbers[0], numbers[2], "drawn left to right")
        XCTAssertGreaterThan(numbers[1], numbers[3], "the earlier point (1) lies below the later (2)")
        let hm = try XCTUnwrap(book.charts.first { $0.name == "hm_P1" })
        XCTAssertEqual(hm.rows, ["2026-03-02", "2026-03-03"])
        XCTAssertEqual(hm.cells[0][1], 5)
        XCTAssertEqual(hm.cells[0][0], nil)
        XCTAssertEqual(hm.title, "hm — P1")
        let ac = try XCTUnwrap(book.charts.first { $0.name == "ac_P1" })
        XCTAssertEqual(ac.cells[0].count, 24)
        XCTAssertEqual(ac.cells[0][0], 1)
        XCTAssertEqual(ac.cells[0][5], 0, "a day with data: empty bins are 0")
        XCTAssertEqual(book.charts.first { $0.name == "s" }?.series[0].x, [1, 3], "a point needs two numbers")
        XCTAssertEqual(o.lines.count, 8)
        XCTAssertTrue(o.lines[0].contains("already has a series 'mine P1'"), o.lines[0])
        XCTAssertTrue(o.lines[1].contains("plot 'bad': x values must be times"), o.lines[1])
        XCTAssertTrue(o.lines[2].contains("bar chart 'b' has categories a, b"), o.lines[2])
        XCTAssertTrue(o.lines[3].contains("chart 'b' is a bars chart"), o.lines[3])
    }

    /// The run report is one well-formed page holding every chart and table, and the
    /// completeness grid counts the hours of data the protocol received.
    func testRunReportPage() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local plot = require "plot"
        local report = require "report"
        local time = require "time"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.at(time.studyStart() + days(2) + hours(1), function()
          local set = light:samples { from = time.studyStart(), to = time.studyStart() + days(1) }
          report.table("t <1>", {}):row { n = set:count() }
          plot.line("lux", { rows = set:byHour():mean("lux"), x = "start", y = "value" })
        end)
        """#, days: 3, participants: 1, stdlib: true)
        let page = o.runner.htmlReport()
        XCTAssertTrue(page.hasPrefix("<!DOCTYPE html>"))
        XCTAssertFalse(page.contains("http://") && page.contains("<script"), "no scripts")
        XCTAssertFalse(page.range(of: "(src|href)=\"[^#]", options: .regularExpression) != nil, "nothing to fetch")
        XCTAssertTrue(page.contains(">t &lt;1&gt; <span"))
        XCTAssertEqual(page.components(separatedBy: "<svg ").count - 1, 1)
        // The grid: day 1 has light readings (screen on) in some hours, later days none received.
        let grid = o.runner.report.coverage.grid(for: o.runner.report.coverage.participants[0], sensors: [])
        XCTAssertEqual(grid.map(\.sensor), [.ambientLightSensor])
        XCTAssertGreaterThan(grid[0].perDay[0], 6)
        XCTAssertEqual(Array(grid[0].perDay.dropFirst()), [0, 0])
        // Its SVG, cut out of the page, is the chart file's text.
        XCTAssertTrue(page.contains(ChartSVG.render(o.runner.report.charts[0])))
    }

    /// Texts of an SVG's `<text>` elements, in order.
    func texts(_ svg: String) -> [String] {
        elements(parseXML(svg), "text").map { $0.stringValue ?? "" }
    }

    func testAxesHaveEnoughTicksAndReadableUnits() {
        // A narrow range still gets at least four labelled ticks (it got two: 24, 26).
        XCTAssertGreaterThanOrEqual(ChartNumber.ticks(22.9, 26.8).values.count, 4)
        XCTAssertGreaterThanOrEqual(ChartNumber.ticks(1.08, 2.05).values.count, 4)
        XCTAssertLessThanOrEqual(ChartNumber.ticks(0, 100).values.count, 11)
        // Clock hours past midnight read as clock times.
        let clock = ChartSVG.numberTicks(22.5, 26.5, clock: true).map(\.1)
        XCTAssertEqual(clock, ["23:00", "00:00", "01:00", "02:00"])
        var scatter = Chart(name: "onset", kind: .scatter, title: "Onset", timeZone: berlin)
        scatter.series = [Chart.Series(label: "P1", x: [1, 1.5, 2], y: [23, 25, 26])]
        scatter.yClock = true
        let labels = texts(ChartSVG.render(scatter))
        XCTAssertTrue(labels.contains("02:00"), "\(labels)")
        XCTAssertFalse(labels.contains("26"), "no hour past 24 as a number")
        // A series of zeros is drawn on 0…1, not −1…1.
        let zeros = texts(ChartSVG.render(lineChart([0, 0, 0])))
        XCTAssertTrue(zeros.contains("0"))
        XCTAssertFalse(zeros.contains { $0.hasPrefix("-") }, "\(zeros)")
    }

    func testShortDailyAxisKeepsItsDatesAndShortTimeAxisShowsTheDate() {
        let noon = 1_774_566_000.0 + 43_200     // 2026-03-27 12:00 CET
        var daily = Chart(name: "daily", kind: .line, title: "Per day", timeZone: berlin)
        daily.series = [Chart.Series(label: "P1", x: [noon, noon + 86_400], y: [5, 7])]
        let labels = texts(ChartSVG.render(daily))
        XCTAssertTrue(labels.contains("Mar 27") && labels.contains("Mar 28"), "\(labels)")
        XCTAssertFalse(labels.contains { $0.hasSuffix(":00") }, "a daily series is not on clock hours")
        // Hourly values over one day: clock hours, with the date underneath.
        let hourly = ChartSVG.timeTicks(noon - 43_200, noon + 43_200, berlin)
        XCTAssertEqual(hourly.dates.map(\.1), ["Mar 27", "Mar 28"])
    }

    func testPanelsShareOneColourScaleWithLabelledTicks() {
        func panel(_ who: String, _ values: [Double?]) -> Chart {
            var c = Chart(name: "h_\(who)", kind: .heatmap, title: "H — \(who)", timeZone: berlin)
            c.rows = ["d1"]
            c.columns = values.indices.map(String.init)
            c.cells = [values]
            c.unit = "h"
            c.panel = Chart.Panel(name: "h", participant: who)
            return c
        }
        let book = ReportBook()
        let a = panel("A", [2, 4]), b = panel("B", [10, 20])
        var cohort = lineChart([1, 2])
        cohort.name = "later_cohort"
        try? book.addChart(a)
        try? book.addChart(cohort)
        try? book.addChart(b)
        // Cohort charts first, then the panels of one name together.
        XCTAssertEqual(book.chartsInPageOrder.map(\.name), ["later_cohort", "h_A", "h_B"])
        let scales = book.sharedScales()
        XCTAssertEqual(scales["h"], ChartSVG.ColourScale(lo: 0, hi: 20, log: false), "counts start at 0; the top is the largest of all panels")
        // The same value gets the same colour in both panels; alone, A's top would be 4.
        let shared = book.svg(a, scales: scales)
        XCTAssertTrue(shared.contains("fill=\"\(ChartSVG.ramp(0.1))\"") && shared.contains("fill=\"\(ChartSVG.ramp(0.2))\""),
                      "A's 2 and 4 coloured at 2/20 and 4/20 of the shared scale")
        XCTAssertTrue(texts(shared).contains("20"), "the shared scale's ticks reach 20")
        XCTAssertFalse(texts(ChartSVG.render(a)).contains("20"))
        let ticks = ChartSVG.scaleTicks(scales["h"]!).map(\.1)
        XCTAssertEqual(ticks, ["0", "5", "10", "15", "20"])
        XCTAssertEqual(ChartSVG.scaleTicks(ChartSVG.ColourScale(lo: -1, hi: 4, log: true)).map(\.1),
                       ["0.1", "1", "10", "100", "1000", "10000"])
    }

    func testPageShowsFindingsBannerGridOfDeclaredSensorsAndCadence() throws {
        let h = try ProtocolHarness()
        let source = #"""
        local T = require "t"
        local expect = require "expect"
        local time = require "time"
        T.study({ "ambientLightSensor", "visits", "accelerometer" })
        local light = sensorkit.reader "ambientLightSensor"
        local visits = sensorkit.reader "visits"
        sensorkit.requestAuthorization({ "ambientLightSensor", "visits" }, function() light:startRecording(); visits:startRecording() end)
        schedule.at(time.studyStart() + days(2) + hours(1), function()
          local set = light:samples { from = time.studyStart(), to = time.studyStart() + days(1) }
          visits:samples { from = time.studyStart(), to = time.studyStart() + days(1) }:count()
          CHECK
        end)
        """#
        let failing = try h.run(source.replacingOccurrences(of: "CHECK", with: #"expect.equal(set:count(), -1, "light samples")"#),
                                days: 3, participants: 1, stdlib: true)
        let page = failing.runner.htmlReport()
        let banner = try XCTUnwrap(page.range(of: "id=\"findings-banner\""))
        XCTAssertLessThan(banner.lowerBound, try XCTUnwrap(page.range(of: "id=\"study\"")).lowerBound, "the banner comes first")
        XCTAssertTrue(page.contains("<strong>1 finding</strong>"))
        XCTAssertTrue(page.contains("href=\"#table-findings\"") && page.contains("id=\"table-findings\""))
        XCTAssertTrue(page.contains("light samples"))
        // Every declared sensor has a row, the one never fetched (accelerometer) with zeros.
        let p = failing.runner.report.coverage.participants[0]
        let grid = failing.runner.report.coverage.grid(for: p, sensors: [.visits, .accelerometer, .ambientLightSensor])
        XCTAssertEqual(grid.map(\.sensor), [.ambientLightSensor, .accelerometer, .visits])
        XCTAssertEqual(grid[1].perDay, [0, 0, 0])
        XCTAssertTrue(page.contains("<th title=\"\(MarkupText.escape(SensorCatalogue.info(.accelerometer).cadence.summary))\">accelerometer</th>"))
        XCTAssertTrue(page.contains("title=\"accelerometer \(failing.runner.report.coverage.dayLabels(for: p)[0]): 0 of 24 h with data\""))
        // Visits are read by presence, not as hours of 24.
        XCTAssertEqual(RunReportPage.reading(.visits), .presence)
        XCTAssertEqual(RunReportPage.reading(.sleepSessions), .presence)
        XCTAssertEqual(RunReportPage.reading(.ambientLightSensor), .hoursOf24)
        XCTAssertFalse(page.contains("visits \(failing.runner.report.coverage.dayLabels(for: p)[0]): 0 of 24"))
        XCTAssertTrue(RunReportPage.gridCell(.sleepSessions, day: "d", hours: 1, noWatch: false).contains(">✓</td>"))
        XCTAssertTrue(RunReportPage.gridCell(.heartRate, day: "d", hours: 0, noWatch: true).contains("no Apple Watch"))

        let clean = try h.run(source.replacingOccurrences(of: "CHECK", with: ""), days: 3, participants: 1, stdlib: true)
        XCTAssertTrue(clean.runner.htmlReport().contains("<strong>No findings</strong>"))
    }
}
