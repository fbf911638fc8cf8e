-- A tour of the Lua host: what a protocol script can and cannot do.
-- Run it with:  sensorium run docs/examples/tour.lua
print("Lua host tour (" .. _VERSION .. ")")

-- Deterministic: pairs() visits keys in a stable order, math.random is seeded
-- from --seed, and the clock is the host's (virtual) clock.
local counts = { walking = 41, sleeping = 480, sitting = 620, running = 12 }
for activity, minutes in pairs(counts) do
  print(string.format("  %-9s %4d min", activity, minutes))
end
print("  random draw:", math.random(1, 100), "time:", os.date("!%Y-%m-%d %H:%M", os.time()))

-- Values print without addresses; inspect() shows nested tables, sorted.
print("  " .. inspect({ participant = "P1", devices = { "iPhone", "Watch" }, worn = true }))

-- The sandbox says what is not available, and why.
local ok, err = pcall(function() return io.open("/etc/passwd") end)
print("  io:", ok, err)

-- Errors carry file and line.
local ok2, err2 = pcall(error, "a protocol error", 1)
print("  error:", ok2, err2)
