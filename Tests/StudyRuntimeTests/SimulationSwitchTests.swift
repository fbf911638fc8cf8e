import Foundation
import XCTest
@testable import StudyRuntime

/// World switches that shape the generated data (contract §14.2 `reportWindow`, `writeBatch`) reach
/// the simulator, per sensor.
final class SimulationSwitchTests: XCTestCase {
    static let source = #"""
    local T = require "t"
    T.study({ "deviceUsageReport", "messagesUsageReport", "accelerometer" })
    local usage = sensorkit.reader "deviceUsageReport"
    local msgs = sensorkit.reader "messagesUsageReport"
    local accel = sensorkit.reader "accelerometer"
    sensorkit.requestAuthorization({ "deviceUsageReport", "messagesUsageReport", "accelerometer" }, function()
      usage:startRecording(); msgs:startRecording(); accel:startRecording()
    end)
    local largest = 0
    accel.delegate = {
      didFetchResult = function(r, req, res) largest = math.max(largest, res.sample:count()); return true end,
      didCompleteFetch = function() T.log("accelerometer elements per result", largest) end,
    }
    schedule.at(time.parse("day 3 06:00"), function()
      local u = usage:samples { from = time.parse("day 1 12:00"), to = time.parse("day 1 18:00") }
      local m = msgs:samples { from = time.parse("day 1 12:00"), to = time.parse("day 1 18:00") }
      T.log("device usage window", u:min("duration"), u:max("duration"), u:count() > 0)
      T.log("messages window", m:min("duration"), m:max("duration"), m:count() > 0)
      accel:fetch { from = time.parse("day 1 12:00"), to = time.parse("day 1 13:00") }
    end)
    """#

    func testReportWindowAndWriteBatchSwitchesShapeTheData() throws {
        let h = try ProtocolHarness()
        let o = try h.run(SimulationSwitchTests.source, scenario: #"""
        return { switches = { reportWindow = { deviceUsageReport = "30m" }, writeBatch = { accelerometer = "2m" } } }
        """#)
        XCTAssertEqual(o.lines, [
            "device usage window 1800.0 1800.0 true",
            "messages window 900.0 900.0 true",          // not switched: the default
            "accelerometer elements per result 6000",    // 120 s at 50 Hz
        ])
    }

    func testDefaultsAndTheSimulationKeysStillApply() throws {
        let h = try ProtocolHarness()
        let o = try h.run(SimulationSwitchTests.source, scenario: #"return { simulation = { reportWindow = 600 } }"#)
        XCTAssertEqual(o.lines, [
            "device usage window 600.0 600.0 true",
            "messages window 600.0 600.0 true",
            "accelerometer elements per result 3000",
        ])
    }
}

/// `switches.osVersion` (contract §14.1, trap T26): sensors newer than the simulated phone's OS do
/// not exist there.
final class OSVersionTests: XCTestCase {
    func testSensorsNewerThanTheOSAreRefused() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "heartRate", "electrocardiogram", "ambientLightSensor" })
        local ok1, e1 = pcall(sensorkit.reader, "electrocardiogram")
        T.log("ecg reader", ok1, (tostring(e1):gsub("^.*sensorkit%.reader: ", "", 1)))
        local ok2, e2 = pcall(sensorkit.requestAuthorization, { "ambientLightSensor", "electrocardiogram" })
        T.log("ask ecg", ok2, tostring(e2):find("needs iOS 17.4", 1, true) ~= nil)
        local hr = sensorkit.reader "heartRate"                     -- 17.0 ≤ 17.2: fine
        sensorkit.requestAuthorization({ "heartRate", "ambientLightSensor" }, function(e) T.log("ask others", T.err(e)) end)
        """#, scenario: #"return { switches = { osVersion = "17.2" } }"#, days: 1)
        XCTAssertEqual(o.lines, [
            "ecg reader false electrocardiogram needs iOS 17.4, but the simulated phone runs iOS 17.2 "
                + "(switches.osVersion); check sensorkit.info(\"electrocardiogram\").since before using it",
            "ask ecg false true",
            "ask others nil",
        ])
    }
}
