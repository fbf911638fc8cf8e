import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel
import XCTest
@testable import StudyRuntime
@testable import StudyWorlds

/// The runtime runs whatever world a `CohortPlanner` gives it (it knows no backend), and the
/// wiring layer reads a scenario's events into plain values.
final class WorldWiringTests: XCTestCase {
    /// A world of the test's own: one phone, no samples; before the run it revokes heart rate on day 2.
    struct TestWorld: CohortWorld, WorkerWorld, SampleSource {
        let revokeAt: Double
        var source: any SampleSource { self }
        func open(fresh: Bool) -> any WorkerWorld { self }
        func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange] {
            [AuthorizationChange(sensor: .heartRate, at: revokeAt, status: .denied)]
        }
        func devices(participant: String) -> [SRDevice] { [.defaultPhone] }
        func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double) -> SampleBatch {
            SampleBatch(sensor: sensor)
        }
    }

    struct TestPlanner: CohortPlanner {
        func plan(_ options: StudyOptions) throws -> CohortPlan {
            let start = LocalTime.parse("2026-03-02", TimeZone(identifier: "UTC")!)!
            let settings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                       start: start, days: 3, seed: 7, limits: options.limits, switches: WorldSwitches(),
                                       failFast: false)
            return CohortPlan(settings: settings, setups: [ParticipantSetup(id: "only", timeZone: TimeZone(identifier: "UTC")!)],
                              world: TestWorld(revokeAt: start + 86_400 + 9 * 3600), facts: ["Source: test world"],
                              warnings: ["from the test planner"])
        }
    }

    func testTheRunnerRunsThePlannersWorld() throws {
        let h = try ProtocolHarness()
        let path = try h.write("protocol.lua", #"""
        local T = require "t"
        T.study({ "heartRate" })
        local hr = sensorkit.reader "heartRate"
        hr.delegate = T.recorder("hr")
        sensorkit.requestAuthorization({ "heartRate" }, function(e) T.log("asked", T.err(e), hr.authorizationStatus) end)
        """#)
        var options = StudyOptions(protocolPath: path, moduleDirectories: [h.folder.path])
        options.limits.timeLimitMilliseconds = 0
        let runner = StudyRunner(options: options, planner: TestPlanner())
        var output = ""
        try runner.run { output += $0 }
        XCTAssertEqual(runner.participantIDs, ["only"])
        XCTAssertEqual(runner.warnings, ["from the test planner"])
        XCTAssertEqual(runner.runFacts, ["Source: test world"])
        XCTAssertTrue(output.contains("asked nil authorized"), output)
        // The world's authorization change reached the reader during the run.
        XCTAssertTrue(output.contains("hr didChange denied"), output)
    }

    func testScenarioEventsAreReadIntoPlainValues() throws {
        let h = try ProtocolHarness()
        let path = try h.write("scenario.lua", #"""
        return { participants = { { id = "a", events = {
          { revoke = "heartRate", at = "day 2 09:00" },
          { clockJump = 3600, at = 1772496000, note = { 1 } },
          { phoneOff = true, from = "2026-03-03 10:00", to = "2026-03-03 11:00" },
        } } } }
        """#)
        let scenario = try Scenario.load(path)
        let events = try XCTUnwrap(scenario.participants.first?.events)
        XCTAssertEqual(events.map(\.path), ["participants[1].events[1]", "participants[1].events[2]", "participants[1].events[3]"])
        XCTAssertEqual(events[0].fields, ["revoke": .text("heartRate"), "at": .text("day 2 09:00")])
        XCTAssertEqual(events[1].fields, ["clockJump": .number(3600), "at": .number(1_772_496_000), "note": .other(typeName: "table")])
        XCTAssertEqual(events[2]["phoneOff"], .flag(true))
        // Resolved once the start and time zone are known: day 2 09:00 local.
        let utc = TimeZone(identifier: "UTC")!
        let start = LocalTime.parse("2026-03-02", utc)!
        let reader = EventReader(file: path, start: start, end: start + 3 * 86_400, declaredEnd: start + 3 * 86_400, timeZone: utc)
        XCTAssertEqual(try reader.read(events[0]).model, [.revoke(.heartRate, at: start + 86_400 + 9 * 3600)])
    }
}
