-- Three participants based in London, 2–15 March 2026. Hard case: Ines, a consultant,
-- flies to New York on Wednesday (day 3, 11:00 London time) and back on Saturday
-- evening (day 6, 20:00 London time): her phone's local time moves five hours back, and
-- five hours forward again. Her local Wednesday has 29 hours, her Sunday 19.
return {
  days = 14,
  start = "2026-03-02",
  timezone = "Europe/London",
  seed = 515,
  participants = {
    { id = "Hugo", profile = "officeWorker" },
    { id = "Ines", profile = "officeWorker", events = {
      { travel = "America/New_York", at = "day 3 11:00" },
      { travel = "Europe/London", at = "day 6 20:00" },
    } },
    { id = "Joan", profile = "retiree" },
  },
}
