-- Daily activity totals, HealthKit style.
--
-- Apps built on HealthKit show "steps today / yesterday" with a statistics-collection
-- query: cumulative sums in local-calendar-day buckets anchored at midnight. This
-- protocol computes the same daily totals (steps, walking distance, floors climbed, plus
-- minutes at a brisk cadence) from SensorKit's pedometer, and shows the one thing that
-- differs: SensorKit holds every record for 24 hours. At 07:00 "yesterday" is only
-- released up to 07:00 yesterday, so the morning report gives the totals of the
-- latest COMPLETE day (the day before yesterday) and shows how little of yesterday is
-- visible yet.
--
-- The scenario runs in Berlin across the switch to summer time (2026-03-29 has 23 hours):
-- buckets follow the local calendar, as HealthKit's do. Per participant the summary adds
-- the rest-activity rhythm of hourly steps (IS, IV, when M10 and L5 start; the hour the
-- clocks skip is missing, not zero), and the charts show daily steps and a double-plotted
-- actogram of steps per 15 minutes.

study {
  id = "daily-activity", title = "Daily steps, distance and floors",
  usage = "Counts your daily steps, walking distance and floors climbed to study everyday activity.",
  privacy_policy = "https://example.org/daily-activity/privacy",
  entitlements = { "pedometer" },
  sensors = {
    pedometerData = { detail = "Counts steps, distance and floors climbed with your iPhone.", required = true },
  },
}

local report = require "report"
local summary = require "summary"
local time = require "time"
local expect = require "expect"
local plot = require "plot"
local stats = require "stats"

local MORNING = "07:00"

local morning = report.table("morning_report", {
  columns = { "morning", "complete_day", "steps", "km", "floors", "brisk_min",
              "yesterday", "released_until", "released_pct", "steps_so_far", "note" },
  formats = { km = "%.2f", brisk_min = "%.0f", released_pct = "%.0f" },
})
local days_ = report.table("daily_totals", {
  columns = { "day", "weekday", "day_hours", "steps", "km", "floors", "brisk_min", "m_per_step" },
  formats = { km = "%.2f", brisk_min = "%.0f", m_per_step = "%.2f", day_hours = "%.0f" },
})
local week = report.table("participant_summary", {
  columns = { "complete_days", "mean_steps", "mean_km", "mean_floors", "mean_brisk_min", "IS", "IV", "M10_start", "L5_start",
              "status", "note" },
  formats = { mean_steps = "%.0f", mean_km = "%.2f", mean_floors = "%.1f", mean_brisk_min = "%.0f", IS = "%.2f", IV = "%.2f" },
})

local steps = sensors.pedometerData       -- study{} asks for it and records it once granted
local revokedAt
steps.delegate = {
  didChangeAuthorizationStatus = function(_, status) if status == "denied" then revokedAt = revokedAt or time.now() end end,
}

-- Pedometer records of local day d (a record counts on the day its first step was taken).
-- Records are written a few seconds after each 2.5-minute bin, so writes up to 10 minutes
-- past midnight still belong to the day.
local function dayRecords(d, releasedUntil)
  local to = math.min(d.stop + minutes(10), releasedUntil)
  return steps:samples { from = d.start, to = to }:where("time", ">=", d.start):where("time", "<", d.stop)
end

local function totals(set)
  local t = summary.dailySteps(set)[1] or { steps = 0, distance = 0, floors = 0 }
  local brisk = summary.activeMinutes(set)[1]
  return t.steps, t.distance / 1000, t.floors, brisk and brisk.minutes or 0
end

local completeDays = {}
local quarters = {}                          -- steps per 15 minutes of the complete days
local hourly = { values = {}, n = 0 }        -- steps per clock hour of the complete days (24 a day)

schedule.daily(MORNING, function(now)
  if steps.authorizationStatus ~= "authorized" then return end
  local yesterday = time.daysBetween(time.startOfDay(now) - 1, time.startOfDay(now))[1]
  local before = time.releasedDay(now, minutes(10))   -- the latest complete day, or nil
  local released = now - hours(24)             -- the holding period
  local row = { morning = time.format(now), yesterday = yesterday.day, released_until = time.format(released, "%H:%M") }
  row.released_pct = 100 * math.max(0, released - yesterday.start) / (yesterday.stop - yesterday.start)
  row.steps_so_far = totals(dayRecords(yesterday, released))
  if before then
    local s, km, floors, brisk = totals(dayRecords(before, released))
    row.complete_day, row.steps, row.km, row.floors, row.brisk_min = before.day, s, km, floors, brisk
    local hoursLong = (before.stop - before.start) / 3600
    days_:row { day = before.day, weekday = time.format(before.start, "%a"), day_hours = hoursLong, steps = s, km = km,
                floors = floors, brisk_min = brisk, m_per_step = s > 0 and km * 1000 / s or nil }
    completeDays[#completeDays + 1] = { day = before.day, steps = s, km = km, floors = floors, brisk = brisk }
    for _, q in ipairs(dayRecords(before, released):distinct():byWindow(minutes(15)):sum("numberOfSteps")) do
      quarters[#quarters + 1] = q
    end
    local h = summary.hourlySeries(dayRecords(before, released), "numberOfSteps", before.start, before.stop)
    for i = 1, h.n do hourly.values[hourly.n + i] = h.values[i] end
    hourly.n = hourly.n + h.n
    -- Plausibility; sources at the end of the file.
    expect.between(s, 1500, 25000, "steps on " .. before.day)
    expect.between(km * 1000 / s, 0.45, 0.95, "metres per step on " .. before.day)
    expect.between(floors, 0, 60, "floors climbed on " .. before.day)
    expect.between(brisk, 0, 300, "minutes at ≥ 90 steps/min on " .. before.day)
  else
    row.note = yesterday.start < time.studyStart() and "study starts today: nothing recorded yet"
      or "no complete day yet: yesterday is still in the 24-hour hold"
  end
  -- Yesterday is never complete in the morning: at most the first seven hours are out.
  expect.atMost(row.released_pct, 30, "share of yesterday released at " .. MORNING)
  morning:row(row)
end)

schedule.at(time.studyEnd(), function()
  plot.line("daily_steps", { rows = completeDays, x = "day", y = "steps", title = "Steps per complete day",
                             ylabel = "Steps", unit = "steps/day" })
  -- Steps per 15 minutes of every complete day, double-plotted.
  plot.actogram("actogram", quarters, { from = time.studyStart(), to = time.startOfDay(time.now() - hours(24)),
                                        bin = minutes(15), empty = 0, title = "Steps per 15 minutes (double-plotted)",
                                        ylabel = "steps", unit = "steps" })
  local n = #completeDays
  local function mean(key) return stats.mean(stats.column(completeDays, key)) end
  -- Rest-activity rhythm of the hourly steps (Van Someren et al. 1999): interdaily stability and
  -- intradaily variability, and the clock hours the most active 10 and least active 5 hours start.
  local rhythm = hourly.n >= 48 and summary.circadian(hourly) or {}
  week:row {
    complete_days = n, status = steps.authorizationStatus, IS = rhythm.IS, IV = rhythm.IV,
    M10_start = rhythm.M10start and string.format("%02d:00", rhythm.M10start),
    L5_start = rhythm.L5start and string.format("%02d:00", rhythm.L5start),
    mean_steps = mean("steps"), mean_km = mean("km"), mean_floors = mean("floors"), mean_brisk_min = mean("brisk"),
    note = revokedAt and ("revoked " .. time.format(revokedAt) .. "; later days not available") or nil,
  }
  if revokedAt then
    -- After a revocation SensorKit refuses every fetch, also of data recorded before.
    local err = expect.fails(function() steps:samples { from = time.studyStart(), to = time.now() } end)
    expect.equal(err.code, sensorkit.errors.noAuthorization, "fetch error after revocation")
  else
    expect.equal(n, math.max(0, time.studyDays() - 2), "complete days (the study's days minus the last two, still held)")
    if n > 0 then expect.between(mean("steps"), 3000, 15000, "mean daily steps") end
  end
end)

-- Sources of the plausibility ranges:
-- * steps 1 500–25 000 a day, mean 3 000–15 000: healthy adults take 4 000–18 000 steps/day
--   (Tudor-Locke et al. 2011, Int J Behav Nutr Phys Act 8:79); single days vary more.
-- * 0.45–0.95 m per step: walking step length is ~0.41 × height (Hatano 1993), 0.6–0.8 m
--   for most adults; slow indoor steps are shorter, brisk ones longer.
-- * floors 0–60: a floor is ~3 m of ascent (CMPedometer); office workers climb ~5–20 a day.
-- * brisk minutes (cadence ≥ 1.5 steps/s = 90 steps/min, summary.activeMinutes) 0–300 a day:
--   adults accumulate ~20–60 min/day at ≥ 100 steps/min (Tudor-Locke et al. 2011, Am J
--   Prev Med 40:S64 / NHANES); 300 allows a day of long walks or a hike.
