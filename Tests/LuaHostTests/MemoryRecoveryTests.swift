@_spi(Bindings) import LuaHost
import XCTest

/// After a memory problem the state recovers: garbage is collected, and what is
/// reclaimable does not count against the script.
final class MemoryRecoveryTests: XCTestCase {
    func testHostOvershootIsReclaimedAndTheNextChunkRuns() throws {
        let state = try LuaState(limits: LuaLimits(memoryBytes: 8 << 20, timeLimitMilliseconds: 5000))
        state.register("huge") { call in
            call.push(String(repeating: "x", count: 16 << 20))
            return 1
        }
        XCTAssertThrowsError(try state.execute("local s = huge()")) { error in
            XCTAssertTrue((error as? LuaError)?.message.contains("host function exceeded the memory limit") == true, "\(error)")
        }
        XCTAssertLessThan(state.memoryInUse, 8 << 20, "the oversized string must be collected")
        XCTAssertEqual(try state.execute("local t = {} for i = 1, 100 do t[i] = {} end return #t"), [.integer(100)])
        // Inside one script too: pcall catches the host overshoot and the script carries on.
        XCTAssertEqual(try state.execute("local ok = pcall(huge) local t = {} for i = 1, 100 do t[i] = {} end return ok, #t"),
                       [.boolean(false), .integer(100)])
    }

    func testGarbageBeyondTheLimitIsCollectedBeforeStopping() throws {
        // Each iteration leaves ~4 MiB of garbage: only collection keeps it under 16 MiB.
        let state = try LuaState(limits: LuaLimits(memoryBytes: 16 << 20, timeLimitMilliseconds: 10_000))
        let result = try state.execute("""
            local n = 0
            for i = 1, 20 do
              local s = string.rep("y", 4 << 20)
              n = n + #s
            end
            return n
            """)
        XCTAssertEqual(result, [.integer(20 * (4 << 20))])
    }

    func testStringRepBombIsAStopWithTheScriptLine() throws {
        let state = try LuaState(limits: LuaLimits(memoryBytes: 32 << 20, timeLimitMilliseconds: 5000))
        XCTAssertThrowsError(try state.execute("local ok = pcall(string.rep, 'x', 1 << 30)\nreturn ok", chunkName: "=bomb")) { error in
            let e = error as? LuaError
            XCTAssertEqual(e?.kind, .stopped)
            XCTAssertEqual(e?.stop, .memoryLimit)
            XCTAssertTrue(e?.message.hasPrefix("bomb:") == true, "\(String(describing: e?.message))")
            XCTAssertTrue(e?.message.contains("memory limit of 32 MiB exceeded (an allocation of 1024 MiB was refused)") == true,
                          "\(String(describing: e?.message))")
        }
        XCTAssertEqual(try state.execute("return 1 + 1"), [.integer(2)])
    }

    func testWrappedLibraryErrorsNameTheFunctionAndTheScriptLine() throws {
        let state = try LuaState()
        XCTAssertThrowsError(try state.execute("local x = 1\nlocal s = string.format('%d', 'x')", chunkName: "=fmt")) { error in
            XCTAssertEqual((error as? LuaError)?.message, "fmt:2: bad argument #2 to 'format' (number expected, got string)")
        }
        state.register("f") { call in
            _ = try call.double(1)
            return 0
        }
        XCTAssertEqual(try state.execute("return select(2, pcall(f, 'x'))", chunkName: "=g"),
                       [.string("bad argument #1 to 'f' (number expected, got string)")])
    }
}
