@_spi(Bindings) import LuaHost
import XCTest

/// Swift functions and closures called from Lua, and their errors.
final class SwiftFunctionTests: XCTestCase {
    func testSwiftFunctionCallableFromLua() throws {
        let state = try makeState()
        state.register("add") { call in
            call.push(try call.double(1) + call.double(2))
            return 1
        }
        state.register("iadd") { call in
            call.push(try call.integer(1) + call.integer(2))
            return 1
        }
        state.register("info") { call in
            call.push(Int(call.count))
            call.push(call.typeName(1))
            call.push(call.isNil(2))
            call.push(try call.optionalString(3) ?? "default")
            call.push(call.value(4))
            return 5
        }
        XCTAssertEqual(try state.execute("return add(2, 40), iadd(2, 40), math.type(iadd(1, 1))"),
                       [.number(42), .integer(42), "integer"])
        XCTAssertEqual(try state.execute("return info({}, nil, nil, { 1, k = 'v' })"),
                       [.integer(4), "table", true, "default", .table(LuaTable(entries: [(1, 1), ("k", "v")]))])
        // A module table of functions.
        state.registerModule("geo", [("double", { call in call.push(try call.double(1) * 2); return 1 })])
        XCTAssertEqual(try state.execute("return geo.double(4)"), [.number(8)])
        XCTAssertEqual(state.top, 0)
    }

    func testStackGuardPutsTheStackBackOnReturnAndOnThrow() throws {
        struct Refused: Error {}
        let state = try makeState()
        let table = state.withStackGuard {
            state.push(.dictionary(["x": 7]))
            state.push(.string("dropped"))
            return state.makeReference(at: -2)
        }
        XCTAssertEqual(state.top, 0)
        XCTAssertEqual(try state.execute("local t = ... return t.x", arguments: [.reference(table)]), [.integer(7)],
                       "a reference taken inside the guard outlives it")
        XCTAssertThrowsError(try state.withStackGuard {
            state.push(1)
            state.push(2)
            throw Refused()
        })
        XCTAssertEqual(state.top, 0)
        let failing = try XCTUnwrap(state.execute("return function() error('no') end").first)
        XCTAssertThrowsError(try state.withStackGuard {
            state.push(failing)
            try state.pcall(arguments: 0, results: 1)
        })
        XCTAssertEqual(state.top, 0)
    }

    func testReturnArgumentsReturnsTheFirstArguments() throws {
        let state = try makeState()
        state.register("first2") { call in call.returnArguments(2) }
        state.register("none") { call in call.returnArguments(-5) }
        XCTAssertEqual(try state.execute("return select('#', first2(1, 2, 3)), first2(1)"), [.integer(2), .integer(1), .nil])
        XCTAssertEqual(try state.execute("return select('#', none(1, 2))"), [.integer(0)])
        XCTAssertEqual(state.top, 0)
    }

    func testCapturingClosureMutatesCapturedState() throws {
        let state = try makeState()
        var total: Int64 = 0
        var calls = 0
        state.register("bump") { call in
            total += try call.integer(1)
            calls += 1
            call.push(total)
            return 1
        }
        XCTAssertEqual(try state.execute("return bump(5), bump(7)"), [.integer(5), .integer(12)])
        XCTAssertEqual(total, 12)
        try state.execute("for i = 1, 1000 do bump(1) end")
        XCTAssertEqual(total, 1012)
        XCTAssertEqual(calls, 1002)
        // Swift changes are seen by the next call from Lua.
        total = -100
        XCTAssertEqual(try state.execute("return bump(0)"), [.integer(-100)])
    }

    func testClosuresReturnedToLuaAndSwiftCallbacksTakingFunctions() throws {
        let state = try makeState()
        // A Swift function that returns a new Swift closure (a counter factory).
        state.register("counter") { call in
            var n = try call.integer(1)
            call.push(function: { inner in
                n += 1
                inner.push(n)
                return 1
            })
            return 1
        }
        XCTAssertEqual(try state.execute("local a, b = counter(0), counter(10) return a(), a(), b(), a()"),
                       [1, 2, 11, 3])
        // A Swift function that calls back into Lua.
        state.register("map") { call in
            let f = try call.function(1)
            let items = try call.table(2).arrayValue ?? []
            let mapped = try items.map { try call.call(f, [$0]).first ?? .nil }
            call.push(.array(mapped))
            return 1
        }
        XCTAssertEqual(try state.execute("local t = map(function(x) return x * x end, {1, 2, 3}) return t[1], t[2], t[3], #t"),
                       [1, 4, 9, 3])
    }

    func testArgumentErrorsReadLikeLua() throws {
        let state = try makeState()
        state.register("f") { call in
            _ = try call.double(1)
            return 0
        }
        state.register("g") { call in
            _ = try call.integer(1)
            _ = try call.string(2)
            _ = try call.table(3)
            _ = try call.function(4)
            return 0
        }
        XCTAssertEqual(errorMessage(state, "local x = 1\nf('x')"),
                       "chunk:2: bad argument #1 to 'f' (number expected, got string)")
        XCTAssertEqual(errorMessage(state, "f()"), "chunk:1: bad argument #1 to 'f' (number expected, got no value)")
        XCTAssertEqual(errorMessage(state, "f(nil)"), "chunk:1: bad argument #1 to 'f' (number expected, got nil)")
        XCTAssertEqual(errorMessage(state, "g(1.5)"),
                       "chunk:1: bad argument #1 to 'g' (number has no integer representation)")
        XCTAssertEqual(errorMessage(state, "g('1')"), "chunk:1: bad argument #1 to 'g' (integer expected, got string)")
        XCTAssertEqual(errorMessage(state, "g(1, 2)"), "chunk:1: bad argument #2 to 'g' (string expected, got number)")
        XCTAssertEqual(errorMessage(state, "g(1, 's', 'not a table')"),
                       "chunk:1: bad argument #3 to 'g' (table expected, got string)")
        XCTAssertEqual(errorMessage(state, "g(1, 's', {}, {})"),
                       "chunk:1: bad argument #4 to 'g' (function expected, got table)")
        // Same shape as Lua's own library functions.
        XCTAssertEqual(errorMessage(state, "\n\nmath.floor('x')"),
                       "chunk:3: bad argument #1 to 'floor' (number expected, got string)")
        // Caught by pcall in the script, with the caller's line.
        XCTAssertEqual(try state.execute("""
            local ok, e = pcall(function()
              return f({})
            end)
            return ok, e
            """), [false, "chunk:2: bad argument #1 to 'f' (number expected, got table)"])
        let error = expectLuaError { try state.execute("f('x')", chunkName: "@telemetry.lua") }
        XCTAssertEqual(error?.kind, .runtime)
        XCTAssertEqual(error?.chunk, "telemetry.lua")
        XCTAssertEqual(error?.line, 1)
        XCTAssertNotNil(error?.traceback)
        XCTAssertContains(error?.traceback ?? "", "telemetry.lua:1")
    }

    func testThrownSwiftErrorsBecomeLuaErrors() throws {
        struct DeviceError: Error, CustomStringConvertible {
            var description: String { "device offline" }
        }
        let state = try makeState()
        state.register("failing") { _ in throw LuaScriptError("sensor unavailable") }
        state.register("custom") { _ in throw DeviceError() }
        XCTAssertEqual(try state.execute("return pcall(function() failing() end)"),
                       [false, "chunk:1: sensor unavailable"])
        XCTAssertEqual(try state.execute("return pcall(function() custom() end)"), [false, "chunk:1: device offline"])
        let error = expectLuaError { try state.execute("local a = 1\n\nfailing()") }
        XCTAssertEqual(error?.message, "chunk:3: sensor unavailable")
        XCTAssertEqual(error?.kind, .runtime)
        XCTAssertEqual(error?.line, 3)
        XCTAssertNil(error?.stop)
        XCTAssertEqual(try state.execute("return 1 + 1"), [2])
    }

    // MARK: - no Lua error longjmps across a Swift frame

    func testThrowingCallbackRunsDeferAndDeinit() throws {
        let state = try makeState()
        let counter = LiveCounter()
        var defersRun = 0
        var reachedAfterThrow = false
        state.register("explode") { call in
            let guardObject = Tracked(counter, name: "explode")
            defer { defersRun += 1 }
            try withExtendedLifetime(guardObject) {
                if call.count >= 0 { throw LuaScriptError("kaboom") }
            }
            reachedAfterThrow = true
            return 0
        }
        let out = try state.execute("local ok, e = pcall(explode) return ok, e, 'script continued'")
        XCTAssertEqual(out, [false, "kaboom", "script continued"])
        XCTAssertFalse(reachedAfterThrow)
        XCTAssertEqual(defersRun, 1, "the Swift frame's defer ran")
        XCTAssertEqual(counter.made, 1)
        XCTAssertEqual(counter.live, 0, "the Swift local was released: no longjmp skipped its frame")

        // An argument error raised by LuaCall unwinds the same way.
        state.register("needsNumber") { call in
            let guardObject = Tracked(counter)
            defer { defersRun += 1 }
            return try withExtendedLifetime(guardObject) {
                call.push(try call.double(1))
                return 1
            }
        }
        let viaPcall = try state.execute("return pcall(needsNumber, 'x')")
        XCTAssertEqual(viaPcall.first, false)
        XCTAssertContains(viaPcall.last?.stringValue ?? "", "bad argument #1 to '")
        XCTAssertContains(viaPcall.last?.stringValue ?? "", "(number expected, got string)")
        XCTAssertEqual(defersRun, 2)
        XCTAssertEqual(counter.live, 0)
    }

    func testCallbackCallingLuaThatErrorsUnwindsNormally() throws {
        let state = try makeState()
        let counter = LiveCounter()
        var defersRun = 0
        var caught: LuaError?
        // Rethrows the Lua error: the script sees it, the Swift frame still unwinds.
        state.register("callBack") { call in
            let f = try call.function(1)
            let guardObject = Tracked(counter)
            defer { defersRun += 1 }
            return try withExtendedLifetime(guardObject) {
                _ = try call.call(f, [.integer(7)])
                XCTFail("the Lua function should have raised")
                return 0
            }
        }
        // Catches the Lua error and carries on.
        state.register("tryCall") { call in
            let f = try call.function(1)
            let guardObject = Tracked(counter)
            defer { defersRun += 1 }
            do {
                _ = try withExtendedLifetime(guardObject) { try call.call(f, []) }
            } catch let e as LuaError {
                caught = e
                call.push("recovered")
                return 1
            }
            call.push("no error")
            return 1
        }
        let out = try state.execute("""
            local ok, e = pcall(callBack, function(x) error('lua side failed: ' .. x) end)
            return ok, e
            """)
        XCTAssertEqual(out, [false, "chunk:1: lua side failed: 7"])
        XCTAssertEqual(defersRun, 1)
        XCTAssertEqual(counter.live, 0)

        XCTAssertEqual(try state.execute("return tryCall(function() local t = nil; return t.x end), 'after'",
                                         chunkName: "=script"), ["recovered", "after"])
        XCTAssertEqual(defersRun, 2)
        XCTAssertEqual(counter.live, 0)
        XCTAssertEqual(caught?.kind, .runtime)
        XCTAssertContains(caught?.message ?? "", "script:1: attempt to index a nil value")

        // A non-string error value passes through the Swift frame intact.
        XCTAssertEqual(try state.execute("""
            local ok, e = pcall(callBack, function() error({ code = 7, why = 'bad' }) end)
            return ok, type(e), e.code, e.why
            """), [false, "table", 7, "bad"])
        XCTAssertEqual(defersRun, 3)
        XCTAssertEqual(counter.live, 0)

        // Uncaught: the host gets the Lua error; the state stays usable.
        let error = expectLuaError {
            try state.execute("callBack(function() error('deep') end)", chunkName: "=top")
        }
        XCTAssertEqual(error?.message, "top:1: deep")
        XCTAssertEqual(defersRun, 4)
        XCTAssertEqual(counter.live, 0)
        XCTAssertEqual(try state.execute("return 1 + 1"), [2])
    }

    func testNestedSwiftLuaSwiftErrorsUnwindEveryFrame() throws {
        let state = try makeState()
        let counter = LiveCounter()
        var defersRun = 0
        state.register("swiftInner") { _ in
            let guardObject = Tracked(counter)
            defer { defersRun += 1 }
            return try withExtendedLifetime(guardObject) { throw LuaScriptError("innermost failure") }
        }
        state.register("swiftOuter") { call in
            let f = try call.function(1)
            let guardObject = Tracked(counter)
            defer { defersRun += 1 }
            return try withExtendedLifetime(guardObject) {
                _ = try call.call(f, [])
                return 0
            }
        }
        let out = try state.execute("""
            local ok, e = pcall(swiftOuter, function() swiftOuter(function() swiftInner() end) end)
            return ok, e
            """)
        XCTAssertEqual(out, [false, "chunk:1: innermost failure"])
        XCTAssertEqual(defersRun, 3)
        XCTAssertEqual(counter.made, 3)
        XCTAssertEqual(counter.live, 0)
    }

    func testNoSwiftObjectLeaksOverAThousandFailingCalls() throws {
        let state = try makeState()
        let counter = LiveCounter()
        var defersRun = 0
        let trackedClass = LuaClass<Tracked>("Tracked")
        state.register("explode") { _ in
            let guardObject = Tracked(counter)
            defer { defersRun += 1 }
            return try withExtendedLifetime(guardObject) { throw LuaScriptError("explode") }
        }
        state.register("callBack") { call in
            let f = try call.function(1)
            let guardObject = Tracked(counter)
            defer { defersRun += 1 }
            return try withExtendedLifetime(guardObject) {
                _ = try call.call(f, [])
                return 0
            }
        }
        state.register("newTracked") { call in
            call.push(Tracked(counter), as: trackedClass)
            if call.boolean(1) { throw LuaScriptError("made one, then failed") }
            return 1
        }
        try state.execute("""
            for i = 1, 1000 do
              assert(not pcall(explode))
              assert(not pcall(callBack, function() error('lua error ' .. i) end))
              assert(not pcall(newTracked, true))
              local keep = newTracked(false)
            end
            """)
        XCTAssertEqual(defersRun, 2000)
        XCTAssertEqual(counter.made, 4000)
        state.collectGarbage()
        XCTAssertEqual(counter.live, 0, "every Swift object was released after collectGarbage()")
        XCTAssertEqual(counter.destroyed, 4000)
    }

    func testSwiftCallbackPushingPastTheMemoryLimitIsAnError() throws {
        let state = try makeState(limits: LuaLimits(memoryBytes: 8 << 20))
        var defersRun = 0
        state.register("huge") { call in
            defer { defersRun += 1 }
            call.push(String(repeating: "x", count: 16 << 20))
            return 1
        }
        let error = expectLuaError { try state.execute("local s = huge() return #s") }
        XCTAssertEqual(error?.message, "not enough memory (a host function exceeded the memory limit)")
        XCTAssertEqual(defersRun, 1, "the memory error is raised after the Swift frame returned")
    }
}
