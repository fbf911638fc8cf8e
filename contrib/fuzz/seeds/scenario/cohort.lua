return {
  days = 3, start = "2026-03-27", timezone = "Europe/Berlin", seed = 7,
  switches = { holdingPeriod = "12h", duplicateRate = 0.05, agePurgeInterval = "1h", watchSyncLag = "2h",
               reportWindow = { deviceUsageReport = "30m" }, writeBatch = { accelerometer = "2m" } },
  simulation = { writeBatchSeconds = 60, reportWindow = 900, ambientLightPeriod = 10 },
  participants = {
    { id = "Lea", timezone = "Europe/Berlin", profile = { preset = "student", pickupsPerDay = 90, sleepNeedHours = 8,
      midSleepFreeDays = 5, dailySteps = 9000, restingHeartRate = 60, age = 23, screenHoursPerDay = 5, typingWordsPerMinute = 40 },
      consent = { default = "allow", heartRate = "deny" },
      events = {
        { phoneOff = true, from = "day 1 10:00", to = "day 1 14:00" },
        { offWrist = true, from = "day 2 08:00", to = "day 2 09:30" },
        { clockJump = "1h", at = "day 2 12:00" },
        { travel = "America/New_York", at = "day 2 18:00" },
        { revoke = "pedometerData", at = "day 3 06:00" },
        { grant = "pedometerData", at = "day 3 08:00" },
        { delete = "ambientLightSensor", from = "day 1 00:00", to = "day 1 06:00" },
        { reboot = "watch", at = "day 1 03:00" },
        { locked = true, from = "day 2 22:00", to = "day 2 23:00" },
        { watchOff = true, from = "day 3 01:00", to = "day 3 02:00" },
      } },
    { id = "Tom", watch = false, profile = "retiree" },
  },
}
