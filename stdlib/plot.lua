-- plot: charts drawn from a protocol, rendered by the host as SVG.
--
--   local plot = require "plot"
--   plot.line("daily_steps", { rows = daily, x = "day", y = "steps",
--                              title = "Steps per day", ylabel = "Steps", unit = "steps" })
--
-- With `run --out DIR` every chart is written as DIR/NAME.svg and shown in
-- DIR/index.html. Charts of one name from several participants share a picture:
-- line, step, bar and scatter charts get one series per participant (labelled
-- with the participant unless `label` says otherwise); a heatmap or actogram is
-- drawn once per participant, as NAME_<participant>.svg. Calling plot.line (step,
-- scatter) again with the same name and label adds points to that series, so a
-- protocol may draw a line a day at a time.
--
-- Every function takes a name (the file stem: letters, digits, _ and -) and a spec:
--   title            heading of the chart (default: the name)
--   xlabel, ylabel   axis titles;  unit  the values' unit, shown in brackets
--   label            this series' name in the legend (default: the participant)
--   xclock, yclock   (scatter) the axis holds hours of the local clock: 24 is
--                    midnight, 26 is 02:00 the next morning; it ticks "02:00"
-- Values may be missing (nil): a line breaks there, a heatmap cell is drawn as
-- "no data", never as zero.
--
-- Times on x are seconds (sample times, time.parse results) or local days
-- "YYYY-MM-DD" (drawn at the day's local noon); time axes tick in the
-- participant's local time.

local time = require "time"
local report = require "report"  -- the one report module (its chart function draws)
local M = {}

-- A list of values 1..n with its length (nil entries become false, which the host reads as missing).
local function list(values, n)
  local out = { n = n or #values }
  for i = 1, out.n do
    local v = values[i]
    if v == nil then v = false end
    out[i] = v
  end
  return out
end

-- A time on x: numbers as they are, "YYYY-MM-DD" at local noon, "YYYY-MM-DD HH:MM" as that clock time.
local function timeOf(v, name)
  if type(v) == "number" then return v end
  if type(v) == "string" then
    if #v == 10 then return time.parse(v .. " 12:00") end
    if #v == 16 then return time.parse(v) end
  end
  error(string.format("plot '%s': x values must be times (seconds) or days \"YYYY-MM-DD\", got %s", name, tostring(v)), 3)
end

-- The x and y lists of a spec: either spec.x / spec.y as lists, or spec.rows with
-- spec.x / spec.y naming the columns.
local function columns(name, spec)
  if spec.rows then
    local xs, ys = {}, {}
    local xk, yk = spec.x, spec.y
    if type(xk) ~= "string" or type(yk) ~= "string" then
      error(string.format("plot '%s': with rows, x and y name columns (strings)", name), 3)
    end
    for i, r in ipairs(spec.rows) do xs[i], ys[i] = r[xk], r[yk] end
    return xs, ys, #spec.rows
  end
  if type(spec.x) ~= "table" or type(spec.y) ~= "table" then
    error(string.format("plot '%s': give x and y as lists, or rows with x and y column names", name), 3)
  end
  return spec.x, spec.y, math.max(#spec.x, #spec.y)
end

local function draw(kind, name, spec, extra)
  if type(name) ~= "string" then error("plot." .. kind .. ": the first argument is the chart's name (a string)", 3) end
  spec = spec or {}
  local chart = { kind = kind, name = name, title = spec.title, xlabel = spec.xlabel, ylabel = spec.ylabel,
                  unit = spec.unit, xclock = spec.xclock, yclock = spec.yclock }
  for k, v in pairs(extra) do chart[k] = v end
  if not report.chart then
    error("plot." .. kind .. ": charts need a study run (this file declares no study{}, so it runs as a plain Lua script)", 3)
  end
  report.chart(chart)
end

-- Values over time joined by lines: x = times or days, y = numbers.
function M.line(name, spec)
  local xs, ys, n = columns(name, spec)
  local x = {}
  for i = 1, n do x[i] = timeOf(xs[i], name) end
  draw("line", name, spec, { series = { { label = spec.label, x = list(x, n), y = list(ys, n) } } })
end

-- Like line, each value held until the next one (a staircase), for counts per interval.
function M.step(name, spec)
  local xs, ys, n = columns(name, spec)
  local x = {}
  for i = 1, n do x[i] = timeOf(xs[i], name) end
  draw("step", name, spec, { series = { { label = spec.label, x = list(x, n), y = list(ys, n) } } })
end

-- Bars: spec.categories (names along x) and spec.values, or rows with x/y column names.
-- Every participant's series must use the same categories (they are grouped side by side).
function M.bars(name, spec)
  local cats, vals, n
  if spec.rows then
    cats, vals, n = columns(name, spec)
  else
    cats, vals = spec.categories or {}, spec.values or {}
    n = #cats
  end
  local names = {}
  for i = 1, n do names[i] = tostring(cats[i]) end
  draw("bars", name, spec, { categories = names, series = { { label = spec.label, y = list(vals, n) } } })
end

-- Points with, by default, each series' least-squares line (fit = false to leave it out);
-- the legend line gives the fit and Pearson's r.
function M.scatter(name, spec)
  local xs, ys, n = columns(name, spec)
  local x, y = {}, {}
  for i = 1, n do                      -- a point needs both coordinates
    if type(xs[i]) == "number" and type(ys[i]) == "number" then x[#x + 1], y[#y + 1] = xs[i], ys[i] end
  end
  draw("scatter", name, spec, { fit = spec.fit ~= false, series = { { label = spec.label, x = list(x), y = list(y) } } })
end

-- A grid coloured by value: spec.rows (labels, e.g. days), spec.columns (labels, e.g.
-- hours) and spec.values[row][column] (nil = no data); log = true colours by log10.
function M.heatmap(name, spec)
  local cells = {}
  for r = 1, #spec.rows do cells[r] = list(spec.values[r] or {}, #spec.columns) end
  draw("heatmap", name, spec, { rows = spec.rows, columns = spec.columns, cells = cells, log = spec.log })
end

-- The hour × day heatmap of hourly rows ({ start = seconds, [field] = value }, as
-- set:byHour():mean(...) or summarize give them; `value` names the field, default
-- "value") over the local days of [from, to). Hours without a row show as no data.
-- On a fall-back day both 01:00 hours fall into the 01 column (the later one wins).
function M.hourByDay(name, hourly, spec)
  spec = spec or {}
  local field = spec.value or "value"
  local days, index = {}, {}
  for i, d in ipairs(time.daysBetween(spec.from, spec.to)) do days[i], index[d.day] = d.day, i end
  local values = {}
  for i = 1, #days do values[i] = {} end
  for _, h in ipairs(hourly) do
    local i = index[time.day(h.start)]
    if i then values[i][math.floor(time.hourOfDay(h.start)) + 1] = h[field] end
  end
  local hours = {}
  for h = 0, 23 do hours[h + 1] = string.format("%02d", h) end
  M.heatmap(name, { title = spec.title, unit = spec.unit, log = spec.log, rows = days, columns = hours, values = values,
                    xlabel = spec.xlabel or "local clock hour", ylabel = spec.ylabel })
end

-- A double-plotted actogram of activity over the local days of [from, to): row d shows
-- day d and day d + 1. `windows` are rows { start = seconds, [value] = number } (as
-- set:byWindow(bin):sum(...) gives them), `bin` their length in seconds (default 900).
-- Each value goes to the clock-time bin of its start. A day without any row is drawn as
-- no data; within a day that has rows, a bin without one is `empty` (default nil, no
-- data; give 0 for sensors that write nothing while there is nothing to count, like
-- the pedometer). On a fall-back day the repeated hour's values add up in one bin.
function M.actogram(name, windows, spec)
  spec = spec or {}
  local field, bin = spec.value or "value", spec.bin or 900
  local perDay = math.floor(86400 / bin)
  local days, index = {}, {}
  for i, d in ipairs(time.daysBetween(spec.from, spec.to)) do days[i], index[d.day] = d.day, i end
  local cells = {}
  for i = 1, #days do cells[i] = { n = perDay } end
  for _, w in ipairs(windows) do
    local i, v = index[time.day(w.start)], w[field]
    if i and type(v) == "number" then
      local b = math.floor(time.hourOfDay(w.start) * 3600 / bin) + 1
      cells[i][b] = (cells[i][b] or 0) + v
    end
  end
  for i = 1, #days do
    if spec.empty ~= nil and next(cells[i], next(cells[i])) ~= nil then  -- more than `n`: the day has rows
      for b = 1, perDay do if cells[i][b] == nil then cells[i][b] = spec.empty end end
    end
    cells[i] = list(cells[i], perDay)
  end
  draw("actogram", name, spec, { rows = days, cells = cells })
end

return M
