-- Three adults in Chicago for two weeks. Hard case: Rosa, a retiree, leaves her
-- watch on the charger for two whole days (days 6 and 7): no heart rate, ~0 hours worn.
return {
  days = 14,
  start = "2026-03-02",
  timezone = "America/Chicago",
  seed = 4242,
  participants = {
    { id = "Omar", profile = "officeWorker" },
    { id = "Lena", profile = "athlete" },
    { id = "Rosa", profile = "retiree", events = {
      { offWrist = true, from = "day 6 00:00", to = "day 8 00:00" },
    } },
  },
}
