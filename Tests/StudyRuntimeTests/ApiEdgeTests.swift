import Foundation
import XCTest
@testable import StudyRuntime

/// API rough edges met while writing protocols.
final class ApiEdgeTests: XCTestCase {
    /// Boolean fields filter with booleans (`where("onWrist", "==", false)`), as well as with 1 and 0.
    func testBooleanFieldsFilterAsBooleans() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "onWristState" })
        local wrist = sensorkit.reader "onWristState"
        sensorkit.requestAuthorization({ "onWristState" }, function() wrist:startRecording() end)
        schedule.at("2026-03-04 12:00", function(now)
          local set = wrist:samples { device = wrist:devices()[1], from = time.studyStart(), to = now }
          local on, off = 0, 0
          for r in set:rows() do if r.onWrist then on = on + 1 else off = off + 1 end end
          T.log(on > 0 and off > 0, set:where("onWrist", "==", false):count() == off, set:where("onWrist", "~=", false):count() == on,
                set:where("onWrist", "==", true):count() == set:where("onWrist", "==", 1):count())
          local ok, err = pcall(function() return set:where("onWrist", "<", true) end)
          T.log(ok, err:find("a boolean compares only with == or ~=") ~= nil)
          -- summarize's where reads conditions as set:where does: booleans alike.
          local s = set:summarize { off = { "count", where = { "onWrist", "==", false } },
                                    on = { "count", where = { { "onWrist", "~=", false } } },
                                    t = { "count", where = { "onWrist", "==", true } }, one = { "count", where = { "onWrist", "==", 1 } } }
          T.log(s.off == off, s.on == on, s.t == s.one)
          local ok2, err2 = pcall(function() return set:summarize { x = { "count", where = { "onWrist", "<", true } } } end)
          T.log(ok2, err2:find("aggregate 'x': where {field, op, value}: a boolean compares only with == or ~=, not <", 1, true) ~= nil)
          local ok3, err3 = pcall(function() return set:where("onWrist", "==", {}) end)
          T.log(ok3, err3:find("bad argument #3 to 'where'", 1, true) ~= nil, err3:find("got table", 1, true) ~= nil)
        end)
        """#)
        XCTAssertEqual(o.lines, ["true true true true", "false true", "true true true", "false true", "false true true"])
    }

    /// A fetch request keeps the protocol's own fields (the delegate gets the same table);
    /// a misspelt request field is still an error.
    func testRequestTablesKeepTheProtocolsOwnFields() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        local sent
        light.delegate = {
          didFetchResult = function() return true end,
          didCompleteFetch = function(_, request) T.log("complete", request == sent, request.label, request.day, request.device ~= nil) end,
        }
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.at("2026-03-03 12:00", function(now)
          sent = { from = now - hours(30), to = now - hours(24), label = "morning", day = 1, id = 7 }
          light:fetch(sent)
          for _, bad in ipairs { "devise", "form", "To" } do
            local ok, err = pcall(light.samples, light, { from = now - hours(30), to = now - hours(24), [bad] = 1 })
            T.log(bad, ok, err:find("fetch request has no field '" .. bad .. "'", 1, true) ~= nil)
          end
        end)
        """#)
        XCTAssertEqual(o.lines, ["devise false true", "form false true", "To false true", "complete true morning 1 true"])
    }

    /// fetch/fetchDevices on a reader without a delegate warns (once per reader): their
    /// answers come only as callbacks.
    func testAFetchOnAReaderWithoutADelegateWarnsOnce() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        local other = sensorkit.reader "ambientLightSensor"
        other.delegate = { didFetchDevices = function() T.log("devices") end }
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.at("2026-03-03 12:00", function(now)
          light:fetch { from = now - hours(30), to = now - hours(24) }
          light:fetchDevices()                        -- the same reader: warned already
          other:fetchDevices()                        -- has a delegate
        end)
        """#)
        XCTAssertEqual(o.lines, ["devices"])
        XCTAssertEqual(o.logLines, ["[P1 2026-03-03 12:00] warn: fetch() on an SRSensorReader(ambientLightSensor) that has no delegate: "
            + "its answers arrive only as delegate callbacks and are lost (set reader.delegate, or use reader:samples / reader:devices)"])
    }
}

/// Readers whose callbacks reach no one warn, once per script line that made them
/// (docs/lua-api.md "sensorkit.reader"): a reader never used, a recording failure on a
/// reader without a delegate, a status change missed by a collected reader's delegate.
final class UnheardReaderTests: XCTestCase {
    func testAReaderDroppedUnusedWarnsAtTheEndOncePerLine() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate" })
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.reader "ambientLightSensor"
        for _ = 1, 3 do sensorkit.reader "heartRate" end
        local status = sensorkit.reader("heartRate").authorizationStatus   -- used: a property read
        local kept = sensorkit.reader "ambientLightSensor.tombstones"       -- kept for later: no warning
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.every("1h", function() if kept == nil then print("unreachable") end end)
        """#, days: 1)
        XCTAssertEqual(o.logLines.map { $0.replacingOccurrences(of: h.folder.path + "/", with: "") }, [
            "[P1 2026-03-03 00:00] warn: SRSensorReader(ambientLightSensor) made at protocol.lua:4 was dropped unused: no reference kept, "
                + "no delegate set, no method called, so no callback ever reached it; keep the reader in a variable and set its delegate or call its methods, or remove the line",
            "[P1 2026-03-03 00:00] warn: 3 readers like SRSensorReader(heartRate) made at protocol.lua:5 were dropped unused: no reference kept, "
                + "no delegate set, no method called, so no callback ever reached it; keep the reader in a variable and set its delegate or call its methods, or remove the line",
        ])
    }

    func testARecordingFailureOnAReaderWithoutADelegateWarnsOnce() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        local heard = sensorkit.reader "ambientLightSensor"
        heard.delegate = { startRecordingFailedWithError = function(_, e) T.log("heard", T.err(e)) end }
        light:startRecording()                        -- not authorized: fails, nobody is told
        light:startRecording()                        -- the same reader: warned already
        heard:startRecording()                        -- its delegate hears it
        """#, days: 1)
        XCTAssertEqual(o.lines, ["heard 1"])
        XCTAssertEqual(o.logLines.map { $0.replacingOccurrences(of: h.folder.path + "/", with: "") }, [
            "[P1 2026-03-02 00:00] warn: startRecording() failed on SRSensorReader(ambientLightSensor) made at protocol.lua:3, which has no delegate "
                + "to tell (startRecordingFailedWithError): noAuthorization — not authorized for ambientLightSensor (status notDetermined); set reader.delegate to hear of it",
        ])
    }

    func testAStatusChangeMissedByACollectedReadersDelegateWarnsOnce() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local kept = sensorkit.reader "ambientLightSensor"
        kept.delegate = { didChangeAuthorizationStatus = function(_, s) T.log("kept", s) end }
        local function listen()
          local r = sensorkit.reader "ambientLightSensor"
          r.delegate = { didChangeAuthorizationStatus = function(_, s) T.log("dropped", s) end }
        end
        listen()
        local quiet = sensorkit.reader "ambientLightSensor"
        quiet.delegate = { didFetchResult = function() end }      -- hears no status changes
        quiet = nil
        collectgarbage(); collectgarbage()
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() kept:startRecording() end)
        """#, scenario: #"""
        return { participants = { { id = "P1", events = {
          { revoke = "ambientLightSensor", at = "day 2 12:00" },
        } } } }
        """#, days: 2)
        XCTAssertEqual(o.lines, ["kept authorized", "kept denied"])
        XCTAssertEqual(o.logLines.map { $0.replacingOccurrences(of: h.folder.path + "/", with: "") }, [
            "[P1 2026-03-02 00:00] warn: SRSensorReader(ambientLightSensor) made at protocol.lua:6 was not told that ambientLightSensor is now "
                + "authorized (didChangeAuthorizationStatus): the protocol kept no reference to the reader, so it was collected with its delegate; "
                + "keep a reader in a variable for as long as its callbacks matter",
        ])
    }
}

/// Samples that cover a stretch of time carry their window (docs/lua-api.md
/// "SampleSet:fields"): `windowStart`/`windowEnd` in rows, fetch results, aggregates and
/// the set's display, by the catalogue's rule for each sensor.
final class SampleWindowTests: XCTestCase {
    func testWindowsFollowEachSensorsRule() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "deviceUsageReport", "visits", "sleepSessions", "ambientLightSensor", "pedometerData" })
        local usage = sensorkit.reader "deviceUsageReport"
        local visits = sensorkit.reader "visits"
        local sleep = sensorkit.reader "sleepSessions"
        local light = sensorkit.reader "ambientLightSensor"
        local steps = sensorkit.reader "pedometerData"
        local fetched
        usage.delegate = { didFetchResult = function(_, _, result) fetched = fetched or result.sample return true end }
        sensorkit.requestAuthorization({ "deviceUsageReport", "visits", "sleepSessions", "ambientLightSensor", "pedometerData" }, function()
          for _, r in ipairs { usage, visits, sleep, light, steps } do r:startRecording() end
        end)
        schedule.at("2026-03-04 12:00", function(now)
          local day = { from = time.parse("2026-03-02 00:00"), to = time.parse("2026-03-03 06:00") }
          local reports = usage:samples(day)
          local ok = true
          for r in reports:rows() do
            ok = ok and r.windowEnd == r.writeTime and r.windowStart == r.writeTime - r.duration and r.time == r.writeTime
          end
          T.log("usage", #reports > 50, ok, reports:min("windowStart") == reports:min("writeTime") - 900,
                reports:where("windowStart", "<", time.parse("2026-03-02 12:00")):count() > 0)
          usage:fetch(day)
          local v = visits:samples(day):first()[1]
          T.log("visit", v.windowStart == v.arrivalStart, v.windowEnd == v.departureEnd)
          local watch = sleep:devices()[1]
          local s = sleep:samples { from = day.from, to = now - hours(24), device = watch }:first()[1]
          T.log("sleep", s.windowStart == s.startDate, s.windowEnd == s.startDate + s.duration, s.duration > 3600)
          local lux = light:samples(day)
          T.log("light", table.concat(lux:fields(), ","), lux:first()[1].windowStart, select(2, pcall(lux.min, lux, "windowStart")))
          local bins = steps:samples(day)
          T.log("steps display", inspect(bins):match("window=%d+%-%d+%-%d+ %d+:%d+–%d+:%d+") ~= nil)
          local gone = sensorkit.reader("pedometerData.tombstones"):samples(day)
          T.log("tombstones", table.concat(gone:fields(), ","))
        end)
        schedule.at("2026-03-04 12:01", function()
          T.log("fetched", fetched.windowEnd == fetched.writeTime, fetched.windowEnd - fetched.windowStart == fetched.duration)
        end)
        """#, days: 3)
        XCTAssertEqual(o.lines, [
            "usage true true true true",
            "visit true true",
            "sleep true true true",
            "light lux,placement,chromaticityX,chromaticityY,time,writeTime nil "
                + "ambientLightSensor has no field 'windowStart' (fields: lux, placement, chromaticityX, chromaticityY, time, writeTime)",
            "steps display true",
            "tombstones startTime,endTime,reason,time,writeTime",
            "fetched true true",
        ])
    }
}
