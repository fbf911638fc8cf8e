-- stats: the numbers protocols compute over per-day or per-night values — mean, median,
-- Pearson and Spearman correlation, and the mean clock time of events around midnight.
--
--   local stats = require "stats"
--   stats.median { 3, 1, 2 }                         --> 2
--   stats.median(lightSet, "lux")                    --> the set's median lux (native, one pass)
--   stats.pearson({ 1, 2, 3 }, { 2, 4, 7 })          --> 0.99…
--   stats.clockMean { t1, t2 }                       --> 23.75 for 23:30 and 00:00
--
-- Lists are Lua sequences of numbers; nil holes are not allowed (filter first). A
-- SampleSet's per-sample statistics stay native: pass the set and a field.

local M = {}

-- The values of `key` in a list of rows, in order, leaving out rows without one:
-- stats.column({ { hr = 60 }, {}, { hr = 72 } }, "hr") --> { 60, 72 }.
function M.column(rows, key)
  local out = {}
  for _, r in ipairs(rows) do if r[key] ~= nil then out[#out + 1] = r[key] end end
  return out
end

-- Mean of a list; nil when it is empty.
function M.mean(xs)
  if #xs == 0 then return nil end
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return s / #xs
end

-- Median of a list (the mean of the two middle values for an even count), or of a
-- SampleSet's `field` (SampleSet:quantile, native); nil when there is nothing. The list is
-- not changed.
function M.median(xs, field)
  if field ~= nil then
    local q = xs:quantile(field, 0.5)
    if q ~= q then return nil end            -- NaN: an empty set
    return q
  end
  local n = #xs
  if n == 0 then return nil end
  local sorted = table.move(xs, 1, n, 1, {})
  table.sort(sorted)
  if n % 2 == 1 then return sorted[(n + 1) // 2] end
  return (sorted[n // 2] + sorted[n // 2 + 1]) / 2
end

-- Pearson's correlation of two lists of the same length; nil when there are fewer than
-- `minimum` pairs (default 2) or either list has no variance. Raises an error when the
-- lengths differ.
function M.pearson(xs, ys, minimum)
  local n = #xs
  if n ~= #ys then error(string.format("stats.pearson: %d x values but %d y values", n, #ys), 2) end
  if n < (minimum or 2) or n < 2 then return nil end
  local mx, my = M.mean(xs), M.mean(ys)
  local sxy, sxx, syy = 0, 0, 0
  for i = 1, n do
    local dx, dy = xs[i] - mx, ys[i] - my
    sxy, sxx, syy = sxy + dx * dy, sxx + dx * dx, syy + dy * dy
  end
  if sxx == 0 or syy == 0 then return nil end
  return sxy / math.sqrt(sxx * syy)
end

-- Ranks of a list, 1 = smallest; tied values share the mean of their ranks.
function M.ranks(xs)
  local order = {}
  for i = 1, #xs do order[i] = i end
  table.sort(order, function(a, b) if xs[a] ~= xs[b] then return xs[a] < xs[b] end return a < b end)
  local ranks, i = {}, 1
  while i <= #order do
    local j = i
    while j < #order and xs[order[j + 1]] == xs[order[i]] do j = j + 1 end
    for k = i, j do ranks[order[k]] = (i + j) / 2 end
    i = j + 1
  end
  return ranks
end

-- Spearman's rank correlation: Pearson's of the ranks (ties averaged). Same rules as pearson.
function M.spearman(xs, ys, minimum)
  if #xs ~= #ys then error(string.format("stats.spearman: %d x values but %d y values", #xs, #ys), 2) end
  return M.pearson(M.ranks(xs), M.ranks(ys), minimum)
end

-- Hours after local midnight as the participant's clock shows them (13.5 = 13:30).
local function clockHours(t)
  local c = os.date("*t", t)
  return c.hour + c.min / 60 + (c.sec + (t - math.floor(t))) / 3600
end

-- The mean clock time of events (wall times, read on the local clock): the circular mean
-- of their times of day, so 23:30 and 00:30 average to 00:00, not noon. Returns hours
-- after midnight in [0, 24); nil when the list is empty or the times spread evenly round
-- the clock (no mean direction).
function M.clockMean(times)
  if #times == 0 then return nil end
  local s, c = 0, 0
  for _, t in ipairs(times) do
    local a = clockHours(t) / 24 * 2 * math.pi
    s, c = s + math.sin(a), c + math.cos(a)
  end
  if math.abs(s) < 1e-9 * #times and math.abs(c) < 1e-9 * #times then return nil end
  return (math.atan(s, c) / (2 * math.pi) * 24) % 24
end

-- The signed difference a − b of two clock times in hours, taken the short way round the
-- clock: in (−12, 12] (01:00 − 23:00 = 2).
function M.clockDifference(a, b)
  local d = (a - b) % 24
  return d > 12 and d - 24 or d
end

-- "HH:MM" of hours after midnight (25.5 and 1.5 both read "01:30").
function M.clockText(h)
  local m = math.floor((h % 24) * 60 + 0.5)
  return string.format("%02d:%02d", m // 60 % 24, m % 60)
end

return M
