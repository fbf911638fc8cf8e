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
}
