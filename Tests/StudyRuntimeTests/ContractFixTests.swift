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
}
