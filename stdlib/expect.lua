-- expect: assertions for protocol tests that name the protocol's line on failure.
--
--   local expect = require "expect"
--   expect.between(steps, 3000, 15000, "daily steps")
--   expect.equal(#devices, 2, "devices with data")
--
-- A failed expectation stops the run with a message such as
--   protocol.lua:42: expected daily steps between 3000 and 15000, got 812
-- so `sensorium run` and `sensorium test` fail loudly when a number is implausible.

local M = {}

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
    error(string.format("expected %sbetween %s and %s, got %s", what(label), show(lo), show(hi), show(x)), 2)
  end
  return x
end

-- a == b (numbers compare by value, so 3 == 3.0).
function M.equal(a, b, label)
  if a ~= b then
    error(string.format("expected %s%s, got %s", label and (label .. " = ") or "", show(b), show(a)), 2)
  end
  return a
end

-- |a - b| <= tolerance.
function M.near(a, b, tolerance, label)
  if type(a) ~= "number" or math.abs(a - b) > tolerance then
    error(string.format("expected %swithin %s of %s, got %s", what(label), show(tolerance), show(b), show(a)), 2)
  end
  return a
end

function M.atLeast(x, lo, label)
  if type(x) ~= "number" or x ~= x or x < lo then
    error(string.format("expected %sat least %s, got %s", what(label), show(lo), show(x)), 2)
  end
  return x
end

function M.atMost(x, hi, label)
  if type(x) ~= "number" or x ~= x or x > hi then
    error(string.format("expected %sat most %s, got %s", what(label), show(hi), show(x)), 2)
  end
  return x
end

-- v is neither nil nor false.
function M.truthy(v, label)
  if not v then error(string.format("expected %sto be set, got %s", what(label), show(v)), 2) end
  return v
end

-- fn() raises an error whose message contains `part`.
function M.fails(fn, part, label)
  local ok, err = pcall(fn)
  if ok then error(string.format("expected %sto fail", what(label)), 2) end
  if part and not string.find(tostring(err), part, 1, true) then
    error(string.format("expected %sto fail with %q, got %s", what(label), part, tostring(err)), 2)
  end
  return err
end

return M
