-- The world of `sensorium bench study`: one participant in Paris, and no duplicates injected
-- into fetches, so the week is exactly days × 86 400 × 50 samples, the records a store holds.
return { participants = 1, timezone = "Europe/Paris", switches = { duplicateRate = 0 } }
