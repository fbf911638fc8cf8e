study {
  id = "fuzz-api", title = "Fuzz API", usage = "Uses the API.", privacy_policy = "https://example.org/privacy",
  entitlements = { "ambient-light-sensor", "heart-rate" },
  sensors = { ambientLightSensor = { detail = "Light." }, heartRate = { detail = "Pulse." } },
}
local light = sensorkit.reader "ambientLightSensor"
local heart = sensorkit.reader "heartRate"
sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function() light:startRecording() heart:startRecording() end)
report.table("windows", { columns = { "start", "mean" }, formats = { mean = "%.2f", n = "%5d" } })
local id = schedule.every("6h", function(now) report.row("ticks", { now = now, day = time.day(now) }) end)
schedule.after(3600, function(now) log.info("%d ticks %s", 3, time.format(now)) end)
schedule.at("day 2 09:00", function(now)
  local set = light:samples { from = now - days(1) - hours(12), to = now - days(1) }
  for key, group in pairs(set:byWindow(3600, time.studyStart()):mean("lux")) do
    report.row("windows", { start = key, mean = group, n = 12 })
  end
  local h = heart:samples { from = time.studyStart(), to = now - hours(24) }
  report.row("summary", { n = h:count(), q = h:quantile("heartRate", 0.5), sd = h:stddev("heartRate"),
                          first = h:first(2)[1] and 1 or 0, text = string.format("%5.1f", 2.5) })
  schedule.cancel(id)
end)
schedule.daily("23:30", function(now) report.row("days", { day = time.day(now), start = time.startOfDay(now), x = 1e-5 * math.pi }) end)
