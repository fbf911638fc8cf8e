-- Three participants in Toronto, 9–22 March 2026 (after the clocks changed on 8 March).
-- Hard cases: Paul allows device usage but declines keyboard metrics on the consent
-- sheet; Yuki deletes the keyboard data of Thursday evening (day 4, 19:00–24:00) on
-- Friday morning, while it is still in the 24-hour hold, so it is never delivered.
return {
  days = 14,
  start = "2026-03-09",
  timezone = "America/Toronto",
  seed = 90210,
  participants = {
    { id = "Noor", profile = "student" },
    { id = "Paul", profile = "officeWorker", consent = { keyboardMetrics = "deny" } },
    { id = "Yuki", profile = "remoteWorker", events = {
      { delete = "keyboardMetrics", from = "day 4 19:00", to = "day 5 00:00", at = "day 5 08:30" },
    } },
  },
}
