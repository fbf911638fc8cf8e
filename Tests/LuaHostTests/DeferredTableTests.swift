@_spi(Bindings) import LuaHost
import XCTest

/// Deferred tables (`LuaDeferred`): results a host function hands over before computing
/// them. Whatever the script does with one — index, length, iteration, the raw functions,
/// passing it to a host function, returning it — it sees the filled table, and an error
/// computing it is raised where the script could catch it, naming the line that asked.
final class DeferredTableTests: XCTestCase {
    /// A result that counts how often it was computed, and may fail.
    final class Answer: LuaDeferred {
        let values: [LuaValue]
        let failure: String?
        let position: String?
        var computed = 0
        init(_ values: [LuaValue], failure: String? = nil, position: String?) {
            self.values = values
            self.failure = failure
            self.position = position
        }
        func resolve() throws -> LuaValue {
            computed += 1
            if let failure { throw LuaScriptError(failure) }
            return .array(values)
        }
    }

    /// A state with `ask(n)`: a deferred table {1..n} (`ask(-1)` fails when computed), and
    /// `seen(t)`: a settling host function that returns the length it reads raw.
    func makeDeferringState() throws -> (LuaState, () -> [Answer]) {
        let state = try makeState()
        var answers: [Answer] = []
        state.register("ask", settles: false) { call in
            let n = try call.integer(1)
            let answer = Answer(n < 0 ? [] : (1...max(1, n)).prefix(Int(max(n, 0))).map { .integer($0) },
                                failure: n < 0 ? "no answer" : nil, position: call.scriptPosition())
            answers.append(answer)
            call.state.pushDeferred(answer)
            return 1
        }
        state.register("seen") { call in
            call.push(Int(call.value(1).tableValue?.entries.count ?? -1))
            return 1
        }
        return (state, { answers })
    }

    func testEveryWayOfLookingAtTheTableSeesItFilled() throws {
        let (state, answers) = try makeDeferringState()
        let probes: [(String, LuaValue)] = [
            ("local t = ask(3) return t[2]", .integer(2)),
            ("local t = ask(3) return #t", .integer(3)),
            ("local t, n = ask(3), 0 for _, v in ipairs(t) do n = n + v end return n", .integer(6)),
            ("local t, n = ask(3), 0 for _, v in pairs(t) do n = n + v end return n", .integer(6)),
            ("local t = ask(3) return next(t) ~= nil", .boolean(true)),
            ("local t = ask(3) return rawget(t, 3)", .integer(3)),
            ("local t = ask(3) return rawlen(t)", .integer(3)),
            ("local t = ask(3) rawset(t, 4, 4) return #t", .integer(4)),
            ("local t = ask(3) t[4] = 4 return #t", .integer(4)),
            ("local t = ask(3) return getmetatable(t) == nil", .boolean(true)),
            ("local t = ask(3) setmetatable(t, { __index = function() return 'x' end }) return t[9], t[1]", .string("x")),
            ("local t = ask(3) table.insert(t, 9) return t[4]", .integer(9)),
            ("local t = ask(3) table.sort(t, function(a, b) return a > b end) return t[1]", .integer(3)),
            ("local t = ask(3) return table.concat(t, ',')", .string("1,2,3")),
            ("local t = ask(3) return (select(3, table.unpack(t)))", .integer(3)),
            ("local t = ask(3) return seen(t)", .integer(3)),
            ("local t = ask(3) return inspect(t)", .string("{ 1, 2, 3 }")),
        ]
        for (script, expected) in probes {
            XCTAssertEqual(try state.execute(script).first, expected, script)
        }
        XCTAssertEqual(answers().map(\.computed), [Int](repeating: 1, count: probes.count), "each computed once")
        XCTAssertEqual(state.top, 0)
    }

    func testSeveralAskedTogetherAreComputedWhenTheFirstIsUsedInOrder() throws {
        let (state, answers) = try makeDeferringState()
        state.register("computed") { call in
            call.push(.array(answers().map { .integer(Int64($0.computed)) }))
            return 1
        }
        // Asking is free; the first use settles every pending table; a settling host
        // function (`computed`) sees them computed.
        XCTAssertEqual(try state.execute("""
            local a, b = ask(1), ask(2)
            local before = #a
            return before, #b, inspect(computed())
            """), [.integer(1), .integer(2), "{ 1, 1 }"])
    }

    func testAResultNeverUsedIsComputedBeforeTheCallReturns() throws {
        let (state, answers) = try makeDeferringState()
        XCTAssertEqual(try state.execute("local unused = ask(2) return 'done'"), ["done"])
        XCTAssertEqual(answers().map(\.computed), [1], "settled when the protected call ended")
        // A returned table arrives filled.
        XCTAssertEqual(try state.execute("return ask(2)"), [.array([1, 2])])
    }

    func testAnErrorIsRaisedInsideThePcallThatAskedNamingTheLineThatAsked() throws {
        let (state, _) = try makeDeferringState()
        let results = try state.execute("""
            local ok, err = pcall(function()
              return ask(-1)
            end)
            return ok, err
            """, chunkName: "=probe")
        XCTAssertEqual(results.first, .boolean(false))
        XCTAssertEqual(results.dropFirst().first?.stringValue, "probe:2: no answer")
        // xpcall's handler sees it; a pcall whose function yielded on the way settles too.
        XCTAssertEqual(try state.execute("""
            return xpcall(function() return ask(-1) end, function(e) return "handled: " .. e end)
            """, chunkName: "=probe"), [false, "handled: probe:1: no answer"])
        XCTAssertEqual(try state.execute("""
            local co = coroutine.wrap(function()
              return pcall(function() local t = ask(-1); coroutine.yield(1); return t end)
            end)
            co()
            return co()
            """, chunkName: "=probe"), [false, "probe:2: no answer"])
        // Asked inside a pcall whose function then fails: the result's error came first, so
        // it is the pcall's.
        XCTAssertEqual(try state.execute("""
            return pcall(function() local t = ask(-1); error("boom") end)
            """, chunkName: "=probe"), [false, "probe:1: no answer"])
        // Asked before a pcall: computed before it, its error is not the pcall's to catch.
        XCTAssertThrowsError(try state.execute("""
            local t = ask(-1)
            return pcall(function() return 1 end)
            """, chunkName: "=probe")) { error in
            XCTAssertEqual((error as? LuaError)?.message, "probe:1: no answer")
        }
        // Used outside any pcall: the error ends the call, with the asking line.
        XCTAssertThrowsError(try state.execute("""
            local t = ask(-1)
            return #t
            """, chunkName: "=probe")) { error in
            XCTAssertEqual((error as? LuaError)?.message, "probe:1: no answer")
        }
        // Never used: the call that asked fails when it returns.
        XCTAssertThrowsError(try state.execute("local t = ask(-1)", chunkName: "=probe")) { error in
            XCTAssertEqual((error as? LuaError)?.message, "probe:1: no answer")
        }
        // A failed table kept past the call that asked is never shown empty: looking at it
        // raises its error again, whatever the way.
        XCTAssertEqual(try state.execute("return (pcall(function() kept = ask(-1) end))", chunkName: "=keep"), [false])
        for look in ["return #kept", "return kept[1]", "return next(kept)", "return rawlen(kept)", "for _ in pairs(kept) do end"] {
            XCTAssertThrowsError(try state.execute(look), look) { error in
                XCTAssertEqual((error as? LuaError)?.message, "keep:1: no answer", look)
            }
        }
        // Given to a host function, it is not an empty table either.
        XCTAssertThrowsError(try state.execute("return seen(kept)")) { error in
            XCTAssertEqual((error as? LuaError)?.message, "keep:1: no answer")
        }
        XCTAssertEqual(state.top, 0)
        XCTAssertEqual(try state.execute("return #ask(2)"), [.integer(2)], "the state works on")
    }

    /// A failed table lives only as long as the script holds it: its error goes with it, and
    /// host functions and the raw functions cost nothing more once it is collected.
    func testFailedTablesGoWithTheScriptsLastReference() throws {
        let (state, _) = try makeDeferringState()
        XCTAssertEqual(try state.execute("""
            kept = {}
            for i = 1, 500 do kept[i] = select(2, pcall(function() local t = ask(-1) return t, #t end)) end
            local failed = 0
            for i = 1, 500 do failed = failed + (pcall(rawlen, kept[i]) and 0 or 1) end
            return failed
            """, chunkName: "=loop"), [.integer(0)], "pcall returned the error, not the table")
        XCTAssertEqual(try state.execute("""
            kept = {}
            for i = 1, 500 do pcall(function() kept[i] = ask(-1) end) end
            local failed = 0
            for i = 1, 500 do failed = failed + (pcall(rawlen, kept[i]) and 0 or 1) end
            return failed
            """, chunkName: "=loop"), [.integer(500)], "each kept table raises its error")
        XCTAssertEqual(state.failedDeferredTables, 500)
        XCTAssertEqual(try state.execute("return seen({1, 2})"), [.integer(2)], "other tables are plain")
        _ = try state.execute("kept = nil collectgarbage() collectgarbage()")
        XCTAssertEqual(state.failedDeferredTables, 0, "collected with the script's last reference")
        XCTAssertEqual(try state.execute("local t = {} return next(t), rawlen(t)"), [.nil, .integer(0)])
    }
}
