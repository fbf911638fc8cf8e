import Foundation
@_spi(Bindings) import LuaHost
import XCTest

/// Every way out of the sandbox is closed, with a message that says why.
final class SandboxTests: XCTestCase {
    func testIoIsGone() throws {
        let state = try makeState()
        let message = errorMessage(state, "local f = io.open('/etc/passwd')")
        XCTAssertEqual(message, "chunk:1: 'io' is not available: file access is not available to protocols; use the report module to write output")
        XCTAssertContains(errorMessage(state, "io.write('x')"), "'io' is not available")
        XCTAssertEqual(try state.execute("return rawget(_G, 'io')"), [.nil])
    }

    func testDangerousOsFunctionsAreGone() throws {
        let state = try makeState()
        let cases: [(String, String)] = [
            ("os.execute('echo pwned')", "'os.execute' is not available: running programs is not available to protocols"),
            ("os.exit(3)", "'os.exit' is not available: protocols cannot end the process"),
            ("os.remove('/tmp/x')", "'os.remove' is not available: file access is not available to protocols"),
            ("os.rename('/tmp/x', '/tmp/y')", "'os.rename' is not available: file access is not available to protocols"),
            ("os.getenv('HOME')", "'os.getenv' is not available: the environment is not visible to protocols"),
            ("os.tmpname()", "'os.tmpname' is not available: file access is not available to protocols"),
        ]
        for (source, expected) in cases {
            XCTAssertEqual(errorMessage(state, "local x = 1\n" + source), "chunk:2: " + expected, source)
        }
        // Caught inside the script, the message is just as clear.
        let caught = try state.execute("local ok, e = pcall(function() return os.execute('id') end) return ok, e")
        XCTAssertEqual(caught.first, false)
        XCTAssertContains(caught.last?.stringValue ?? "", "'os.execute' is not available")
        // What stays in os is harmless.
        XCTAssertEqual(try state.execute("return type(os.time), type(os.clock), type(os.date), type(os.difftime)"),
                       ["function", "function", "function", "function"])
        XCTAssertEqual(try state.execute("local names = {} for k in pairs(os) do names[#names + 1] = k end table.sort(names) return table.concat(names, ',')"),
                       ["clock,date,difftime,time"])
    }

    func testDebugHasOnlyTraceback() throws {
        let state = try makeState()
        XCTAssertEqual(try state.execute("local names = {} for k in pairs(debug) do names[#names + 1] = k end return table.concat(names, ',')"),
                       ["traceback"])
        XCTAssertContains(try state.execute("return debug.traceback('here')").first?.stringValue ?? "", "here\nstack traceback:")
        // Reading a removed one says why (as for io and os.execute); the field is not there.
        for name in ["getinfo", "sethook", "getlocal", "setlocal", "getupvalue", "setupvalue", "getregistry", "getmetatable", "setmetatable", "upvalueid"] {
            XCTAssertEqual(errorMessage(state, "local x = debug.\(name)"),
                           "chunk:1: 'debug.\(name)' is not available: the debug library reaches into other code's variables and the host; only debug.traceback is available", name)
            XCTAssertEqual(try state.execute("return rawget(debug, '\(name)')"), [.nil], name)
        }
        XCTAssertEqual(try state.execute("return debug.nosuch"), [.nil], "a name the debug library never had reads as nil, as in stock Lua")
        // The protocol's debug table is its own: changing it does not reach the host's traceback.
        XCTAssertEqual(try state.execute("debug.traceback = nil return type(debug.traceback)"), ["nil"])
    }

    func testFileLoadingAndPackageAreGone() throws {
        let state = try makeState()
        XCTAssertEqual(errorMessage(state, "dofile('/etc/passwd')"),
                       "chunk:1: 'dofile' is not available: loading files is not available; use require for stdlib and protocol modules")
        XCTAssertEqual(errorMessage(state, "loadfile('/etc/passwd')"),
                       "chunk:1: 'loadfile' is not available: loading files is not available; use require for stdlib and protocol modules")
        XCTAssertEqual(errorMessage(state, "string.dump(print)"),
                       "chunk:1: 'string.dump' is not available: bytecode is not available; Sensorium runs source text only")
        XCTAssertContains(errorMessage(state, "return (''):dump()"), "'string.dump' is not available")
        XCTAssertEqual(try state.execute("return rawget(_G, 'package')"), [.nil])
        XCTAssertEqual(errorMessage(state, "package.loadlib('libc.so.6', 'system')"),
                       "chunk:1: 'package' is not available: modules load through require only, from the stdlib and the protocol's folder (no package.path, loaders or C modules)")
        XCTAssertContains(errorMessage(state, "os.setlocale('')"), "'os.setlocale' is not available")
    }

    /// Real bytecode, made by a state without the sandbox.
    private func realBytecode() throws -> [UInt8] {
        let plain = try LuaState(limits: .unlimited, sandbox: nil)
        let out = try plain.execute("return string.dump(function() return 'bytecode ran' end)")
        switch out.first {
        case .bytes(let b)?: return b
        case .string(let s)?: return Array(s.utf8)
        default: throw LuaError(kind: .runtime, message: "no bytecode: \(out)")
        }
    }

    func testBytecodeIsRefused() throws {
        let state = try makeState()
        let bytecode = try realBytecode()
        XCTAssertEqual(bytecode.first, 27)
        let refused = "precompiled bytecode is refused; Sensorium loads Lua source text only"
        XCTAssertEqual(try state.execute("return load(...)", arguments: [.bytes(bytecode)]), [.nil, .string(refused)])
        XCTAssertEqual(try state.execute(#"return load("\27Lua fake")"#), [.nil, .string(refused)])
        XCTAssertEqual(try state.execute("return load(..., 'x', 'b')", arguments: [.bytes(bytecode)]), [.nil, .string(refused)])
        // Modes as stock Lua: 'b' refuses text; 'bt' loads text.
        XCTAssertEqual(try state.execute("return load('return 1', 'x', 'b')"),
                       [.nil, "attempt to load a text chunk (mode is 'b')"])
        XCTAssertEqual(try state.execute("return load('return 1', 'x', 'bt')()"), [1])
        // A reader function cannot smuggle bytecode in either.
        let viaReader = try state.execute("""
            local bc, done = ...
            local f, e = load(function() if done then return nil end done = true return bc end)
            return f, e
            """, arguments: [.bytes(bytecode)])
        XCTAssertEqual(viaReader.first, .nil)
        XCTAssertContains(viaReader.last?.stringValue ?? "", "attempt to load a binary chunk")
        // The host refuses it too.
        let hostError = expectLuaError { try state.load(bytecode, chunkName: "=evil") }
        XCTAssertEqual(hostError?.kind, .syntax)
        XCTAssertContains(hostError?.message ?? "", "precompiled bytecode is refused")
        XCTAssertEqual(state.top, 0)
        // Text still loads, with or without an environment.
        XCTAssertEqual(try state.execute("return load('return 1 + 1')(), load('return x', 'c', 't', { x = 5 })()"), [2, 5])
    }

    func testRequireIsConfinedToModuleDirectories() throws {
        let root = try makeTemporaryFolder(self)
        let allowed = root.appendingPathComponent("allowed")
        let outside = root.appendingPathComponent("outside")
        try writeFile(allowed.appendingPathComponent("counter.lua"), """
            loads = (loads or 0) + 1
            local name, path = ...
            return { name = name, path = path, loads = loads }
            """)
        try writeFile(allowed.appendingPathComponent("pkg/sub.lua"), "return 'nested module'")
        try writeFile(allowed.appendingPathComponent("noreturn.lua"), "side_effect = true")
        try writeFile(allowed.appendingPathComponent("broken.lua"), "return = 1")
        try writeFile(outside.appendingPathComponent("secret.lua"), "return 'secret'")
        try writeFile(root.appendingPathComponent("x.lua"), "return 'parent'")
        let state = try makeState(sandbox: SandboxOptions(moduleDirectories: [allowed.path]))

        // Allowed, and cached.
        let out = try state.execute("""
            local a = require('counter')
            local b = require('counter')
            return rawequal(a, b), a.loads, loads, a.name, a.path, require('pkg.sub'), require('noreturn'), side_effect
            """)
        XCTAssertEqual(out, [true, 1, 1, "counter", .string(allowed.appendingPathComponent("counter.lua").path),
                             "nested module", true, true])
        XCTAssertEqual(try state.execute("require('counter') return loads"), [1], "a second run uses the cache")

        // Not allowed.
        let searched = "(searched \(allowed.path)/)"
        for name in ["secret", "../x", "../outside/secret", "/etc/passwd", "..outside.secret", ".x", "outside.secret", "x"] {
            let message = errorMessage(state, "local m = require('\(name)')")
            XCTAssertEqual(message, "chunk:1: module '\(name)' not found \(searched)", name)
        }
        XCTAssertContains(errorMessage(state, "require('broken')"), "broken.lua:1:")
        XCTAssertEqual(errorMessage(state, "require(42)"), "chunk:1: bad argument #1 to 'require' (string expected, got number)")
        // Standard libraries are reachable by name; io and debug internals are not.
        XCTAssertEqual(try state.execute("return rawequal(require('string'), string), require('_G') == _G"), [true, true])
        XCTAssertContains(errorMessage(state, "require('io')"), "module 'io' not found")

        // With no folders, nothing is found.
        let bare = try makeState()
        XCTAssertEqual(errorMessage(bare, "require('counter')"), "chunk:1: module 'counter' not found (searched no folders)")
    }

    /// The protocol's library tables are plain tables of its own (stock speed, stock
    /// semantics); the host and modules keep the originals.
    func testLibraryTablesBelongToTheProtocol() throws {
        let root = try makeTemporaryFolder(self)
        try writeFile(root.appendingPathComponent("fmt.lua"), """
            return { show = function(x) return string.format("%d|%s", x, math.floor(2.5)) end }
            """)
        let output = OutputCapture()
        let state = try makeState(sandbox: SandboxOptions(moduleDirectories: [root.path]), output: output)
        XCTAssertEqual(try state.execute("""
            string.format = function() return "hijacked" end
            math = { floor = function() return 99 end }
            rawset(string, "x", 1)
            local mt = getmetatable("")
            print({}, 1.5)
            return string.format("%d", 1), math.floor(1.5), require("fmt").show(7), string.x, ("abc"):upper(), type(mt)
            """), ["hijacked", 99, "7|2", 1, "ABC", "table"])
        XCTAssertEqual(output.text, "table: 1\t1.5\n", "print keeps the host's tostring")
        // Methods on strings follow the protocol's string table, as in stock Lua.
        XCTAssertEqual(try state.execute("function string.twice(s) return s .. s end return ('ab'):twice()"), ["abab"])
        XCTAssertEqual(try state.execute("return rawget(math, 'floor') ~= nil, rawget(string, 'format') ~= nil"), [true, true])
    }

    func testFinalizersAndGarbageCollectorControlAreRefused() throws {
        let state = try makeState()
        XCTAssertEqual(errorMessage(state, "setmetatable({}, { __gc = function() while true do end end })"),
                       "chunk:1: setmetatable: __gc metamethods are not allowed in protocols (finalizers cannot be stopped)")
        for option in ["stop", "restart", "generational", "incremental", "setpause", "setstepmul"] {
            XCTAssertEqual(errorMessage(state, "collectgarbage('\(option)')"),
                           "chunk:1: bad argument #1 to 'collectgarbage' (option '\(option)' is not available in protocols)", option)
        }
        XCTAssertEqual(try state.execute("""
            local t = setmetatable({}, { __index = { a = 1 } })
            collectgarbage()
            collectgarbage('step')
            return t.a, math.type(collectgarbage('count')), collectgarbage('isrunning')
            """), [1, "float", true])
    }

    func testDeterministicViewOfTheWorld() throws {
        let output = OutputCapture()
        let state = try makeState(output: output)
        // pairs and next are Lua's own; the order is the same in every state (and process:
        // see SensoriumCLITests.testPairsOrderIsTheSameInEveryProcess).
        let order = """
            local t = { zeta = 1, alpha = 2, Beta = 3, [10] = 4, [2] = 5, [true] = 6, [1.5] = 7 }
            for i = 1, 20 do t[{}] = i t[function() end] = i t[coroutine.create(print)] = i end
            t[print] = 0 t[string.format] = 0
            local out = {}
            for k, v in pairs(t) do out[#out + 1] = type(k) .. v end
            local viaNext, k = {}, nil
            repeat k = next(t, k) if k ~= nil then viaNext[#viaNext + 1] = type(k) .. t[k] end until k == nil
            return table.concat(out, ' '), table.concat(viaNext, ' ')
            """
        let keys = try state.execute(order)
        XCTAssertEqual(keys.first, keys.last)
        XCTAssertEqual(try makeState().execute(order), keys)
        // Clearing fields while iterating (allowed in Lua) visits every key once.
        XCTAssertEqual(try state.execute("""
            local t = {}
            for i = 1, 100 do t['k' .. i] = i t[i] = i end
            local visited = 0
            for k in pairs(t) do t[k] = nil visited = visited + 1 end
            return visited, next(t)
            """), [200, .nil])
        // No addresses; nan without a sign.
        try state.execute("print(tostring({}), tostring({}), print, 0/0, -(0/0), string.format('%.1f', 0/0))")
        XCTAssertEqual(output.text, "table: 1\ttable: 2\tfunction: 1\tnan\tnan\tnan\n")
        // The host clock.
        // os.clock advances one microsecond per call on the virtual clock.
        XCTAssertEqual(try state.execute("return os.time(), os.clock(), os.date('!%Y-%m-%d %H:%M:%S'), os.date()"),
                       [.integer(1_767_225_600), .number(1e-6), "2026-01-01 00:00:00", "Thu Jan  1 00:00:00 2026"])
        let clock = FixedClock(now: 1_767_225_600 + 86_400 + 3_661)
        state.clock = clock
        XCTAssertEqual(try state.execute("local d = os.date('*t') return os.time(), d.year, d.month, d.day, d.hour, d.min, d.sec, os.clock()"),
                       [.integer(1_767_315_661), 2026, 1, 2, 1, 1, 1, .number(2e-6)])
        clock.now += 2.5
        XCTAssertEqual(try state.execute("return math.abs(os.clock() - 2.5) < 1e-3, os.time{ year = 2026, month = 1, day = 1, hour = 0 }"),
                       [true, .integer(1_767_225_600)])
        // math.random is seeded by the host: two states agree, another seed differs.
        let draw = "local t = {} for i = 1, 8 do t[i] = math.random(1, 1000000) end return table.concat(t, ',')"
        let first = try state.execute(draw)
        XCTAssertEqual(try makeState().execute(draw), first)
        XCTAssertNotEqual(try makeState(sandbox: SandboxOptions(seed: 2)).execute(draw), first)
        XCTAssertContains(errorMessage(state, "math.randomseed()"), "math.randomseed() needs a seed")
        XCTAssertEqual(try state.execute("math.randomseed(7) local a = math.random(100) math.randomseed(7) return a == math.random(100)"),
                       [true])
    }

    func testInspectPrettyPrinter() throws {
        let state = try makeState()
        XCTAssertEqual(try state.inspect([.dictionary(["b": 1, "a": .array([1, 2])]), "s", 3, .nil]),
                       "{ a = { 1, 2 }, b = 1 }\t\"s\"\t3\tnil")
        XCTAssertEqual(try state.execute("local t = { 1, x = 2 } t.self = t return inspect(t)"),
                       ["{ 1, self = <cycle: table: 1>, x = 2 }"])
        XCTAssertEqual(try state.execute("return inspect({ ['key with space'] = 1, [true] = 'yes', [2.5] = 0 })"),
                       [#"{ [2.5] = 0, ["key with space"] = 1, [true] = "yes" }"#])
    }
}
