import Foundation
import LuaHost
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
