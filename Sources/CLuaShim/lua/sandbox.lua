-- sandbox.lua — Sensorium's sandbox bootstrap.
--
-- Runs once per Lua state, after the standard libraries are open and before
-- any script, with the host's primitives as `...` (see Sandbox.swift for the
-- fields of `host`). Returns the deterministic pretty-printer (`inspect`).
--
-- What it does, in order:
--   1. removes what protocols must not reach (files, processes, debug, bytecode,
--      finalizers), with a clear message when a script asks for it;
--   2. makes output repeatable: seeded math.random, tostring/%s/%p without
--      addresses, one spelling of NaN, the host's virtual clock behind os.*;
--   3. gives the protocol plain library tables of its own, and keeps the
--      originals for itself and for modules loaded with `require`, so a protocol
--      that changes `string.format` or `math` cannot break them;
--   4. limits `require` to the host's module folders.
-- Iteration order needs nothing here: the state's heap and string hashing are
-- deterministic (CLuaShim), so Lua's own `next` and `pairs` are used as they are.

local host = ...
local G = _G
local type, select, error, rawget, rawequal, pcall = type, select, error, rawget, rawequal, pcall
local raw_setmetatable, raw_getmetatable, raw_load, raw_tostring = setmetatable, getmetatable, load, tostring
local raw_collectgarbage, raw_randomseed = collectgarbage, math.randomseed
local debug_getmetatable, traceback = debug.getmetatable, debug.traceback
local concat, format, find, match, byte = table.concat, string.format, string.find, string.match, string.byte
local mathtype = math.type

-- 1. Remove what protocols must not reach; a clear message if they ask.
local removed_why = {}
for _, entry in ipairs(host.removed) do
  local name, why = entry[1], entry[2]
  local lib, fieldname = match(name, "^(%w+)%.(%w+)$")
  if lib then G[lib][fieldname] = nil else G[name] = nil end
  removed_why[name] = why
end
G.debug = { traceback = traceback }
G.package = nil

-- Reading a removed global or library field explains itself.
local function explain(libname)
  return function(_, key)
    local why = removed_why[libname and (libname .. "." .. raw_tostring(key)) or raw_tostring(key)]
    if why then
      error(format("'%s%s' is not available: %s", libname and (libname .. ".") or "", raw_tostring(key), why), 2)
    end
    return nil
  end
end

-- 2. Repeatable output.
G.pairs, G.ipairs = host.pairs, host.ipairs
raw_randomseed(host.seed)
math.randomseed = function(...)
  if select("#", ...) == 0 then
    error("math.randomseed() needs a seed: runs are repeatable, so the seed comes from the run (--seed)", 2)
  end
  return raw_randomseed(...)
end

-- Objects are named by type and a number given in order of first appearance.
local ids, counters = raw_setmetatable({}, { __mode = "k" }), {}
local function identify(v, t)
  local id = ids[v]
  if not id then
    counters[t] = (counters[t] or 0) + 1
    id = counters[t]
    ids[v] = id
  end
  return t .. ": " .. id
end

-- tostring as stock Lua's, with numbered identities instead of addresses and one
-- NaN (sandboxlib.c; a C function, at stock speed).
G.tostring = host.wrap_tostring(identify)
local tostring = G.tostring

G.print = function(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  host.write(concat(parts, "\t") .. "\n")
end

string.format = host.wrap_format(string.format, tostring)
string.rep = host.wrap_rep(string.rep)
format = string.format

-- The host's virtual clock behind os.time, os.clock and os.date.
-- (Host functions called directly: their errors name the caller's line.)
os.time, os.clock, os.date = host.time, host.clock, host.date

-- 3. Text chunks only.
G.load = function(chunk, name, mode, ...)
  if type(chunk) == "string" and byte(chunk, 1) == 27 then
    return nil, "precompiled bytecode is refused; Sensorium loads Lua source text only"
  end
  if mode ~= nil and type(mode) == "string" and find(mode, "b", 1, true) and not find(mode, "t", 1, true) then
    return nil, "attempt to load a text chunk (mode is '" .. mode .. "')"
  end
  if select("#", ...) > 0 then return raw_load(chunk, name, "t", ...) end
  return raw_load(chunk, name, "t")
end

-- Finalizers cannot be interrupted by the limits, so scripts may not set them
-- (sandboxlib.c: the original runs in the wrapper's frame, stock errors).
G.setmetatable = host.wrap_setmetatable(raw_setmetatable)

-- collectgarbage only with the options that leave the collector as the limits
-- need it (see sandboxlib.c; stock errors for anything else).
local gc_allowed = {}
for _, o in ipairs(host.gc_options) do gc_allowed[o] = true end
G.collectgarbage = host.wrap_collectgarbage(raw_collectgarbage, gc_allowed)

-- 4. The protocol's own library tables; the originals stay with the host.
local libraries = { "string", "table", "math", "os", "coroutine", "utf8", "debug" }
local host_globals = {}
for k, v in next, G do host_globals[k] = v end
local function copy(t)
  local c = {}
  for k, v in next, t do c[k] = v end
  return c
end
for _, name in ipairs(libraries) do
  local c = copy(G[name])
  if name == "os" or name == "string" or name == "debug" then raw_setmetatable(c, { __index = explain(name) }) end
  G[name] = c
end
-- Methods on strings use the protocol's `string` table, as in stock Lua.
debug_getmetatable("").__index = G.string

-- Modules see the host's originals for the standard names, the protocol's
-- globals for everything else, and define their globals in _G.
raw_setmetatable(host_globals, { __index = G })
local module_env = raw_setmetatable({}, { __index = host_globals, __newindex = G })

-- 5. require: only the host's module folders.
local loaded = {}
for _, name in ipairs(libraries) do loaded[name] = G[name] end
loaded._G = G
G.require = function(name)
  if type(name) ~= "string" then
    error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
  end
  local value = loaded[name]
  if value ~= nil then return value end
  local source, path = host.find_module(name)
  if not source then error(path, 2) end
  local chunk, message = raw_load(source, "@" .. path, "t", module_env)
  if not chunk then error(message, 2) end
  value = chunk(name, path)
  if value == nil then value = true end
  loaded[name] = value
  return value
end
host_globals.require = G.require

-- 6. A deterministic pretty-printer: sorted keys, nesting, cycles marked.
local sorted_pairs = host.sorted_pairs
local function is_identifier(k)
  return type(k) == "string" and match(k, "^[%a_][%w_]*$") ~= nil
end
local function inspect(value, width)
  width = width or 78
  local seen = {}
  local function render(v, indent)
    local t = type(v)
    if t == "string" then return format("%q", v) end
    if t == "userdata" then
      local mt = debug_getmetatable(v)
      if mt and rawget(mt, "__inspect") then return rawget(mt, "__inspect")(v) end
    end
    if t ~= "table" then return tostring(v) end
    local mt = debug_getmetatable(v)
    if mt and rawget(mt, "__inspect") then return rawget(mt, "__inspect")(v) end
    if mt and rawget(mt, "__tostring") then return tostring(v) end
    if seen[v] then return "<cycle: " .. tostring(v) .. ">" end
    seen[v] = true
    local n = #v
    local parts = {}
    for i = 1, n do parts[#parts + 1] = render(rawget(v, i), indent .. "  ") end
    for k, item in sorted_pairs(v) do
      if not (mathtype(k) == "integer" and k >= 1 and k <= n) then
        local key = is_identifier(k) and k or ("[" .. render(k, indent .. "  ") .. "]")
        parts[#parts + 1] = key .. " = " .. render(item, indent .. "  ")
      end
    end
    seen[v] = nil
    if #parts == 0 then return "{}" end
    local flat = "{ " .. concat(parts, ", ") .. " }"
    if #flat + #indent <= width and not find(flat, "\n", 1, true) then return flat end
    return "{\n" .. indent .. "  " .. concat(parts, ",\n" .. indent .. "  ") .. "\n" .. indent .. "}"
  end
  return render(value, "")
end
G.inspect = inspect
host_globals.inspect = inspect

-- Removed globals explain themselves when read.
raw_setmetatable(G, { __index = explain(nil) })
return inspect
