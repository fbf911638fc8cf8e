-- First-export review: what a study team checks on the first recorded export it receives,
-- before any analysis. The protocol imports nothing itself: it runs over a store made by
-- `sensorium import` (`sensorium run protocols/first_export_review --recording study.sqlite`).
--
-- Method. Every morning of the replay the day released by SensorKit's 24-hour hold (the day
-- before yesterday, with 3 h for the watch to sync) is reviewed, for every declared sensor and
-- every device that holds its data:
--   * samples: how many samples the day holds (by each sample's own time);
--   * mean:    the mean of the sensor's main measure (illuminance, heart rate, steps per bin,
--              acceleration magnitude, session length), a first plausibility check;
--   * hours:   how many clock hours hold at least one sample.
-- At the end, one line per sensor and device sums it up: days with data out of the days
-- reviewed, and a flag for a sensor that sent nothing at all from any device — the thing to
-- raise with the platform before the study goes on.
--
-- The daily table is the one a test re-computes from the export files on its own.

study {
  id = "first-export-review", title = "First-export data review",
  usage = "Reviews the sensor data the study has received, so that gaps and device problems are found before analysis.",
  privacy_policy = "https://example.org/first-export-review/privacy",
  entitlements = { "ambient-light-sensor", "heart-rate", "pedometer", "motion-accelerometer", "motion-rotation-rate",
                   "wrist-temperature", "on-wrist" },
  sensors = {
    ambientLightSensor = { detail = "Measures the light around your phone and watch." },
    heartRate = { detail = "Reads the heart rate your Apple Watch measures." },
    pedometerData = { detail = "Counts your steps." },
    accelerometer = { detail = "Measures how your phone moves." },
    wristTemperature = { detail = "Reads your wrist temperature while you sleep." },
    onWristState = { detail = "Checks whether you are wearing your Apple Watch." },
  },
}

local report = require "report"
local time = require "time"

-- The sensors in review order, each with its main measure (nil: samples are counted only).
local MEASURES = {
  { sensor = "ambientLightSensor", field = "lux", unit = "lx" },
  { sensor = "heartRate", field = "heartRate", unit = "bpm" },
  { sensor = "pedometerData", field = "numberOfSteps", unit = "steps/bin" },
  { sensor = "accelerometer", field = "magnitude", unit = "g" },
  { sensor = "wristTemperature", field = "duration", unit = "s" },
  { sensor = "onWristState" },
}

local daily = report.table("daily", {
  columns = { "day", "sensor", "device", "samples", "mean", "unit", "hours" },
  formats = { mean = "%.3f" },
})
local overview = report.table("overview", {
  columns = { "sensor", "device", "days_with_data", "days_reviewed", "samples", "flag" },
})

-- What each sensor and device held over the review: days with data and samples.
local seen, reviewed = {}, 0

local function deviceLabel(device)
  return device.model .. " " .. (device.productType ~= "" and device.productType or device.systemName)
end

schedule.daily("08:00", function(now)
  local d = time.releasedDay(now, hours(3))
  if not d then return end
  reviewed = reviewed + 1
  for _, m in ipairs(MEASURES) do
    local reader = sensors[m.sensor]
    seen[m.sensor] = seen[m.sensor] or {}
    for _, device in ipairs(reader:devices()) do
      local label = deviceLabel(device)
      -- The day's samples by their own time: a fetch takes samples written after `from`, so
      -- it starts an hour early (a sample written at midnight belongs to the day) and ends
      -- 3 h late (the watch syncs late; a batch is written after its last sample).
      local day = reader:samples { device = device, from = d.start - hours(1), to = d.stop + hours(3) }
        :where("time", ">=", d.start):where("time", "<", d.stop)
      local n = day:count()
      local s = seen[m.sensor][label] or { days = 0, samples = 0 }
      seen[m.sensor][label] = s
      if n > 0 then
        s.days, s.samples = s.days + 1, s.samples + n
        daily:row {
          day = d.day, sensor = m.sensor, device = label, samples = n,
          mean = m.field and day:mean(m.field) or nil, unit = m.unit,
          hours = #day:byHour():count(),
        }
      end
    end
  end
end)

schedule.at(time.studyEnd(), function()
  for _, m in ipairs(MEASURES) do
    local labels = {}
    for label in pairs(seen[m.sensor] or {}) do labels[#labels + 1] = label end
    table.sort(labels)
    if #labels == 0 then
      overview:row { sensor = m.sensor, days_reviewed = reviewed, samples = 0,
                     flag = "no data from any device: ask the platform whether it is collected" }
    end
    for _, label in ipairs(labels) do
      local s = seen[m.sensor][label]
      overview:row {
        sensor = m.sensor, device = label, days_with_data = s.days, days_reviewed = reviewed, samples = s.samples,
        flag = s.days < reviewed and string.format("%d day(s) without data", reviewed - s.days) or nil,
      }
    end
  end
end)
