import CLua
import CLuaShim
import Foundation

/// A Lua module held in memory (built into the program), served by `require` by name.
public struct EmbeddedModule: Sendable, Equatable {
    /// The module's source text (Lua source, never bytecode).
    public var source: [UInt8]
    /// Where its errors and tracebacks say it is, e.g. `stdlib/time.lua`.
    public var path: String

    /// A module's source and the path its chunk is named after.
    public init(source: [UInt8], path: String) {
        self.source = source
        self.path = path
    }
}

/// What the sandbox allows a script.
public struct SandboxOptions: Sendable, Equatable {
    /// Modules `require` finds by name before it searches any folder (the stdlib built
    /// into the program).
    public var embeddedModules: [String: EmbeddedModule]
    /// Folders `require` searches, in order, for a name `embeddedModules` lacks (the
    /// script's own folder).
    public var moduleDirectories: [String]
    /// Seed of `math.random` (runs are repeatable).
    public var seed: Int64

    /// Modules served from memory first, then `moduleDirectories`; `seed` seeds `math.random`.
    public init(embeddedModules: [String: EmbeddedModule] = [:], moduleDirectories: [String] = [], seed: Int64 = 1) {
        self.embeddedModules = embeddedModules
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
        ("package", "modules load through require only, from the stdlib and the protocol's folder (no package.path, loaders or C modules)"),
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
    ] + ["debug", "gethook", "getinfo", "getlocal", "getmetatable", "getregistry", "getupvalue", "getuservalue", "sethook",
         "setlocal", "setmetatable", "setupvalue", "setuservalue", "upvalueid", "upvaluejoin", "setcstacklimit"].map {
        ("debug.\($0)", "the debug library reaches into other code's variables and the host; only debug.traceback is available")
    }
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
            guard lua_type(call.L, 1) == LUA_TSTRING else { throw call.argumentError(1, expected: "string") }
            if let write = call.state.outputBytes {
                write(LuaState.readBytes(call.L, 1))
            } else {
                call.state.output(LuaState.readString(call.L, 1))
            }
            return 0
        }
        // os.clock: the clock's elapsed time plus one microsecond per call, so that
        // loops waiting for os.clock to advance end, the same way on every run.
        var clockCalls: Int64 = 0
        field("clock") { call in
            clockCalls += 1
            call.push(call.state.clock.elapsed + Double(clockCalls) * 1e-6)
            return 1
        }
        field("date") { call in
            let format = try call.optionalString(1).map { Array($0.utf8) } ?? Array("%c".utf8)
            let t: Int64
            if call.isNil(2) {
                let now = call.state.clock.now
                t = now.isFinite && abs(now) < 9e15 ? Int64(now.rounded(.down)) : 0
            } else {
                guard lua_type(call.L, 2) == LUA_TNUMBER else {   // as luaL_checkinteger words it
                    throw LuaArgumentError(index: 2, message: "number expected, got \(call.typeName(2))")
                }
                // Fractional times (the virtual clock's) are taken down to the second,
                // where stock Lua raises; the stdlib formats such times.
                let d = try call.double(2)
                guard d.isFinite, abs(d) < 9e18 else {
                    throw LuaArgumentError(index: 2, message: "number has no integer representation")
                }
                t = lua_isinteger(call.L, 2) != 0 ? try call.integer(2) : Int64(d.rounded(.down))
            }
            var f = format[...]
            let utc = f.first == UInt8(ascii: "!")
            if utc { f = f.dropFirst() }
            let c = try ClockFunctions.civil(t, utc: utc, timeZone: call.state.clock.timeZone)
            if f.starts(with: Array("*t".utf8)) {
                call.push(ClockFunctions.dateTable(c))
            } else {
                call.push(bytes: try ClockFunctions.format(Array(f), c))
            }
            return 1
        }
        field("time") { call in
            if call.isNil(1) {
                let now = call.state.clock.now
                call.push(now.isFinite && abs(now) < 9e15 ? Int64(now.rounded(.down)) : 0)
                return 1
            }
            let (t, c) = try ClockFunctions.time(from: try call.table(1), timeZone: call.state.clock.timeZone)
            // Normalise the table's fields, as mktime does for C's struct tm.
            let L = call.L
            for (key, value) in [("year", c.year), ("month", c.month), ("day", c.day), ("hour", c.hour),
                                 ("min", c.min), ("sec", c.sec), ("yday", c.yday + 1), ("wday", c.wday + 1)] {
                lua_pushstring(L, key)
                lua_pushinteger(L, lua_Integer(value))
                lua_rawset(L, 1)
            }
            lua_pushstring(L, "isdst")
            lua_pushboolean(L, c.isdst ? 1 : 0)
            lua_rawset(L, 1)
            call.push(t)
            return 1
        }
        field("find_module") { call in
            let name = try call.string(1)
            switch Sandbox.moduleSource(name, options: call.state.sandbox ?? SandboxOptions()) {
            case .found(let source, let path):
                call.push(bytes: source)
                call.push(path)
            case .missing(let message):
                call.pushNil()
                call.push(message)
            }
            return 2
        }
        luashim_push_sandbox_primitives(L)
        luashim_push_sorted_iterators(L)
        lua_setfield(L, -3, "sorted_next")
        lua_setfield(L, -2, "sorted_pairs")
        lua_pushinteger(L, lua_Integer(options.seed))
        lua_setfield(L, -2, "seed")
        var removed: [LuaValue] = []
        for (name, why) in removedGlobals + removedFields { removed.append(.array([.string(name), .string(why)])) }
        state.push(.array(removed))
        lua_setfield(L, -2, "removed")
        state.push(.array(collectGarbageOptions.map { .string($0) }))
        lua_setfield(L, -2, "gc_options")
        let hostIndex = lua_gettop(L)
        do {
            var size = 0
            let source = luashim_sandbox_source(&size)!
            try state.load(Array(UnsafeBufferPointer(start: UnsafeRawPointer(source).assumingMemoryBound(to: UInt8.self), count: size)),
                           chunkName: "=sandbox")
        } catch {
            lua_settop(L, hostIndex - 1)
            throw error
        }
        lua_rotate(L, -2, 1)                            // bootstrap, host
        try state.pcall(arguments: 1, results: 1)
        defer { lua_settop(L, -2) }
        return state.makeReference(at: -1)
    }

    /// What `require(name)` finds: an embedded module of that name, else the first
    /// module file in `options.moduleDirectories`; or the message `require` raises.
    enum ModuleLookup { case found(source: [UInt8], path: String), missing(String) }

    static func moduleSource(_ name: String, options: SandboxOptions) -> ModuleLookup {
        if let module = options.embeddedModules[name] { return .found(source: module.source, path: module.path) }
        let dirs = options.moduleDirectories
        guard let path = findModule(name, in: dirs) else {
            var searched = dirs.map { "\($0)/" }
            if !options.embeddedModules.isEmpty { searched.insert("the built-in modules (\(options.embeddedModules.keys.sorted().joined(separator: ", ")))", at: 0) }
            return .missing("module '\(name)' not found (searched " + (searched.isEmpty ? "no folders" : searched.joined(separator: ", ")) + ")")
        }
        guard let data = FileManager.default.contents(atPath: path) else { return .missing("module '\(name)': cannot read \(path)") }
        return .found(source: Array(data), path: path)
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
}
