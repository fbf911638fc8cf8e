-- Evening light and sleep timing (flagship demo, first cut).
study {
  id = "sleep-light", title = "Evening light and sleep timing",
  usage = "Measures light exposure to study its effect on sleep.",
  privacy_policy = "https://example.org/privacy",
  entitlements = { "ambient-light-sensor", "on-wrist" },
  sensors = {
    ambientLightSensor = { detail = "Records light around you.", required = true },
    onWristState = { detail = "Checks whether the watch is worn." },
  },
}

local light = sensorkit.reader "ambientLightSensor"
light.delegate = {
  didChangeAuthorizationStatus = function(reader, status)
    if status == "authorized" then reader:startRecording() end
  end,
}
sensorkit.requestAuthorization({ "ambientLightSensor", "onWristState" }, function(err)
  if err then log.warn("authorization: %s", tostring(err)) end
end)

schedule.daily("09:00", function(now)
  for _, device in ipairs(light:devices()) do
    local day = light:samples { device = device, from = now - days(2), to = now - days(1) }
    report.row("daily_light", {
      day = time.day(now - days(2)), device = device.model,
      samples = day:count(), mean_lux = day:where("lux", ">", 5):mean("lux"),
    })
  end
end)
