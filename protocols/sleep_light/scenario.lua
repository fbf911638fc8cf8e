-- Four participants in Berlin, 23 March – 5 April 2026. The clocks go forward in the
-- night of Saturday 28 to Sunday 29 March: that night is an hour shorter on the clock.
-- Hard case: Max never wears his watch in bed, so no sleep sessions are recorded for him.
return {
  days = 14,
  start = "2026-03-23",
  timezone = "Europe/Berlin",
  seed = 2903,
  participants = {
    { id = "Lea", profile = { preset = "student", wearsWatchToSleep = true } },
    { id = "Tom", profile = { preset = "officeWorker", wearsWatchToSleep = true } },
    { id = "Ute", profile = { preset = "retiree", wearsWatchToSleep = true } },
    { id = "Max", profile = { preset = "officeWorker", wearsWatchToSleep = false } },
  },
}
