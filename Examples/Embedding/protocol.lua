-- Daily heart-rate zones over the host app's own data (Examples/Embedding).
-- `zone(bpm)`, `zoneTally()` and its class are not Sensorium's: the embedding program registers them.
study {
  id = "embedded-heart-rate", title = "Daily heart-rate zones",
  usage = "Reads your heart rate to describe how active your days are.",
  entitlements = { "heart-rate" },
  sensors = { heartRate = { detail = "Heart rate from your Apple Watch.", required = true } },
}

local report = require "report"
local time = require "time"

local zones = report.table("heart_rate_zones", {
  columns = { "day", "samples", "mean_bpm", "rest", "moderate", "vigorous" },
  formats = { mean_bpm = "%.1f" },
})

-- Every morning, the last day wholly past SensorKit's 24-hour hold.
schedule.daily("09:00", function(now)
  local day = time.releasedDay(now)
  if not day then return end
  for _, device in ipairs(sensors.heartRate:devices()) do
    local set = sensors.heartRate:samples { device = device, from = day.start, to = day.stop }
    if set:count() > 0 then
      local tally = zoneTally()
      for _, bpm in ipairs(set:column("heartRate")) do tally:add(zone(bpm)) end
      zones:row { day = day.day, samples = set:count(), mean_bpm = set:mean("heartRate"),
                  rest = tally.rest, moderate = tally.moderate, vigorous = tally.vigorous }
    end
  end
end)
