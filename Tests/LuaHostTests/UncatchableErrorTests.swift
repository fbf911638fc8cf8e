@_spi(Bindings) import LuaHost
import XCTest

/// A Swift error a host function throws as a `LuaUncatchableError` ends the script whatever
/// the script catches, and the protected call Swift made throws it back with its identity.
final class UncatchableErrorTests: XCTestCase {
    struct Broken: LuaUncatchableError, Equatable {
        var id: Int
        var description: String { "broken data #\(id)" }
    }

    /// A sandboxed state with `fail(id)` (throws `Broken(id)`), `plain()` (throws an ordinary
    /// error) and `relay(f)` (calls the Lua function `f` from Swift and returns its result).
    func makeFailingState(_ output: OutputCapture) throws -> LuaState {
        let state = try makeState(output: output)
        state.register("fail") { call in throw Broken(id: Int(try call.integer(1))) }
        state.register("plain") { _ in throw LuaScriptError("an ordinary error") }
        state.register("relay") { call in
            let results = try call.call(try call.function(1), [], results: 1)
            call.push(results.first ?? .nil)
            return 1
        }
        return state
    }

    /// Runs `script`, which must end with `Broken(id)`; returns what it printed.
    func assertEndsWithBroken(_ script: String, id: Int, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let output = OutputCapture()
        let state = try makeFailingState(output)
        let error = try XCTUnwrap(expectLuaError({ _ = try state.execute(script) }, file: file, line: line), file: file, line: line)
        XCTAssertEqual(error.hostError as? Broken, Broken(id: id), "\(error)", file: file, line: line)
        XCTAssertEqual(error.message, "broken data #\(id)", file: file, line: line)
        XCTAssertEqual(state.top, 0, file: file, line: line)
        // The state stays usable, and ordinary errors are still caught as usual (called by
        // pcall, a C function, the message names no line, as luaL_error's would not).
        XCTAssertEqual(try state.execute("return pcall(plain)"), [false, "an ordinary error"], file: file, line: line)
        return output.text
    }

    func testPcallDoesNotCatchIt() throws {
        let printed = try assertEndsWithBroken("""
            local ok, e = pcall(fail, 1)
            print("went on", ok, e)
            """, id: 1)
        XCTAssertEqual(printed, "")
    }

    func testXpcallDoesNotCatchItNorRunItsHandler() throws {
        let printed = try assertEndsWithBroken("""
            local ok, e = xpcall(fail, function(m) print("handler", m); return "handled" end, 2)
            print("went on", ok, e)
            """, id: 2)
        XCTAssertEqual(printed, "")
    }

    func testCoroutinesPassItOn() throws {
        _ = try assertEndsWithBroken("print(coroutine.resume(coroutine.create(fail), 3))", id: 3)
        _ = try assertEndsWithBroken("print(pcall(coroutine.wrap(fail), 4))", id: 4)
        // Closing a suspended coroutine whose to-be-closed variable's __close raises it.
        let printed = try assertEndsWithBroken("""
            local co = coroutine.create(function()
              local x <close> = setmetatable({}, { __close = function() fail(7) end })
              coroutine.yield()
            end)
            coroutine.resume(co)
            print("closed", coroutine.close(co))
            """, id: 7)
        XCTAssertEqual(printed, "")
    }

    /// A pcall that yielded inside its body ends through its continuation: that path passes the error on too.
    func testAPcallResumedAfterAYieldPassesItOn() throws {
        let printed = try assertEndsWithBroken("""
            local co = coroutine.create(function()
              print("inner", pcall(function() coroutine.yield("paused"); fail(5) end))
            end)
            print(coroutine.resume(co))
            print(coroutine.resume(co))
            """, id: 5)
        XCTAssertEqual(printed, "true\tpaused\n")
    }

    /// Through a Swift frame that called Lua (a host function calling back into the script),
    /// the same Swift error travels on, still uncatchable.
    func testItCrossesAHostFunctionThatCalledLua() throws {
        let printed = try assertEndsWithBroken("""
            print(pcall(relay, function() return fail(6) end))
            """, id: 6)
        XCTAssertEqual(printed, "")
    }

    func testAnOrdinaryErrorIsStillCaughtAndHandled() throws {
        let output = OutputCapture()
        let state = try makeFailingState(output)
        _ = try state.execute("""
            print(pcall(plain))
            print(xpcall(function() plain() end, function(m) return "handled: " .. m end))
            print(coroutine.resume(coroutine.create(plain)))
            """)
        XCTAssertEqual(output.text, """
            false\tan ordinary error
            false\thandled: chunk:2: an ordinary error
            false\tan ordinary error

            """)
    }
}
