-- summary: the daily and hourly tables studies compute, on native SampleSet aggregates.
--
--   local summary = require "summary"
--   local light = reader:samples { device = phone, from = a, to = b }
--   for _, d in ipairs(summary.timeAbove(light, 1000)) do print(d.day, d.minutes) end
--
-- Every function takes SampleSets (from reader:samples) and returns a list of rows in
-- time order, e.g. { { day = "2026-03-02", steps = 8312, ... }, ... }. Per-sample work
-- runs natively (count, sum, mean, quantiles, grouping by local day and hour); a table
-- with several columns comes from one pass (groups:summarize), and Lua only sees one
-- row per day or per hour. Days and hours are the participant's local time.
--
-- SensorKit delivers about 1 % of records twice; every function that counts, sums or
-- averages samples first drops those exact duplicates (SampleSet:distinct, native), so
-- a record delivered twice is counted once.

local time = require "time"
local M = {}

-- Turns grouped results ({ key, start, count, value }) into rows { [keyName] = key, [name] = value }.
local function rows(groups, keyName, name)
  local out = {}
  for i, g in ipairs(groups) do out[i] = { [keyName] = g.key, [name] = g.value, count = g.count, start = g.start } end
  return out
end

------------------------------------------------------------------------------
-- Generic tables
------------------------------------------------------------------------------

-- One value per local day: how = "mean" | "sum" | "min" | "max" | "stddev" | "count".
function M.daily(set, field, how)
  how = how or "mean"
  local groups = set:distinct():byDay()
  if how == "count" then return rows(groups:count(), "day", "count") end
  return rows(groups[how](groups, field), "day", field)
end

-- One value per local clock hour ("YYYY-MM-DD HH:00").
function M.hourly(set, field, how)
  how = how or "mean"
  local groups = set:distinct():byHour()
  if how == "count" then return rows(groups:count(), "hour", "count") end
  return rows(groups[how](groups, field), "hour", field)
end

------------------------------------------------------------------------------
-- Data quality
------------------------------------------------------------------------------

-- Hours of each local day in [from, to) that hold at least one sample: { day, hours }.
function M.completeness(set, from, to)
  local perDay = {}
  for _, h in ipairs(set:byHour():count()) do
    local day = string.sub(h.key, 1, 10)
    perDay[day] = (perDay[day] or 0) + 1
  end
  local out = {}
  for _, d in ipairs(time.daysBetween(from, to)) do out[#out + 1] = { day = d.day, hours = perDay[d.day] or 0 } end
  return out
end

-- Hours the watch was worn on each local day in [from, to), from onWristState records
-- (one per wear change): { day, hours }. Before the first record the state is unknown
-- and counted as not worn.
--
-- A change counts at the time it happened: the record's onWristDate (put on) or
-- offWristDate (taken off). The record itself is written when the watch next syncs,
-- an hour or more later, so fetch `wrist` up to a few hours past `to`. Records without
-- those fields (watchOS before 16.4) fall back to the write time.
function M.wearTime(wrist, from, to)
  local changes = wrist:first(100000)        -- wear changes are a few per day
  local function changedAt(c)
    if c.onWrist then return c.onWristDate or c.time end
    return c.offWristDate or c.time
  end
  local days = time.daysBetween(from, to)
  local worn = {}
  for _, d in ipairs(days) do worn[d.day] = 0 end
  local function add(a, b)                   -- credit [a, b) to the days it overlaps
    for _, d in ipairs(days) do
      local s, e = math.max(a, d.start), math.min(b, d.stop)
      if e > s then worn[d.day] = worn[d.day] + (e - s) end
    end
  end
  for i, c in ipairs(changes) do
    if c.onWrist then
      local stop = changes[i + 1] and changedAt(changes[i + 1]) or to
      add(math.max(changedAt(c), from), math.min(stop, to))
    end
  end
  local out = {}
  for _, d in ipairs(days) do out[#out + 1] = { day = d.day, hours = worn[d.day] / 3600 } end
  return out
end

------------------------------------------------------------------------------
-- Light exposure
------------------------------------------------------------------------------

-- Minutes per local day with lux above a threshold. Ambient light is sampled every
-- `period` seconds while the screen is on (default: the catalogue's nominal period).
function M.timeAbove(light, threshold, period)
  period = period or sensorkit.info("ambientLightSensor").nominalPeriod or 10
  local out = {}
  for _, g in ipairs(light:distinct():where("lux", ">", threshold):byDay():count()) do
    out[#out + 1] = { day = g.key, minutes = g.value * period / 60 }
  end
  return out
end

-- Mean lux for each hour of the day (00–23) over the whole set: { hour, lux, samples }.
function M.luxByHour(light)
  local out = {}
  for _, g in ipairs(light:distinct():byHourOfDay():mean("lux")) do out[#out + 1] = { hour = g.key, lux = g.value, samples = g.count } end
  return out
end

-- Mean lux in the `hours` (default 2) before each sleep onset: { night, onset, lux, samples }.
function M.eveningLight(light, sleepSessions, hours)
  hours = hours or 2
  light = light:distinct()
  local out = {}
  for _, night in ipairs(M.sleep(sleepSessions)) do
    local before = light:where("time", ">=", night.onset - hours * 3600):where("time", "<", night.onset)
    local s = before:summarize { lux = { "mean", "lux" }, samples = { "count" } }
    out[#out + 1] = { night = night.night, onset = night.onset, lux = s.lux, samples = s.samples }
  end
  return out
end

------------------------------------------------------------------------------
-- Activity
------------------------------------------------------------------------------

-- Steps, distance (m) and floors climbed per local day, from pedometer bins (counted on
-- the day each bin starts): { day, steps, distance, floors }.
function M.dailySteps(pedometer)
  return pedometer:distinct():byDay():summarize {
    steps = { "sum", "numberOfSteps" }, distance = { "sum", "distance" }, floors = { "sum", "floorsAscended" },
  }
end

-- Active minutes per local day: the time in pedometer bins whose cadence is at least
-- `cadence` steps per second (default 1.5, brisk walking, Tudor-Locke et al. 2018).
function M.activeMinutes(pedometer, cadence)
  local active = pedometer:distinct():where("currentCadence", ">=", cadence or 1.5)
  local out = {}
  for _, g in ipairs(active:byDay():sum("duration")) do out[#out + 1] = { day = g.key, minutes = g.value / 60 } end
  return out
end

-- An hourly series over whole local days in [from, to): a value per hour, 0 where the
-- set has no sample (e.g. steps per hour). Returns { values = {...}, start = t }.
function M.hourlySeries(set, field, from, to, how)
  local perHour, groups = {}, set:distinct():byHour()
  for _, g in ipairs(groups[how or "sum"](groups, field)) do perHour[g.key] = g.value end
  local values, t = {}, time.startOfDay(from)
  local stop = time.startOfDay(to)
  while t < stop do
    values[#values + 1] = perHour[os.date("%Y-%m-%d %H:00", t)] or 0
    t = t + 3600
  end
  return { values = values, start = time.startOfDay(from) }
end

-- Non-parametric circadian rhythm measures of an hourly activity series (Van Someren
-- et al. 1999; Witting et al. 1990): interdaily stability IS (0–1), intradaily
-- variability IV (0–2), the least active 5 hours L5 and most active 10 hours M10 of the
-- average day (with their start hours), and relative amplitude RA = (M10−L5)/(M10+L5).
function M.circadian(series)
  local x = series.values or series
  local n = #x
  assert(n >= 48 and n % 24 == 0, "circadian measures need whole days of hourly values (at least two)")
  local mean = 0
  for i = 1, n do mean = mean + x[i] end
  mean = mean / n
  local total = 0
  for i = 1, n do total = total + (x[i] - mean) ^ 2 end
  local profile = {}
  for h = 1, 24 do
    local s, c = 0, 0
    for i = h, n, 24 do s = s + x[i]; c = c + 1 end
    profile[h] = s / c
  end
  local between = 0
  for h = 1, 24 do between = between + (profile[h] - mean) ^ 2 end
  local successive = 0
  for i = 2, n do successive = successive + (x[i] - x[i - 1]) ^ 2 end
  local function window(len, pick)
    local best, bestStart
    for start = 1, 24 do
      local s = 0
      for k = 0, len - 1 do s = s + profile[(start - 1 + k) % 24 + 1] end
      s = s / len
      if best == nil or pick(s, best) then best, bestStart = s, start - 1 end
    end
    return best, bestStart
  end
  local l5, l5start = window(5, function(a, b) return a < b end)
  local m10, m10start = window(10, function(a, b) return a > b end)
  return {
    IS = total > 0 and (n * between) / (24 * total) or 0/0,
    IV = total > 0 and (n * successive) / ((n - 1) * total) or 0/0,
    L5 = l5, L5start = l5start, M10 = m10, M10start = m10start,
    RA = (m10 + l5) > 0 and (m10 - l5) / (m10 + l5) or 0/0,
  }
end

------------------------------------------------------------------------------
-- Sleep
------------------------------------------------------------------------------

-- One row per sleep session: { night, onset, offset, midpoint, hours }. `night` is the
-- local day the session started on (shifted back a day for sessions starting after
-- midnight, so a night that starts at 00:30 belongs to the evening before).
function M.sleep(sessions)
  local out = {}
  for _, s in ipairs(sessions:distinct():first(100000)) do
    local onset, offset = s.time, s.time + s.duration
    local night = time.day(onset - 12 * 3600)
    out[#out + 1] = { night = night, onset = onset, offset = offset, midpoint = (onset + offset) / 2,
                      hours = s.duration / 3600, complete = s.duration > 0 }
  end
  return out
end

------------------------------------------------------------------------------
-- Phone use
------------------------------------------------------------------------------

-- Screen wakes, unlocks and unlocked minutes per local day, from device usage reports.
function M.phoneUse(usage)
  local out = usage:distinct():byDay():summarize {
    screenWakes = { "sum", "totalScreenWakes" }, unlocks = { "sum", "totalUnlocks" }, seconds = { "sum", "totalUnlockDuration" },
  }
  for _, d in ipairs(out) do
    d.unlockedMinutes, d.seconds = d.seconds / 60, nil
  end
  return out
end

-- Mean typing speed (words per minute) for each hour of the day, from keyboard metrics
-- records that contain typing: { hour, wpm, records }.
function M.typingByHour(keyboard)
  local out = {}
  for _, g in ipairs(keyboard:distinct():where("typingSpeed", ">", 0):byHourOfDay():mean("typingSpeed")) do
    out[#out + 1] = { hour = g.key, wpm = g.value, records = g.count }
  end
  return out
end

------------------------------------------------------------------------------
-- Heart rate
------------------------------------------------------------------------------

-- Per local day: resting heart rate (10th percentile of the day's 1 Hz estimates, a
-- common wearable proxy), active heart rate (90th percentile), mean and hours of data.
function M.heartRate(hr)
  local out = hr:distinct():byDay():summarize {
    resting = { "quantile", "heartRate", 0.1 }, active = { "quantile", "heartRate", 0.9 },
    mean = { "mean", "heartRate" }, estimates = { "count", "heartRate" },
  }
  for _, d in ipairs(out) do
    d.hours, d.estimates = d.estimates / 3600, nil
  end
  return out
end

return M
