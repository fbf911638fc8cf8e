-- Data-quality monitor: the report a study coordinator reads every morning.
--
-- For each participant and sensor it shows how many hours of the latest complete day
-- (the day before yesterday: yesterday is still in SensorKit's 24-hour hold) hold
-- released data, and explains every missing hour:
--   * "off wrist"  the watch was not worn (on-wrist records) — for watch sensors;
--   * "deleted"    the participant deleted the data (deletion records, reason userInitiated);
--   * "phone off"  no device-usage report at all while the phone was switched off;
--   * otherwise the hour is "unexplained", the thing worth a phone call.
-- Consent is part of data quality too: a sensor declined on the sheet or revoked later in
-- Settings produces no data at all, and every such change is listed with its time.
--
-- Sensors monitored: heart rate (Apple Watch, 1 Hz while worn), device usage reports
-- (iPhone, one per 15 minutes around the clock) and pedometer (iPhone, only while walking:
-- hours without steps are normal, so only hours with steps are counted).

study {
  id = "data-quality", title = "Daily data-quality monitor",
  usage = "Checks every day that the study receives your sensor data, so that problems are noticed early.",
  privacy_policy = "https://example.org/data-quality/privacy",
  entitlements = { "heart-rate", "on-wrist", "device-usage", "pedometer" },
  sensors = {
    heartRate = { detail = "Reads the heart rate your Apple Watch measures." },
    onWristState = { detail = "Checks whether you are wearing your Apple Watch." },
    deviceUsageReport = { detail = "Counts how often and how long you use your iPhone.", required = true },
    pedometerData = { detail = "Counts your steps." },
  },
}

local report = require "report"
local summary = require "summary"
local time = require "time"
local expect = require "expect"
local plot = require "plot"

local SENSORS = { "heartRate", "deviceUsageReport", "pedometerData" }
local REASONS = sensorkit.deletionReasons   -- code -> name (and name -> code)

local consentLog = report.table("consent", {
  columns = { "at", "sensor", "status", "note" },
})
local quality = report.table("daily_quality", {
  columns = { "day", "sensor", "status", "day_h", "data_h", "off_wrist_h", "deleted_h", "unexplained_h", "note" },
  formats = { day_h = "%.0f", data_h = "%.0f", off_wrist_h = "%.0f", deleted_h = "%.1f", unexplained_h = "%.0f" },
})
local deletionLog = report.table("deletions", {
  columns = { "sensor", "from", "to", "deleted_at", "reason", "hours" },
  formats = { hours = "%.1f" },
})
local overview = report.table("participant_summary", {
  columns = { "sensor", "status", "days_checked", "days_ok", "data_pct", "worst_day", "flags" },
  formats = { data_pct = "%.0f" },
})

local readers, tombstones = sensors, {}    -- study{} asks for every declared sensor and records it once granted
for _, name in ipairs(SENSORS) do tombstones[name] = sensorkit.reader(name .. ".tombstones") end
local wrist = sensors.onWristState

-- Consent: every status change is logged; the first answer is the sheet's, later ones Settings'.
local answered, revokedAt = {}, {}
for _, reader in pairs(sensors) do
  reader.delegate = {
    didChangeAuthorizationStatus = function(r, status)
      local note
      if status == "denied" and answered[r.sensor] then revokedAt[r.sensor] = time.format(time.now()) end
      if status == "denied" then
        note = answered[r.sensor] and "revoked in Settings: no data from now on, earlier data no longer fetchable"
          or "declined on the consent sheet"
      end
      answered[r.sensor] = true
      consentLog:row { at = time.format(time.now()), sensor = r.sensor, status = status, note = note }
    end,
  }
end

-- The participant's deletions (reason userInitiated) of a sensor on a device, as wall-time
-- intervals of WRITE time (SensorKit deletes what was written in a range); each new one is
-- also listed in the deletions table.
local listed = {}
local function deletions(name, device, now)
  local out = {}
  for r in tombstones[name]:samples { device = device, from = time.studyStart(), to = now }:rows() do
    local a, b = sensorkit.wallTime(r.startTime), sensorkit.wallTime(r.endTime)
    local key = name .. r.writeTime
    if r.reason == REASONS.userInitiated then
      out[#out + 1] = { a, b }
      if not listed[key] then
        listed[key] = true
        deletionLog:row { sensor = name, from = time.format(a), to = time.format(b), deleted_at = time.format(r.writeTime),
                          reason = REASONS[r.reason], hours = (b - a) / 3600 }
      end
    end
  end
  return out
end

local stats = {}
local checkedDays, dataHours = {}, {}       -- for the charts: hours with data per day and sensor
local causes = { offWrist = 0, deleted = 0, unexplained = 0 }
for _, name in ipairs(SENSORS) do stats[name] = { checked = 0, ok = 0, hours = 0, dayHours = 0, worst = nil, flags = {} } end

local function flag(name, text)
  local f = stats[name].flags
  if f[#f] ~= text then f[#f + 1] = text end
end

schedule.daily("08:00", function(now)
  local d = time.releasedDay(now, hours(3))
  if not d then return end
  local dayHours = (d.stop - d.start) / 3600          -- 23 or 25 on a daylight-saving day
  local hoursOfDay = {}
  local t = d.start
  while t < d.stop do hoursOfDay[#hoursOfDay + 1] = t; t = t + hours(1) end
  local wear = summary.wear(wrist, d.start, d.stop)   -- nil when on-wrist state is not authorized
  local off = wear and wear.off

  for _, name in ipairs(SENSORS) do
    local reader, st = readers[name], stats[name]
    local row = { day = d.day, sensor = name, status = reader.authorizationStatus, day_h = dayHours }
    if reader.authorizationStatus ~= "authorized" then
      row.note = revokedAt[name] and ("no data: access revoked " .. revokedAt[name] .. ", earlier data no longer fetchable")
        or ("no data: " .. (answered[name] and "declined on the consent sheet" or "never answered"))
      flag(name, row.note)
    else
      st.checked = st.checked + 1
      local device = name == "heartRate" and reader:devices()[1] or sensorkit.currentDevice()
      local perHour = {}
      if device then
        -- Records of the day, written up to 3 h after it (the watch syncs about an hour late).
        local set = reader:samples { device = device, from = d.start, to = d.stop + hours(3) }
          :where("time", ">=", d.start):where("time", "<", d.stop)
        for _, g in ipairs(set:byHour():count()) do perHour[g.key] = g.value end
      end
      local deleted = device and deletions(name, device, now) or {}
      -- Deletions cut on the write-time axis; a sample is written up to ~1 h 15 min after it
      -- is measured on the watch (sync), a few seconds after on the phone.
      local lag = name == "heartRate" and hours(2) or minutes(10)
      -- Every clock hour of the day is one of: data, deleted, off wrist, or a gap.
      local data, offH, delH, unexplained = 0, 0, 0, 0
      for _, h in ipairs(hoursOfDay) do
        local e = h + hours(1)
        local key = time.format(h, "%Y-%m-%d %H:00")
        local unworn = (name == "heartRate" and off) and summary.overlap(off, h, e) or 0
        if perHour[key] then
          data = data + 1
        elseif summary.overlap(deleted, h, e + lag) > 0 then
          delH = delH + 1
        elseif unworn >= 1800 then
          offH = offH + 1
        elseif name == "deviceUsageReport" or name == "heartRate" then
          unexplained = unexplained + 1     -- a report every 15 min / 1 Hz while worn: a gap is a gap
        end
      end
      -- What the participant deleted on this day, in hours of written data (the tombstones' ranges).
      local deletedWrites, ranges = 0, {}
      for _, iv in ipairs(deleted) do
        local a0, b0 = math.max(iv[1], d.start), math.min(iv[2], d.stop)
        if b0 > a0 then
          deletedWrites = deletedWrites + (b0 - a0) / 3600
          ranges[#ranges + 1] = time.clock(a0) .. "–" .. time.clock(b0)
        end
      end
      row.data_h, row.deleted_h = data, deletedWrites
      if name == "heartRate" then row.off_wrist_h, row.unexplained_h = offH, unexplained end
      if name == "deviceUsageReport" then row.unexplained_h = unexplained end
      local notes, flagged = {}, false
      if #ranges > 0 then
        notes[#notes + 1] = string.format("participant deleted data written %s: %d hour(s) without data",
          table.concat(ranges, ", "), delH)
        flagged = true
      end
      if offH >= dayHours - 1 then notes[#notes + 1] = "watch not worn all day"; flagged = true
      elseif offH > 0 then notes[#notes + 1] = string.format("watch off the wrist %d h", offH) end
      if unexplained > 0 then
        notes[#notes + 1] = string.format("%d h missing without explanation", unexplained)
        flagged = true
      end
      if dayHours ~= 24 then notes[#notes + 1] = string.format("%d-hour day (daylight saving)", dayHours) end
      row.note = #notes > 0 and table.concat(notes, "; ") or nil
      -- Flags for the coordinator: deletions, whole days without the watch, unexplained gaps
      -- (a watch taken off for the night or a shower is normal and not flagged).
      if flagged then
        for _, n in ipairs(notes) do
          if not n:find("daylight") and not n:find("off the wrist") then flag(name, d.day .. ": " .. n) end
        end
      else
        st.ok = st.ok + 1
      end
      st.hours, st.dayHours = st.hours + data, st.dayHours + dayHours
      local pct = 100 * data / dayHours
      if st.worst == nil or pct < st.worst.pct then st.worst = { day = d.day, pct = pct } end

      -- Plausibility; sources at the end of the file.
      if name == "deviceUsageReport" then
        expect.equal(data + delH + unexplained, dayHours, "hours accounted for, device usage, " .. d.day)
        expect.atMost(unexplained, 0, "unexplained device-usage hours on " .. d.day)
      elseif name == "heartRate" then
        expect.atMost(unexplained, 2, "unexplained heart-rate hours on " .. d.day)
        if offH < dayHours - 1 then expect.between(data, 10, dayHours, "hours with heart rate on " .. d.day) end
      else
        expect.between(data, 3, 20, "hours with steps on " .. d.day)
      end
    end
    quality:row(row)
    if dataHours[d.day] == nil then checkedDays[#checkedDays + 1], dataHours[d.day] = d.day, {} end
    dataHours[d.day][name] = row.data_h
    causes.offWrist = causes.offWrist + (row.off_wrist_h or 0)
    causes.deleted = causes.deleted + (row.deleted_h or 0)
    causes.unexplained = causes.unexplained + (row.unexplained_h or 0)
  end
end)

schedule.at(time.studyEnd(), function()
  local values = {}
  for i, day in ipairs(checkedDays) do
    values[i] = {}
    for j, name in ipairs(SENSORS) do values[i][j] = dataHours[day][name] end
  end
  plot.heatmap("hours_with_data", { rows = checkedDays, columns = SENSORS, values = values, unit = "h",
                                    title = "Hours with data per checked day (no data: sensor not authorized)" })
  plot.bars("missing_hours_by_cause", { categories = { "watch off the wrist", "deleted by the participant", "unexplained" },
                                        values = { causes.offWrist, causes.deleted, causes.unexplained },
                                        ylabel = "Hours missing", unit = "h",
                                        title = "Why hours are missing (all sensors, all checked days)" })
  for _, name in ipairs(SENSORS) do
    local st = stats[name]
    overview:row {
      sensor = name, status = readers[name].authorizationStatus, days_checked = st.checked, days_ok = st.ok,
      data_pct = st.checked > 0 and 100 * st.hours / st.dayHours or nil,
      worst_day = st.worst and string.format("%s (%.0f%%)", st.worst.day, st.worst.pct) or nil,
      flags = #st.flags > 0 and table.concat(st.flags, " | ") or "none",
    }
  end
end)

-- Sources of the plausibility checks:
-- * device usage reports cover every 15-minute window (SRDeviceUsageReport, reference contract §3.2),
--   so every hour of the day must hold data, be deleted, or be explained.
-- * heart rate is estimated at 1 Hz whenever the watch is worn (CMHighFrequencyHeartRateData,
--   reference contract §3.3.7); adults who wear a watch wear it 12–16 h a day (Hermsen et al. 2017,
--   JMIR mHealth 5:e31, and Apple Watch wear studies), so a worn day has ≥ 10 h of data.
-- * steps: adults walk in 5–15 of their 16 waking hours (hourly step profiles, Tudor-Locke et
--   al. 2011); 3–20 hours with steps allows quiet and busy days.
