import Dispatch
import Foundation
@_spi(Bindings) import LuaHost
import XCTest

/// Time, instruction and memory limits stop runaway scripts; pcall cannot swallow the stop;
/// the state is usable afterwards.
final class LimitsTests: XCTestCase {
    private struct Unchecked<T>: @unchecked Sendable { let value: T }

    /// Runs `source`, expects a stop of kind `stop`, checks the state still works, returns the error.
    private func expectStop(_ state: LuaState, _ source: String, _ stop: LuaError.Stop,
                            maxSeconds: Double = 5, file: StaticString = #filePath, line: UInt = #line) -> LuaError? {
        let start = Date()
        let error = expectLuaError({ try state.execute(source, chunkName: "=chunk") }, file: file, line: line)
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertLessThan(elapsed, maxSeconds, "the stop came too late", file: file, line: line)
        XCTAssertEqual(error?.kind, .stopped, "\(error?.message ?? "")", file: file, line: line)
        XCTAssertEqual(error?.stop, stop, "\(error?.message ?? "")", file: file, line: line)
        XCTAssertEqual(try state.execute("return 1 + 1"), [2], "the state runs again after the stop", file: file, line: line)
        XCTAssertEqual(state.top, 0, file: file, line: line)
        return error
    }

    // MARK: time limit

    /// A 300 ms time limit, with an instruction budget far beyond it as a backstop: if the time
    /// limit failed to stop a loop, the budget ends it and the test fails instead of hanging.
    private let timeLimitWithBackstop = LuaLimits(timeLimitMilliseconds: 300, instructionBudget: 1_000_000_000)

    func testTimeLimitStopsInfiniteLoop() throws {
        let state = try makeState(limits: timeLimitWithBackstop)
        let start = Date()
        let error = expectStop(state, "local x = 0\nwhile true do end", .timeLimit)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.25, "stopped before the limit")
        XCTAssertEqual(error?.message, "chunk:2: stopped: time limit of 300 ms exceeded")
        XCTAssertEqual(error?.chunk, "chunk")
        XCTAssertEqual(error?.line, 2)
        // The deadline is per top-level call: a later short call is not affected by the earlier one.
        Thread.sleep(forTimeInterval: 0.35)
        XCTAssertEqual(try state.execute("local s = 0 for i = 1, 1000 do s = s + i end return s"), [500_500])
    }

    func testTimeLimitCannotBeSwallowedByPcall() throws {
        let state = try makeState(limits: timeLimitWithBackstop)
        let error = expectStop(state, "while true do pcall(function() while true do end end) end", .timeLimit)
        XCTAssertEqual(error?.message, "chunk:1: stopped: time limit of 300 ms exceeded")
        // Nor by error handlers that retry.
        _ = expectStop(state, """
            local caught = 0
            while true do
              local ok, e = xpcall(function() while true do end end, function(m) caught = caught + 1 return m end)
            end
            """, .timeLimit)
    }

    /// Pattern matching backtracks inside one C call, where no hook fires: the matcher
    /// itself looks at the stop flag. Each of these would run for hours otherwise.
    func testTimeLimitStopsPatternMatching() throws {
        let state = try makeState(limits: LuaLimits(timeLimitMilliseconds: 300))
        let subject = "string.rep('a', 60)", pattern = "string.rep('a-', 14) .. 'b'"
        for call in ["string.find(\(subject), \(pattern))", "string.match(\(subject), \(pattern))",
                     "(\(subject)):gsub(\(pattern), 'x')", "for _ in string.gmatch(\(subject), \(pattern)) do end",
                     "pcall(string.find, \(subject), \(pattern)) while true do end"] {
            let error = expectStop(state, call, .timeLimit)
            XCTAssertContains(error?.message ?? "", "stopped: time limit of 300 ms exceeded")
        }
    }

    /// Message handlers and error objects' __tostring are stopped too.
    func testTimeLimitStopsMessageHandlersAndErrorObjects() throws {
        let state = try makeState(limits: LuaLimits(timeLimitMilliseconds: 300))
        _ = expectStop(state, "xpcall(function() while true do end end, function() while true do end end)", .timeLimit)
        _ = expectStop(state, "xpcall(error, function() while true do end end)", .timeLimit)
        let looping = expectLuaError {
            try state.execute("error(setmetatable({}, { __tostring = function() while true do end end }))")
        }
        XCTAssertEqual(looping?.message, "(error object is a table value)")
        XCTAssertEqual(try state.execute("return 1 + 1"), [2])
    }

    /// A table raised without __tostring shows its contents (sorted, bounded, no address).
    func testTableErrorObjectsShowTheirContents() throws {
        let state = try makeState(limits: LuaLimits(timeLimitMilliseconds: 1000))
        let shown = expectLuaError { try state.execute("error({ 1, 2, code = 42, why = 'late', deep = { a = { b = {} } }, [true] = 0 })") }
        XCTAssertEqual(shown?.message, "(error object is a table without __tostring: {1, 2, code = 42, deep = {a = {…}}, why = \"late\", [true] = 0})")
        let many = expectLuaError { try state.execute("local t = {} for i = 1, 100 do t[i] = i end error(t)") }
        XCTAssertEqual(many?.message, "(error object is a table without __tostring: {1, 2, 3, 4, 5, 6, 7, 8, …})")
    }

    func testTimeLimitStopsCoroutines() throws {
        let state = try makeState(limits: LuaLimits(timeLimitMilliseconds: 300))
        let viaWrap = expectStop(state, "coroutine.wrap(function() while true do end end)()", .timeLimit)
        XCTAssertContains(viaWrap?.message ?? "", "stopped: time limit of 300 ms exceeded")
        XCTAssertContains(viaWrap?.message ?? "", "chunk:1:")
        let viaResume = expectStop(state, """
            local co = coroutine.create(function() while true do end end)
            local ok, e = coroutine.resume(co)
            return 'resume returned', ok, e
            """, .timeLimit)
        XCTAssertContains(viaResume?.message ?? "", "stopped: time limit of 300 ms exceeded")
        // A coroutine that catches its own errors, inside a loop that catches errors too.
        _ = expectStop(state, """
            while true do
              pcall(coroutine.wrap(function()
                while true do pcall(function() while true do end end) end
              end))
            end
            """, .timeLimit)
    }

    func testSwiftCallbackSwallowingTheStopCannotKeepTheScriptRunning() throws {
        let state = try makeState(limits: timeLimitWithBackstop)
        var seen: [LuaError.Stop?] = []
        state.register("swallow") { call in
            let f = try call.function(1)
            do {
                _ = try call.call(f, [])
            } catch let e as LuaError {
                seen.append(e.stop)
            }
            call.push("swallowed")
            return 1
        }
        let error = expectStop(state, "while true do swallow(function() while true do end end) end", .timeLimit)
        XCTAssertEqual(error?.message, "chunk:1: stopped: time limit of 300 ms exceeded")
        XCTAssertEqual(seen.first, .timeLimit, "the nested call reported the stop to Swift")
        XCTAssertLessThanOrEqual(seen.count, 2, "the script did not carry on after Swift swallowed the stop")
    }

    func testInterruptFromAnotherThread() throws {
        let state = try makeState(limits: LuaLimits(timeLimitMilliseconds: 5_000))
        let box = Unchecked(value: state)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { box.value.interrupt() }
        let error = expectStop(state, "while true do pcall(function() while true do end end) end", .interrupted, maxSeconds: 3)
        XCTAssertEqual(error?.message, "chunk:1: stopped: interrupted")
    }

    // MARK: instruction budget

    func testInstructionBudgetStopsLoops() throws {
        let limits = LuaLimits(timeLimitMilliseconds: 5_000, instructionBudget: 1_000_000)
        let state = try makeState(limits: limits)
        let error = expectStop(state, "while true do end", .instructionBudget)
        XCTAssertEqual(error?.message, "chunk:1: stopped: instruction budget of 1000000 instructions exceeded")
        let viaPcall = expectStop(state, "while true do pcall(function() while true do end end) end", .instructionBudget)
        XCTAssertEqual(viaPcall?.message, "chunk:1: stopped: instruction budget of 1000000 instructions exceeded")
        _ = expectStop(state, "coroutine.wrap(function() while true do end end)()", .instructionBudget)
        // A coroutine created in an earlier call (before this call's hook) is stopped too.
        try state.execute("spinner = coroutine.create(function() while true do end end)")
        _ = expectStop(state, "coroutine.resume(spinner)", .instructionBudget)
        // The budget is per top-level call: a moderate script fits.
        XCTAssertEqual(try state.execute("local s = 0 for i = 1, 10000 do s = s + i end return s"), [50_005_000])
    }

    func testInstructionBudgetIsDeterministic() throws {
        func stoppedCount() throws -> LuaValue {
            let state = try makeState(limits: LuaLimits(timeLimitMilliseconds: 5_000, instructionBudget: 500_000))
            _ = expectLuaError { try state.execute("n = 0 while true do n = n + 1 end") }
            return state.global("n")
        }
        let first = try stoppedCount()
        XCTAssertNotEqual(first, .integer(0))
        XCTAssertEqual(try stoppedCount(), first)
    }

    // MARK: memory limit

    func testMemoryLimitStopsGrowingTable() throws {
        let state = try makeState(limits: LuaLimits(memoryBytes: 32 << 20, timeLimitMilliseconds: 3_000))
        let error = expectStop(state, "local t = {} for i = 1, 1e9 do t[i] = i end", .memoryLimit)
        XCTAssertContains(error?.message ?? "", "stopped: memory limit of 32 MiB exceeded")
        XCTAssertLessThan(state.memoryInUse, 32 << 20, "the garbage was reclaimed")
        // pcall cannot swallow it either.
        let caught = expectStop(state, """
            while true do
              pcall(function() local t = {} for i = 1, 1e9 do t[i] = { i } end end)
            end
            """, .memoryLimit)
        XCTAssertContains(caught?.message ?? "", "memory limit of 32 MiB exceeded")
        XCTAssertLessThan(state.memoryInUse, 32 << 20)
    }

    func testMemoryLimitStopsStringBombs() throws {
        let state = try makeState(limits: LuaLimits(memoryBytes: 32 << 20, timeLimitMilliseconds: 3_000))
        // One huge string.rep: refused up front, naming the limit.
        let rep = expectLuaError { try state.execute("local s = string.rep('x', 1 << 30)", chunkName: "=chunk") }
        XCTAssertContains(rep?.message ?? "", "memory limit of 32 MiB")
        XCTAssertContains(rep?.message ?? "", "chunk:1:")
        XCTAssertEqual(try state.execute("return 1 + 1"), [2])
        // Many string.rep results, each under the limit.
        let many = expectStop(state, "local t = {} for i = 1, 1000 do t[i] = string.rep('x', 1 << 20, tostring(i)) end",
                              .memoryLimit)
        XCTAssertContains(many?.message ?? "", "memory limit of 32 MiB exceeded")
        // Doubling by concatenation.
        let doubling = expectStop(state, "local s = 'x' while true do s = s .. s end", .memoryLimit)
        XCTAssertContains(doubling?.message ?? "", "memory limit of 32 MiB exceeded")
        // A single string.rep that passes the up-front check but not the allocator.
        let big = expectStop(state, "local s = string.rep('ab', 12 << 20) return #s", .memoryLimit)
        XCTAssertContains(big?.message ?? "", "memory limit of 32 MiB exceeded")
        XCTAssertLessThan(state.memoryInUse, 32 << 20)
    }

    func testLimitsCanChange() throws {
        let state = try makeState(limits: LuaLimits(timeLimitMilliseconds: 0, instructionBudget: 100_000))
        _ = expectStop(state, "while true do end", .instructionBudget)
        state.setLimits(LuaLimits(timeLimitMilliseconds: 200))
        XCTAssertEqual(state.limits.instructionBudget, 0)
        XCTAssertEqual(try state.execute("local s = 0 for i = 1, 200000 do s = s + 1 end return s"), [200_000])
        let error = expectStop(state, "while true do end", .timeLimit)
        XCTAssertEqual(error?.message, "chunk:1: stopped: time limit of 200 ms exceeded")
    }
}
