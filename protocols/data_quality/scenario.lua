-- Four participants in Berlin, 23 March – 5 April 2026; the clocks go forward on
-- Sunday 29 March (a 23-hour day). The hard cases a coordinator meets:
--   Amara — no problems (the reference row);
--   Bo    — declines heart rate on the consent sheet;
--   Chen  — revokes heart rate in Settings on the evening of day 7 (Sunday 29 March);
--   Dara  — deletes two hours of heart rate (day 4, 13:00–15:00) that evening, inside the
--           hold, and leaves the watch at home for two days (days 9 and 10).
return {
  days = 14,
  start = "2026-03-23",
  timezone = "Europe/Berlin",
  seed = 777,
  participants = {
    { id = "Amara", profile = "officeWorker" },
    { id = "Bo", profile = "student", consent = { heartRate = "deny" } },
    { id = "Chen", profile = "remoteWorker", events = {
      { revoke = "heartRate", at = "day 7 21:00" },
    } },
    { id = "Dara", profile = "retiree", events = {
      { delete = "heartRate", from = "day 4 13:00", to = "day 4 15:00", at = "day 4 21:00" },
      { offWrist = true, from = "day 9 00:00", to = "day 11 00:00" },
    } },
  },
}
