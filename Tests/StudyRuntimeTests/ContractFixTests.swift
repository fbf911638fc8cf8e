import Foundation
import XCTest
@testable import StudyRuntime

/// Deviations from the SensorKit contract found by an independent suite, each fixed.
final class ContractFixTests: XCTestCase {
    /// switches.osVersion gates fields, not only sensors: under iOS 16.0 on-wrist records
    /// have no onWristDate/offWristDate and device-usage reports no `version` (iOS 16.4
    /// fields, contract §3.3); under 16.4 they do.
    func testOSVersionGatesFields() throws {
        for (os, expected) in [("16.0", "onWristDate false offWristDate false version false onWrist true"),
                               ("16.4", "onWristDate true offWristDate true version true onWrist true")] {
            let h = try ProtocolHarness()
            let o = try h.run(#"""
            local T = require "t"
            T.study({ "onWristState", "deviceUsageReport" })
            local wrist, usage = sensorkit.reader "onWristState", sensorkit.reader "deviceUsageReport"
            sensorkit.requestAuthorization({ "onWristState", "deviceUsageReport" }, function()
              wrist:startRecording(); usage:startRecording()
            end)
            schedule.at("2026-03-04 12:00", function(now)
              local w = wrist:samples { device = wrist:devices()[1], from = time.studyStart(), to = now }:first(1)[1]
              local u = usage:samples { from = time.studyStart(), to = now }:first(1)[1]
              T.log("onWristDate", w.onWristDate ~= nil, "offWristDate", w.offWristDate ~= nil, "version", u.version ~= nil,
                    "onWrist", w.onWrist ~= nil)
            end)
            """#, scenario: "return { days = 3, participants = 1, switches = { osVersion = \"\(os)\" } }")
            XCTAssertEqual(o.lines, [expected], "osVersion \(os)")
        }
    }

    /// A fetch reaching back past SensorKit's ~7-day retention warns (once per sensor) that
    /// recorded data there was purged; a fetch inside retention does not.
    func testAFetchPastRetentionWarns() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "pedometerData" })
        local steps = sensorkit.reader "pedometerData"
        sensorkit.requestAuthorization({ "pedometerData" }, function() steps:startRecording() end)
        schedule.at("2026-03-06 12:00", function(now)                 -- day 5: everything is kept
          T.log("day 5", steps:samples { from = time.studyStart(), to = now }:count() > 0)
        end)
        schedule.at("2026-03-13 12:00", function(now)                 -- day 12: days 1-4 are gone
          local all = steps:samples { from = time.studyStart(), to = now }
          local recent = steps:samples { from = now - days(5), to = now }
          T.log("day 12", all:count() == recent:count() or all:min("time") > time.parse("2026-03-04 00:00"))
          steps:samples { from = time.studyStart(), to = now }        -- warned already for this sensor
        end)
        """#, days: 13)
        XCTAssertEqual(o.lines, ["day 5 true", "day 12 true"])
        XCTAssertEqual(o.logLines.count, 1, o.output)
        XCTAssertTrue(o.logLines.first?.hasPrefix("[P1 2026-03-13 12:00] warn: pedometerData: data written 2026-03-02 00:0") == true, o.output)
        XCTAssertTrue(o.logLines.first?.contains("was already purged (SensorKit keeps data about 7 days after the hold)") == true, o.output)
    }

    /// A fetch of a watch sensor that names no device reads the current device, the iPhone
    /// (contract §7.5), and is empty: it warns, once per sensor, naming the device it read and
    /// how to name the watch; so does one naming a phone; one naming the watch does not.
    func testAFetchFromADeviceThatCannotHaveTheSensorWarns() throws {
        let h = try ProtocolHarness()
        // Heart rate (watch) and light (phone and watch), both recording.
        let recording = #"""
        local T = require "t"
        T.study({ "heartRate", "ambientLightSensor" })
        local hr, light = sensorkit.reader "heartRate", sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "heartRate", "ambientLightSensor" }, function() hr:startRecording(); light:startRecording() end)
        """# + "\n"
        let o = try h.run(recording + #"""
        schedule.at("2026-03-04 12:00", function(now)
          local watch = hr:devices()[1]
          T.log("watch", watch.model, hr:samples { device = watch, from = time.studyStart(), to = now }:count() > 0)
          T.log("no device", hr:samples { from = time.studyStart(), to = now }:count())
          T.log("again", hr:samples { from = time.studyStart(), to = now }:count())      -- warned already
          T.log("light, no device", light:samples { from = time.studyStart(), to = now }:count() > 0)   -- the phone has it
        end)
        """#, days: 3)
        XCTAssertEqual(o.lines, ["watch Watch true", "no device 0", "again 0", "light, no device true"])
        XCTAssertEqual(o.logLines.count, 1, o.output)
        XCTAssertTrue(o.logLines.first?.hasPrefix("[P1 2026-03-04 12:00] warn: heartRate: this fetch names no device, so it reads the current device (iPhone), "
            + "which cannot have heartRate (an Apple Watch sensor): its answer is empty. Name the device: `device = reader:devices()[1]`") == true, o.output)

        let named = try h.run(recording + #"""
        schedule.at("2026-03-04 12:00", function(now)
          local phone = light:devices()[1]
          T.log(phone.model, hr:samples { device = phone, from = time.studyStart(), to = now }:count())
        end)
        """#, days: 3)
        XCTAssertEqual(named.lines, ["iPhone 0"])
        XCTAssertEqual(named.logLines.count, 1, named.output)
        XCTAssertTrue(named.logLines.first?.contains("warn: heartRate: this fetch reads iPhone (") == true, named.output)
        XCTAssertTrue(named.logLines.first?.contains("), which cannot have heartRate (an Apple Watch sensor)") == true, named.output)

        // The delegate path: fetch with no device.
        let delegated = try h.run(#"""
        local T = require "t"
        T.study({ "heartRate" })
        local hr = sensorkit.reader "heartRate"
        local results = 0
        hr.delegate = {
          didFetchResult = function() results = results + 1 return true end,
          didCompleteFetch = function() T.log("complete", results) end,
        }
        sensorkit.requestAuthorization({ "heartRate" }, function() hr:startRecording() end)
        schedule.at("2026-03-04 12:00", function(now) hr:fetch { from = time.studyStart(), to = now } end)
        """#, days: 3)
        XCTAssertEqual(delegated.lines, ["complete 0"])
        XCTAssertEqual(delegated.logLines.count, 1, delegated.output)
        XCTAssertTrue(delegated.logLines.first?.contains("warn: heartRate: this fetch names no device, so it reads the current device (iPhone)") == true,
                      delegated.output)

        // No watch: reader:devices() is empty, so `devices()[1]` is nil; the warning says so
        // instead of advising it.
        let watchless = try h.run(recording + #"""
        schedule.at("2026-03-04 12:00", function(now)
          T.log("devices", #hr:devices(), hr:samples { device = hr:devices()[1], from = time.studyStart(), to = now }:count())
        end)
        """#, scenario: "return { days = 3, participants = { { id = 'P1', watch = false } } }", days: 3)
        XCTAssertEqual(watchless.lines, ["devices 0 0"])
        XCTAssertEqual(watchless.logLines.count, 1, watchless.output)
        XCTAssertTrue(watchless.logLines.first?.contains("its answer is empty. No device holds its data for this participant now: reader:devices() is empty (no watch, "
            + "or its data not yet past the hold), so `device = reader:devices()[1]` is nil too") == true, watchless.output)
    }

    /// An empty fetch whose reason the protocol can fix says so, once per sensor and reason:
    /// an `SRAbsoluteTime` given as a wall time, a range wholly inside the hold, a sensor never
    /// recording. A fetch that is empty for none of these (a day before recording started) says nothing.
    func testAnEmptyFetchWithAFixableReasonSaysIt() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "visits" })
        local light, visits = sensorkit.reader "ambientLightSensor", sensorkit.reader "visits"
        sensorkit.requestAuthorization({ "ambientLightSensor", "visits" }, function() light:startRecording() end)
        schedule.at("2026-03-04 02:00", function(now)
          T.log("absolute as wall", light:samples { from = sensorkit.now() - 86400, to = sensorkit.now() }:count())
          T.log("again", light:samples { from = sensorkit.now() - 7200, to = sensorkit.now() }:count())
          T.log("in the hold", light:samples { from = now - hours(3), to = now }:count())
          T.log("never recording", visits:samples { from = time.studyStart(), to = now }:count())
          T.log("before recording", light:samples { from = time.studyStart() - days(2), to = time.studyStart() - days(1) }:count())
          T.log("fine", light:samples { from = time.studyStart(), to = now }:count() > 0)
        end)
        """#, days: 3)
        XCTAssertEqual(o.lines, ["absolute as wall 0", "again 0", "in the hold 0", "never recording 0", "before recording 0", "fine true"])
        XCTAssertEqual(o.logLines.count, 3, o.output)
        XCTAssertTrue(o.logLines[0].contains("warn: ambientLightSensor: this fetch asks for data written up to 1970-"), o.output)
        XCTAssertTrue(o.logLines[0].contains("SensorKit's own times (sensorkit.now(), sensorkit.absoluteTime) go in `fromAbsolute` and `toAbsolute`"), o.output)
        XCTAssertTrue(o.logLines[1].contains("warn: ambientLightSensor: this fetch's range lies wholly inside SensorKit's 24-hour hold (data written after 2026-03-03 02:00 is not readable yet)"), o.output)
        XCTAssertTrue(o.logLines[2].contains("warn: visits: the sensor was never recording for this participant"), o.output)
    }

    /// Deletion records of an array-shaped sensor (accelerometer) reach didFetchResult as
    /// SRDeletionRecord tables with a reason, not as a SampleSet of the parent sensor.
    func testArraySensorDeletionRecordsAreDeletionRecords() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "accelerometer" })
        local acc = sensorkit.reader "accelerometer"
        local tomb = sensorkit.reader "accelerometer.tombstones"
        tomb.delegate = {
          didFetchResult = function(_, _, result)
            local r = result.sample
            T.log("record", type(r), r.reason, sensorkit.wallTime(r.startTime) >= time.parse("2026-03-02 10:00"),
                  sensorkit.wallTime(r.endTime) <= time.parse("2026-03-02 11:00"))
            return true
          end,
          didCompleteFetch = function() T.log("complete") end,
        }
        sensorkit.requestAuthorization({ "accelerometer" }, function() acc:startRecording() end)
        schedule.at("2026-03-03 22:00", function(now) tomb:fetch { from = time.studyStart(), to = now } end)
        """#, scenario: #"""
        return { days = 2, participants = { { id = "P1", events = {
          { delete = "accelerometer", from = "day 1 10:00", to = "day 1 11:00", at = "day 1 20:00" } } } } }
        """#, days: 2)
        XCTAssertEqual(o.lines, ["record table 0 true true", "complete"])
    }

    /// Array-shaped sensors are written in batches that reach back before their write time:
    /// a batch written just after startRecording must not bring samples measured before it.
    func testNoSamplesMeasuredBeforeStartRecording() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "accelerometer", "ambientPressure" })
        local acc, pressure = sensorkit.reader "accelerometer", sensorkit.reader "ambientPressure"
        local start = time.parse("2026-03-02 10:00") + 30              -- mid-minute: batches straddle it
        sensorkit.requestAuthorization({ "accelerometer", "ambientPressure" })
        schedule.at(start, function() acc:startRecording(); pressure:startRecording() end)
        schedule.at("2026-03-03 12:00", function()
          for _, r in ipairs { acc, pressure } do
            local set = r:samples { device = sensorkit.currentDevice(), from = start - 600, to = start + 600 }
            T.log(r.sensor, set:count() > 0, set:min("time") >= start, set:min("time") < start + 60)
          end
        end)
        """#, days: 2)
        XCTAssertEqual(o.lines, ["accelerometer true true true", "ambientPressure true true true"])
    }
}
