-- plain.lua — what a plain Lua script (a file with no study{}, run by `sensorium run`)
-- gets from the study runtime (StudyRuntime/PlainScript.swift runs it once, before the
-- script). The host has registered the `time` module's primitives as the global `time`
-- (StudyRuntime/TimeBindings.swift: the state's clock, no study span) and the `report`
-- module as the global `report` (its tables print after the script).
--
-- Completes `time` as runtime.lua does for a protocol (the global and `require "time"`
-- are one table), defines the duration globals, and a `sensorkit` that says it needs a study.

local time = require "time"
seconds, minutes, hours, days = time.seconds, time.minutes, time.hours, time.days

sensorkit = setmetatable({}, {
  __index = function(_, key)
    error("sensorkit." .. tostring(key) .. ": this file declares no study{}, so it runs as a plain Lua script; "
      .. "sensorkit needs a study: declare study{ id = …, usage = …, entitlements = { … }, sensors = { … } } first "
      .. "(see docs/lua-api.md)", 2)
  end,
})
