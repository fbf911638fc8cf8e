import Foundation
@_spi(Bindings) import LuaHost
import XCTest

/// The study runtime's prelude (`Sources/CStudyLua/lua/runtime.lua`) on its own: read
/// from the source tree and run in a bare sandboxed state with stub host functions, as
/// `Bindings.runPrelude` runs it with the real ones. It returns one table of named
/// functions, which behave as the runtime relies on.
final class RuntimePreludeTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let path = root.appendingPathComponent("Sources/CStudyLua/lua/runtime.lua").path

    /// Runs the prelude with stub `rt` functions and stub `time` primitives (the prelude
    /// completes `time` with the stdlib's time.lua, found here in the repository's `stdlib/`);
    /// returns the state, its result and the log lines.
    func runPrelude() throws -> (LuaState, LuaTable, LogLines) {
        let state = try LuaState(sandbox: SandboxOptions(moduleDirectories: [RuntimePreludeTests.root.appendingPathComponent("stdlib").path]))
        let logged = LogLines()
        try state.execute("""
        sensorkit = {}
        time = { startOfDay = function(t) return t - t % 86400 end, day = function() return "1970-01-01" end,
                 studyStart = function() return 0 end, studyEnd = function() return 86400 * 3 end }
        """)
        let rt = state.makeModule("__runtime", [
            ("error_codes", { call in
                call.push(.dictionary(["promptDeclined": 4, "invalidEntitlement": 3]))
                return 1
            }),
            ("deletion_reasons", { call in
                call.push(.table(LuaTable(entries: [(key: .string("userInitiated"), value: .integer(0)),
                                                    (key: .integer(0), value: .string("userInitiated"))])))
                return 1
            }),
            ("log", { call in
                logged.lines.append("\(try call.string(1)): \(try call.string(2))")
                return 0
            }),
            ("undeclared_sensor", { call in
                let declared = try call.table(2).arrayValue ?? []
                call.push("undeclared \(call.value(1).stringValue ?? "?"); declared: \(declared.compactMap(\.stringValue).sorted().joined(separator: ","))")
                return 1
            }),
        ])
        let results = try state.executeFile(RuntimePreludeTests.path, arguments: [.reference(rt)])
        XCTAssertEqual(results.count, 1, "one result")
        return (state, try XCTUnwrap(results.first?.tableValue, "a table"), logged)
    }

    final class LogLines { var lines: [String] = [] }

    func testReturnsOneTableOfNamedFunctions() throws {
        let (state, prelude, _) = try runPrelude()
        let names = prelude.entries.compactMap { $0.key.stringValue }.sorted()
        XCTAssertEqual(names, ["deliver", "get_delegate", "guard_sensors", "make_error", "pin", "register_reader", "set_delegate", "set_field", "unpin"])
        for entry in prelude.entries {
            guard case .function = entry.value else { return XCTFail("\(entry.key) is \(entry.value.typeName), not a function") }
        }
        // The runtime's modules are globals; the host functions' table is not.
        XCTAssertEqual(try state.execute("return type(time), type(log), type(days), __runtime"),
                       ["table", "table", "function", .nil])
        // `time` is completed in place: the global is the module require "time" returns.
        XCTAssertEqual(try state.execute("return require 'time' == time, time.formatDuration(5400), time.studyDays(), days(2)"),
                       [.boolean(true), .string("1h 30m"), .integer(3), .integer(172800)])
    }

    func testFunctionsBehaveAsTheRuntimeUsesThem() throws {
        let (state, prelude, logged) = try runPrelude()
        let checks = #"""
        local p = ...
        -- SensorKit errors: printable, recognised, codes by name
        local e = p.make_error(3, "invalidEntitlement", "SRErrorDomain", "no entitlement",
                               p.make_error(4, "promptDeclined", "SRErrorDomain", "declined"))
        assert(tostring(e) == "SRErrorDomain 3 (invalidEntitlement): no entitlement"
                              .. " [underlying: SRErrorDomain 4 (promptDeclined): declined]", tostring(e))
        assert(sensorkit.isError(e) and not sensorkit.isError({ code = 3 }))
        assert(sensorkit.errors.promptDeclined == 4)
        -- delivery to a reader's delegate, by reader id
        local reader = {}
        p.register_reader(7, reader)
        assert(select(2, p.deliver(7, "didX")) == false, "no delegate yet")
        p.set_delegate(reader, { didX = function(r, a) return r == reader and a * 2 end })
        assert(p.get_delegate(reader).didX)
        local v, ok = p.deliver(7, "didX", 21)
        assert(v == 42 and ok == true)
        assert(select(2, p.deliver(7, "didY")) == false, "no such method")
        -- readers are held weakly unless pinned
        p.pin(7)
        reader = nil
        collectgarbage()
        assert(select(2, p.deliver(7, "didX", 1)) == true, "a pinned reader stays")
        p.unpin(7)
        collectgarbage()
        assert(select(2, p.deliver(7, "didX", 1)) == false, "an unpinned, dropped reader is collected")
        local t = {}
        p.set_field(t, "label", "x")
        assert(t.label == "x")
        -- study{}'s sensors table: a declared name reads as before, another raises at the reader's line
        local s = { b = 1, a = 2 }
        p.guard_sensors(s)
        assert(s.a == 2 and rawget(s, "c") == nil)
        local okg, errg = pcall(function() return s.c end)
        assert(not okg and errg:find(":%d+: undeclared c; declared: a,b$"), errg)
        -- time and log
        assert(time.hours(2) == 7200 and days(1) == 86400 and minutes(2) == 120 and seconds(5) == 5)
        log.info("%d readers", 3)
        log.warn("plain %d")
        local okf, err = pcall(log.error, "%d", "x")
        assert(not okf and err:find("log.error: ", 1, true), err)
        return true
        """#
        XCTAssertEqual(try state.execute(checks, arguments: [.table(prelude)]), [true])
        XCTAssertEqual(logged.lines, ["info: 3 readers", "warn: plain %d"])
    }
}
