-- runtime.lua — the Lua side of the study runtime (StudyRuntime/Bindings.swift runs it
-- once per participant, after the study API's host functions are registered).
--
-- Called with one argument: `rt`, the runtime's internal host functions (error_codes,
-- deletion_reasons, log, undeclared_sensor). Reads the global `sensorkit` (adds `errors`,
-- `deletionReasons` and `isError`); completes the global `time` (require "time", see
-- StudyRuntime/TimeBindings.swift); defines the globals `log`, `seconds`, `minutes`,
-- `hours` and `days`.
--
-- Returns one table, the pieces the host calls back into:
--   deliver(id, method, ...)         calls reader id's delegate[method](reader, ...)
--   make_error(code, name, domain, message, underlying)   a SensorKit error value
--   set_field(t, k, v)               t[k] = v (a fetch request's write-back)
--   register_reader(id, reader)      the reader's id, weakly
--   get_delegate(reader), set_delegate(reader, delegate)
--   pin(id), unpin(id)               keep a reader alive while its callbacks are queued
local rt = ...

-- Readers. The runtime holds none strongly, so a reader the protocol drops is
-- collected, with its delegate (even when the delegate's callbacks refer to the
-- reader: `delegates` has weak keys). While a callback for a reader is queued the
-- reader is pinned, so a fetch or recording the protocol started still reports.
local live = setmetatable({}, { __mode = "v" })        -- id -> reader
local delegates = setmetatable({}, { __mode = "k" })   -- reader -> delegate table
local pinned = {}                                      -- id -> reader, callbacks queued
local function register_reader(id, reader) live[id] = reader end
local function get_delegate(reader) return delegates[reader] end
local function set_delegate(reader, delegate) delegates[reader] = delegate end
local function pin(id) pinned[id] = live[id] end
local function unpin(id) pinned[id] = nil end

-- deliver(id, method, ...): calls the reader's delegate[method](reader, ...) if present.
-- Returns the method's first result and true, or nil and false when there is none
-- (also when the reader was collected).
local function deliver(id, method, ...)
  local reader = pinned[id] or live[id]
  if reader == nil then return nil, false end
  local delegate = delegates[reader]
  if delegate == nil then return nil, false end
  local fn = delegate[method]
  if fn == nil then return nil, false end
  return (fn(reader, ...)), true
end

-- study{}'s `sensors` table (reader by sensor name): reading a sensor it does not hold is an
-- error at the line that reads it, naming the declared sensors and the closest name.
local sensors_mt = {
  __index = function(t, key)
    local declared = {}
    for name in next, t do declared[#declared + 1] = name end
    error(rt.undeclared_sensor(key, declared), 2)
  end,
}
local function guard_sensors(t) setmetatable(t, sensors_mt) end

-- SensorKit errors are tables: { code, name, domain, message, underlying }.
local error_mt = {
  __tostring = function(e)
    local text = string.format("%s %d (%s): %s", e.domain, e.code, e.name, e.message)
    if e.underlying then text = text .. " [underlying: " .. tostring(e.underlying) .. "]" end
    return text
  end,
  __name = "SRError",
}
local function make_error(code, name, domain, message, underlying)
  return setmetatable({ code = code, name = name, domain = domain, message = message, underlying = underlying }, error_mt)
end

-- Error codes by name (SRErrorCode.known, defined in the model).
local sk = sensorkit
sk.errors = rt.error_codes()
-- Deletion reasons both ways (SRDeletionReason, defined in the model).
sk.deletionReasons = rt.deletion_reasons()
sk.isError = function(v) return getmetatable(v) == error_mt end

-- time: the host registered its primitives as the global `time`; the stdlib's time.lua
-- completes that same table (the global and `require "time"` are one table).
local time = require "time"
seconds, minutes, hours, days = time.seconds, time.minutes, time.hours, time.days

-- log: lines in the run's output, stamped with participant and local time.
local function logger(level)
  return function(fmt, ...)
    local text = tostring(fmt)
    if select("#", ...) > 0 then
      local ok, formatted = pcall(string.format, fmt, ...)
      if not ok then error("log." .. level .. ": " .. formatted, 2) end   -- at the protocol's line
      text = formatted
    end
    rt.log(level, text)
  end
end
log = { info = logger("info"), warn = logger("warn"), error = logger("error") }

local function set_field(t, k, v) t[k] = v end

return {
  deliver = deliver,
  make_error = make_error,
  set_field = set_field,
  register_reader = register_reader,
  get_delegate = get_delegate,
  set_delegate = set_delegate,
  pin = pin,
  unpin = unpin,
  guard_sensors = guard_sensors,
}
