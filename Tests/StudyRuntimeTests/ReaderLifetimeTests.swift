import Foundation
import XCTest
@testable import StudyRuntime

/// Reader lifetime (docs/lua-api.md "sensorkit.reader", contract §11 "a deallocated delegate's
/// events are dropped"): a reader the protocol no longer refers to is collected and gets
/// no more callbacks, even when its delegate refers back to it; a reader with a callback
/// still queued (a fetch, fetchDevices, a start/stop outcome) stays alive until that
/// callback has run; recording is the app's and goes on after the reader is gone.
final class ReaderLifetimeTests: XCTestCase {
    static let counter = #"""
    local weak = setmetatable({}, { __mode = "k" })
    local function alive()
      collectgarbage(); collectgarbage()       -- the second pass clears finalized keys
      local n = 0
      for _ in pairs(weak) do n = n + 1 end
      return n
    end
    """#

    func testADroppedReaderIsCollectedAndGetsNoMoreCallbacksWhileRecordingGoesOn() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        \#(ReaderLifetimeTests.counter)
        local kept = sensorkit.reader "ambientLightSensor"
        kept.delegate = T.recorder("kept")
        local a = sensorkit.reader "ambientLightSensor"
        a.delegate = T.recorder("a", { onStatus = function(r, s) if s == "authorized" then r:startRecording() end end })
        a.delegate.self = a                       -- a cycle: reader -> delegate -> reader
        weak[a] = true
        sensorkit.requestAuthorization({ "ambientLightSensor" })
        schedule.at(time.parse("day 1 10:00"), function()
          T.log("alive before drop", alive())
          a = nil
          T.log("alive after drop", alive())
        end)
        schedule.at(time.parse("day 3 12:00"), function()
          local fresh = sensorkit.reader "ambientLightSensor"
          local n = fresh:samples { from = time.parse("day 1 11:00"), to = time.parse("day 2 11:00") }:count()
          T.log("recorded after the drop", n > 100, kept.authorizationStatus)
        end)
        """#, scenario: #"""
        return { participants = { { id = "P", events = {
          { revoke = "ambientLightSensor", at = "day 2 12:00" },
          { grant = "ambientLightSensor", at = "day 2 13:00" },
        } } } }
        """#, days: 3)
        XCTAssertEqual(o.lines, [
            "kept didChange authorized",
            "a didChange authorized",
            "a willStart",
            "alive before drop 1",
            "alive after drop 0",
            "kept didChange denied",           // not `a`: it is gone
            "kept didChange authorized",
            "recorded after the drop true authorized",
        ])
    }

    func testAPendingAuthorizationSheetKeepsItsReadersUntilTheyAreTold() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate" })
        \#(ReaderLifetimeTests.counter)
        do
          local light = sensorkit.reader "ambientLightSensor"
          light.delegate = T.recorder("light", { onStatus = function(r) r:startRecording() end })
          weak[light] = true
          local hr = sensorkit.reader "heartRate"      -- not asked about: nothing to wait for
          hr.delegate = T.recorder("hr")
          weak[hr] = true
        end
        sensorkit.requestAuthorization({ "ambientLightSensor" })
        T.log("while the sheet is up", alive())
        schedule.after("1m", function() T.log("after the callbacks", alive()) end)
        """#, days: 1)
        XCTAssertEqual(o.lines, [
            "while the sheet is up 1",
            "light didChange authorized",
            "light willStart",
            "after the callbacks 0",
        ])
    }

    func testAReaderWithQueuedCallbacksStaysAliveUntilTheyRun() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        \#(ReaderLifetimeTests.counter)
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.at(time.parse("day 2 12:00"), function()
          local r = sensorkit.reader "ambientLightSensor"
          r.delegate = T.recorder("f", { onComplete = function(reader) T.log("complete on the same reader", reader.sensor) end })
          weak[r] = true
          T.fetch(r, "day1", { from = time.parse("day 1 10:00"), to = time.parse("day 1 10:30") })
          r:fetchDevices()
          r:stopRecording()
          r = nil
          T.log("queued callbacks keep it", alive())
          schedule.after("1m", function() T.log("after they ran", alive()) end)
        end)
        """#, days: 3)
        XCTAssertEqual(o.lines.count, 6, o.output)
        guard o.lines.count == 6 else { return }
        XCTAssertEqual(o.lines[0], "queued callbacks keep it 1")
        let complete = o.lines[1].split(separator: " ")
        XCTAssertEqual(complete.prefix(3), ["f", "complete", "day1"])
        XCTAssertGreaterThan(Int(complete.last ?? "") ?? 0, 0, "the fetch delivered results")
        XCTAssertEqual(Array(o.lines[2...]), [
            "complete on the same reader ambientLightSensor",
            "f devices iPhone,Watch",
            "f didStop",
            "after they ran 0",
        ])
    }
}
