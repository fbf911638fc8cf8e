import CivilTime
import Foundation
import XCTest
@testable import SensorKitModel

/// A fixed sequence of instants over `ZoneRules.covered` (a linear congruential generator).
func zoneTestInstants(_ count: Int, seed: UInt64) -> [Double] {
    var state = seed
    let span = ZoneRules.covered.upperBound - ZoneRules.covered.lowerBound
    return (0..<count).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return (ZoneRules.covered.lowerBound + Double(state >> 11) / Double(1 << 53) * span).rounded(.down) + 0.25
    }
}

/// `ZoneRules` (the lock-free table of a zone's offsets) and the labels built on it answer
/// exactly as Foundation does, at random instants and around every transition.
final class ZoneRulesTests: XCTestCase {
    /// Zones with unusual rules: half-hour DST (Lord Howe), DST abolished (São Paulo 2019),
    /// a skipped day (Apia 2011), changes of standard offset (Moscow 2011 and 2014), DST at
    /// midnight (Santiago, Beirut), Ramadan pauses (Casablanca), none at all (Kolkata, UTC).
    let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Sao_Paulo", "Pacific/Apia",
                 "Europe/Moscow", "America/Santiago", "Asia/Beirut", "Africa/Casablanca", "Asia/Kolkata", "UTC",
                 "Asia/Kathmandu", "America/St_Johns"]

    func testEveryAnswerIsFoundations() throws {
        for id in zones {
            let zone = try XCTUnwrap(TimeZone(identifier: id))
            let rules = ZoneRules.of(zone)
            var times = zoneTestInstants(2_000, seed: UInt64(id.utf8.count))
            // Around every transition from 1960 to 2060: one second before, at, and after.
            var t = -315_619_200.0
            while let next = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: t))?.timeIntervalSince1970,
                  next < 2_871_763_200 {
                times += [next - 1, next, next + 1]
                t = next
            }
            // Before and after the table: Foundation's answers, asked directly.
            times += [-2_208_988_801, -5e9, 7_258_118_400, 9e9]
            for t in times {
                let date = Date(timeIntervalSince1970: t)
                XCTAssertEqual(rules.offset(at: t), zone.secondsFromGMT(for: date), "\(id) offset at \(t)")
                XCTAssertEqual(rules.isDaylightSavingTime(at: t), zone.isDaylightSavingTime(for: date), "\(id) DST at \(t)")
                XCTAssertEqual(rules.abbreviation(at: t), zone.abbreviation(for: date), "\(id) abbreviation at \(t)")
                XCTAssertEqual(rules.nextTransition(after: t), zone.nextDaylightSavingTimeTransition(after: date)?.timeIntervalSince1970,
                               "\(id) next transition after \(t)")
            }
        }
    }

    func testDayAndMinuteLabelsAreFoundationsCalendars() throws {
        for id in zones {
            let zone = try XCTUnwrap(TimeZone(identifier: id))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            for t in zoneTestInstants(500, seed: 7) + [-2_208_988_800.5, -1e9 - 0.5, 0, 1_774_746_000] {
                let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: t))
                let day = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
                XCTAssertEqual(LocalTime.dayLabel(t, zone), day, "\(id) at \(t)")
                XCTAssertEqual(LocalTime.minuteLabel(t, zone), day + String(format: " %02d:%02d", c.hour!, c.minute!), "\(id) at \(t)")
            }
        }
    }

    func testThreadsShareOneTableAndGetTheSameAnswers() throws {
        let zone = try XCTUnwrap(TimeZone(identifier: "America/Santiago"))
        let times = zoneTestInstants(5_000, seed: 3)
        let expected = times.map { zone.secondsFromGMT(for: Date(timeIntervalSince1970: $0)) }
        nonisolated(unsafe) let mismatches = UnsafeMutableBufferPointer<Int>.allocate(capacity: 8)
        defer { mismatches.deallocate() }
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            mismatches[worker] = zip(times, expected).filter { ZoneRules.of(zone).offset(at: $0) != $1 }.count
        }
        XCTAssertEqual(Array(mismatches), Array(repeating: 0, count: 8))
        XCTAssert(ZoneRules.of(zone) === ZoneRules.of(TimeZone(identifier: "America/Santiago")!), "one table per zone")
    }
}

/// Day starts, next days and times of day away from transitions are plain arithmetic on the
/// zone's table; near transitions Foundation's calendar answers. Either way: the calendar's answers.
final class DayArithmeticTests: XCTestCase {
    func testDayStartsNextDaysAndTimesOfDayAreTheCalendars() throws {
        let ids = ["Europe/Berlin", "America/Santiago", "Asia/Beirut", "Australia/Lord_Howe", "Pacific/Apia", "America/Havana",
                   "Asia/Kolkata", "UTC"]
        for id in ids {
            let zone = try XCTUnwrap(TimeZone(identifier: id))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            var times = zoneTestInstants(400, seed: 11)
            var t = 946_684_800.0   // around every transition from 2000 to 2040, hours apart
            while let next = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: t))?.timeIntervalSince1970,
                  next < 2_208_988_800 {
                times += stride(from: -50.0, through: 50, by: 7).map { next + $0 * 3600 }
                t = next
            }
            for t in times {
                let date = Date(timeIntervalSince1970: t)
                let start = calendar.startOfDay(for: date)
                XCTAssertEqual(LocalTime.startOfDay(t, zone), start.timeIntervalSince1970, "\(id) start of day at \(t)")
                XCTAssertEqual(LocalTime.nextDay(t, zone), calendar.date(byAdding: .day, value: 1, to: start)!.timeIntervalSince1970,
                               "\(id) next day at \(t)")
                var c = calendar.dateComponents([.year, .month, .day], from: date)
                (c.hour, c.minute, c.second) = (9, 30, 0)
                XCTAssertEqual(LocalTime.time(onDayOf: t, hour: 9, minute: 30, zone), calendar.date(from: c)!.timeIntervalSince1970,
                               "\(id) 09:30 on the day of \(t)")
            }
        }
    }
}
