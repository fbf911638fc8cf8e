import Foundation
@_spi(Bindings) import LuaHost
import XCTest
@testable import StudyRuntime
import StudyReport

/// The stdlib built into the library, and one `time` and one `report`: the global and
/// `require` give the same table, complete, with the column checks in Swift.
final class StdlibEmbeddingTests: XCTestCase {
    /// Every `stdlib/*.lua` of the repository is built in, byte for byte, under its name.
    func testEveryStdlibFileIsBuiltInByteForByte() throws {
        let folder = ProtocolHarness.stdlibFolder
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".lua") }.sorted()
        XCTAssertFalse(files.isEmpty)
        XCTAssertEqual(Stdlib.modules.keys.sorted(), files.map { String($0.dropLast(4)) },
                       "a stdlib/*.lua file is missing from Sources/CStudyLua/stdlib.c (or one there has no file)")
        for file in files {
            let name = String(file.dropLast(4))
            let bytes = try XCTUnwrap(FileManager.default.contents(atPath: folder + "/" + file))
            XCTAssertEqual(Stdlib.modules[name]?.source, Array(bytes), "\(file) differs from the built-in copy: rebuild")
            XCTAssertEqual(Stdlib.modules[name]?.path, "stdlib/\(file)")
        }
        XCTAssertTrue(Stdlib.apiDocumentation.hasPrefix("#"), "docs/lua-api.md is built in for the REPL's :help")
    }

    /// A protocol whose module path holds only its own folder still finds the stdlib.
    func testAProtocolRequiresTheStdlibWithNoFolderForIt() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local stats = require "stats"
        local summary = require "summary"
        print(stats.median { 3, 1, 2 }, type(summary.daily))
        """#, days: 1, stdlib: false)
        XCTAssertEqual(o.lines.first, "2\tfunction")
    }

    /// An error inside a built-in module names `stdlib/NAME.lua` and its line.
    func testBuiltInModuleErrorsNameTheirFile() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(#"""
        local stats = require "stats"
        stats.pearson({ 1, 2 }, "x")
        """#)
        XCTAssertTrue(String(describing: error).contains("stdlib/stats.lua:"), String(describing: error))
    }

    /// With a stdlib folder given (SENSORIUM_STDLIB), its modules replace the built-in ones.
    func testAStdlibFolderReplacesTheBuiltInModules() throws {
        let h = try ProtocolHarness()
        let dev = h.folder.appendingPathComponent("dev-stdlib")
        try FileManager.default.createDirectory(at: dev, withIntermediateDirectories: true)
        for (name, module) in Stdlib.modules { try Data(module.source).write(to: dev.appendingPathComponent(name + ".lua")) }
        try Data("return { edited = true }\n".utf8).write(to: dev.appendingPathComponent("stats.lua"))
        let path = try h.write("protocol.lua", "print(require(\"stats\").edited, type(time.releasedDay))\n")
        var options = StudyOptions(protocolPath: path, moduleDirectories: [h.folder.path])
        options.stdlibFolder = dev.path
        options.days = 1
        options.participants = 1
        let runner = StudyRunner(options: options)
        var printed = ""
        try runner.run { printed += $0 }
        XCTAssertTrue(printed.contains("true\tfunction"), printed)
        XCTAssertEqual(Stdlib.sandbox(folder: dev.path, moduleDirectories: ["p"], seed: 1).moduleDirectories, [dev.path, "p"])
        XCTAssertTrue(Stdlib.sandbox(folder: dev.path, moduleDirectories: [], seed: 1).embeddedModules.isEmpty)
    }

    /// One `time`: the global is `require "time"`, complete before any require
    /// (time.releasedDay without require "time" was "attempt to call a nil value").
    func testTheGlobalTimeIsTheTimeModule() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local global = time
        print(type(time.releasedDay), type(time.studyDays), type(time.formatDuration))
        print(require "time" == global, time.formatDuration(5400), time.studyDays())
        print(seconds == time.seconds, days(2), time.weeks(1))
        """#, days: 3)
        XCTAssertEqual(o.lines, ["function\tfunction\tfunction", "true\t1h 30m\t3", "true\t172800\t604800"])
    }

    /// One `report`: the global is `require "report"`; report.table returns a table whose
    /// :row adds rows, and report.row checks declared columns too (in Swift).
    func testTheGlobalReportIsTheReportModule() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        print(require "report" == report)
        local daily = report.table("daily", { columns = { "day", "steps" } })
        print(daily.name, table.concat(daily.columns, ","))
        daily:row { day = "d1", steps = 3 }
        report.row("daily", { day = "d2", steps = 4 })
        local ok, err = pcall(report.row, "daily", { day = "d3", stpes = 5 })
        print(ok, err)
        ok, err = pcall(daily.row, daily, { dya = "d4" })
        print(ok, err)
        local free = report.table("free", { columns = { "a" }, open = true })
        free:row { a = 1, b = 2 }
        """#, days: 1)
        XCTAssertEqual(o.lines[0], "true")
        XCTAssertEqual(o.lines[1], "daily\tday,steps")
        XCTAssertEqual(o.lines[2], "false\treport.row: report table 'daily' has no column 'stpes' (declared: day, steps) — did you mean 'steps'?")
        XCTAssertEqual(o.lines[3], "false\trow: report table 'daily' has no column 'dya' (declared: day, steps) — did you mean 'day'?")
        let daily = try XCTUnwrap(o.runner.report.table("daily"))
        XCTAssertEqual(daily.rows.count, 2)
        XCTAssertEqual(o.runner.report.table("free")?.columns, ["participant", "a", "b"])
    }

    /// A wrong column names the protocol's line, the table, the column and the declared ones.
    func testAnUndeclaredColumnIsAnErrorAtTheProtocolLine() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(#"""
        local report = require "report"
        local t = report.table("nights", { columns = { "night", "sleep_h" } })
        t:row { night = 1, sleep_hours = 7 }
        """#)
        let text = String(describing: error)
        XCTAssertTrue(text.contains("protocol.lua:3:"), text)
        XCTAssertTrue(text.contains("report table 'nights' has no column 'sleep_hours' (declared: night, sleep_h)"), text)
    }

    /// The book itself refuses undeclared columns, and a declared-open table takes any.
    func testTheReportBookChecksDeclaredColumns() throws {
        let book = ReportBook()
        try book.declare("t", columns: ["participant", "a"], formats: [:])
        try book.add("t", row: ["participant": .text("P1"), "a": .int(1)])
        XCTAssertThrowsError(try book.add("t", row: ["weight": .int(1)])) { error in
            XCTAssertEqual((error as? ReportError)?.message, "report table 't' has no column 'weight' (declared: a)")
        }
        try book.declare("u", columns: ["a"], formats: [:], open: true)
        try book.add("u", row: ["b": .int(1)])
        try book.add("undeclared", row: ["anything": .int(1)])
        XCTAssertEqual(book.table("t")?.rows.count, 1)
    }

    /// A state with the built-in stdlib but none of the runtime (an embedder's bare state):
    /// `require "time"` says what it needs instead of failing inside time.lua; with
    /// `PlainScript` installed, time and report work over the state's clock.
    func testTimeInABareStateSaysWhatItNeeds() throws {
        let bare = try LuaState(sandbox: Stdlib.sandbox(folder: nil, moduleDirectories: [], seed: 1))
        XCTAssertThrowsError(try bare.execute("return require 'time'")) { error in
            XCTAssertTrue(String(describing: error).contains("the time module needs Sensorium's runtime"), String(describing: error))
        }
        let state = try LuaState(sandbox: Stdlib.sandbox(folder: nil, moduleDirectories: [], seed: 1))
        let plain = PlainScript()
        try plain.install(in: state)
        let result = try state.execute("""
        local t = require "time"
        local r = require "report"
        r.table("x", { columns = { "day" } }):row { day = t.day(t.parse("2026-03-02 10:00")) }
        return t == time and r == report, t.formatDuration(t.duration("90m"))
        """)
        XCTAssertEqual(result, [.boolean(true), .string("1h 30m")])
        XCTAssertEqual(plain.report.table("x")?.rows, [["day": .text("2026-03-02")]])
    }
}
