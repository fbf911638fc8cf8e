import Foundation
import JSONText
import XCTest
@testable import StudyRuntime
import StudyReport

/// Concepts written once: the aggregate name table, the markup escaper.
final class VocabularyTests: XCTestCase {
    /// Every name of the one table is a SampleSet method, a grouped-set method (but
    /// weightedMean, which grouped sets give through summarize) and a summarize aggregate;
    /// summarize's refusal lists the table.
    func testTheAggregateNameTableIsTheLuaAPI() throws {
        XCTAssertEqual(Aggregate.Name.list, "count, sum, mean, min, max, stddev, quantile, weightedMean")
        XCTAssertEqual(Aggregate.Name.plain.map(\.rawValue), ["count", "sum", "mean", "min", "max", "stddev"])
        for name in Aggregate.Name.plain { XCTAssertEqual(Aggregate(plain: name)?.name, name) }
        let names = Aggregate.Name.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.at("2026-03-04 12:00", function(now)
          local set = light:samples { from = time.studyStart(), to = now }
          local g = set:byDay()
          for _, name in ipairs { \#(names) } do
            local spec = { x = { name, "lux", name == "quantile" and 0.5 or (name == "weightedMean" and "lux" or nil) } }
            T.log(name, type(set[name]), type(g[name]), math.type(set:summarize(spec).x) ~= nil)
          end
          local ok, err = pcall(set.summarize, set, { x = { "median", "lux" } })
          T.log(ok, err:find("unknown aggregate 'median' (one of: \#(Aggregate.Name.list))", 1, true) ~= nil)
        end)
        """#)
        XCTAssertEqual(o.lines, Aggregate.Name.allCases.map { "\($0.rawValue) function \($0 == .weightedMean ? "nil" : "function") true" }
                       + ["false true"])
    }

    /// One escaper for SVG, the HTML page and JUnit XML: entities for the markup
    /// characters, and nothing XML 1.0 cannot hold.
    func testOneMarkupEscaper() {
        XCTAssertEqual(MarkupText.escape("a & b < c > \"d\" 'e'"), "a &amp; b &lt; c &gt; &quot;d&quot; 'e'")
        XCTAssertEqual(MarkupText.escape("tab\tline\nret\r"), "tab\tline\nret\r")
        XCTAssertEqual(MarkupText.escape("bell\u{7}nul\u{0}esc\u{1B}\u{FFFE}\u{FFFF}é✓"), "bellnulescé✓")
        let svg = ChartSVG.render(Chart(name: "c", kind: .line, title: "<script>&\u{1}", timeZone: TimeZone(identifier: "UTC")!))
        XCTAssertTrue(svg.contains("&lt;script&gt;&amp;<") && !svg.contains("<script"), svg)
    }
}
