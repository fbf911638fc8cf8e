-- Typing speed and phone use across the day.
--
-- Digital-phenotyping studies (BiAffect, mindLAMP, Beiwe) read two things from the phone
-- without any input from the participant: how the keyboard is used (typing speed,
-- corrections) and how the phone is used (screen wakes, unlocks, time unlocked). Typing
-- speed varies over the day and slows late at night; phone checking peaks in the
-- morning and evening. This protocol builds both daily totals and a 24-hour profile.
--
-- Each morning at 09:00 it summarises the day before yesterday (the latest local day
-- fully past the 24-hour hold) and adds it to the participant's hour-of-day profile
-- (SensorKit keeps only ~7 days, so the profile is accumulated day by day, not fetched
-- at the end). Gaps are explained with the keyboard's deletion records: data a
-- participant deleted during the hold never arrives, but its tombstone does.

study {
  id = "typing-phone-use", title = "Typing speed and phone use across the day",
  usage = "Studies how your typing speed and phone use change over the day.",
  privacy_policy = "https://example.org/typing-study/privacy",
  entitlements = { "keyboard-metrics", "device-usage" },
  sensors = {
    keyboardMetrics = { detail = "Measures typing speed and corrections, never what you type." },
    deviceUsageReport = { detail = "Counts how often you wake and unlock your iPhone and for how long.", required = true },
  },
}

local report = require "report"
local summary = require "summary"
local time = require "time"
local expect = require "expect"

local daily = report.table("daily_use", {
  columns = { "day", "screen_wakes", "unlocks", "unlocked_h", "words", "typing_records", "wpm", "autocorrect_pct", "note" },
  formats = { unlocked_h = "%.1f", wpm = "%.1f", autocorrect_pct = "%.1f" },
})
local profile = report.table("hourly_profile", {
  columns = { "hour", "wakes_per_day", "unlocked_min_per_day", "words_per_day", "wpm" },
  formats = { wakes_per_day = "%.1f", unlocked_min_per_day = "%.1f", words_per_day = "%.0f", wpm = "%.1f" },
})
local contrast = report.table("time_of_day", {
  columns = { "period", "hours", "wpm", "records" },
  formats = { wpm = "%.1f" },
})
local deletions = report.table("deletions", {
  columns = { "sensor", "deleted_from", "deleted_to", "deleted_at", "reason" },
})

local keyboard, usage = sensors.keyboardMetrics, sensors.deviceUsageReport   -- asked for and recorded by study{}
local tombstones = sensorkit.reader "keyboardMetrics.tombstones"

local REASONS = sensorkit.deletionReasons   -- code -> name (and name -> code)

-- Accumulated hour-of-day profile: per hour "00".."23", sums over the days summarised.
local hourly = {}
for h = 0, 23 do hourly[string.format("%02d", h)] = { wakes = 0, unlocked = 0, words = 0, wpmSum = 0, wpmN = 0 } end
local daysUsage, daysKeyboard = 0, 0
local reportedDeletions = {}

-- Records of local day d, by the time each report was written (its `time`): SensorKit
-- writes a report within about a minute after its window closes, so a window that ends at
-- midnight counts for the next day, and the hourly profiles place each window in the hour
-- it ended in (`windowStart`/`windowEnd` give the window itself). A report SensorKit
-- delivered twice is counted once (distinct).
local function dayOf(reader, d)
  return reader:samples { from = d.start, to = d.stop + hours(1) }:distinct()
    :where("time", ">=", d.start):where("time", "<", d.stop)
end

-- User deletions of keyboard data that cover part of day d, as "HH:MM–HH:MM" text.
local function deletedParts(d, now)
  local parts = {}
  local records = tombstones:samples { from = time.studyStart(), to = now }
  for r in records:where("reason", "==", REASONS.userInitiated):rows() do
    local a, b = sensorkit.wallTime(r.startTime), sensorkit.wallTime(r.endTime)
    if not reportedDeletions[r.writeTime] then
      reportedDeletions[r.writeTime] = true
      deletions:row { sensor = "keyboardMetrics", deleted_from = time.format(a), deleted_to = time.format(b),
                      deleted_at = time.format(r.writeTime), reason = REASONS[r.reason] }
    end
    if a < d.stop and b > d.start then
      parts[#parts + 1] = time.clock(math.max(a, d.start)) .. "–" .. (b >= d.stop and "24:00" or time.clock(b))
    end
  end
  return parts
end

schedule.daily("09:00", function(now)
  local d = time.releasedDay(now)
  if not d then return end
  local row, notes = { day = d.day }, {}

  if usage.authorizationStatus == "authorized" then
    -- Device usage: ~96 fifteen-minute reports a day, read once as rows (generating them
    -- is what costs; a handful of Lua tables does not) for daily totals and the hourly profile.
    local wakes, unlocks, unlocked = 0, 0, 0
    for r in dayOf(usage, d):rows() do
      local e = hourly[time.format(r.time, "%H")]
      wakes, unlocks, unlocked = wakes + r.totalScreenWakes, unlocks + r.totalUnlocks, unlocked + r.totalUnlockDuration
      e.wakes, e.unlocked = e.wakes + r.totalScreenWakes, e.unlocked + r.totalUnlockDuration / 60
    end
    row.screen_wakes, row.unlocks, row.unlocked_h = wakes, unlocks, unlocked / 3600
    daysUsage = daysUsage + 1
    -- Plausibility; sources at the end of the file.
    expect.between(wakes, 20, 300, "screen wakes on " .. d.day)
    expect.between(unlocks, 15, 200, "unlocks on " .. d.day)
    expect.between(unlocked / 3600, 0.5, 10, "hours unlocked on " .. d.day)
    expect.atMost(unlocks, wakes, "unlocks (each needs a wake) on " .. d.day)
  else
    notes[#notes + 1] = "device usage " .. usage.authorizationStatus
  end

  if keyboard.authorizationStatus == "authorized" then
    -- Keyboard metrics: three native passes, no per-record tables (each record carries
    -- dozens of timing distributions, and generating them is what costs).
    local records = dayOf(keyboard, d)
    local typed = records:where("typingSpeed", ">", 0)
    row.words = 0
    for _, g in ipairs(records:byHourOfDay():sum("totalWords")) do
      hourly[g.key].words = hourly[g.key].words + g.value
      row.words = row.words + g.value
    end
    local typedRecords, wpmSum = 0, 0
    for _, h in ipairs(summary.typingByHour(typed)) do
      hourly[h.hour].wpmSum = hourly[h.hour].wpmSum + h.wpm * h.records
      hourly[h.hour].wpmN = hourly[h.hour].wpmN + h.records
      typedRecords, wpmSum = typedRecords + h.records, wpmSum + h.wpm * h.records
    end
    row.typing_records = typedRecords
    row.wpm = typedRecords > 0 and wpmSum / typedRecords or nil   -- mean speed of the day's typing records
    row.autocorrect_pct = row.words > 0 and 100 * records:sum("totalAutoCorrections") / row.words or nil
    if typedRecords > 0 then
      daysKeyboard = daysKeyboard + 1
      expect.between(row.wpm, 15, 80, "typing speed (words/min) on " .. d.day)
      expect.between(row.words, 20, 5000, "words typed on " .. d.day)
      expect.between(row.autocorrect_pct, 0, 25, "autocorrections per 100 words on " .. d.day)
    end
    local parts = deletedParts(d, now)
    if #parts > 0 then notes[#notes + 1] = "keyboard data deleted by the participant " .. table.concat(parts, ", ") end
  else
    notes[#notes + 1] = "keyboard metrics " .. keyboard.authorizationStatus
  end
  row.note = #notes > 0 and table.concat(notes, "; ") or nil
  daily:row(row)
end)

-- The 24-hour profile and a morning / afternoon / evening / night contrast of typing speed.
schedule.at(time.studyEnd(), function()
  local periods = { { "night", 0, 6 }, { "morning", 6, 12 }, { "afternoon", 12, 18 }, { "evening", 18, 24 } }
  local speed = {}
  for h = 0, 23 do
    local k = string.format("%02d", h)
    local e = hourly[k]
    profile:row {
      hour = k,
      wakes_per_day = daysUsage > 0 and e.wakes / daysUsage or nil,
      unlocked_min_per_day = daysUsage > 0 and e.unlocked / daysUsage or nil,
      words_per_day = daysKeyboard > 0 and e.words / daysKeyboard or nil,
      wpm = e.wpmN > 0 and e.wpmSum / e.wpmN or nil,
    }
  end
  for _, p in ipairs(periods) do
    local s, n = 0, 0
    for h = p[2], p[3] - 1 do
      local e = hourly[string.format("%02d", h)]
      s, n = s + e.wpmSum, n + e.wpmN
    end
    speed[p[1]] = n > 0 and s / n or nil
    contrast:row { period = p[1], hours = string.format("%02d–%02d", p[2], p[3]), wpm = speed[p[1]], records = n }
  end
  if keyboard.authorizationStatus == "authorized" then
    expect.atLeast(daysKeyboard, math.max(0, time.studyDays() - 4), "days with typing")   -- all but the held days and a quiet one or two
    -- Diurnal differences in typing speed are a few words/min at most (BiAffect: Zulueta et
    -- al. 2018, J Med Internet Res 20:e241; slower late at night); more would be an artefact.
    if speed.night and speed.afternoon then
      expect.between(speed.night - speed.afternoon, -10, 10, "night minus afternoon typing speed")
    end
  end
end)

-- Sources of the plausibility ranges:
-- * 15–80 words/min: mobile typing averages 36 wpm (SD 13) over 37 000 volunteers
--   (Palin et al. 2019, MobileHCI "How do people type on mobile devices?").
-- * autocorrections 0–25 per 100 words: Palin et al. report ~2–10 % of words corrected.
-- * 20–300 screen wakes, 15–200 unlocks, 0.5–10 h unlocked a day: adults check their
--   phone ~50–150 times a day and use it 3–5 h (Andrews et al. 2015, PLoS ONE 10:e0139004;
--   Wilcockson et al. 2018, Addictive Behaviors 86:62, ~85 pickups a day).
