-- The protocol every fuzzed scenario runs with: it authorizes and records a few sensors of
-- phone and watch, fetches them every day, and uses the clock, so that a bad scenario value
-- reaches the generators, the fetch engine and the virtual clock.
study {
  id = "fuzz-probe", title = "Fuzz probe", usage = "Reads a few sensors.",
  privacy_policy = "https://example.org/privacy",
  entitlements = { "ambient-light-sensor", "heart-rate", "device-usage", "pedometer", "on-wrist" },
  sensors = {
    ambientLightSensor = { detail = "Light." }, heartRate = { detail = "Pulse." },
    deviceUsageReport = { detail = "Use." }, pedometerData = { detail = "Steps." }, onWristState = { detail = "Wrist." },
  },
}
local names = { "ambientLightSensor", "heartRate", "deviceUsageReport", "pedometerData", "onWristState" }
local readers = {}
for i, name in ipairs(names) do readers[i] = sensorkit.reader(name) end
sensorkit.requestAuthorization(names, function()
  for _, r in ipairs(readers) do r:startRecording() end
end)
schedule.daily("12:00", function(now)
  for i, r in ipairs(readers) do
    local ok, set = pcall(r.samples, r, { from = now - days(2), to = now - days(1) })
    if ok then report.row("probe", { sensor = names[i], day = time.day(now), n = set:count(), clock = os.time() }) end
  end
end)
