-- Evening light and sleep timing.
--
-- Light in the hours before bed delays the circadian clock and sleep (Chang et al. 2015,
-- PNAS 112:1232; Cain et al. 2020, PNAS 117:3390). This protocol pairs, night by night,
-- the light the iPhone measured in the two hours before sleep onset with the sleep
-- session the Apple Watch recorded (onset, offset, midpoint, duration), and per
-- participant relates the two and computes social jetlag (mid-sleep before free days
-- minus before workdays, Wittmann et al. 2006).
--
-- Caveats a researcher should know: SensorKit's ambient light sensor reads only while
-- the screen is on, so "evening light" is the light at the phone while it is in use;
-- sleep sessions come only from a watch worn in bed.
--
-- Each day at 12:00 the protocol analyses last night but one: the sleep session is
-- written when the watch syncs after waking and then held 24 hours, so the window of
-- sessions written between 12:00 two days ago and 12:00 yesterday holds one night.

study {
  id = "sleep-light", title = "Evening light and sleep timing",
  usage = "Measures the light around you in the evening and when you sleep, to study how light affects sleep.",
  privacy_policy = "https://example.org/sleep-light/privacy",
  entitlements = { "ambient-light-sensor", "sleep-sessions", "on-wrist" },
  sensors = {
    ambientLightSensor = { detail = "Records how bright it is around your iPhone while the screen is on.", required = true },
    sleepSessions = { detail = "Reads when your Apple Watch detected that you slept.", required = true },
    onWristState = { detail = "Checks whether you wore your Apple Watch at night." },
  },
}

local report = require "report"
local summary = require "summary"
local time = require "time"
local expect = require "expect"
local plot = require "plot"
local stats = require "stats"

local BEFORE = 2                 -- hours of evening light before sleep onset

local nights = report.table("nights", {
  columns = { "night", "free_day_after", "onset", "offset", "midpoint", "sleep_h", "evening_lux", "light_readings", "note" },
  formats = { sleep_h = "%.2f", evening_lux = "%.1f" },
})
local people = report.table("participant_summary", {
  columns = { "nights", "mean_onset", "mean_midpoint", "mean_sleep_h", "social_jetlag_h", "median_evening_lux",
              "r_log_lux_onset", "note" },
  formats = { mean_sleep_h = "%.2f", social_jetlag_h = "%.2f", median_evening_lux = "%.1f", r_log_lux_onset = "%.2f" },
})

local light, sleep, wrist = sensors.ambientLightSensor, sensors.sleepSessions, sensors.onWristState   -- enrolled by study{}

-- Clock time as hours after the noon before it (onset 23:30 → 11.5, 01:00 → 13), for the
-- plausibility ranges. (time.hourOfDay is the local clock hour, also on DST days.)
local function sinceNoon(t)
  local h = time.hourOfDay(t)
  return h < 12 and h + 12 or h - 12
end

local kept = {}                            -- nights with a session and evening light
local lightByHour = {}                     -- hourly mean lux of every day past the hold

-- Each day at 12:00 the day before yesterday is entirely past the 24-hour hold: its light by hour.
schedule.daily("12:00", function(now)
  if light.authorizationStatus ~= "authorized" then return end
  local day = time.releasedDay(now)
  if not day then return end
  for _, h in ipairs(light:samples { from = day.start, to = day.stop }:distinct():byHour():mean("lux")) do
    lightByHour[#lightByHour + 1] = h
  end
end)

schedule.daily("12:00", function(now)
  if sleep.authorizationStatus ~= "authorized" then return end
  local noon = time.parse(time.day(now) .. " 12:00")
  local from, to = time.parse(time.day(noon - days(2)) .. " 12:00"), time.parse(time.day(noon - days(1)) .. " 12:00")
  if from < time.studyStart() then return end
  local watch = sleep:devices()[1]
  local sessions = watch and sleep:samples { device = watch, from = from, to = to }
  local list = sessions and summary.sleep(sessions) or {}
  local nightOf = time.day(from)           -- the evening the night starts
  if #list == 0 then
    local a, b = time.parse(time.day(to) .. " 00:00"), time.parse(time.day(to) .. " 05:00")
    local wear = summary.wear(wrist, a, b)
    local worn = wear and wear.hours * 3600 > 0.5 * (b - a)     -- on the wrist most of the night
    nights:row { night = nightOf, note = worn == false and "no sleep session: watch not worn at night"
                                           or "no sleep session recorded" }
    -- A watch worn in bed records a session every night (SRSleepSession, reference contract §3.3.20).
    if worn then expect.equal(#list, 1, "sleep sessions of the night of " .. nightOf .. " (watch worn in bed)") end
    return
  end
  -- Light of the evening: phone readings written up to the last onset (the phone writes at once).
  local evening = light.authorizationStatus == "authorized"
    and light:samples { from = list[1].onset - hours(BEFORE + 1), to = list[#list].onset } or nil
  local lux = evening and summary.eveningLight(evening, sessions, BEFORE) or {}
  for i, s in ipairs(list) do
    local freeAfter = time.isWeekend(s.onset + hours(12))
    local row = {
      night = s.night, free_day_after = freeAfter, onset = time.clock(s.onset),
      evening_lux = lux[i] and lux[i].samples > 0 and lux[i].lux or nil, light_readings = lux[i] and lux[i].samples or 0,
    }
    local notes = {}
    if s.complete then
      row.offset, row.midpoint, row.sleep_h = time.clock(s.offset), time.clock(s.midpoint), s.hours
      -- A daylight-saving change inside the night: the clock times are an hour apart from
      -- the hours slept (sleep_h is real elapsed time).
      local onClock = (sinceNoon(s.offset) - sinceNoon(s.onset)) * 3600
      if onClock - (s.offset - s.onset) > 1800 then notes[#notes + 1] = "clocks went forward 1 h this night"
      elseif (s.offset - s.onset) - onClock > 1800 then notes[#notes + 1] = "clocks went back 1 h this night" end
    else
      -- SRSleepSession.duration is 0 when the watch recorded no end (taken off, battery):
      -- the onset counts, duration and mid-sleep are unknown.
      notes[#notes + 1] = "session without an end (duration 0): offset unknown"
    end
    if row.light_readings == 0 then notes[#notes + 1] = "phone not used before sleep: no light readings" end
    row.note = #notes > 0 and table.concat(notes, "; ") or nil
    nights:row(row)
    -- Plausibility; sources at the end of the file.
    expect.between(sinceNoon(s.onset), 8, 15.5, "sleep onset (hours after noon) of " .. s.night)
    if s.complete then
      expect.between(s.hours, 4.5, 11, "sleep duration (h) of " .. s.night)
      expect.between(sinceNoon(s.midpoint), 12, 19.5, "mid-sleep (hours after noon) of " .. s.night)
    end
    if row.evening_lux then expect.between(row.evening_lux, 1, 1000, "evening lux before onset of " .. s.night) end
    kept[#kept + 1] = { onset = s.onset, mid = s.complete and s.midpoint or nil,
                        hours = s.complete and s.hours or nil, free = freeAfter, lux = row.evening_lux }
  end
end)

schedule.at(time.studyEnd(), function()
  plot.hourByDay("light_by_hour", lightByHour, { from = time.studyStart(), to = time.startOfDay(time.now() - hours(36)),
                 log = true, unit = "lux", title = "Ambient light at the phone, mean per hour (screen on)" })
  -- Nights with evening light: log10 of the lux against sleep onset (hours after the
  -- previous midnight: 26 is 02:00, drawn as a clock time).
  local logLux, onsets = {}, {}
  for _, k in ipairs(kept) do
    if k.lux then logLux[#logLux + 1], onsets[#onsets + 1] = math.log(k.lux, 10), sinceNoon(k.onset) + 12 end
  end
  plot.scatter("evening_light_onset", { x = logLux, y = onsets, title = "Evening light and sleep onset, night by night",
                                        xlabel = "log10 of mean lux in the 2 h before onset",
                                        ylabel = "Sleep onset (local clock time)", yclock = true })
  if #kept == 0 then
    people:row { nights = 0, note = sleep.authorizationStatus ~= "authorized" and ("sleep sessions " .. sleep.authorizationStatus)
                                      or "no sleep sessions: the watch is not worn in bed" }
    return
  end
  local function column(key, filter)
    local out = {}
    for _, k in ipairs(kept) do if k[key] and (filter == nil or filter(k)) then out[#out + 1] = k[key] end end
    return out
  end
  -- Mean clock times are circular means (23:30 and 00:30 average to midnight).
  local free = stats.clockMean(column("mid", function(k) return k.free end))
  local work = stats.clockMean(column("mid", function(k) return not k.free end))
  local hoursSlept = stats.mean(column("hours"))
  people:row {
    nights = #kept, mean_onset = stats.clockText(stats.clockMean(column("onset"))),
    mean_midpoint = stats.clockText(stats.clockMean(column("mid"))), mean_sleep_h = hoursSlept,
    social_jetlag_h = (free and work) and stats.clockDifference(free, work) or nil,
    median_evening_lux = stats.median(column("lux")), r_log_lux_onset = stats.pearson(logLux, onsets, 5),
  }
  expect.between(hoursSlept, 5.5, 9.5, "mean sleep duration")
  if free and work then expect.between(stats.clockDifference(free, work), -1, 3, "social jetlag (h)") end
end)

-- Sources of the plausibility ranges:
-- * onset 20:00–03:30, mid-sleep 00:00–07:30: mid-sleep on free days spans ~2–7 h in the
--   population (Roenneberg et al. 2007, Sleep Med Rev 11:429, MCTQ, n > 55 000).
-- * sleep 4.5–11 h a night, 5.5–9.5 h on average: adults need 7–9 h (Hirshkowitz et al.
--   2015, Sleep Health 1:40); wearable and app data average ~7–7.5 h (Walch et al. 2016,
--   Sci Adv 2:e1501705).
-- * social jetlag −1 to 3 h: most adults 0–2 h (Wittmann et al. 2006, Chronobiol Int 23:497).
-- * evening light 1–1 000 lux at the phone: homes in the evening have a median of ~20–100 lx
--   (Cain et al. 2020, PNAS 117:3390); screens and lamps near the sensor read higher.
