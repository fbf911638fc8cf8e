-- time: durations, local days, week numbers and formatting for protocols.
--
--   local time = require "time"
--   time.duration("26h")          --> 93600
--   time.formatDuration(5400)     --> "1h 30m"
--   time.week(time.now())         --> 10   (ISO 8601 week number, local time)
--   time.studyDay(time.now())     --> 1    (first study day is 1)
--
-- Everything here works in the participant's local time zone (it follows travel),
-- on the virtual clock; no function reads the machine's clock.
--
-- One module: the global `time` is this same table, complete before any script runs, in a
-- protocol, a plain script and the REPL. The host registers its Swift primitives as that
-- global (StudyRuntime/TimeBindings.swift: day, startOfDay, timezone, duration, parse,
-- studyStart, studyEnd) and loads this file, which adds the rest to the same table.

local M = time
if type(M) ~= "table" or type(M.startOfDay) ~= "function" then
  error("the time module needs Sensorium's runtime, which installs its clock before any script runs "
    .. "(a protocol, `sensorium run` of a plain script, the REPL)", 2)
end
-- The primitives, kept as locals: a script that replaces a field of `time` changes only that field.
local core = { day = M.day, startOfDay = M.startOfDay, studyStart = M.studyStart, studyEnd = M.studyEnd,
               now = function() return os.time() end }

-- os.date(fmt, t) for `name`; a time that is not a number, or that the calendar cannot
-- place, is an error at the line that called `name` (not here).
local function date(name, fmt, t)
  if t ~= nil and type(t) ~= "number" then
    error(string.format("time.%s: expected a time (seconds since 1970), got %s", name, type(t)), 3)
  end
  local ok, text = pcall(os.date, fmt, t)
  if not ok then
    local why = tostring(text):gsub("^.-:%d+: ", "")
    if t == nil then error(string.format("time.%s: %s", name, why), 3) end
    error(string.format("time.%s: %.17g cannot be shown as a date (%s)", name, t, why), 3)
  end
  return text
end

-- The clock's now, in whole seconds (the virtual clock in a study).
function M.now() return os.time() end
-- The local hour (0-23) of a time (default now).
function M.hour(t) return tonumber(date("hour", "%H", t or os.time())) end
-- A time as text, os.date's format (default "%Y-%m-%d %H:%M"), local.
function M.format(t, fmt)
  local text = date("format", fmt or "%Y-%m-%d %H:%M", t)   -- not a tail call: errors name the caller's line
  return text
end

-- `n` units of a duration; an error at the caller's line when `n` is not a number (a nil
-- from a missing setting, or text: `time.duration` reads "26h").
local function amount(name, n)
  if type(n) ~= "number" then
    error(string.format("%s: expected a number, got %s", name, n == nil and "nil" or type(n))
      .. (type(n) == "string" and " (time.duration reads text such as \"26h\")" or ""), 3)
  end
  return n
end

-- Durations in seconds (also the globals seconds, minutes, hours, days). `time.duration`
-- also reads text such as "90s", "15m", "26h", "2d", "1h30m".
function M.seconds(n) return amount("seconds", n) + 0 end   -- not a tail call (see amount)
function M.minutes(n) return amount("minutes", n) * 60 end
function M.hours(n) return amount("hours", n) * 3600 end
function M.days(n) return amount("days", n) * 86400 end
function M.weeks(n) return amount("weeks", n) * 7 * 86400 end

-- "1h 30m", "2d 3h", "45s": a duration for people to read.
function M.formatDuration(s)
  s = math.floor(s + 0.5)
  local d, h, m = s // 86400, (s % 86400) // 3600, (s % 3600) // 60
  local parts = {}
  if d > 0 then parts[#parts + 1] = d .. "d" end
  if h > 0 then parts[#parts + 1] = h .. "h" end
  if m > 0 then parts[#parts + 1] = m .. "m" end
  if #parts == 0 then parts[1] = (s % 60) .. "s" end
  return table.concat(parts, " ")
end

-- The start of the local day after the one containing t (correct across DST changes).
function M.nextDay(t)
  return core.startOfDay(core.startOfDay(t) + 30 * 3600)
end

-- Local calendar days from `from` to `to` (exclusive): a list of { day = "YYYY-MM-DD", start, stop }.
-- Both must be times the calendar can place (the years 1 to 9999): an error names them otherwise.
function M.daysBetween(from, to)
  local out, t = {}, core.startOfDay(from)
  if type(to) ~= "number" then error("time.daysBetween: 'to' must be a time (seconds), got " .. type(to), 2) end
  if not pcall(core.startOfDay, to) then
    error(string.format("time.daysBetween: 'to' (%.17g) is outside the calendar (the years 1 to 9999)", to), 2)
  end
  while t < to do
    local stop = M.nextDay(t)
    out[#out + 1] = { day = core.day(t), start = t, stop = stop }
    t = stop
  end
  return out
end

-- The latest local day entirely past SensorKit's hold at `now`: { day, start, stop } of the
-- last day whose data, written up to `margin` after the day ends (default 1 hour: the
-- watch syncs late, a report is written when its window closes), had been written `hold`
-- before `now` (default 24 hours; face metrics hold 7.5 days). At 09:00 that is the day
-- before yesterday. Nil when that day begins before the study does.
function M.releasedDay(now, margin, hold)
  now = now or core.now()
  local released = now - (hold or 86400) - (margin or 3600)
  local d = M.daysBetween(released - 1, released)[1]
  if d.stop > released then d = M.daysBetween(d.start - 1, d.start)[1] end
  if d.start < core.startOfDay(core.studyStart()) then return nil end
  return d
end

-- ISO 8601 week number and weekday (1 = Monday … 7 = Sunday) of a time, local.
function M.week(t) return tonumber(os.date("%V", t or core.now())) end
function M.weekday(t) return tonumber(os.date("%u", t or core.now())) end
function M.isWeekend(t) return M.weekday(t) >= 6 end

-- How many days the study lasts (`--days`, or the scenario's or replay's span): its length in
-- days of 24 hours, rounded (a study across a daylight-saving change is still 14 days).
-- Protocols derive their expectations from it, so that `--days` changes them too.
function M.studyDays()
  return math.floor((core.studyEnd() - core.studyStart()) / 86400 + 0.5)
end

-- Study day number of a time: the first study day is 1.
function M.studyDay(t)
  local n, day = 1, core.startOfDay(core.studyStart())
  local target = core.startOfDay(t or core.now())
  while day < target do day = M.nextDay(day); n = n + 1 end
  return n
end

-- Local clock time "HH:MM" of a time.
function M.clock(t) return os.date("%H:%M", t or core.now()) end

-- The local wall-clock hour as a number (13.5 = half past one in the afternoon), in the
-- participant's time zone. On DST days this is what the clock shows, not the hours
-- elapsed since midnight: 03:30 on a spring-forward day is 3.5 (only 2.5 h after
-- midnight), and the repeated hour of a fall-back day reads 2.x twice.
function M.hourOfDay(t)
  t = t or core.now()
  local c = os.date("*t", t)
  return c.hour + c.min / 60 + (c.sec + (t - math.floor(t))) / 3600
end

return M
