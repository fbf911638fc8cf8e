import Foundation
import LuaHost
import Sensorium
import XCTest

/// `Study.openParticipants`: one participant's state in virtual time that moves only when
/// asked, the way a notebook or the REPL uses it.
final class ParticipantSessionTests: XCTestCase {
    func heartStudy() -> Study {
        var study = Study(.source(heartProtocol, name: "hr.lua"), world: .data(TestHeartRate()))
        study.configuration.days = 4
        study.register("countFast") { (values: [Double], limit: Double) -> Int in values.filter { $0 > limit }.count }
        return study
    }

    func testExecuteAdvanceAndReport() throws {
        let participants = try heartStudy().openParticipants()
        XCTAssertEqual(participants.map(\.id), ["P1"])
        let p = try XCTUnwrap(participants.first)
        XCTAssertEqual(p.now, TestHeartRate.day)
        XCTAssertEqual(p.start, TestHeartRate.day)
        XCTAssertEqual(p.end, TestHeartRate.day + 4 * 86_400)
        XCTAssertEqual(p.timeZone.secondsFromGMT(), 0)
        // Nothing has run: the protocol's globals are not there, the study's registrations are.
        XCTAssertEqual(try p.execute("return type(t), countFast({ 101, 99, 150 }, 100)"), ["nil", .integer(2)])
        try p.runProtocol()
        XCTAssertTrue(p.reportText.hasPrefix("== hr (0 rows) =="), p.reportText)   // declared at the top level
        // The first day is released (past its end and the 24-hour hold) and reported at 09:00
        // two days after it.
        try p.advance(to: TestHeartRate.day + 86_400 + 9 * 3600)
        XCTAssertTrue(p.reportText.hasPrefix("== hr (0 rows) =="), p.reportText)
        try p.advance(to: TestHeartRate.day + 2 * 86_400 + 9 * 3600)
        XCTAssertEqual(p.now, TestHeartRate.day + 2 * 86_400 + 9 * 3600)
        XCTAssertTrue(p.reportText.hasPrefix("== hr (1 rows) =="), p.reportText)
        XCTAssertTrue(p.reportText.contains("2026-03-02"), p.reportText)
        // An earlier time changes nothing; the clock only moves forward.
        try p.advance(to: TestHeartRate.day)
        XCTAssertEqual(p.now, TestHeartRate.day + 2 * 86_400 + 9 * 3600)
        XCTAssertEqual(try p.execute("return os.date('!%Y-%m-%d %H:%M')"), ["2026-03-04 09:00"])
    }

    func testErrorsAreStudyErrorsWithTheChunkAndLine() throws {
        let p = try XCTUnwrap(try heartStudy().openParticipants().first)
        XCTAssertThrowsError(try p.execute("local x = 1\nerror('nope')", chunkName: "=cell")) { error in
            XCTAssertTrue(error is StudyError, "\(type(of: error))")
            XCTAssertTrue("\(error)".contains("cell:2: nope"), "\(error)")
        }
        var broken = heartStudy()
        broken.configuration.start = "March"
        XCTAssertThrowsError(try broken.openParticipants()) { XCTAssertEqual("\($0)", "start: expected a date like 2026-03-02, got 'March'") }
    }

    /// A simulated participant without a protocol, as the REPL opens one.
    func simulatedParticipant() throws -> StudyParticipantSession {
        var configuration = StudyConfiguration()
        configuration.days = 3
        configuration.participants = 1
        let participants = try Study(.source("", name: "none.lua"), configuration: configuration).openParticipants()
        return try XCTUnwrap(participants.first)
    }

    /// `sensors` and `status` follow authorization and recording; `advance` moves the
    /// clock and runs what is due; `days` and `absoluteTime` tell the study's span and SR time.
    func testStatusSensorsAndAdvance() throws {
        let p = try simulatedParticipant()
        XCTAssertEqual(p.days, 3)
        let catalogue = p.sensors
        XCTAssertEqual(catalogue.first?.name, "ambientLightSensor")
        XCTAssertEqual(catalogue.first { $0.name == "heartRate" }?.deviceKinds, ["watch"])
        XCTAssertTrue(catalogue.allSatisfy { $0.authorization == "notDetermined" && !$0.isRecording })
        var status = p.status
        XCTAssertEqual(status.participant, "P1")
        XCTAssertEqual(status.time, p.now)
        XCTAssertEqual(status.devices.count, 2, "\(status.devices)")   // a phone and a watch
        XCTAssertEqual(status.sensors, [])
        XCTAssertEqual(status.queuedEvents, 0)

        p.allowEverySensor()
        _ = try p.execute("""
            local r = sensorkit.reader "accelerometer"
            sensorkit.requestAuthorization({ "accelerometer" }, function(err) assert(err == nil, tostring(err)); r:startRecording() end)
            schedule.at(time.studyStart() + days(1), function() fired = true end)
            """)
        status = p.status
        // One consent answer authorizes the motion group; only the accelerometer records.
        XCTAssertEqual(status.sensors.map(\.name), ["accelerometer", "rotationRate"])
        XCTAssertEqual(status.sensors.map(\.authorization), ["authorized", "authorized"])
        XCTAssertEqual(status.sensors.map(\.isRecording), [true, false])
        XCTAssertEqual(status.queuedEvents, 1)
        XCTAssertEqual(p.sensors.filter(\.isRecording).map(\.name), ["accelerometer"])

        let sr = p.absoluteTime
        try p.advance(to: p.start + 86_400 + 60)
        XCTAssertEqual(p.absoluteTime - sr, 86_400 + 60, accuracy: 1e-6)   // SR time moves with the virtual clock
        XCTAssertEqual(try p.execute("return fired"), [.boolean(true)])
        XCTAssertEqual(p.status.queuedEvents, 0)
    }

    /// `charts` holds what `plot` drew, rendered as SVG.
    func testCharts() throws {
        let p = try simulatedParticipant()
        XCTAssertEqual(p.charts, [])
        _ = try p.execute("""
            require("plot").line("lux", { rows = { { start = time.studyStart(), value = 1 }, { start = time.studyStart() + 3600, value = 3 } },
                                          x = "start", y = "value" })
            """)
        XCTAssertEqual(p.charts.map(\.name), ["lux"])
        XCTAssertTrue(p.charts.first?.svg.hasPrefix("<svg") ?? false, p.charts.first?.svg ?? "")
    }
}
