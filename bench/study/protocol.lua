-- The study `sensorium bench study` runs, simulated and over a store: one reader of
-- the phone's 50 Hz accelerometer, recording from the start.
study {
  id = "bench", title = "Benchmark", usage = "Benchmark.", privacy_policy = "https://example.org/privacy",
  entitlements = { "motion-accelerometer" },
  sensors = { accelerometer = { detail = "Measures movement." } },
}

accel = sensorkit.reader "accelerometer"
accel.delegate = {
  didChangeAuthorizationStatus = function(reader, status)
    if status == "authorized" then reader:startRecording() end
  end,
}
sensorkit.requestAuthorization({ "accelerometer" })

-- The benchmark's workload over the phone's samples written in (from, to]: hourly mean
-- magnitude, and per day the sample count, the count of magnitude > 1.1 g and the
-- 5/50/95th percentiles of magnitude. Returns the hourly rows and the daily rows.
function benchWorkload(from, to)
  local week = accel:samples { device = sensorkit.currentDevice(), from = from, to = to }
  local hours = week:byHour():summarize { mean = { "mean", "magnitude" } }
  local days = week:byDay():summarize {
    samples = { "count" },
    active = { "count", where = { "magnitude", ">", 1.1 } },
    p05 = { "quantile", "magnitude", 0.05 },
    p50 = { "quantile", "magnitude", 0.5 },
    p95 = { "quantile", "magnitude", 0.95 },
  }
  return hours, days
end

-- The same figures as researchers write them first (docs/lua-api.md's natural form): four
-- statements over the week, each its own aggregate. The total count checks the daily
-- counts; the rows are assembled as benchWorkload's, so `bench study` checks that both agree.
function benchWorkloadNatural(from, to)
  local week = accel:samples { device = sensorkit.currentDevice(), from = from, to = to }
  local total = week:count()
  local hourly = week:byHour():mean("magnitude")
  local active = week:where("magnitude", ">", 1.1):byDay():count()
  local spread = week:byDay():quantiles("magnitude", { 0.05, 0.5, 0.95 })

  local hours = {}
  for i, h in ipairs(hourly) do hours[i] = { hour = h.key, mean = h.value } end
  local activeByDay = {}
  for _, d in ipairs(active) do activeByDay[d.key] = d.value end
  local days, counted = {}, 0
  for i, d in ipairs(spread) do
    days[i] = { day = d.key, samples = d.count, active = activeByDay[d.key] or 0,
                p05 = d.values[1], p50 = d.values[2], p95 = d.values[3] }
    counted = counted + d.count
  end
  assert(counted == total, ("daily counts sum to %d, the week holds %d"):format(counted, total))
  return hours, days
end
