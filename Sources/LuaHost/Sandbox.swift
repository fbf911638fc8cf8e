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
        field("clock") { call in
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
            call.push(bytes: Array(data))
            call.push(path)
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
