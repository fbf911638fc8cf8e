-- summary: the daily and hourly tables studies compute, on native SampleSet aggregates.
--
--   local summary = require "summary"
--   local light = reader:samples { device = phone, from = a, to = b }
--   for _, d in ipairs(summary.timeAbove(light, 1000, 10)) do print(d.day, d.minutes) end
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

-- Seconds of [a, b) covered by a list of intervals { { start, stop }, ... }.
function M.overlap(intervals, a, b)
  local n = 0
  for _, iv in ipairs(intervals) do
    local s, e = math.max(iv[1], a), math.min(iv[2], b)
    if e > s then n = n + (e - s) end
  end
  return n
end

-- When a watch was worn in [from, to), from its onWristState records (SRWristDetection):
-- { worn = { {start, stop}, ... }, off = { {start, stop}, ... }, hours = hours worn }. This is
-- the one reading of wear in the stdlib; wearTime and the protocols build on it. `wrist`
-- is a SampleSet of the records, or the onWristState reader: then the watch's records
-- from 3 days before `from` to 3 hours past `to` are fetched (nil when the sensor is not
-- authorized; no watch with data: off all the time).
--
-- Each record carries when the latest on-wrist and off-wrist periods began (onWristDate,
-- offWristDate, iOS 16.4), so every record dates two changes, also ones before the
-- records at hand; before 16.4 a record only says the state from its write time on. The
-- record itself is written when the watch next syncs, an hour or more after the change,
-- so fetch `wrist` from well before `from` (a few days) to a few hours past `to`.
-- Time before the first known change is neither worn nor off (unknown). Every record is
-- read (no cap).
function M.wear(wrist, from, to)
  if sensorkit.isReader(wrist) then
    if wrist.authorizationStatus ~= "authorized" then return nil end
    local watch = wrist:devices()[1]
    if not watch then return { worn = {}, off = { { from, to } }, hours = 0 } end
    wrist = wrist:samples { device = watch, from = from - 3 * 86400, to = math.min(to + 3 * 3600, time.now()) }
  end
  local changes = {}
  for r in wrist:rows() do
    if r.onWristDate then changes[#changes + 1] = { t = r.onWristDate, on = true } end
    if r.offWristDate then changes[#changes + 1] = { t = r.offWristDate, on = false } end
    if not r.onWristDate and not r.offWristDate then changes[#changes + 1] = { t = r.time, on = r.onWrist } end
  end
  table.sort(changes, function(a, b)
    if a.t ~= b.t then return a.t < b.t end
    return not a.on and b.on                 -- the same instant: off first
  end)
  local out = { worn = {}, off = {}, hours = 0 }
  for i, c in ipairs(changes) do
    local s = math.max(c.t, from)
    local e = math.min(changes[i + 1] and changes[i + 1].t or to, to)
    if e > s then
      local list = c.on and out.worn or out.off
      local last = list[#list]
      if last and last[2] == s then last[2] = e else list[#list + 1] = { s, e } end
      if c.on then out.hours = out.hours + (e - s) / 3600 end
    end
  end
  return out
end

-- Hours the watch was worn on each local day in [from, to), from onWristState records
-- (summary.wear: a reader, or records from days before `from` to hours past `to`): { day, hours }.
function M.wearTime(wrist, from, to)
  local wear = M.wear(wrist, from, to)
  if not wear then return nil end
  local worn = wear.worn
  local out = {}
  for _, d in ipairs(time.daysBetween(from, to)) do
    out[#out + 1] = { day = d.day, hours = M.overlap(worn, d.start, d.stop) / 3600 }
  end
  return out
end

------------------------------------------------------------------------------
-- Light exposure
------------------------------------------------------------------------------

-- Minutes per local day with lux above a threshold: readings above it × `period`, the
-- seconds each reading stands for. Ambient light is read every few seconds only while
-- the screen is on, and the rate differs between devices and recordings, so `period`
-- is required (sensorkit.info("ambientLightSensor").nominalPeriod is the simulator's).
function M.timeAbove(light, threshold, period)
  if type(period) ~= "number" or period <= 0 then
    error("summary.timeAbove(light, threshold, period): period must be the seconds each reading stands for, got "
      .. tostring(period) .. " (the simulator's is sensorkit.info(\"ambientLightSensor\").nominalPeriod)", 2)
  end
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

-- An hourly series over whole local days in [from, to): 24 values a day, one per local
-- clock hour 00–23, `how` (default "sum") of `field`, 0 where the set has no sample
-- (e.g. steps per hour). Returns { values = {...}, n = 24 × days, start = t }.
-- Daylight-saving days keep 24 slots: the clock hour that does not exist on a
-- spring-forward day is nil (missing, not zero), and on a fall-back day the repeated
-- hour's samples fall into their one clock hour (summed with "sum"). `values` may hold
-- nils, so use `n` for its length.
function M.hourlySeries(set, field, from, to, how)
  local perHour, groups = {}, set:distinct():byHour()
  for _, g in ipairs(groups[how or "sum"](groups, field)) do perHour[g.key] = g.value end
  local values, n = {}, 0
  for _, d in ipairs(time.daysBetween(from, to)) do
    local exists = {}                         -- the clock hours this day has
    local t = d.start
    while t < d.stop do exists[os.date("%H", t)] = true; t = t + 3600 end
    for h = 0, 23 do
      local hh = string.format("%02d", h)
      n = n + 1
      if exists[hh] then values[n] = perHour[d.day .. " " .. hh .. ":00"] or 0 end
    end
  end
  return { values = values, n = n, start = time.startOfDay(from) }
end

-- Non-parametric circadian rhythm measures of an activity series of whole days (Van
-- Someren et al. 1999; Witting et al. 1990): interdaily stability IS (0–1), intradaily
-- variability IV (0–2), the least active 5 hours L5 and most active 10 hours M10 of the
-- average day with the clock hour each starts at (L5start, M10start: 0–23), and relative
-- amplitude RA = (M10−L5)/(M10+L5). `series` is hourlySeries' result, or { values, n,
-- epoch } with `epoch` minutes per value (default 60; 1 for per-minute data, L5/M10 then
-- slide by minutes and their starts are fractional clock hours). Missing values (nil)
-- are left out: of the means, of the hour-of-day profile, and of successive differences.
function M.circadian(series)
  local x = series.values or series
  local n = series.n or #x
  local perDay = math.floor(24 * 60 / (series.epoch or 60))
  assert(n >= 2 * perDay and n % perDay == 0,
    "circadian measures need whole days of values (at least two): " .. n .. " values of " .. perDay .. " a day")
  local mean, count = 0, 0
  for i = 1, n do if x[i] then mean, count = mean + x[i], count + 1 end end
  assert(count > 1, "circadian measures need values, not only missing ones")
  mean = mean / count
  local total = 0
  for i = 1, n do if x[i] then total = total + (x[i] - mean) ^ 2 end end
  local profile = {}
  for h = 1, perDay do
    local s, c = 0, 0
    for i = h, n, perDay do if x[i] then s, c = s + x[i], c + 1 end end
    profile[h] = c > 0 and s / c or mean
  end
  local between = 0
  for h = 1, perDay do between = between + (profile[h] - mean) ^ 2 end
  local successive, pairs_ = 0, 0
  for i = 2, n do
    if x[i] and x[i - 1] then successive, pairs_ = successive + (x[i] - x[i - 1]) ^ 2, pairs_ + 1 end
  end
  local function window(hoursLong, pick)
    local len = math.floor(hoursLong * perDay / 24)
    local best, bestStart
    for start = 1, perDay do
      local s = 0
      for k = 0, len - 1 do s = s + profile[(start - 1 + k) % perDay + 1] end
      s = s / len
      if best == nil or pick(s, best) then best, bestStart = s, start - 1 end
    end
    return best, perDay == 24 and bestStart or bestStart * 24 / perDay   -- hourly: a whole clock hour
  end
  local l5, l5start = window(5, function(a, b) return a < b end)
  local m10, m10start = window(10, function(a, b) return a > b end)
  return {
    IS = total > 0 and (count * between) / (perDay * total) or 0/0,
    IV = (total > 0 and pairs_ > 0) and (count * successive / pairs_) / total or 0/0,
    L5 = l5, L5start = l5start, M10 = m10, M10start = m10start,
    RA = (m10 + l5) > 0 and (m10 - l5) / (m10 + l5) or 0/0,
  }
end

------------------------------------------------------------------------------
-- Sleep
------------------------------------------------------------------------------

-- One row per sleep session: { night, onset, offset, midpoint, hours, complete }. `night`
-- is the local day of the noon before the onset, read on the clock: a session starting
-- between 12:00 and midnight belongs to that day, one starting after midnight and before
-- 12:00 to the day before (00:30 and 11:30 both count for the evening before, also on a
-- 23- or 25-hour day). Every session is read (no cap).
function M.sleep(sessions)
  local out = {}
  for s in sessions:distinct():rows() do
    local onset, offset = s.time, s.time + s.duration
    local night = time.hourOfDay(onset) >= 12 and time.day(onset) or time.day(time.startOfDay(onset) - 1)
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

-- Per local day: resting heart rate (10th percentile of the day's estimates, a common
-- wearable proxy), active heart rate (90th percentile), mean, the number of estimates and
-- hours of data: the minutes holding at least one estimate, / 60 (the watch estimates
-- at 1 Hz only while it measures continuously, so counts do not make time).
function M.heartRate(hr)
  hr = hr:distinct()
  local out = hr:byDay():summarize {
    resting = { "quantile", "heartRate", 0.1 }, active = { "quantile", "heartRate", 0.9 },
    mean = { "mean", "heartRate" }, estimates = { "count", "heartRate" },
  }
  local minutes = {}
  for _, g in ipairs(hr:byWindow(60):count()) do
    local day = time.day(g.start)
    minutes[day] = (minutes[day] or 0) + 1
  end
  for _, d in ipairs(out) do d.hours = (minutes[d.day] or 0) / 60 end
  return out
end

return M
