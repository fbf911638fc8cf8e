-- Heart rate at walk and at rest.
--
-- A common validation/feasibility design for wrist-worn heart rate in daily life:
-- each day, find one WALK window (the day's longest sustained walking bout, from the
-- iPhone's pedometer) and one REST window (ten quiet minutes in the afternoon with no
-- steps at all), read the Apple Watch heart rate in each, and compare. The difference
-- between walking and resting heart rate is the heart-rate response to everyday walking,
-- a marker of cardiorespiratory fitness (lower response = fitter).
--
-- Windows are chosen from the pedometer only, never from heart rate, so the choice is
-- not biased by the outcome. Each morning at 09:00 the protocol analyses the day before
-- yesterday: the latest local day of which everything has passed the 24-hour hold
-- (heart rate also waits for the watch to sync with the phone).

study {
  id = "hr-walk-rest", title = "Heart rate at walk and at rest",
  usage = "Compares your heart rate while walking and while resting during everyday life.",
  privacy_policy = "https://example.org/hr-walk-rest/privacy",
  entitlements = { "heart-rate", "pedometer", "on-wrist" },
  sensors = {
    heartRate = { detail = "Reads the heart rate your Apple Watch measures.", required = true },
    pedometerData = { detail = "Counts your steps to find when you walk and when you rest.", required = true },
    onWristState = { detail = "Checks whether you are wearing your Apple Watch." },
  },
}

local report = require "report"
local time = require "time"
local expect = require "expect"
local plot = require "plot"
local summary = require "summary"
local stats = require "stats"

local BRISK = 1.5           -- steps/s: walking cadence (Tudor-Locke et al. 2018: ≥ 100 steps/min is moderate)
local RUN = 2.3             -- steps/s: from here on it is running, not walking (~140 steps/min)
local MIN_WALK = minutes(6) -- shortest bout that counts as a walk
local SETTLE = minutes(2)   -- heart rate needs ~2 min to reach steady state after walking starts
local REST = minutes(10)    -- length of the rest window
local QUIET = minutes(5)    -- no steps for this long before the rest window either
local REST_FROM, REST_TO = 13, 20   -- local hours to look for the rest window

local windows = report.table("daily_windows", {
  columns = { "day", "walk_start", "walk_min", "walk_cadence", "walk_hr", "rest_start", "rest_hr", "difference",
              "worn_h", "note" },
  formats = { walk_min = "%.1f", walk_cadence = "%.2f", walk_hr = "%.1f", rest_hr = "%.1f", difference = "%.1f",
              worn_h = "%.1f" },
})
local overall = report.table("participant_summary", {
  columns = { "days", "days_compared", "mean_walk_hr", "mean_rest_hr", "mean_difference", "note" },
  formats = { mean_walk_hr = "%.1f", mean_rest_hr = "%.1f", mean_difference = "%.1f" },
})

local hr, steps, wrist = sensors.heartRate, sensors.pedometerData, sensors.onWristState   -- asked for and recorded by study{}

-- Walking bouts of a day: runs of pedometer records with brisk cadence, at most a minute apart.
local function walkingBouts(day)
  local bouts, current = {}, nil
  for r in day:rows() do
    local cadence = r.currentCadence or 0
    local brisk = cadence >= BRISK and cadence < RUN
    if brisk and current and r.time - current.stop <= 60 then
      current.stop, current.steps = r.endDate, current.steps + r.numberOfSteps
    elseif brisk then
      current = { start = r.time, stop = r.endDate, steps = r.numberOfSteps }
      bouts[#bouts + 1] = current
    else
      current = nil
    end
  end
  return bouts
end

-- The first 10-minute slot (on a 5-minute grid) in the afternoon with no steps in it
-- nor in the 5 minutes before.
local function restWindow(day, d)
  local moving = {}
  for r in day:rows() do moving[#moving + 1] = { r.time, r.endDate } end
  local t = time.parse(string.format("%s %02d:00", d.day, REST_FROM))
  local last = time.parse(string.format("%s %02d:00", d.day, REST_TO))
  while t + REST <= last do
    local a, b, clear = t - QUIET, t + REST, true
    for _, m in ipairs(moving) do
      if m[1] < b and m[2] > a then clear = false break end
    end
    if clear then return t, t + REST end
    t = t + minutes(5)
  end
end

local walkHRs, restHRs, diffs, daysSeen = {}, {}, {}, 0

-- Mean heart rate measured in [a, b) and the number of 1 Hz estimates behind it. The
-- watch syncs its samples to the phone about an hour later and SensorKit files them by
-- that write time, so the request asks for writes up to 2 h after the window. One native
-- pass: a single window group gives both the count and the mean.
local function heartRateIn(watch, a, b)
  local set = hr:samples { device = watch, from = a, to = b + hours(2) }:distinct():where("time", ">=", a):where("time", "<", b)
  local g = set:byWindow(b - a, a):mean("heartRate")[1]
  if g then return g.value, g.count end
  return nil, 0
end

schedule.daily("09:00", function(now)
  -- The day before yesterday, whole: measured in [d.start, d.stop), written up to a few hours later.
  local d = time.releasedDay(now, hours(3))
  if not d then return end
  if hr.authorizationStatus ~= "authorized" or steps.authorizationStatus ~= "authorized" then return end
  daysSeen = daysSeen + 1
  local watch = hr:devices()[1]                -- nil when the watch sent nothing in the last week
  local day = steps:samples { from = d.start, to = d.stop + hours(1) }:distinct()
    :where("time", ">=", d.start):where("time", "<", d.stop)
  local wear = summary.wear(wrist, d.start, d.stop)   -- nil when on-wrist state is not authorized
  local row = { day = d.day, worn_h = wear and wear.hours }

  -- Walk window.
  local best
  for _, b in ipairs(walkingBouts(day)) do
    if b.stop - b.start >= MIN_WALK and (best == nil or b.stop - b.start > best.stop - best.start) then best = b end
  end
  if best then
    row.walk_start = time.clock(best.start)
    row.walk_min = (best.stop - best.start) / 60
    row.walk_cadence = best.steps / (best.stop - best.start)
    if watch and row.worn_h > 0 then
      local bpm, n = heartRateIn(watch, best.start + SETTLE, best.stop)
      if n >= 0.5 * (best.stop - best.start - SETTLE) then row.walk_hr = bpm end
    end
  end
  -- Rest window.
  local a, b = restWindow(day, d)
  if a then
    row.rest_start = time.clock(a)
    if watch and row.worn_h > 0 then
      local bpm, n = heartRateIn(watch, a, b)
      if n >= 0.5 * REST then row.rest_hr = bpm end
    end
  end

  if row.walk_hr and row.rest_hr then
    row.difference = row.walk_hr - row.rest_hr
    walkHRs[#walkHRs + 1], restHRs[#restHRs + 1], diffs[#diffs + 1] = row.walk_hr, row.rest_hr, row.difference
    -- Plausibility; sources at the end of the file.
    expect.between(row.rest_hr, 45, 100, "heart rate at rest on " .. d.day)
    expect.between(row.walk_hr, 70, 150, "heart rate while walking on " .. d.day)
    expect.between(row.difference, 5, 70, "walking minus resting heart rate on " .. d.day)
    expect.between(row.walk_cadence, 1.4, RUN, "walking cadence (steps/s) on " .. d.day)
  elseif row.worn_h < 1 then
    row.note = "watch not worn: no heart rate"
  elseif not best then
    row.note = "no walk of 6 min or more"
  elseif not a then
    row.note = "no quiet 10 min in the afternoon"
  else
    row.note = "watch off the wrist during a window"
  end
  expect.between(row.worn_h, 0, 24, "hours worn on " .. d.day)
  windows:row(row)
end)

schedule.at(time.studyEnd(), function()
  local note
  if hr.authorizationStatus ~= "authorized" then note = "heart rate " .. hr.authorizationStatus end
  local mean = stats.mean
  overall:row { days = daysSeen, days_compared = #diffs, mean_walk_hr = mean(walkHRs), mean_rest_hr = mean(restHRs),
                mean_difference = mean(diffs), note = note }
  plot.bars("walk_vs_rest_hr", { categories = { "at rest (afternoon, 10 min)", "walking (longest bout)" },
                                 values = { mean(restHRs), mean(walkHRs) }, ylabel = "Mean heart rate", unit = "bpm",
                                 title = "Heart rate at rest and while walking, mean of the compared days" })
  plot.scatter("walk_rest_by_day", { x = restHRs, y = walkHRs, xlabel = "Heart rate at rest (bpm)",
                                     ylabel = "Heart rate walking (bpm)", title = "Walking against resting heart rate, day by day" })
  if hr.authorizationStatus == "authorized" then
    -- Five days of 14 (weekends and rest days may lack a walk); fewer in a short study.
    expect.atLeast(#diffs, math.max(0, math.min(5, time.studyDays() - 2)), "days with both windows")
  end
end)

-- Sources of the plausibility ranges:
-- * rest 45–100 bpm: normal resting heart rate is 60–100 bpm (AHA), lower in trained people
--   (down to ~40–50); seated daytime rest sits a few bpm above the overnight minimum.
-- * walking 70–150 bpm and +5…+70 bpm: everyday walking at 100–120 steps/min is moderate
--   intensity, ~3–4 METs (Tudor-Locke et al. 2018, Br J Sports Med 52:776), i.e. roughly
--   40–60 % of heart-rate reserve (ACSM Guidelines, 11th ed.): 20–50 bpm above rest for adults.
-- * cadence 1.4–2.3 steps/s: free-living walking cadence 100–130 steps/min, running above 150.
--   Bouts are chosen on each record's currentCadence (CMPedometerData: the pace at the
--   record's end) being at least 1.5, but walk_cadence is steps over the bout's whole
--   span, which also holds a record's slower or idle seconds: it may fall a little below.
