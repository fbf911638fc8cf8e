import Foundation
import XCTest
@_spi(Bindings) import LuaHost
import SensorKitModel
@testable import StudyRuntime

/// Grouped aggregates are deferred tables (`DeferredSummaries`): the statements a protocol
/// writes one after another over one set are answered together, and the protocol sees
/// exactly what it saw when each was computed on the spot — values, errors, lines.
final class DeferredAggregatesTests: XCTestCase {
    /// A protocol recording ambient light whose callback, on day 2, runs `body` (from
    /// line 8) with `set`: day 1's samples.
    static func onDay2(_ body: String) -> String {
        #"""
        local T = require "t"
        local time = require "time"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.at(time.studyStart() + days(2) + hours(1), function()
          local set = light:samples { from = time.studyStart(), to = time.studyStart() + days(1) }
        """# + "\n" + body + "\nend)\n"
    }

    /// A protocol that, on day 2, asks for the natural form's aggregates of day 1's light,
    /// then uses them in every way a protocol does, beside `summarize`'s answers.
    static let natural = onDay2(#"""
      local hourly = set:byHour():mean("lux")
      local bright = set:where("lux", ">", 100):byHour():count()
      local spread = set:byDay():quantiles("lux", { 0.1, 0.5, 0.9 })
      local none = set:where("lux", "<", -1):byDay():count()
      local one = set:byHour():summarize { mean = { "mean", "lux" }, bright = { "count", where = { "lux", ">", 100 } } }
      T.log("hours", #hourly, "bright hours", #bright, "days", #spread, "empty", #none, next(none))
      local brightByHour = {}
      for _, g in pairs(bright) do brightByHour[g.key] = g.value end
      for i, g in ipairs(hourly) do
        assert(g.key == one[i].hour and g.value == one[i].mean, g.key)
        assert((brightByHour[g.key] or 0) == one[i].bright, g.key)
      end
      T.log("first", hourly[1].key, hourly[1].count, string.format("%.6f", hourly[1].value))
      T.log("median", spread[1].key, string.format("%.6f", spread[1].values[2]), rawlen(spread[1].values))
      T.log(inspect(bright[1]))
    """#)

    func testTheNaturalFormSeesEveryResultAsComputedOnTheSpot() throws {
        let h = try ProtocolHarness()
        let o = try h.run(DeferredAggregatesTests.natural, days: 3, participants: 1, stdlib: true)
        XCTAssertTrue(o.runner.failures.isEmpty, "\(o.runner.failures)")
        let lines = o.lines
        guard lines.count == 4 else { return XCTFail(o.output) }
        XCTAssertTrue(lines[0].hasPrefix("hours "), o.output)
        let parts = lines[0].split(separator: " ")
        XCTAssertGreaterThan(Int(parts[1]) ?? 0, 6, o.output)
        XCTAssertGreaterThan(Int(parts[4]) ?? 0, 0, o.output)
        XCTAssertEqual(parts[6], "1", "one day of light")
        XCTAssertEqual(parts.suffix(3), ["empty", "0", "nil"], "a filter that keeps nothing: no group")
        XCTAssertTrue(lines[3].hasPrefix("{ count = "), o.output)
    }

    /// An aggregate that fails (a field the sensor does not have) raises where the
    /// protocol could catch it had it been computed on the spot — inside the `pcall`
    /// around the statement — and names the line that asked for it, not the line that
    /// used it; uncaught, it stops the participant with that line before anything after
    /// the statement reaches a host function.
    func testAFailingAggregateRaisesInsideItsPcallNamingTheLineThatAsked() throws {
        let h = try ProtocolHarness()
        let o = try h.run(DeferredAggregatesTests.onDay2(#"""
          local ok, err = pcall(function()
            return set:byDay():mean("candela")
          end)
          T.log(ok, err)
          local fine = set:byDay():count()
          local bad = set:byHour():mean("candela")
          T.log("asked")
          T.log(#fine, #bad)
        """#), days: 3, participants: 1, stdlib: true)
        XCTAssertEqual(o.lines.count, 1, o.output)
        XCTAssertTrue(o.lines.first?.hasPrefix("false ") == true, o.output)
        XCTAssertTrue(o.lines.first?.hasSuffix("protocol.lua:9: ambientLightSensor has no field 'candela' (fields: lux, placement, chromaticityX, chromaticityY, time, writeTime)") == true, o.output)
        // `T.log("asked")` prints through a host function, which sees every result asked
        // for before it: the error is raised there, before anything is printed, as it
        // was when the statement computed it.
        let failure = try XCTUnwrap(o.runner.failures.first)
        XCTAssertTrue("\(failure)".contains("protocol.lua:13: ambientLightSensor has no field 'candela'"), "\(failure)")
    }

    /// A result never used is still computed before the callback returns: its error
    /// stops the participant inside that callback.
    func testAnUnusedFailingAggregateStillFailsItsCallback() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(DeferredAggregatesTests.onDay2(#"""
          local unused = set:byDay():max("candela")
        """#), days: 3, participants: 1)
        XCTAssertTrue("\(error)".contains("protocol.lua:8: ambientLightSensor has no field 'candela'"), "\(error)")
    }
}

/// How pending summaries are cut into passes: quantile pools bound what one pass holds.
final class DeferredBatchesTests: XCTestCase {
    func testPassesHoldAtMostFourQuantilePools() {
        XCTAssertEqual(DeferredSummaries.batches([0, 0, 1, 0]), [[0, 1, 2, 3]], "the natural form: one pass")
        XCTAssertEqual(DeferredSummaries.batches([1, 1, 1, 1, 1, 1]), [[0, 1, 2, 3], [4, 5]])
        XCTAssertEqual(DeferredSummaries.batches([3, 2, 0, 6, 1]), [[0], [1, 2], [3], [4]], "more than four alone")
        XCTAssertEqual(DeferredSummaries.batches([]), [])
    }
}

/// Through Lua: the summaries a script asks of one lineage before using any are one read
/// of the source; asked one at a time and used in between, one read each.
final class DeferredPassesTests: XCTestCase {
    func testAskedTogetherIsOneReadAskedApartIsOneEach() throws {
        let reads = NaturalFormTests.Reads()
        let batches = NaturalFormTests.batches()
        let week = SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!) {
            reads.count += 1
            return BatchIterator(batches)
        }
        let active = RowFilter(field: "magnitude", op: .gt, operand: .number(1.1))
        let summaries = DeferredSummaries()
        let state = try LuaState()
        state.register("ask", settles: false) { call in
            let request: SummaryRequest
            switch try call.string(1) {
            case "hourly": request = SummaryRequest(set: week, aggregates: GroupResult.columns(.mean, of: "magnitude"), grouping: .localHour)
            case "active": request = SummaryRequest(set: week.filtered(active), aggregates: GroupResult.columns(.count, of: nil), grouping: .localDay)
            default: request = SummaryRequest(set: week, aggregates: GroupResult.columns(quantiles: [0.5], of: "magnitude"), grouping: .localDay)
            }
            summaries.push(request, shape: { .array($0.map { .number($0.values[0]) }) }, call: call)
            return 1
        }
        XCTAssertEqual(try state.execute("""
            local hourly, active, spread = ask("hourly"), ask("active"), ask("spread")
            return #hourly, #active, #spread
            """), [.integer(49), .integer(3), .integer(3)])
        XCTAssertEqual(reads.count, 1, "three summaries, one read")
        XCTAssertEqual(try state.execute("""
            local hourly = ask("hourly")
            local n = #hourly
            local spread = ask("spread")
            return n + #spread
            """), [.integer(52)])
        XCTAssertEqual(reads.count, 3, "used before the next was asked: a read each")
    }
}
