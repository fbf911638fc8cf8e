import Foundation
import XCTest
@testable import StudyRuntime

/// The Lua stdlib (`stdlib/*.lua`) run through the runtime, on days where the obvious
/// arithmetic goes wrong: DST changes (23- and 25-hour days) and watch records written
/// an hour or more after the change they report.
final class StdlibTests: XCTestCase {
    /// Europe/Berlin: clocks go 02:00 → 03:00 on 2026-03-29 and 03:00 → 02:00 on 2026-10-25.
    func testHourOfDayIsTheLocalClockHourOnDSTDays() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local time = require "time"
        local function show(label, t) T.log(label, time.clock(t), string.format("%.4f", time.hourOfDay(t))) end
        -- Spring forward: a 23-hour day.
        local spring = time.startOfDay(time.parse("2026-03-29 12:00"))
        show("spring+1.5h", spring + hours(1.5))
        show("spring+2h", spring + hours(2))          -- 03:00: the hour 02:xx does not exist
        show("spring+3.25h", spring + hours(3.25))
        show("spring+22.5h", spring + hours(22.5))    -- 23:30, the last half hour of the day
        T.log("spring length", (time.nextDay(spring) - spring) / 3600)
        -- Fall back: a 25-hour day; 02:00–03:00 happens twice.
        local fall = time.startOfDay(time.parse("2026-10-25 12:00"))
        show("fall+2.5h", fall + hours(2.5))          -- 02:30 summer time
        show("fall+3.5h", fall + hours(3.5))          -- 02:30 again, winter time
        show("fall+4h", fall + hours(4))
        show("fall+24.75h", fall + hours(24.75))      -- 23:45
        T.log("fall length", (time.nextDay(fall) - fall) / 3600)
        -- An ordinary day, and fractions of a second.
        show("plain", time.parse("2026-03-27 13:30") + 0.5)
        """#, scenario: #"return { timezone = "Europe/Berlin", start = "2026-03-27", participants = { { id = "P" } } }"#,
            days: 1, stdlib: true)
        XCTAssertEqual(o.lines, [
            "spring+1.5h 01:30 1.5000",
            "spring+2h 03:00 3.0000",
            "spring+3.25h 04:15 4.2500",
            "spring+22.5h 23:30 23.5000",
            "spring length 23.0",
            "fall+2.5h 02:30 2.5000",
            "fall+3.5h 02:30 2.5000",
            "fall+4h 03:00 3.0000",
            "fall+24.75h 23:45 23.7500",
            "fall length 25.0",
            "plain 13:30 13.5001",
        ])
    }

    /// Wear time counts each change at its onWristDate/offWristDate, not at the record's
    /// write time (a sync an hour or more later).
    func testWearTimeUsesTheChangeTimesNotTheWriteTimes() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local time = require "time"
        local summary = require "summary"
        T.study({ "onWristState" })
        local wrist = sensorkit.reader "onWristState"
        sensorkit.requestAuthorization({ "onWristState" }, function() wrist:startRecording() end)
        -- Independent reckoning: walk the records, crediting [change, next change) while on.
        local function reckon(rows, d)
          local worn, state, since = 0, nil, nil
          for _, r in ipairs(rows) do
            local at = r.onWrist and r.onWristDate or r.offWristDate
            if state and since then worn = worn + math.max(0, math.min(at, d.stop) - math.max(since, d.start)) end
            state, since = r.onWrist, at
          end
          if state then worn = worn + math.max(0, d.stop - math.max(since, d.start)) end
          return worn / 3600
        end
        schedule.at(time.parse("day 5 12:00"), function()
          local watch = wrist:devices()[1]
          local from, to = time.parse("day 2 00:00"), time.parse("day 4 00:00")
          local set = wrist:samples { device = watch, from = time.studyStart(), to = to + hours(6) }
          local rows = set:first(1000)
          local lagged = 0
          for _, r in ipairs(rows) do
            local at = r.onWrist and r.onWristDate or r.offWristDate
            if r.writeTime - at >= 3600 then lagged = lagged + 1 end
          end
          T.log("records", #rows > 4, "all written >= 1 h after the change", lagged == #rows)
          for _, d in ipairs(summary.wearTime(set, from, to)) do
            local day = time.daysBetween(from, to)
            local ref
            for _, x in ipairs(day) do if x.day == d.day then ref = reckon(rows, x) end end
            T.log(d.day, string.format("%.4f", d.hours), string.format("%.4f", ref))
          end
        end)
        """#, scenario: #"""
        return { days = 5, start = "2026-03-02", timezone = "UTC",
          participants = { { id = "P", profile = { preset = "officeWorker", wearsWatchToSleep = true }, events = { { offWrist = true, from = "day 2 00:00", to = "day 3 00:00" } } } } }
        """#, days: 5, stdlib: true)
        XCTAssertEqual(o.lines.count, 3, o.output)
        guard o.lines.count == 3 else { return }
        XCTAssertEqual(o.lines[0], "records true all written >= 1 h after the change true")
        // Day 2: off the wrist all day (write times would credit the hour until the off record synced).
        XCTAssertEqual(o.lines[1], "2026-03-03 0.0000 0.0000")
        let day3 = o.lines[2].split(separator: " ")
        XCTAssertEqual(day3.count, 3)
        XCTAssertEqual(day3.first, "2026-03-04")
        XCTAssertEqual(day3[1], day3[2], "wearTime agrees with the change-time reckoning")
        XCTAssertGreaterThan(Double(day3[1]) ?? 0, 12)
    }

    /// hourlySeries keeps 24 clock-hour slots on 23- and 25-hour days (the skipped hour is
    /// missing, the repeated hour's steps are all kept), so circadian measures work across
    /// a daylight-saving change; checked against sums of the rows themselves.
    func testHourlySeriesAndCircadianAcrossDSTDays() throws {
        for (start, first, expectMissing) in [("2026-03-27", "2026-03-28", 1), ("2026-10-23", "2026-10-24", 0)] {
            let h = try ProtocolHarness()
            let o = try h.run(#"""
            local T = require "t"
            local time = require "time"
            local summary = require "summary"
            T.study({ "pedometerData" })
            local steps = sensorkit.reader "pedometerData"
            sensorkit.requestAuthorization({ "pedometerData" }, function() steps:startRecording() end)
            local first = "\#(first)"
            schedule.at(time.parse(first .. " 00:00") + days(5), function()
              local from = time.parse(first .. " 00:00")
              local to = time.nextDay(time.nextDay(time.nextDay(from)))       -- three local days, the middle one 23 or 25 h
              local set = steps:samples { from = from, to = to + hours(1) }:where("time", ">=", from):where("time", "<", to)
              local s = summary.hourlySeries(set, "numberOfSteps", from, to)
              local byLabel, total = {}, 0                                   -- independent: the rows, by clock hour
              for r in set:distinct():rows() do
                local k = os.date("%Y-%m-%d %H", r.time)
                byLabel[k] = (byLabel[k] or 0) + r.numberOfSteps
                total = total + r.numberOfSteps
              end
              local days_ = time.daysBetween(from, to)
              local missing, mismatches, seriesTotal = 0, 0, 0
              for i = 1, s.n do
                local label = string.format("%s %02d", days_[(i - 1) // 24 + 1].day, (i - 1) % 24)
                if s.values[i] == nil then missing = missing + 1
                elseif s.values[i] ~= (byLabel[label] or 0) then mismatches = mismatches + 1 end
                seriesTotal = seriesTotal + (s.values[i] or 0)
              end
              local c = summary.circadian(s)
              T.log(s.n, missing, mismatches, seriesTotal == total, total > 0, c.IS > 0 and c.IS <= 1, c.IV > 0 and c.IV <= 2,
                    math.type(c.L5start), c.L5start >= 0 and c.L5start < 24)
            end)
            """#, scenario: "return { timezone = \"Europe/Berlin\", start = \"\(start)\", participants = { { id = \"P\" } } }",
                days: 8, stdlib: true)
            XCTAssertEqual(o.lines, ["72 \(expectMissing) 0 true true true true integer true"], start)
        }
    }

    /// circadian on hand-made series: a pattern repeated every day has IS = 1 and its L5/M10
    /// start at the clock hours of its quiet and busy stretches; a missing hour is left out.
    func testCircadianOnKnownSeries() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local summary = require "summary"
        local day = {}
        for hr = 0, 23 do day[hr + 1] = (hr >= 1 and hr < 6) and 0 or ((hr >= 9 and hr < 19) and 100 or 10) end
        local values = {}
        for d = 0, 2 do for hr = 1, 24 do values[d * 24 + hr] = day[hr] end end
        local c = summary.circadian { values = values, n = 72 }
        T.log(string.format("%.12f", c.IS), c.L5start, c.M10start, c.L5, c.M10)
        values[30] = nil                                            -- day 2, 05:00 missing
        local m = summary.circadian { values = values, n = 72 }
        T.log(m.IS > 0.99 and m.IS <= 1, m.L5start, m.M10start)
        -- Per-minute epochs: the same day at 1-minute resolution gives the same clock hours.
        local minutes = {}
        for i = 1, 72 do for k = 1, 60 do minutes[(i - 1) * 60 + k] = values[i] end end
        local e = summary.circadian { values = minutes, n = 72 * 60, epoch = 1 }
        T.log(e.L5start, e.M10start)
        T.log(pcall(summary.circadian, { values = values, n = 50 }))
        """#, days: 1, stdlib: true)
        XCTAssertEqual(o.lines.prefix(3), ["1.000000000000 1 9 0.0 100.0", "true 1 9", "1.0 9.0"])
        XCTAssertTrue(o.lines.last?.hasPrefix("false") == true && o.lines.last?.contains("whole days") == true, o.output)
    }

    /// summary.sleep's night is the day of the noon before onset on the clock, also on a
    /// 25-hour day (11:30 is 12.5 h after midnight there), and wearTime and sleep read every
    /// record: set-like tables whose first() refuses to work would fail a capped reader.
    func testSleepNightRuleOnDSTDaysAndNoRecordCap() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local time = require "time"
        local summary = require "summary"
        local function set(rows)
          return { distinct = function(self) return self end,
                   first = function() error("capped read") end,
                   rows = function() local i = 0; return function() i = i + 1; return rows[i] end end }
        end
        local function at(text) return time.parse(text) end
        local nights = summary.sleep(set {
          { time = at("2026-10-25 11:30"), duration = 3600 },       -- fall-back day, before noon
          { time = at("2026-10-25 12:30"), duration = 3600 },       -- after noon
          { time = at("2026-10-26 00:30"), duration = 7 * 3600 },   -- after midnight
          { time = at("2026-03-29 11:30"), duration = 0 },          -- spring-forward day, no end
        })
        for _, n in ipairs(nights) do T.log(n.night, n.complete) end
        local many = {}
        for i = 1, 100002 do many[i] = { onWrist = i % 2 == 1, time = at("2026-10-20 00:00") + i } end
        local worn = summary.wearTime(set(many), at("2026-10-20 00:00"), at("2026-10-22 00:00"))
        T.log(#worn, string.format("%.4f", worn[1].hours + worn[2].hours))
        """#, scenario: #"return { timezone = "Europe/Berlin", start = "2026-03-02", participants = { { id = "P" } } }"#,
            days: 1, stdlib: true)
        // 100 002 alternating changes a second apart: 50 001 on-records of one second each
        // (a reader capped at 100 000 records would see 50 000).
        XCTAssertEqual(o.lines, ["2026-10-24 true", "2026-10-25 true", "2026-10-25 true", "2026-03-28 false",
                                 "2 \(String(format: "%.4f", 50_001 / 3600.0))"])
    }
}
