-- Three participants in Berlin, 23 March – 5 April 2026: the clocks go forward on Sunday
-- 29 March, so that local day has 23 hours. Hard case: Karl revokes the pedometer in
-- Settings on the evening of day 9 (Tuesday 31 March); from then on every fetch fails.
return {
  days = 14,
  start = "2026-03-23",
  timezone = "Europe/Berlin",
  seed = 8123,
  participants = {
    { id = "Jonas", profile = "officeWorker" },
    { id = "Mia", profile = "student" },
    { id = "Karl", profile = "sedentaryCommuter", events = {
      { revoke = "pedometerData", at = "day 9 20:00" },
    } },
  },
}
