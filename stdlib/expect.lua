-- expect: assertions for protocol tests that name the protocol's line on failure.
--
--   local expect = require "expect"
--   expect.between(steps, 3000, 15000, "daily steps")
--   expect.equal(#devices, 2, "devices with data")
--
-- A failed expectation is a finding: in a study run it becomes a row of the `findings`
-- table (participant, virtual time, protocol file:line, message) such as
--   protocol.lua:42: expected daily steps between 3000 and 15000, got 812
-- and the participant's run goes on; `sensorium run` lists the findings at the end and
-- exits non-zero, and `sensorium test` fails. With `run --fail-fast`, and outside a study
-- run (a plain script), the failed expectation raises that message as an error instead.

local M = {}
local report = require "report"  -- the one report module (a plain script's has no finding: checks raise)

-- Records `text` as a finding at the protocol line that called expect.<check>, or raises it.
local function fail(text)
  -- Stack seen by error's position lookup: pcall (1), fail (2), the check (3), the caller (4).
  local _, where = pcall(error, "", 4)
  if report.finding and report.finding(where, text) then return end
  error(where .. text, 0)
end

local function show(v)
  if type(v) == "number" then
    if v ~= v then return "nan" end
    if math.type(v) == "integer" then return tostring(v) end
    return string.format("%.6g", v)
  end
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

local function what(label) return label and (label .. " ") or "" end

-- lo <= x <= hi (x a number, not NaN).
function M.between(x, lo, hi, label)
  if type(x) ~= "number" or x ~= x or x < lo or x > hi then
    fail(string.format("expected %sbetween %s and %s, got %s", what(label), show(lo), show(hi), show(x)))
  end
  return x
end

-- a == b (numbers compare by value, so 3 == 3.0).
function M.equal(a, b, label)
  if a ~= b then
    fail(string.format("expected %s%s, got %s", label and (label .. " = ") or "", show(b), show(a)))
  end
  return a
end

-- |a - b| <= tolerance.
function M.near(a, b, tolerance, label)
  if type(a) ~= "number" or math.abs(a - b) > tolerance then
    fail(string.format("expected %swithin %s of %s, got %s", what(label), show(tolerance), show(b), show(a)))
  end
  return a
end

function M.atLeast(x, lo, label)
  if type(x) ~= "number" or x ~= x or x < lo then
    fail(string.format("expected %sat least %s, got %s", what(label), show(lo), show(x)))
  end
  return x
end

function M.atMost(x, hi, label)
  if type(x) ~= "number" or x ~= x or x > hi then
    fail(string.format("expected %sat most %s, got %s", what(label), show(hi), show(x)))
  end
  return x
end

-- v is neither nil nor false.
function M.truthy(v, label)
  if not v then fail(string.format("expected %sto be set, got %s", what(label), show(v))) end
  return v
end

-- fn() raises an error whose message contains `part`.
function M.fails(fn, part, label)
  local ok, err = pcall(fn)
  if ok then fail(string.format("expected %sto fail", what(label))) end
  if part and not string.find(tostring(err), part, 1, true) then
    fail(string.format("expected %sto fail with %q, got %s", what(label), part, tostring(err)))
  end
  return err
end

return M
