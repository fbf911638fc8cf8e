return { days = 2, participants = 2, seed = 3, switches = { retention = "7d", tombstoneRetention = "60d", outOfOrderJitter = 5,
  epochMode = { mode = "cfAligned", offset = 100 }, osVersion = "17.4", lockedFetchError = 2 } }
