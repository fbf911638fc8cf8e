-- Ambient light, the way Apple's SensorKit tutorials do it.
--
-- The classic first SensorKit study (the ambient-light walkthroughs written for
-- research apps follow the same steps): ask for the ambient light sensor,
-- record (the study declaration does both), and every morning
--   1. ask which devices hold released data   (reader:fetchDevices → didFetchDevices)
--   2. fetch everything new on each device    (reader:fetch → didFetchResult … didCompleteFetch)
--   3. drop readings of 5 lux or less         (screen face-down, in a pocket or a dark room:
--                                              they say nothing about the light the person sees)
--   4. sort by the time each reading was taken (results arrive in write order, and SensorKit may
--                                              deliver a result twice: keep one per timestamp)
--   5. summarise by local day.
-- Everything goes through the delegate callbacks an iOS app implements; no shortcut
-- (`reader:samples`) is used. A day is summarised once all of it is past the 24-hour hold.

study {
  id = "light-tutorial", title = "Ambient light exposure (SensorKit tutorial pattern)",
  usage = "Measures the light around your iPhone to study daily light exposure.",
  privacy_policy = "https://example.org/light-study/privacy",
  entitlements = { "ambient-light-sensor" },
  sensors = {
    ambientLightSensor = { detail = "Records how bright it is around your iPhone while the screen is on.", required = true },
  },
}

local report = require "report"
local time = require "time"
local expect = require "expect"
local stats = require "stats"

local DIM = 5                    -- lux: readings at or below are dropped (tutorial threshold)

local enrolment = report.table("enrolment", {
  columns = { "sensor", "status", "note" },
})
local daily = report.table("daily_light", {
  columns = { "day", "kept", "dropped", "duplicates", "first", "last", "median_lux", "mean_lux", "max_lux", "bright_min" },
  formats = { median_lux = "%.1f", mean_lux = "%.1f", max_lux = "%.0f", bright_min = "%.0f" },
})
local overall = report.table("participant_summary", {
  columns = { "status", "days", "readings", "median_of_daily_median_lux", "bright_min_per_day" },
  formats = { median_of_daily_median_lux = "%.1f", bright_min_per_day = "%.1f" },
})
local fetches = report.table("fetch_log", {
  columns = { "fetched_at", "device", "from", "to", "results", "new" },
})

local light = sensors.ambientLightSensor  -- study{} asks for it and records it once granted
local period = sensorkit.info("ambientLightSensor").nominalPeriod or 10   -- seconds between readings

-- State the app keeps between mornings.
local anchor = time.studyStart()  -- write time up to which everything has been fetched
local seen = {}                   -- result timestamps already stored (duplicate delivery)
local received = {}               -- { t = measured, lux, kind = "kept" | "dropped" | "duplicate" }, days not yet summarised
local pending = 0                 -- fetches still running this morning
local summarisedUntil = time.studyStart()
local currentFetch                -- counts of the running fetch, for the log
local dayMedians, totalReadings, totalBright = {}, 0, 0   -- for the participant summary

-- Steps 4 and 5 for each day entirely past the hold (with an hour of margin for samples
-- written a little after they were measured): sorted by measurement time, summarised.
local function summariseReleasedDays(now)
  local released = time.releasedDay(now)
  if not released then return end
  table.sort(received, function(a, b) return a.t < b.t end)
  for _, d in ipairs(time.daysBetween(summarisedUntil, released.stop)) do
    local lux, count, first, last, max, bright = {}, { kept = 0, dropped = 0, duplicate = 0 }, nil, nil, nil, 0
    for _, r in ipairs(received) do
      if r.t >= d.start and r.t < d.stop then
        count[r.kind] = count[r.kind] + 1
        if r.kind == "kept" then
          lux[#lux + 1], first, last, max = r.lux, first or r.t, r.t, math.max(max or r.lux, r.lux)
          if r.lux >= 1000 then bright = bright + 1 end
        end
      end
    end
    local n, median = #lux, stats.median(lux)
    daily:row {
      day = d.day, kept = n, dropped = count.dropped, duplicates = count.duplicate,
      first = first and time.clock(first), last = last and time.clock(last),
      median_lux = median, mean_lux = stats.mean(lux), max_lux = max,
      bright_min = bright * period / 60,
    }
    -- Plausibility (see the comment at the end of the file for the sources).
    if n > 0 then
      expect.between(n * period / 3600, 0.5, 14, "hours of screen-on light readings on " .. d.day)
      expect.between(median, DIM, 2000, "median lux of " .. d.day)
      expect.between(bright * period / 60, 0, 360, "minutes at 1000 lux or more on " .. d.day)
      dayMedians[#dayMedians + 1] = median
    end
    totalReadings, totalBright = totalReadings + n, totalBright + bright * period / 60
  end
  summarisedUntil = released.stop
  local keep = {}
  for _, r in ipairs(received) do if r.t >= summarisedUntil then keep[#keep + 1] = r end end
  received = keep
end

light.delegate = {
  didChangeAuthorizationStatus = function(reader, status)
    enrolment:row { sensor = reader.sensor, status = status,
                    note = status == "denied" and "declined on the consent sheet: nothing is recorded or fetched" or nil }
  end,

  -- Step 1: the devices with released data; step 2: one fetch per device. This study is of
  -- the phone's light sensor (readings while the screen is on): a paired watch measures
  -- ambient light too, about once a minute at the wrist, and is left out here.
  didFetchDevices = function(reader, devices)
    local phones = {}
    for _, device in ipairs(devices) do
      if device.model == sensorkit.currentDevice().model then phones[#phones + 1] = device end
    end
    pending = #phones
    if pending == 0 then log.info("no device has released ambient light yet (24-hour hold)") end
    for _, device in ipairs(phones) do reader:fetch { device = device, from = anchor, to = time.now() } end
  end,
  fetchDevicesDidFailWithError = function(reader, err) log.warn("fetchDevices: %s", tostring(err)) end,

  didFetchResult = function(reader, request, result)
    currentFetch = currentFetch or { results = 0, new = 0 }
    currentFetch.results = currentFetch.results + 1
    local s = result.sample
    local kind = seen[result.timestamp] and "duplicate" or s.lux > DIM and "kept" or "dropped"   -- step 3
    if kind ~= "duplicate" then seen[result.timestamp], currentFetch.new = true, currentFetch.new + 1 end
    received[#received + 1] = { t = s.time, lux = s.lux, kind = kind }
    return true                                    -- keep the results coming
  end,

  didCompleteFetch = function(reader, request)
    local now = time.now()
    local released = now - hours(24)             -- what the hold let through
    fetches:row { fetched_at = time.format(now), device = request.device.model,
                  from = time.format(request.from), to = time.format(released),
                  results = currentFetch and currentFetch.results or 0, new = currentFetch and currentFetch.new or 0 }
    currentFetch = nil
    pending = pending - 1
    if pending == 0 then
      anchor = released
      seen = {}                                    -- timestamps before the anchor cannot come again
      summariseReleasedDays(now)
    end
  end,
  fetchFailedWithError = function(reader, request, err)
    log.warn("fetch failed: %s", tostring(err))
    pending = pending - 1
  end,
}

-- Every morning at 08:00 the app wakes up (a background task) and fetches.
schedule.daily("08:00", function()
  if light.authorizationStatus ~= "authorized" then return end
  light:fetchDevices()
end)

-- At the end: one line per participant. A participant who declined has no daily rows,
-- and SensorKit refuses any fetch for them (noAuthorization, code 1).
schedule.at(time.studyEnd(), function()
  local status, m = light.authorizationStatus, #dayMedians
  overall:row { status = status, days = m, readings = totalReadings, median_of_daily_median_lux = stats.median(dayMedians),
                bright_min_per_day = m > 0 and totalBright / m or nil }
  if status == "denied" then
    expect.equal(m, 0, "days summarised for a participant who declined")
    local err = expect.fails(function() light:samples { from = time.studyStart(), to = time.now() } end)
    expect.equal(err.code, sensorkit.errors.noAuthorization, "error code of a fetch after declining")
  else
    -- The study's days minus the hold at the end (and up to two days without screen time).
    expect.between(m, math.max(0, time.studyDays() - 4), time.studyDays(), "complete days summarised")
  end
end)

-- Sources of the plausibility ranges:
-- * hours of readings: the sensor reads only while the screen is on (SRAmbientLightSample,
--   reference contract §3.2); smartphone screen-on time is 2–7 h a day for most adults (Andrews et
--   al. 2015, PLoS ONE 10:e0139004), plus the phone lying face-up; 0.5–14 h allows both.
-- * median lux above 5: indoor living rooms are 50–300 lx, offices 300–500 lx (EN 12464-1;
--   Cain et al. 2020, PNAS 117:3390, homes in the evening median ~ 60 lx); outdoor daylight
--   1 000–100 000 lx. A day's median of the kept readings (> 5 lx) lies from 5 to 2 000 lx.
-- * minutes at ≥ 1 000 lx: adults spend a median of ~1–2 h outdoors a day in spring
--   (Diffey 2011, Br J Dermatol 164:848); the phone sees daylight only while in use, so 0–6 h.
