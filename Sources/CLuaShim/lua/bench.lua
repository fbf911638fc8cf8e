-- bench.lua — the cases `sensorium bench lua` runs both in Sensorium's sandbox
-- and in stock `lua5.4`, to print their ratio.
--
-- Prints one line per case: name, TAB, median seconds of CPU time over
-- `repeats` runs. The clock is the global `bench_clock` when the host
-- provides one (Sensorium's os.clock is virtual), else os.clock.
local repeats = tonumber((...)) or 5
local clock = bench_clock or os.clock

-- A table of n keys: half strings, half tables.
local function keys(n)
  local t = {}
  for i = 1, n // 2 do t["k" .. i] = i end
  for i = 1, n - n // 2 do t[{}] = i end
  return t
end

local function traverse(n, rounds)
  return function()
    local t = keys(n)
    return function()
      local s = 0
      for _ = 1, rounds do for _, v in pairs(t) do s = s + v end end
      return s
    end
  end
end

local cases = {
  { "pairs, 10^3 keys x 3000", traverse(1000, 3000) },
  { "pairs, 10^5 keys x 30", traverse(100000, 30) },
  { "pairs, 10^6 keys x 3", traverse(1000000, 3) },
  { "next(t) == nil, 10^5 keys x 10^6", function()
      local t = keys(100000)
      return function()
        local n = 0
        for _ = 1, 1000000 do if next(t) == nil then n = n + 1 end end
        return n
      end
    end },
  { "math.floor x 3*10^6", function()
      return function()
        local s, floor = 0, math.floor
        for i = 1, 3000000 do s = s + floor(i / 3) end
        return s
      end
    end },
  { "string.byte, string.sub x 10^6", function()
      local text = string.rep("sensorium", 10)
      return function()
        local s = 0
        for i = 1, 1000000 do s = s + string.byte(text, i % 90 + 1) + #string.sub(text, 1, i % 7) end
        return s
      end
    end },
  { "string.format('%d %.2f') x 10^6", function()
      return function()
        local n = 0
        for i = 1, 1000000 do n = n + #string.format("%d %.2f", i, i / 7) end
        return n
      end
    end },
  { "tostring(number), ('x'):upper() x 10^6", function()
      return function()
        local n = 0
        for i = 1, 1000000 do n = n + #tostring(i) + #("x"):upper() end
        return n
      end
    end },
}

for _, case in ipairs(cases) do
  local name, make = case[1], case[2]
  local body = make()
  local times = {}
  for r = 1, repeats do
    collectgarbage()
    local start = clock()
    body()
    times[r] = clock() - start
  end
  table.sort(times)
  print(name .. "\t" .. string.format("%.6f", times[(repeats + 1) // 2]))
end
