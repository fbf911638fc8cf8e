@_spi(Bindings) import LuaHost
import XCTest

/// Swift objects exposed to Lua as userdata through `LuaClass`.
final class LuaClassTests: XCTestCase {
    final class Sensor {
        let id: String
        var rate: Double
        let tracker: Tracked

        init(_ id: String, rate: Double, counter: LiveCounter) {
            self.id = id
            self.rate = rate
            tracker = Tracked(counter, name: id)
        }
    }

    final class Log {
        var releases: [String] = []
        var created: [String: Sensor] = [:]
    }

    /// Everything a test needs: a state, the class, the counters, the Swift objects it created.
    /// (The closures capture `log` and `live`, not the fixture: the state may outlive it.)
    final class Fixture {
        let state: LuaState
        let sensorClass = LuaClass<Sensor>("Sensor")
        let live = LiveCounter()
        let log = Log()
        var releases: [String] { log.releases }
        var created: [String: Sensor] { log.created }

        init(keepSwiftReferences: Bool = false) throws {
            state = try makeState()
            let cls = sensorClass
            let log = log, live = live
            cls.describe = { "Sensor(\($0.id))" }
            cls.equals = { $0.id == $1.id }
            cls.onRelease = { log.releases.append($0.id) }
            cls.method("read") { sensor, call in
                call.push(sensor.rate * 2)
                return 1
            }
            cls.method("scale") { sensor, call in
                sensor.rate *= try call.double(2)
                return 0
            }
            cls.property("id", get: { sensor, call in call.push(sensor.id) })
            cls.property("rate", get: { sensor, call in call.push(sensor.rate) },
                         set: { sensor, call, index in sensor.rate = try call.double(index) })
            state.register(cls)
            state.register("newSensor") { call in
                let sensor = Sensor(try call.string(1), rate: try call.optionalDouble(2) ?? 1, counter: live)
                if keepSwiftReferences { log.created[sensor.id] = sensor }
                call.push(sensor, as: cls)
                return 1
            }
            state.register("sensorId") { call in
                call.push(try call.requireObject(1, cls).id)
                return 1
            }
        }
    }

    func testMethodsAndProperties() throws {
        let f = try Fixture(keepSwiftReferences: true)
        XCTAssertEqual(try f.state.execute("""
            local s = newSensor('imu0', 0.5)
            return s.id, s.rate, s:read(), type(s), sensorId(s), s.unknown
            """), ["imu0", 0.5, 1.0, "userdata", "imu0", .nil])
        XCTAssertEqual(try f.state.execute("""
            local s = newSensor('acc', 1.5)
            s.rate = 4
            local after_set = s.rate
            s:scale(0.5)
            return after_set, math.type(after_set), s.rate, s:read()
            """), [4.0, "float", 2.0, 4.0])
        XCTAssertEqual(f.created["acc"]?.rate, 2.0, "the setter and the method changed the Swift object")
        // Methods are shared by all instances and are functions.
        XCTAssertEqual(try f.state.execute("local a, b = newSensor('a'), newSensor('b') return rawequal(a.read, b.read), type(a.read)"),
                       [true, "function"])
    }

    func testPropertyAndArgumentErrors() throws {
        let f = try Fixture()
        try f.state.execute("s = newSensor('imu0', 1)")
        XCTAssertEqual(errorMessage(f.state, "\ns.id = 'other'"), "chunk:2: field 'id' of Sensor is read-only")
        XCTAssertEqual(errorMessage(f.state, "s.color = 'red'"), "chunk:1: Sensor has no field 'color' to set")
        XCTAssertContains(errorMessage(f.state, "s.rate = 'fast'"), "number expected, got string")
        XCTAssertEqual(errorMessage(f.state, "s:scale('x')"), "chunk:1: bad argument #1 to 'scale' (number expected, got string)")
        XCTAssertEqual(errorMessage(f.state, "s.read(42)"), "chunk:1: bad argument #1 to 'read' (Sensor expected, got number)")
        XCTAssertEqual(errorMessage(f.state, "sensorId({})"), "chunk:1: bad argument #1 to 'sensorId' (Sensor expected, got table)")
        XCTAssertEqual(try f.state.execute("return s.id, s.rate"), ["imu0", 1.0], "failed writes changed nothing")
    }

    func testToStringHasNoAddress() throws {
        let output = OutputCapture()
        let state = try makeState(output: output)
        let plain = LuaClass<Tracked>("Plain")
        let named = LuaClass<Tracked>("Named")
        named.describe = { "Named<\($0.name)>" }
        let counter = LiveCounter()
        state.register("make") { call in
            let object = Tracked(counter, name: try call.string(1))
            if call.boolean(2) { call.push(object, as: named) } else { call.push(object, as: plain) }
            return 1
        }
        let out = try state.execute("""
            local p, n = make('x', false), make('y', true)
            print(p, n)
            return tostring(p), tostring(n), string.format('%s', n)
            """)
        XCTAssertEqual(out, ["Plain", "Named<y>", "Named<y>"])
        XCTAssertEqual(output.text, "Plain\tNamed<y>\n")
        for value in out { XCTAssertFalse(value.stringValue!.contains("0x"), "\(value) shows an address") }
        XCTAssertFalse(output.text.contains("0x"))
        XCTAssertEqual(try state.execute("return make('z', false)"), [.opaque("userdata")])
    }

    func testEqualityUsesEquals() throws {
        let f = try Fixture()
        XCTAssertEqual(try f.state.execute("""
            local a1, a2, b = newSensor('a'), newSensor('a'), newSensor('b')
            return a1 == a2, a1 == b, a1 == a1, a1 ~= b, rawequal(a1, a2), a1 == 'a', a1 == {}
            """), [true, false, true, true, false, false, false])
    }

    func testCloseReleasesOnceAndLaterCallsSayClosed() throws {
        let f = try Fixture()
        let out = try f.state.execute("""
            local s = newSensor('imu1', 1)
            do
              local c <close> = s
              assert(c:read() == 2)
            end
            local ok1, e1 = pcall(function() return s:read() end)
            local ok2, e2 = pcall(function() return s.rate end)
            local ok3, e3 = pcall(function() s.rate = 3 end)
            local ok4, e4 = pcall(function() return sensorId(s) end)
            kept = s
            return ok1, e1, ok2, e2, ok3, e3, ok4, e4, tostring(s)
            """)
        XCTAssertEqual(out, [false, "chunk:6: Sensor is closed",
                             false, "chunk:7: Sensor is closed",
                             false, "chunk:8: Sensor is closed",
                             false, "chunk:9: bad argument #1 to 'sensorId' (Sensor is closed)",
                             "Sensor (closed)"])
        XCTAssertEqual(f.releases, ["imu1"], "onRelease ran once, at the end of the <close> block")
        XCTAssertEqual(f.live.live, 0, "the Swift object was released by __close")
        try f.state.execute("kept = nil")
        f.state.collectGarbage()
        XCTAssertEqual(f.releases, ["imu1"], "__gc after __close does not release again")
        // <close> also runs when the block is left by an error.
        XCTAssertEqual(try f.state.execute("""
            local ok = pcall(function()
              local c <close> = newSensor('imu2')
              error('leaving')
            end)
            return ok
            """), [false])
        XCTAssertEqual(f.releases, ["imu1", "imu2"])
        XCTAssertEqual(f.live.live, 0)
    }

    func testMetatableIsLocked() throws {
        let f = try Fixture()
        XCTAssertEqual(try f.state.execute("local s = newSensor('a') return getmetatable(s)"), ["locked"])
        XCTAssertContains(errorMessage(f.state, "setmetatable(newSensor('a'), {})"), "table expected, got Sensor")
        XCTAssertEqual(try f.state.execute("return rawget(debug, 'getmetatable'), rawget(debug, 'setmetatable')"), [.nil, .nil])
    }

    func testGarbageCollectionReleasesInstances() throws {
        let f = try Fixture()
        try f.state.execute("for i = 1, 1000 do local s = newSensor('s' .. i) assert(s:read() == 2) end")
        try f.state.execute("keep = newSensor('kept')")
        XCTAssertEqual(f.live.made, 1001)
        f.state.collectGarbage()
        XCTAssertEqual(f.live.live, 1, "only the sensor held by a global is alive")
        XCTAssertEqual(f.releases.count, 1000)
        XCTAssertFalse(f.releases.contains("kept"))
        try f.state.execute("keep = nil")
        f.state.collectGarbage()
        XCTAssertEqual(f.live.live, 0)
        XCTAssertEqual(Set(f.releases).count, 1001, "each instance released exactly once")
        XCTAssertEqual(f.releases.count, 1001)
    }

    func testClosingTheStateReleasesInstances() throws {
        let live = LiveCounter()
        var released = 0
        do {
            let state = try makeState()
            let cls = LuaClass<Tracked>("Tracked")
            cls.onRelease = { _ in released += 1 }
            state.register(cls)
            state.register("make") { call in
                call.push(Tracked(live), as: cls)
                return 1
            }
            try state.execute("held = { make(), make(), make() }")
            XCTAssertEqual(live.live, 3)
        }
        XCTAssertEqual(live.live, 0, "closing the state ran __gc for every instance")
        XCTAssertEqual(released, 3)
    }

    func testInstancesPushedFromSwift() throws {
        let f = try Fixture()
        let sensor = Sensor("host", rate: 3, counter: f.live)
        f.state.withStackGuard {
            f.state.push(sensor, as: f.sensorClass)
            XCTAssertEqual(f.state.top, 1)
            XCTAssertEqual(f.state.value(at: -1), .opaque("userdata"))
        }
        XCTAssertEqual(f.state.top, 0, "the guard dropped what was pushed")
        let fn = try XCTUnwrap(f.state.execute("return function(s) return s.id, s:read() end").first)
        guard case .function(let read) = fn else { return XCTFail("not a function") }
        // Passing the object through a global set from Swift.
        let cls = f.sensorClass
        f.state.register("hostSensor") { call in
            call.push(sensor, as: cls)
            return 1
        }
        XCTAssertEqual(try f.state.execute("local a, b = hostSensor(), hostSensor() return a == b, rawequal(a, b)"),
                       [true, false], "two userdata for one Swift object compare equal")
        XCTAssertEqual(try f.state.execute("local f = ... return f(hostSensor())", arguments: [.function(read)]),
                       ["host", 6.0])
        f.state.collectGarbage()
        XCTAssertEqual(f.live.live, 1, "Swift still holds the object")
        XCTAssertEqual(f.releases.count, 4, "each of the four userdata released its retain once")
    }
}
