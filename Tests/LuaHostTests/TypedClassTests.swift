import LuaHost
import XCTest

/// A counter the tests expose to Lua through typed class registration.
final class Counter: LuaObject {
    var value: Int
    var label: String
    init(_ value: Int, label: String = "c") {
        self.value = value
        self.label = label
    }
}

extension Counter: @unchecked Sendable {}

/// Typed class registration (`LuaState.register(class:name:_:)`), through the public API
/// only (no SPI import): methods and properties with Swift types, instances crossing as
/// themselves in arguments and results, Lua's argument errors, thrown errors.
final class TypedClassTests: XCTestCase {
    struct TooLarge: Error, CustomStringConvertible { var description: String { "too large" } }

    /// A state with `Counter` registered and `counter(n)`, `total(counters)`, `pick(c?)`.
    func counterState() throws -> LuaState {
        let state = try LuaState(limits: LuaLimits(), sandbox: SandboxOptions())
        try state.register(class: Counter.self, name: "Counter") { c in
            c.method("add") { (counter: Counter, n: Int) -> Int in
                if n > 1000 { throw TooLarge() }
                counter.value += n
                return counter.value
            }
            c.method("scaled") { (counter: Counter, by: Double, label: String?) -> Counter in
                Counter(Int(Double(counter.value) * by), label: label ?? counter.label)
            }
            c.method("same") { (counter: Counter, other: Counter) -> Bool in counter === other }
            c.property("value", get: { $0.value })
            c.property("label", get: { $0.label }, set: { $0.label = $1 })
            c.describe { "Counter(\($0.label)=\($0.value))" }
        }
        state.register("counter", function: { (n: Int) -> Counter in Counter(n) })
        state.register("total", function: { (cs: [Counter]) -> Int in cs.reduce(0) { $0 + $1.value } })
        state.register("pick", function: { (c: Counter?) -> Counter? in c })
        state.register("pair", function: { (a: Int, b: Int) -> [Counter] in [Counter(a), Counter(b)] })
        return state
    }

    func testMethodsAndPropertiesCrossAsSwiftTypes() throws {
        let state = try counterState()
        XCTAssertEqual(try state.execute("""
            local c = counter(2)
            local after = c:add(5)
            c.label = "steps"
            local d = c:scaled(1.5)
            return after, c.value, c.label, d.value, d.label, tostring(c), c:scaled(2, 'x').label
            """), [.integer(7), .integer(7), "steps", .integer(10), "steps", "Counter(steps=7)", "x"])
    }

    func testInstancesCrossAsThemselves() throws {
        let state = try counterState()
        // The object a function returned is the one a method and a function receive back.
        XCTAssertEqual(try state.execute("""
            local c = counter(3)
            local p = pair(4, 5)
            return c:same(c), c:same(counter(3)), rawequal(pick(c), c), pick(nil), total({ c, p[1], p[2] }), #p
            """), [true, false, true, .nil, .integer(12), .integer(2)])
        // An instance that Swift holds is the same Swift object Lua changed.
        let held = Counter(10)
        state.register("held", function: { () -> Counter in held })
        _ = try state.execute("held():add(1); held().label = 'kept'")
        XCTAssertEqual(held.value, 11)
        XCTAssertEqual(held.label, "kept")
        // The same object is the same userdata while Lua holds it: a table key finds it.
        XCTAssertEqual(try state.execute("local t = { [held()] = 'found' }; return t[held()], rawequal(held(), held())"), ["found", true])
        // Lua's hold ends with its last userdata: the object is released when collected.
        weak var dropped: Counter?
        state.register("fresh", function: { () -> Counter in
            let c = Counter(1)
            dropped = c
            return c
        })
        _ = try state.execute("local c = fresh(); c:add(1)")
        state.collectGarbage()
        state.collectGarbage()
        XCTAssertNil(dropped)
    }

    func testWrongArgumentsAndValuesRaiseLuaErrors() throws {
        let state = try counterState()
        func message(_ script: String) throws -> LuaValue { try state.execute("return select(2, pcall(function() \(script) end))").first ?? .nil }
        XCTAssertEqual(try message("counter(1):add('x')"), "chunk:1: bad argument #1 to 'add' (integer expected, got string)")
        XCTAssertEqual(try message("counter(1):same(5)"), "chunk:1: bad argument #1 to 'same' (Counter expected, got number)")
        XCTAssertEqual(try message("total({ counter(1), 2 })"), "chunk:1: bad argument #1 to 'total' (sequence of Counters expected, got table)")
        XCTAssertEqual(try message("pick(3)"), "chunk:1: bad argument #1 to 'pick' (Counter or nil expected, got number)")
        XCTAssertEqual(try message("local c = counter(1); c.add(5, 1)"), "chunk:1: bad argument #1 to 'add' (Counter expected, got number)")
        let wrongValue = try message("counter(1).label = 4")
        XCTAssertTrue(wrongValue.stringValue?.hasSuffix("field 'label' of Counter: string expected, got number") == true, "\(wrongValue)")
        let readOnly = try message("counter(1).value = 4")
        XCTAssertTrue(readOnly.stringValue?.hasSuffix("field 'value' of Counter is read-only") == true, "\(readOnly)")
        XCTAssertEqual(try message("counter(1):add(5000)"), "chunk:1: too large")
        XCTAssertEqual(try state.execute("return counter(1).missing"), [.nil])
    }

    func testRegistrationMistakesThrowAndUnregisteredTypesDoNotCross() throws {
        let state = try counterState()
        XCTAssertThrowsError(try state.register(class: Counter.self, name: "Other") { _ in }) { error in
            XCTAssertTrue("\(error)".contains("already registered"), "\(error)")
        }
        final class Gauge: LuaObject {}
        XCTAssertThrowsError(try state.register(class: Gauge.self, name: "Counter") { _ in }) { error in
            XCTAssertTrue("\(error)".contains("'Counter' is already registered"), "\(error)")
        }
        // A class never registered with this state is an error in Lua, not a crash.
        state.register("gauge", function: { () -> Gauge in Gauge() })
        let message = try state.execute("return select(2, pcall(gauge))").first?.stringValue ?? ""
        XCTAssertTrue(message.contains("Gauge is not a Lua class of this state"), message)
    }
}
