import CLua
import CLuaShim
import Foundation

/// What the sandbox allows a script.
public struct SandboxOptions: Sendable, Equatable {
    /// Folders `require` searches, in order (the project's `stdlib/`, the script's own folder).
    public var moduleDirectories: [String]
    /// Seed of `math.random` (runs are repeatable).
    public var seed: Int64

    public init(moduleDirectories: [String] = [], seed: Int64 = 1) {
        self.moduleDirectories = moduleDirectories
        self.seed = seed
    }
}

/// The sandbox policy, as data: what is removed, what is replaced, what is read-only.
///
/// Protocol scripts are untrusted and see health data, so they get text chunks
/// only, no file or process access, `require` limited to known folders,
/// read-only library tables, and a deterministic view of the world: stable
/// `pairs` order, a seeded `math.random`, the host's clock, and no addresses
/// in `tostring`.
public enum Sandbox {
    /// Globals removed outright, with the reason a script is given if it asks.
    public static let removedGlobals: [(String, String)] = [
        ("io", "file access is not available to protocols; use the report module to write output"),
        ("dofile", "loading files is not available; use require for stdlib and protocol modules"),
        ("loadfile", "loading files is not available; use require for stdlib and protocol modules"),
    ]
    /// Fields removed from library tables.
    public static let removedFields: [(String, String)] = [
        ("os.execute", "running programs is not available to protocols"),
        ("os.exit", "protocols cannot end the process"),
        ("os.remove", "file access is not available to protocols"),
        ("os.rename", "file access is not available to protocols"),
        ("os.getenv", "the environment is not visible to protocols"),
        ("os.tmpname", "file access is not available to protocols"),
        ("os.setlocale", "the locale is fixed so that output is repeatable"),
        ("string.dump", "bytecode is not available; Sensorium runs source text only"),
    ]
    /// Library tables made read-only.
    public static let readOnlyLibraries = ["string", "table", "math", "os", "coroutine", "utf8", "debug"]
    /// `collectgarbage` options allowed.
    public static let collectGarbageOptions = ["collect", "step", "count", "isrunning"]

    /// Installs the policy; returns the pretty-printer the bootstrap defines.
    static func install(in state: LuaState, options: SandboxOptions) throws -> LuaReference {
        let L = state.L
        lua_createtable(L, 0, 16)                       // host primitives for the bootstrap
        func field(_ name: String, _ fn: @escaping LuaFunction) {
            state.pushFunction(fn)
            lua_setfield(L, -2, name)
        }
        field("write") { call in
            let text = try call.string(1)
            call.state.output(text)
            return 0
        }
        field("now") { call in
            call.push(call.state.clock.now)
            return 1
        }
        field("elapsed") { call in
            call.push(call.state.clock.elapsed)
            return 1
        }
        field("date") { call in
            let format = try call.optionalString(1) ?? "%c"
            let t = try call.optionalDouble(2) ?? call.state.clock.now
            guard t.isFinite, abs(t) < 1e13 else { throw LuaArgumentError(index: 2, message: "time out of range") }
            var f = Substring(format)
            let utc = f.hasPrefix("!")
            if utc { f = f.dropFirst() }
            if f.hasPrefix("*t") {
                call.push(ClockFunctions.dateTable(t, utc: utc, timeZone: call.state.clock.timeZone))
            } else {
                call.push(ClockFunctions.format(format, t, timeZone: call.state.clock.timeZone))
            }
            return 1
        }
        field("time") { call in
            if call.isNil(1) {
                call.push(Int64(call.state.clock.now.rounded(.down)))
            } else {
                let t = try ClockFunctions.time(from: try call.table(1), timeZone: call.state.clock.timeZone)
                call.push(Int64(t))
            }
            return 1
        }
        field("memory_available") { call in
            let limit = call.state.limits.memoryBytes
            call.push(limit > 0 ? Double(max(limit - call.state.memoryInUse, 0)) : Double.infinity)
            return 1
        }
        field("stop_for_memory") { call in
            luashim_stop_for_memory(call.L, Int(min(max(try call.double(1), 0), 9e18)))
            return 0
        }
        field("memory_limit_text") { call in
            call.push(LuaState.formatBytes(call.state.limits.memoryBytes))
            return 1
        }
        field("find_module") { call in
            let name = try call.string(1)
            guard let path = Sandbox.findModule(name, in: call.state.sandbox?.moduleDirectories ?? []) else {
                let dirs = call.state.sandbox?.moduleDirectories ?? []
                call.pushNil()
                call.push("module '\(name)' not found (searched " + (dirs.isEmpty ? "no folders" : dirs.map { "\($0)/" }.joined(separator: ", ")) + ")")
                return 2
            }
            guard let data = FileManager.default.contents(atPath: path) else {
                call.pushNil()
                call.push("module '\(name)': cannot read \(path)")
                return 2
            }
            do {
                try call.state.load(Array(data), chunkName: "@" + path)
            } catch {
                call.pushNil()
                call.push((error as? LuaError)?.message ?? "\(error)")
                return 2
            }
            call.push(path)
            return 2
        }
        luashim_push_sorted_iterators(L)
        lua_setfield(L, -3, "sorted_next")
        lua_setfield(L, -2, "sorted_pairs")
        lua_pushinteger(L, lua_Integer(options.seed))
        lua_setfield(L, -2, "seed")
        var removed: [LuaValue] = []
        for (name, why) in removedGlobals + removedFields { removed.append(.array([.string(name), .string(why)])) }
        state.push(.array(removed))
        lua_setfield(L, -2, "removed")
        state.push(.array(readOnlyLibraries.map { .string($0) }))
        lua_setfield(L, -2, "readonly")
        state.push(.array(collectGarbageOptions.map { .string($0) }))
        lua_setfield(L, -2, "gc_options")
        let hostIndex = lua_gettop(L)
        do {
            try state.load(bootstrap, chunkName: "=sandbox")
        } catch {
            lua_settop(L, hostIndex - 1)
            throw error
        }
        lua_rotate(L, -2, 1)                            // bootstrap, host
        try state.pcall(arguments: 1, results: 1)
        defer { lua_settop(L, -2) }
        return state.makeReference(at: -1)
    }

    /// The file `require(name)` loads: `a.b` → `DIR/a/b.lua`, first folder that has it.
    static func findModule(_ name: String, in directories: [String]) -> String? {
        guard !name.isEmpty, !name.contains("/"), !name.contains(".."), !name.hasPrefix(".") else { return nil }
        let relative = name.replacingOccurrences(of: ".", with: "/") + ".lua"
        for dir in directories {
            let path = dir.isEmpty ? relative : (dir.hasSuffix("/") ? dir + relative : dir + "/" + relative)
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue { return path }
        }
        return nil
    }

    /// Runs once per state with the full libraries and the host primitives as `...`.
    static let bootstrap = #"""
    local host = ...
    local G = _G
    local type, select, error, rawget, rawequal = type, select, error, rawget, rawequal
    -- The originals, called as fields so that errors name them as Lua does ('format', 'rep', ...).
    local raw = { setmetatable = setmetatable, rawset = rawset, load = load, tostring = tostring,
                  format = string.format, rep = string.rep, randomseed = math.randomseed,
                  collectgarbage = collectgarbage }
    local raw_setmetatable, raw_rawset, raw_load, raw_tostring = setmetatable, rawset, load, tostring
    local pcall = pcall
    local debug_getmetatable, traceback = debug.getmetatable, debug.traceback
    local concat, format, gsub, find, byte = table.concat, string.format, string.gsub, string.find, string.byte
    local mathtype = math.type

    -- 1. Remove what protocols must not reach; a clear message if they ask.
    local removed_why = {}
    for _, entry in ipairs(host.removed) do
      local name, why = entry[1], entry[2]
      local lib, fieldname = name:match("^(%w+)%.(%w+)$")
      if lib then G[lib][fieldname] = nil else G[name] = nil end
      removed_why[name] = why
    end
    G.debug = { traceback = traceback }
    G.package = nil

    -- Reading an unknown library field or a removed global explains itself.
    local function explain(libname)
      return function(_, key)
        local why = removed_why[libname and (libname .. "." .. raw_tostring(key)) or raw_tostring(key)]
        if why then error(format("'%s%s' is not available: %s", libname and (libname .. ".") or "", raw_tostring(key), why), 2) end
        return nil
      end
    end

    -- 2. Deterministic behaviour.
    G.pairs, G.next = host.sorted_pairs, host.sorted_next
    math.randomseed(host.seed)
    math.randomseed = function(...)
      if select("#", ...) == 0 then
        error("math.randomseed() needs a seed: runs are repeatable, so the seed comes from the run (--seed)", 2)
      end
      return raw.randomseed(...)
    end

    -- Calls an original library function for a wrapper; its errors are raised at the
    -- script's line (level 2 of the wrapper), not inside the sandbox.
    local function forward(name, ok, ...)
      if ok then return ... end
      local message = ...
      if type(message) == "string" then message = gsub(message, "to '%?'", "to '" .. name .. "'", 1) end
      error(message, 3)
    end

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

    -- tostring without addresses (objects are numbered in order of first appearance) and one NaN.
    G.tostring = function(...)
      if select("#", ...) == 0 then error("bad argument #1 to 'tostring' (value expected)", 2) end
      local v = ...
      local t = type(v)
      if t == "number" then
        if v ~= v then return "nan" end
        return raw_tostring(v)
      elseif t == "table" or t == "userdata" then
        local mt = debug_getmetatable(v)
        if mt and (rawget(mt, "__tostring") or rawget(mt, "__name")) then
          if rawget(mt, "__tostring") then return raw_tostring(v) end
          return identify(v, rawget(mt, "__name"))
        end
        return identify(v, t)
      elseif t == "function" or t == "thread" then
        return identify(v, t)
      end
      return raw_tostring(v)
    end
    local tostring = G.tostring

    G.print = function(...)
      local n = select("#", ...)
      local parts = {}
      for i = 1, n do parts[i] = tostring((select(i, ...))) end
      host.write(concat(parts, "\t") .. "\n")
    end

    string.format = function(fmt, ...)
      local s = forward("format", pcall(raw.format, fmt, ...))
      for i = 1, select("#", ...) do
        local v = select(i, ...)
        if v ~= v then s = gsub(s, "%-nan", "nan") break end
      end
      return s
    end

    string.rep = function(s, n, sep)
      if type(n) == "number" and n > 0 and type(s) == "string" then
        local size = (#s + (type(sep) == "string" and #sep or 0)) * n
        if size > host.memory_available() then
          host.stop_for_memory(size)   -- the stop is raised at the script's next instruction
        end
      end
      return forward("rep", pcall(raw.rep, s, n, sep))
    end

    -- The host clock behind os.time, os.clock and os.date.
    os.time = function(t) return host.time(t) end
    os.clock = function() return host.elapsed() end
    os.date = function(fmt, t) return host.date(fmt, t) end

    -- 3. Text chunks only.
    local function refuse_bytecode(chunk)
      return type(chunk) == "string" and byte(chunk, 1) == 27
    end
    G.load = function(chunk, name, mode, ...)
      if refuse_bytecode(chunk) then
        return nil, "precompiled bytecode is refused; Sensorium loads Lua source text only"
      end
      if mode ~= nil and mode ~= "t" then
        return nil, "load mode '" .. raw_tostring(mode) .. "' is refused; only text chunks ('t') can be loaded"
      end
      if select("#", ...) > 0 then return raw.load(chunk, name, "t", ...) end
      return raw.load(chunk, name, "t")
    end

    -- Finalizers cannot be interrupted by the limits, so scripts may not set them.
    G.setmetatable = function(t, mt)
      if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
        error("setmetatable: __gc metamethods are not allowed in protocols (finalizers cannot be stopped)", 2)
      end
      return forward("setmetatable", pcall(raw.setmetatable, t, mt))
    end

    local gc_allowed = {}
    for _, o in ipairs(host.gc_options) do gc_allowed[o] = true end
    local raw_collectgarbage = collectgarbage
    G.collectgarbage = function(opt, ...)
      opt = opt or "collect"
      if not gc_allowed[opt] then
        error("collectgarbage('" .. raw_tostring(opt) .. "') is not available in protocols", 2)
      end
      return forward("collectgarbage", pcall(raw.collectgarbage, opt, ...))
    end

    -- 4. require: only the stdlib and the script's own folder.
    local loaded = {}
    G.require = function(name)
      if type(name) ~= "string" then
        error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
      end
      local value = loaded[name]
      if value ~= nil then return value end
      local chunk, path = host.find_module(name)
      if not chunk then error(path, 2) end
      value = chunk(name, path)
      if value == nil then value = true end
      loaded[name] = value
      return value
    end

    -- 5. Library tables become read-only proxies; rawset refuses them too.
    local protected = raw_setmetatable({}, { __mode = "k" })
    local function readonly(name, real)
      local proxy = {}
      raw_setmetatable(proxy, {
        __index = function(_, key)
          local v = real[key]
          if v == nil then return explain(name)(nil, key) end
          return v
        end,
        __newindex = function(_, key)
          error(format("the '%s' library is read-only (cannot set '%s')", name, raw_tostring(key)), 2)
        end,
        __pairs = function() return host.sorted_pairs(real) end,
        __len = function() return #real end,
        __metatable = "locked",
      })
      protected[proxy] = true
      return proxy
    end
    for _, name in ipairs(host.readonly) do
      local proxy = readonly(name, G[name])
      G[name] = proxy
      loaded[name] = proxy
    end
    loaded._G = G
    local string_mt = debug_getmetatable("")
    raw_rawset(string_mt, "__metatable", "locked")
    G.rawset = function(t, k, v)
      if protected[t] then
        error(format("rawset: library tables are read-only (cannot set '%s')", raw_tostring(k)), 2)
      end
      return forward("rawset", pcall(raw.rawset, t, k, v))
    end

    -- 6. A deterministic pretty-printer: sorted keys, nesting, cycles marked.
    local function is_identifier(k)
      return type(k) == "string" and k:match("^[%a_][%w_]*$") ~= nil
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
        for k, item in host.sorted_pairs(v) do
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

    -- Removed globals explain themselves when read.
    raw_setmetatable(G, { __index = explain(nil) })
    return inspect
    """#
}
