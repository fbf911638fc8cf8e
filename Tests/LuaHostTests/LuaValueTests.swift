@_spi(Bindings) import LuaHost
import XCTest

/// Values crossing Swift → Lua → Swift keep their type and their bytes.
final class LuaValueTests: XCTestCase {
    /// Passes `values` to a chunk as `...` and returns what the chunk returns.
    private func roundTrip(_ state: LuaState, _ values: [LuaValue]) throws -> [LuaValue] {
        try state.execute("return ...", arguments: values)
    }

    func testNilAndBooleans() throws {
        let state = try makeState()
        XCTAssertEqual(try roundTrip(state, [.nil, true, false, .nil]), [.nil, true, false, .nil])
        let seen = try state.execute("""
            local a, b, c, d = ...
            return select('#', ...), type(a), type(b), b == true, c == false, d == nil
            """, arguments: [.nil, true, false, .nil])
        XCTAssertEqual(seen, [.integer(4), "nil", "boolean", true, true, true])
        XCTAssertEqual(try state.execute("return nil, true, false, 1 == 2"), [.nil, true, false, false])
    }

    func testIntegersAndFloatsStayDistinct() throws {
        let state = try makeState()
        XCTAssertNotEqual(LuaValue.integer(3), LuaValue.number(3.0))
        XCTAssertEqual(try state.execute("return 3, 3.0, 10 / 4, 7 // 2, 7.0 // 2, 2^53, 1e100"),
                       [.integer(3), .number(3.0), .number(2.5), .integer(3), .number(3.0),
                        .number(9_007_199_254_740_992), .number(1e100)])
        // Swift → Lua: the kind survives, as math.type sees it.
        XCTAssertEqual(try state.execute("local a, b, c = ... return math.type(a), math.type(b), math.type(c)",
                                         arguments: [.integer(3), .number(3.0), .number(-0.5)]),
                       ["integer", "float", "float"])
        XCTAssertEqual(try roundTrip(state, [.integer(3), .number(3.0), .number(-0.0)]),
                       [.integer(3), .number(3.0), .number(-0.0)])
        let negativeZero = try roundTrip(state, [.number(-0.0)])
        guard case .number(let z) = negativeZero.first else { return XCTFail("not a float: \(negativeZero)") }
        XCTAssertEqual(z.sign, .minus)
        // Accessors.
        XCTAssertEqual(LuaValue.number(3.0).integerValue, 3)
        XCTAssertNil(LuaValue.number(3.5).integerValue)
        XCTAssertEqual(LuaValue.integer(3).doubleValue, 3.0)
    }

    func testInt64Extremes() throws {
        let state = try makeState()
        XCTAssertEqual(try roundTrip(state, [.integer(.min), .integer(.max), .integer(0), .integer(-1)]),
                       [.integer(.min), .integer(.max), .integer(0), .integer(-1)])
        XCTAssertEqual(try state.execute("""
            local lo, hi = ...
            return lo == math.mininteger, hi == math.maxinteger, math.type(lo), math.type(hi),
                   hi + 1 == math.mininteger, tostring(hi), tostring(lo)
            """, arguments: [.integer(.min), .integer(.max)]),
                       [true, true, "integer", "integer", true, "9223372036854775807", "-9223372036854775808"])
        XCTAssertEqual(try state.execute("return math.maxinteger, math.mininteger"),
                       [.integer(Int64.max), .integer(Int64.min)])
    }

    func testStringsWithEmbeddedZerosAreByteExact() throws {
        let state = try makeState()
        let s = "a\u{0}b\u{0}\u{0}c"
        let out = try state.execute("local s = ... return #s, s:byte(2), s:byte(4), s:byte(5), s, s .. '\\0'",
                                    arguments: [.string(s)])
        XCTAssertEqual(out, [.integer(6), .integer(0), .integer(0), .integer(0), .string(s), .string(s + "\u{0}")])
        guard case .string(let back) = out[4] else { return XCTFail("not a string: \(out[4])") }
        XCTAssertEqual(Array(back.utf8), [97, 0, 98, 0, 0, 99])
        // Made in Lua.
        XCTAssertEqual(try state.execute(#"return "x\0y", #"x\0y""#), [.string("x\u{0}y"), .integer(3)])
        // A valid multi-byte UTF-8 string stays a String and keeps its byte length.
        XCTAssertEqual(try state.execute("local s = ... return #s, s", arguments: ["héllo ✓"]),
                       [.integer(Int64("héllo ✓".utf8.count)), "héllo ✓"])
    }

    func testNonUTF8BytesArriveAsBytes() throws {
        let state = try makeState()
        XCTAssertEqual(try state.execute(#"return "\255\254A""#), [.bytes([255, 254, 65])])
        let bytes: [UInt8] = [0xFF, 0x00, 0x80, 0x41, 0xC3]
        let out = try state.execute("""
            local s = ...
            return #s, s:byte(1), s:byte(2), s:byte(3), s:byte(5), s
            """, arguments: [.bytes(bytes)])
        XCTAssertEqual(out, [.integer(5), .integer(255), .integer(0), .integer(128), .integer(0xC3), .bytes(bytes)])
        // Valid UTF-8 passed as bytes comes back as a string (same bytes).
        XCTAssertEqual(try roundTrip(state, [.bytes(Array("ok".utf8))]), [.string("ok")])
        XCTAssertEqual(LuaValue.bytes([0xFF]).typeName, "string")
    }

    func testNestedTablesRoundTrip() throws {
        let state = try makeState()
        let value: LuaValue = .dictionary([
            "name": "imu0",
            "rate": .number(50.0),
            "count": .integer(3),
            "list": .array([1, 2.5, "three", true]),
            "inner": .dictionary(["deep": .dictionary(["x": .integer(-7)]), "empty": .array([])]),
        ])
        let out = try state.execute("""
            local t = ...
            assert(math.type(t.count) == 'integer' and math.type(t.rate) == 'float')
            return t, #t.list, t.list[2], t.list[3], t.inner.deep.x, type(t.inner.empty), next(t.inner.empty)
            """, arguments: [value])
        XCTAssertEqual(out.count, 7)
        XCTAssertEqual(out[0], value)
        XCTAssertEqual(Array(out[1...]), [.integer(4), .number(2.5), "three", .integer(-7), "table", .nil])
        // A table made in Lua.
        let made = try state.execute("return { name = 'x', list = {1, 2, {3}}, flags = { on = true } }")
        XCTAssertEqual(made, [.dictionary(["name": "x", "list": .array([1, 2, .array([3])]),
                                           "flags": .dictionary(["on": true])])])
        // A cycle does not hang the copy.
        let cyclic = try state.execute("local t = { a = 1 } t.self = t return t")
        guard case .table(let t) = cyclic.first else { return XCTFail("not a table") }
        XCTAssertEqual(t["a"], .integer(1))
        XCTAssertEqual(t["self"], .opaque("table (cycle)"))
    }

    func testArrayValueAndDictionaryValue() throws {
        let state = try makeState()
        let array = try XCTUnwrap(state.execute("return {10, 20, 'x', {}}").first?.tableValue)
        XCTAssertEqual(array.arrayValue, [10, 20, "x", .table(LuaTable())])
        XCTAssertEqual(array.dictionaryValue, [:])

        let dict = try XCTUnwrap(state.execute("return { a = 1, b = 'x', c = { 1 } }").first?.tableValue)
        XCTAssertNil(dict.arrayValue)
        XCTAssertEqual(dict.dictionaryValue, ["a": 1, "b": "x", "c": .array([1])])
        XCTAssertEqual(dict["b"], "x")
        XCTAssertNil(dict["zzz"])

        let mixed = try XCTUnwrap(state.execute("return { 1, 2, k = 'v' }").first?.tableValue)
        XCTAssertNil(mixed.arrayValue, "a table with a string key is not an array")
        XCTAssertEqual(mixed.dictionaryValue, ["k": "v"])

        let sparse = try XCTUnwrap(state.execute("return { 1, nil, 3 }").first?.tableValue)
        XCTAssertNil(sparse.arrayValue, "a table with a hole is not an array")

        let empty = try XCTUnwrap(state.execute("return {}").first?.tableValue)
        XCTAssertEqual(empty.arrayValue, [])
        XCTAssertEqual(empty.dictionaryValue, [:])

        // Entries arrive in the stable order scripts see: numbers, then strings bytewise, then booleans.
        let ordered = try XCTUnwrap(state.execute("return { b = 1, a = 2, [2] = 0, [1.5] = 0, [1] = 0, B = 3, [true] = 4 }").first?.tableValue)
        XCTAssertEqual(ordered.entries.map(\.key), [.integer(1), .number(1.5), .integer(2), "B", "a", "b", true])

        // Swift-built arrays and dictionaries arrive in Lua as sequences and records.
        XCTAssertEqual(try state.execute("local a, d = ... return #a, a[1], a[3], d.x, d.y",
                                         arguments: [.array(["p", "q", "r"]), .dictionary(["x": 1, "y": 2.0])]),
                       [.integer(3), "p", "r", .integer(1), .number(2.0)])
    }

    func testFunctionsComeBackAsCallableReferences() throws {
        let state = try makeState()
        let out = try state.execute("""
            local base = 10
            return function(a, b) base = base + 1 return a + b + base, 'second' end
            """)
        guard case .function(let add) = out.first else { return XCTFail("not a function: \(out)") }
        XCTAssertEqual(out.first?.typeName, "function")
        XCTAssertEqual(try state.call(add, [1, 2]), [.integer(14), "second"])
        state.collectGarbage() // the reference keeps the function (and its upvalue) alive
        XCTAssertEqual(try state.call(add, [1, 2]), [.integer(15), "second"])
        XCTAssertEqual(try state.call(add, [1, 2], results: 1), [.integer(16)])
        // A float argument makes a float result.
        XCTAssertEqual(try state.call(add, [.number(0.5), 0]), [.number(14.5), "second"])
        // The reference can be passed back into Lua.
        XCTAssertEqual(try state.execute("local f = ... return f(0, 0)", arguments: [.function(add)]),
                       [.integer(15), "second"])
        // An error inside is a LuaError with the Lua position.
        let boom = try state.execute("return function(x) error('bad x: ' .. tostring(x)) end", chunkName: "=lib")
        guard case .function(let failing) = boom.first else { return XCTFail("not a function") }
        let error = expectLuaError { try state.call(failing, [42]) }
        XCTAssertEqual(error?.message, "lib:1: bad x: 42")
        XCTAssertEqual(error?.kind, .runtime)
        XCTAssertEqual(error?.chunk, "lib")
        XCTAssertEqual(error?.line, 1)
        // Functions inside tables come back as references too.
        let table = try XCTUnwrap(state.execute("return { f = function() return 'inner' end }").first?.tableValue)
        guard case .function(let inner)? = table["f"] else { return XCTFail("not a function") }
        XCTAssertEqual(try state.call(inner), ["inner"])
    }

    func testGlobalsAndCallGlobal() throws {
        let state = try makeState()
        state.setGlobal("answer", 42)
        state.setGlobal("config", .dictionary(["name": "x"]))
        XCTAssertEqual(try state.execute("return answer, math.type(answer), config.name"), [42, "integer", "x"])
        try state.execute("function twice(x) return x * 2 end shared = 'set in Lua'")
        XCTAssertEqual(state.global("shared"), "set in Lua")
        XCTAssertEqual(try state.callGlobal("twice", [21]), [42])
        XCTAssertEqual(try state.callGlobal("twice", [.number(1.5)]), [.number(3.0)])
        XCTAssertEqual(expectLuaError { try state.callGlobal("nope") }?.message, "'nope' is not a function")
        XCTAssertEqual(state.top, 0, "the stack is balanced after calls")
    }
}
