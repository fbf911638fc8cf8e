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
