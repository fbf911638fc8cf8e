-- Three participants in London for two weeks in March. Hard case: Cam declines the
-- ambient light sensor on the consent sheet, so the app records nothing for them.
return {
  days = 14,
  start = "2026-03-02",
  timezone = "Europe/London",
  seed = 20260302,
  participants = {
    { id = "Ada", profile = "officeWorker" },
    { id = "Ben", profile = "student" },
    { id = "Cam", profile = "retiree", consent = { ambientLightSensor = "deny" } },
  },
}
