import Foundation
@_spi(Bindings) import LuaHost
import XCTest

/// Lua inside the sandbox behaves as stock Lua 5.4 (Debian's `lua5.4`, installed by
/// the Makefile): each snippet prints the same lines in both.
final class StockLuaTests: XCTestCase {
    /// Runs `source` with stock `lua5.4` and returns what it prints.
    private func stock(_ source: String) throws -> String {
        let folder = try makeTemporaryFolder(self)
        let file = folder.appendingPathComponent("snippet.lua")
        try writeFile(file, source)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/lua5.4")
        process.arguments = [file.path]
        process.environment = ["TZ": "UTC"]           // the sandbox's default clock is in UTC
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs `source` in a sandboxed state and returns what it prints.
    private func sandboxed(_ source: String) throws -> String {
        let output = OutputCapture()
        let state = try makeState(output: output)
        try state.execute(source, chunkName: "=snippet")
        return output.text
    }

    private func assertSameAsStock(_ source: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/lua5.4") else {
            return XCTFail("stock lua5.4 is missing: run `make deps`", file: file, line: line)
        }
        let expected = try stock(source)
        XCTAssertFalse(expected.isEmpty, "the snippet printed nothing", file: file, line: line)
        XCTAssertEqual(try sandboxed(source), expected, file: file, line: line)
    }

    func testNextAndPairsAreLuas() throws {
        // Clearing fields during a traversal is allowed, and next(t) == nil sees it.
        try assertSameAsStock("""
            local t = {}
            for i = 1, 1000 do t["k" .. i] = i t[i] = i t[{}] = i end
            local n = 0
            for k in next, t do t[k] = nil n = n + 1 if next(t) == nil then print("empty after", n) end end
            """)
        // The pairs triple is stateless: the same step twice gives the same key; a second loop runs.
        try assertSameAsStock("""
            local t = { a = 1, b = 2, c = 3 }
            local f, s, c = pairs(t)
            print(f == next, s == t, c)
            local k1 = f(s, c) local k2 = f(s, c)
            print(k1 == k2)
            local n = 0 for _ in f, s, c do n = n + 1 end for _ in f, s, c do n = n + 1 end
            print(n)
            """)
        // Traversal does not keep weak keys alive.
        try assertSameAsStock("""
            local t = setmetatable({}, { __mode = "k" })
            for i = 1, 100 do t[{}] = i end
            for k in pairs(t) do end
            collectgarbage() collectgarbage()
            print(next(t))
            """)
        // __pairs may yield.
        try assertSameAsStock("""
            local p = setmetatable({}, { __pairs = function(t)
              coroutine.yield("yielded in __pairs")
              return next, { x = 1 }, nil
            end })
            local co = coroutine.wrap(function() for k, v in pairs(p) do print(k, v) end return "done" end)
            print(co()) print(co())
            """)
        // ipairs stops at the first nil and honours __index.
        try assertSameAsStock("""
            local t = setmetatable({ 1, 2 }, { __index = function(_, i) if i < 5 then return i * 10 end end })
            for i, v in ipairs(t) do print(i, v) end
            """)
    }

    func testTwoMillionKeysUnderTheDefaultMemoryCap() throws {
        let state = try makeState()
        XCTAssertEqual(try state.execute("""
            local t = {}
            for i = 1, 2000000 do t[i * 2] = true end
            local n = 0
            for _ in pairs(t) do n = n + 1 end
            return n, next({}) == nil
            """), [2_000_000, true])
    }

    func testLibraryDetails() throws {
        try assertSameAsStock("""
            print(type(getmetatable("")), rawget(math, "floor") == math.floor, rawget(string, "format") ~= nil)
            print(pcall(string.rep))
            print(pcall(string.rep, "aa", 1 << 30))
            print(string.format("%5s|%-5s|%q", "a", "b", "x\\ny"))
            print(select("#", pairs({})), select(1, ipairs({})) ~= nil)
            print(load("return 1", "x", "bt")(), load("return 1", "x", "b"))
            """)
        // Errors of library functions name the caller's line, as in stock Lua.
        try assertSameAsStock("""
            print(select(2, pcall(load("string.rep()", "=script"))))
            print(select(2, pcall(load("string.format('%d', 1.5)", "=script"))))
            print(select(2, pcall(load("local t = setmetatable({}, {__index = function() return string.rep() end}) return t.x", "=script"))))
            """)
        // setmetatable's own checks (the sandbox wraps it to refuse __gc): stock messages, the caller's line.
        try assertSameAsStock("""
            print(pcall(setmetatable))
            print(pcall(setmetatable, {}, 2))
            print(select(2, pcall(load("setmetatable(1, {})", "=script"))))
            """)
    }

    /// The sandbox's setmetatable and collectgarbage raise stock errors for what
    /// they do not refuse (Lua 5.4.4's errors.lua checks these messages).
    func testWrappedBaseFunctionsRaiseStockErrors() throws {
        try assertSameAsStock("""
            print(pcall(collectgarbage, "nooption"))
            print(pcall(collectgarbage, {}))
            print(select(2, pcall(load("collectgarbage('nooption')", "=script"))))
            print(select(2, pcall(load("return string.gsub('s', 's', setmetatable)", "=script"))))
            print(pcall(setmetatable, 1, {}))
            print(pcall(setmetatable, {}, 1))
            print(pcall(setmetatable, setmetatable({}, {__metatable = 1}), {}))
            print(collectgarbage(nil), collectgarbage("step", 0) ~= nil)
            """)
    }

    /// The stoppable matcher (CLuaShim/pattern.c) gives stock results and errors.
    func testPatternMatchingIsStock() throws {
        try assertSameAsStock(#"""
            local function show(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end print(table.concat(t, ",")) end
            local s = "hello world from Lua 5.4, (nested (parens)) [x] 123-456 %% end"
            for _, p in ipairs{ "o", "o w", "%a+", "^h", "^w", "d$", "%d+%-%d+", "(%a+) (%a+)", "()o()", "%b()",
                "%f[%a]%a+", "[%a_][%w_]*", "[^%s]+", "l-o", "l*o", "l+", "l?o", ".-%d", "(h)(e)(l)%3", "%%",
                "[%]x]", "[a-f]+", "%S+$", "", "x*", "(()a*())" } do
              show(s:find(p)) show(s:find(p, 10)) show(s:find(p, -5)) show(s:match(p))
              show(s:gsub(p, "<%0>")) show(s:gsub(p, "%%", 2))
              local n = 0 for a, b in s:gmatch(p) do n = n + 1 end print(n)
            end
            show(("abc"):gsub("%w", { a = 1, b = false })) show(pcall(string.gsub, "abc", "%w", { b = true }))
            show(("abc"):gsub("%w", function(c) if c == "b" then return false end return c:upper() end))
            show(("hello"):find("l", 1, true)) show(("a.b"):find(".", 1, true)) show(("a+b"):find("+", 1, true))
            show(("x"):find("", 10)) show(("x"):find("", 2)) show(("abc"):gmatch("", 2)())
            for _, bad in ipairs{ "%", "[a", "(", ")", "%1", "(a)%2", "%b", "%f", "%fa", "((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))" } do
              show(pcall(string.find, "a", bad))
            end
            show(pcall(string.gsub, "abc", "b", "%2")) show(pcall(string.gsub, "abc", "b", "%x"))
            show(pcall(string.gsub, "abc", "b", {b = {}})) show(pcall(string.gsub, "abc", "b"))
            show(pcall(string.rep("a", 300):rep(1) and string.find, string.rep("a", 300), string.rep("(a", 33)))
            show(pcall(string.match, string.rep("a", 100000), string.rep("a?", 300) .. string.rep("a", 300)))
            """#)
    }

    /// os.time and os.date on the host's clock: stock results, normalisation and errors, no trap.
    func testOsTimeAndDateAreStock() throws {
        try assertSameAsStock("""
            print(pcall(os.time, { year = 2000, month = 1, day = 1, hour = math.maxinteger }))
            print(pcall(os.time, { year = -(1 << 31) + 1899, month = 1, day = 1 }))
            print(pcall(os.time, { year = -(1 << 31) + 1900, month = 1, day = 1 }))
            print(pcall(os.time, { year = 2000, month = 1 }))
            print(pcall(os.time, { year = 2000, month = 1, day = 1.5 }))
            print(pcall(os.time, { year = 2000, month = "x", day = 1 }))
            print(pcall(os.time, { year = 2000, month = math.mininteger, day = 1 }))
            local t = { year = 2000, month = 14, day = 35, hour = 25, min = 61, sec = -1 }
            print(os.time(t))
            print(t.year, t.month, t.day, t.hour, t.min, t.sec, t.yday, t.wday, t.isdst)
            print(os.date("!%Y-%m-%d %H:%M:%S %j %a %A %b %B %p %y %C %G %g %V %u %w %e %D %F %T %R %h %n%t%%", 946684800))
            print(pcall(os.date, "%Ez", 0)) print(pcall(os.date, "%", 0)) print(pcall(os.date, "%Q and more", 0))
            print(os.date("!%Ec|%EY|%Od|%OH", 0))
            print(#os.date(string.rep("%Y", 1000), 0))
            print(pcall(os.date, "%Y", 1 << 62)) print(pcall(os.date, "%Y", 2^53))
            print(pcall(os.date, "%Y", 0/0)) print(pcall(os.date, "%Y", math.huge)) print(pcall(os.date, "%Y", "x"))
            local d = os.date("!*t", 86400 * 365)
            print(d.year, d.month, d.day, d.hour, d.yday, d.wday, d.isdst)
            print(os.time({ year = 1970, month = 1, day = 1, hour = 0 }), os.time({ year = 2038, month = 1, day = 19, hour = 3, min = 14, sec = 8 }))
            print(os.time({ year = 1, month = 1, day = 1, hour = 0 }), os.time({ year = -1000, month = 1, day = 1, hour = 0 }))
            print(os.date("%Y-%m-%d", os.time({ year = 2024, month = 2, day = 30 })))
            """)
        // os.clock advances one microsecond per call on the virtual clock.
        let state = try makeState()
        // A deliberate difference: fractional times (the virtual clock's) are taken down to the second.
        XCTAssertEqual(try state.execute("return os.date('!%H:%M:%S', 59.9), pcall(os.date, '%Y', 0/0)"),
                       ["00:00:59", false, "bad argument #2 to 'os.date' (number has no integer representation)"])
        XCTAssertEqual(try state.execute("local a = os.clock() local b = os.clock() return b - a > 0, os.clock() < 1"), [true, true])
        XCTAssertEqual(try state.execute("local t = os.clock() local n = 0 while os.clock() - t < 0.01 do n = n + 1 end return n >= 9999 and n <= 10000"), [true])
    }

    func testRequireInsideACoroutine() throws {
        let root = try makeTemporaryFolder(self)
        try writeFile(root.appendingPathComponent("mod.lua"), "return { answer = 42 }")
        let state = try makeState(sandbox: SandboxOptions(moduleDirectories: [root.path]))
        XCTAssertEqual(try state.execute("""
            local co = coroutine.wrap(function() return require("mod").answer end)
            return co()
            """), [42])
    }

    func testTostringOfANonStringName() throws {
        let state = try makeState()
        XCTAssertEqual(try state.execute("return tostring(setmetatable({}, { __name = 42 }))"), ["table: 1"])
        XCTAssertEqual(try state.execute("return tostring(setmetatable({}, { __name = 'Point' }))"), ["Point: 1"])
    }
}
