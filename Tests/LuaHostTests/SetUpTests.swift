@_spi(Bindings) import LuaHost
import XCTest

/// A state's set-up (libraries, sandbox bootstrap, the embedder's registrations and Lua)
/// runs in one protected call: whatever fails in it comes back as a thrown `LuaError`
/// naming set-up, never as a crash, and the failed state is closed once.
final class SetUpTests: XCTestCase {
    func testAMemoryLimitTooSmallForSetUpIsAThrownError() {
        for cap in [4 << 10, 16 << 10] {
            for sandbox in [SandboxOptions(), nil] {
                let error = expectLuaError { _ = try LuaState(limits: LuaLimits(memoryBytes: cap), sandbox: sandbox) }
                XCTAssertTrue(error?.message.hasPrefix("Lua set-up failed: ") == true, "\(cap): \(error?.message ?? "")")
                XCTAssertTrue(error?.message.contains("memory") == true, "\(cap): \(error?.message ?? "")")
            }
        }
    }

    func testTheSameLimitLeavesRoomForAScriptOnceSetUp() throws {
        // The cap holds from the start: set-up counts against it, as the script's data does.
        let state = try LuaState(limits: LuaLimits(memoryBytes: 1 << 20))
        XCTAssertEqual(try state.execute("return #string.rep('x', 1000)"), [.integer(1000)])
        XCTAssertLessThan(state.memoryInUse, 1 << 20)
    }

    func testAnErrorInTheEmbeddersLuaIsThrownWithItsMessage() {
        let error = expectLuaError {
            _ = try LuaState { state in
                state.register("ready") { call in call.push(true); return 1 }
                try state.execute("assert(ready()) error('no prelude today')", chunkName: "=prelude")
            }
        }
        XCTAssertEqual(error?.message, "Lua set-up failed: prelude:1: no prelude today")
        XCTAssertEqual(error?.kind, .runtime)
    }

    func testASwiftErrorFromSetUpIsRethrownUnchanged() {
        struct Refused: Error {}
        XCTAssertThrowsError(try LuaState { _ in throw Refused() }) { error in
            XCTAssertTrue(error is Refused, "\(error)")
        }
    }

    func testAHostOvershootDuringSetUpIsRaisedAfterTheSwiftFrame() {
        // Swift's own allocations may pass the cap (it is soft while Swift runs); the
        // set-up's host function then fails as any host function would.
        let error = expectLuaError {
            _ = try LuaState(limits: LuaLimits(memoryBytes: 2 << 20)) { state in
                state.setGlobal("big", .string(String(repeating: "x", count: 4 << 20)))
            }
        }
        XCTAssertEqual(error?.message, "Lua set-up failed: not enough memory (a host function exceeded the memory limit)")
    }

    func testAStopDuringSetUpIsAStop() {
        let error = expectLuaError {
            _ = try LuaState(limits: LuaLimits(memoryBytes: 4 << 20)) { state in
                try state.execute("local t = {} for i = 1, 1e7 do t[i] = i end")
            }
        }
        XCTAssertEqual(error?.kind, .stopped)
        XCTAssertEqual(error?.stop, .memoryLimit)
        XCTAssertTrue(error?.message.hasPrefix("Lua set-up failed: ") == true, error?.message ?? "")
    }

    func testSetUpRunsBeforeTheInstructionBudgetApplies() throws {
        // The budget is the script's: set-up's Lua (the sandbox bootstrap, an embedder's
        // prelude) does not use it up.
        let state = try LuaState(limits: LuaLimits(instructionBudget: 2_000)) { state in
            try state.execute("local n = 0 for i = 1, 100000 do n = n + 1 end")
        }
        XCTAssertEqual(state.limits.instructionBudget, 2_000)
        XCTAssertEqual(try state.execute("return 1 + 1"), [.integer(2)])
        XCTAssertEqual(expectLuaError { try state.execute("while true do end") }?.stop, .instructionBudget)
    }
}
