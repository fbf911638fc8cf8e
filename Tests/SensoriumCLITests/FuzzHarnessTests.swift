import Foundation
import XCTest

/// `sensorium fuzz` names a case that runs past its timeout a hang, not a crash: `timeout -s
/// KILL` signals its own process group, so the harness saw the KILL and called it a signal.
extension SensoriumCLITests {
    func testACaseKilledAtItsTimeoutIsAHangNotACrash() throws {
        try write("corpus/probe.lua", "while true do end\n")          // every accepted scenario runs forever
        try write("corpus/seeds/scenario/a.lua", "return { days = 1, participants = 1 }\n")
        let r = try sensorium(["fuzz", "--corpus", "corpus", "--targets", "scenario", "--cases", "4", "--seed", "1", "--timeout", "2"], timeout: 120)
        XCTAssertEqual(r.status, 1, "a hang fails the run")
        assertContains(r.stdout + r.stderr, "scenario      4 cases: 0 accepted, 3 refused, 0 crashed, 1 hung, 0 long message")
    }
}
