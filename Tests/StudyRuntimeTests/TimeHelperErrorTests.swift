import Foundation
import XCTest
@testable import StudyRuntime

/// The time helpers' argument errors are the caller's: they name the protocol's line, not
/// the stdlib's, and say what was expected.
final class TimeHelperErrorTests: XCTestCase {
    func testDurationAndFormatErrorsNameTheCallersLine() throws {
        let h = try ProtocolHarness()
        let cases: [(code: String, says: String)] = [
            ("local cfg = {}\nlocal back = days(cfg.lookback)", "days: expected a number, got nil"),
            ("local x = 1\nlocal d = hours(\"2\")", #"hours: expected a number, got string (time.duration reads text such as "26h")"#),
            ("local x = 1\nprint(time.format(-1e18))", "time.format: -1e+18 cannot be shown as a date"),
            ("local x = 1\nprint(time.hour({}))", "time.hour: expected a time (seconds since 1970), got table"),
        ]
        for c in cases {
            let error = try XCTUnwrap(h.failure(c.code) as? RunError, c.code)
            XCTAssertEqual(error.line, 2, "\(c.code): \(error.message)")
            XCTAssertTrue(error.message.contains(c.says), "\(c.code): \(error.message)")
            XCTAssertFalse(error.message.contains("time.lua:"), error.message)
        }
        let fine = try h.run("print(seconds(5), minutes(2), hours(1.5), days(1), time.weeks(1), time.format(0, '%Y'))")
        XCTAssertEqual(fine.lines, ["5\t120\t5400.0\t86400\t604800\t1970"])
        let seconds = try XCTUnwrap(h.failure("local x = 1\nlocal s = seconds(nil)") as? RunError)
        XCTAssertEqual(seconds.line, 2, seconds.message)
    }
}
