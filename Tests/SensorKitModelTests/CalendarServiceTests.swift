import Foundation
import XCTest
@testable import SensorKitModel

/// The calendar service (`LocalTime`, `LocalClock`) against Foundation's Gregorian calendar.
final class CalendarServiceTests: XCTestCase {
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    func testCivilDaysAndWeekdaysMatchFoundation() {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        // Every 997th day from 1653 to 2286 (the instants the runtime accepts), negative days included.
        for day in stride(from: -115_000, through: 115_000, by: 997) {
            let date = Date(timeIntervalSince1970: Double(day) * 86_400)
            let c = utc.dateComponents([.year, .month, .day, .weekday], from: date)
            let civil = LocalTime.civilDate(day: day)
            XCTAssertEqual([civil.year, civil.month, civil.day], [c.year!, c.month!, c.day!], "day \(day)")
            // Foundation: Sunday = 1; ISO: Monday = 1 … Sunday = 7.
            XCTAssertEqual(LocalTime.isoWeekday(day: day), (c.weekday! + 5) % 7 + 1, "day \(day)")
        }
    }

    func testWallTimesAcrossTheSpringForwardDay() throws {
        // 2026-03-29: Berlin's clocks go from 02:00 to 03:00 (UTC+1 → UTC+2).
        let midnight = try XCTUnwrap(LocalTime.parse("2026-03-29", berlin))
        XCTAssertEqual(LocalTime.offset(at: midnight, berlin), 3600)
        let change = LocalTime.nextTransition(after: midnight, berlin)
        XCTAssertEqual(change, midnight + 2 * 3600)
        XCTAssertEqual(LocalTime.offset(at: change, berlin), 7200)
        // Wall 04:00 on that day is 02:00 UTC.
        let wall = (midnight + 3600) + 4 * 3600
        XCTAssertEqual(LocalTime.instant(wall: wall, berlin), midnight + 3 * 3600)
        XCTAssertEqual(LocalTime.wallLabel(wall, "%Y-%m-%d %H:00"), "2026-03-29 04:00")
        // The clock of that day: midnight and the next, 23 hours apart.
        let clock = ZoneTimeline(home: berlin, changes: []).clock(from: midnight - 86_400, to: midnight + 2 * 86_400)
        let day = clock.day(containing: midnight + 3600)
        XCTAssertEqual(clock.midnight(day), midnight)
        XCTAssertEqual(clock.midnight(day + 1) - clock.midnight(day), 23 * 3600)
        XCTAssertEqual(LocalTime.civilDate(day: day).day, 29)
    }
}
