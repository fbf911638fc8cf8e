import Foundation
import XCTest
@testable import StudyRuntime

/// stdlib helpers every protocol used to recompute (stats.lua, time.releasedDay,
/// summary.wear), against values worked out by hand.
final class StatsTests: XCTestCase {
    func testMedianCorrelationAndClockMeansByHand() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local stats = require "stats"
        local time = require "time"
        local function f(x) return x == nil and "nil" or string.format("%.6f", x) end
        T.log("median", f(stats.median { 5, 1, 3 }), f(stats.median { 4, 1, 3, 2 }), f(stats.median {}))
        local list = { 3, 1, 2 }
        stats.median(list)
        T.log("unchanged", table.concat(list, ","))
        T.log("mean", f(stats.mean { 1, 2, 6 }), f(stats.mean {}))
        -- x = 1..4, y = 2,4,5,9: means 2.5 and 5, sxy = 11, sxx = 5, syy = 26 → r = 11 / sqrt(130).
        T.log("pearson", f(stats.pearson({ 1, 2, 3, 4 }, { 2, 4, 5, 9 })))
        T.log("pearson none", f(stats.pearson({ 1, 2 }, { 3, 3 })), f(stats.pearson({ 1, 2, 3 }, { 1, 2, 4 }, 5)))
        -- Spearman: y = x³ is monotone (1); ties share ranks: { 1.5, 1.5, 3 } against { 1, 2, 3 }:
        -- sxy = 1.5, sxx = 1.5, syy = 2 → 1.5 / sqrt(3).
        T.log("spearman", f(stats.spearman({ 1, 2, 3, 4 }, { 1, 8, 27, 64 })), table.concat(stats.ranks { 7, 7, 9 }, ","),
              f(stats.spearman({ 7, 7, 9 }, { 1, 2, 3 })))
        T.log("column", table.concat(stats.column({ { a = 1 }, {}, { a = 3 } }, "a"), ","))
        local ok, err = pcall(stats.pearson, { 1, 2 }, { 1 })
        T.log("lengths", ok, err:find("2 x values but 1 y values") ~= nil)
        -- Clock means: 23:30 and 00:30 → 00:00 (an arithmetic mean of hours says 12:00);
        -- 22:00, 23:00, 03:00 → atan2 of the unit vectors.
        local d1, d2 = time.parse("2026-03-02 23:30"), time.parse("2026-03-03 00:30")
        T.log("clock", stats.clockText(stats.clockMean { d1, d2 }),
              stats.clockText(stats.clockMean { time.parse("2026-03-02 22:00"), time.parse("2026-03-02 23:00"), time.parse("2026-03-03 03:00") }),
              stats.clockMean { time.parse("2026-03-02 06:00"), time.parse("2026-03-02 18:00") })
        T.log("difference", stats.clockDifference(1, 23), stats.clockDifference(23, 1), stats.clockText(25.5))
        """#, days: 1, stdlib: true)
        // 22, 23, 3 o'clock: angles 330°, 345°, 45°; sin sum = -0.5 - 0.258819 + 0.707107 = -0.051712,
        // cos sum = 0.866025 + 0.965926 + 0.707107 = 2.539058; atan2 → -1.1668° → 23.9222 h → 23:55.
        XCTAssertEqual(o.lines, [
            "median 3.000000 2.500000 nil",
            "unchanged 3,1,2",
            "mean 3.000000 nil",
            "pearson 0.964764",                     // 11 / sqrt(130)
            "pearson none nil nil",
            "spearman 1.000000 1.5,1.5,3.0 0.866025",   // 1.5 / sqrt(3)
            "column 1,3",
            "lengths false true",
            "clock 00:00 23:55 nil",
            "difference 2 -2 01:30",
        ])
    }

    /// time.releasedDay: the latest local day past the hold, on a 23-hour day and at the study's start.
    func testReleasedDayAcrossDSTAndAtTheStart() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local time = require "time"
        local function show(label, now, margin, hold)
          local d = time.releasedDay(time.parse(now), margin, hold)
          T.log(label, d and d.day or "nil", d and (d.stop - d.start) / 3600 or "-")
        end
        show("09:00", "2026-03-31 09:00")                      -- the day before yesterday: the 23-hour day
        show("first morning", "2026-03-28 09:00")               -- would be 03-26, before the study
        show("00:30", "2026-03-30 00:30")                       -- 03-28 23:30 released with the hour's margin: 03-27
        show("01:00", "2026-03-31 01:00")                       -- 25 h before is 03-30 00:00 exactly: 03-29 is complete
        show("margin 3h", "2026-03-30 02:00", hours(3))         -- 03-28 23:00: 03-27
        show("face hold", "2026-04-05 12:00", 0, hours(180))    -- 7.5 days + 0: 03-28 23:00, so 03-27
        """#, scenario: #"return { timezone = "Europe/Berlin", start = "2026-03-27", days = 1, participants = { { id = "P" } } }"#,
            days: 1, stdlib: true)
        XCTAssertEqual(o.lines, ["09:00 2026-03-29 23.0", "first morning nil -", "00:30 2026-03-27 24.0",
                                 "01:00 2026-03-29 23.0", "margin 3h 2026-03-27 24.0", "face hold 2026-03-27 24.0"])
    }

    /// summary.wear reads both dates of every on-wrist record: on since onWristDate, off
    /// since offWristDate; unknown before the first known change; write time before iOS 16.4.
    func testWearFromBothDatesOfEachRecord() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local time = require "time"
        local summary = require "summary"
        local function at(text) return time.parse("2026-03-02 " .. text) end
        local function set(rows)
          return { rows = function() local i = 0; return function() i = i + 1; return rows[i] end end }
        end
        local records = set {
          { time = at("10:00"), onWrist = false, onWristDate = at("06:00"), offWristDate = at("09:00") },
          { time = at("13:00"), onWrist = true, onWristDate = at("12:00"), offWristDate = at("09:00") },
          { time = at("20:00"), onWrist = false },               -- before iOS 16.4: off from its write time
        }
        local w = summary.wear(records, at("00:00"), at("00:00") + days(1))
        local function list(intervals)
          local out = {}
          for _, iv in ipairs(intervals) do out[#out + 1] = time.clock(iv[1]) .. "-" .. time.clock(iv[2]) end
          return table.concat(out, ",")
        end
        T.log("worn", list(w.worn), "off", list(w.off), "hours", w.hours)
        T.log("overlap", summary.overlap(w.worn, at("08:00"), at("13:00")) / 3600)
        local perDay = summary.wearTime(records, at("00:00"), at("00:00") + days(2))
        T.log("wearTime", perDay[1].day, perDay[1].hours, perDay[2].day, perDay[2].hours)
        """#, days: 1, stdlib: true)
        // Worn 06–09 and 12–20 (11 h); off 09–12 and from 20:00; unknown before 06:00.
        XCTAssertEqual(o.lines, ["worn 06:00-09:00,12:00-20:00 off 09:00-12:00,20:00-00:00 hours 11.0",
                                 "overlap 2.0", "wearTime 2026-03-02 11.0 2026-03-03 0.0"])
    }

    /// summary.timeAbove needs the period each reading stands for; summary.heartRate's hours
    /// are the minutes holding an estimate (not estimates / 3600, which assumed 1 Hz).
    func testTimeAboveNeedsThePeriodAndHeartRateHoursAreMinutesWithData() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local summary = require "summary"
        T.study({ "heartRate", "ambientLightSensor" })
        local hr, light = sensorkit.reader "heartRate", sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "heartRate", "ambientLightSensor" }, function() hr:startRecording(); light:startRecording() end)
        schedule.at("2026-03-04 12:00", function(now)
          local day = { from = time.studyStart(), to = time.studyStart() + days(1) }
          local ok, err = pcall(summary.timeAbove, light:samples(day), 100)
          T.log("timeAbove", ok, err:find("period must be the seconds each reading stands for, got nil") ~= nil)
          local above = summary.timeAbove(light:samples(day), 100, 10)[1]
          T.log("minutes", above.minutes == light:samples(day):distinct():where("lux", ">", 100):count() * 10 / 60)
          local set = hr:samples { device = hr:devices()[1], from = time.studyStart(), to = now }
            :where("time", "<", time.studyStart() + days(1))
          local minutes, estimates = {}, 0
          for r in set:distinct():rows() do minutes[math.floor((r.time - time.studyStart()) / 60)] = true; estimates = estimates + 1 end
          local n = 0
          for _ in pairs(minutes) do n = n + 1 end
          local d = summary.heartRate(set)[1]
          T.log("heartRate", d.day, d.hours == n / 60, d.estimates == estimates, n > 60, d.hours < d.estimates / 3600 * 61)
        end)
        """#, stdlib: true)
        XCTAssertEqual(o.lines, ["timeAbove false true", "minutes true", "heartRate 2026-03-02 true true true true"])
    }
}
