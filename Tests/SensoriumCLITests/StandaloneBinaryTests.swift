import Foundation
import XCTest

/// The program alone: the stdlib and the API reference are built into `sensorium`, so a
/// copy of the binary, in a folder far from any checkout, with no SENSORIUM_STDLIB and
/// nothing installed beside it, runs every protocol; and `time` and `report` are one
/// module each in a protocol, a plain script and the REPL.
extension SensoriumCLITests {
    /// Copies the built program to FOLDER/bin/sensorium (nothing else) and returns its path.
    func standaloneCopy() throws -> String {
        let bin = folder.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent("sensorium")
        try FileManager.default.copyItem(at: XCTUnwrap(SensoriumCLITests.executable), to: copy)
        return copy.path
    }

    /// The environment of a program run outside the project: no stdlib, no docs override.
    var bareEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SENSORIUM_STDLIB"] = nil
        environment["SENSORIUM_DOCS"] = nil
        return environment
    }

    /// The copied binary passes `sensorium test protocols/` (every golden, byte for byte)
    /// with the protocols (and the export fixtures their replays read) copied beside it.
    func testTheBinaryAloneRunsEveryProtocolFromAnyFolder() throws {
        let exe = try standaloneCopy()
        let fm = FileManager.default
        let root = SensoriumCLITests.repositoryRoot
        try fm.copyItem(at: root.appendingPathComponent("protocols"), to: folder.appendingPathComponent("protocols"))
        try fm.createDirectory(at: folder.appendingPathComponent("Tests/Fixtures"), withIntermediateDirectories: true)
        try fm.copyItem(at: root.appendingPathComponent("Tests/Fixtures/exports"), to: folder.appendingPathComponent("Tests/Fixtures/exports"))
        XCTAssertFalse(fm.fileExists(atPath: folder.appendingPathComponent("stdlib").path))
        let outcome = try ChildProcess.run(exe, ["test", "protocols/"], in: folder, environment: bareEnvironment, mergeErrors: true, timeout: 900)
        let text = String(decoding: outcome.stdout, as: UTF8.self)
        XCTAssertEqual(outcome.status, 0, text)
        let protocols = try fm.contentsOfDirectory(atPath: root.appendingPathComponent("protocols").path).filter { !$0.hasPrefix(".") }
        for name in protocols { assertContains(text, "ok   protocols/\(name)") }
        XCTAssertFalse(text.contains("warn"), text)

        // A protocol's :help works without the docs folder (the reference is built in).
        let repl = try ChildProcess.run(exe, ["repl"], in: folder, environment: bareEnvironment,
                                        input: Data(":help time.releasedDay\n".utf8), mergeErrors: true)
        let help = String(decoding: repl.stdout, as: UTF8.self)
        XCTAssertEqual(repl.status, 0, help)
        assertContains(help, "releasedDay")
        XCTAssertFalse(help.contains("documentation not found"), help)
    }

    /// A plain script (no study{}): `require "time"` is the global `time`, complete, over the
    /// script's clock (it was "bad argument #1 to 'for iterator' (table expected, got nil)");
    /// `require "report"` is the global `report`, whose tables print after the script.
    func testAPlainScriptHasTheSameTimeAndReport() throws {
        try write("plain.lua", #"""
        local t = require "time"
        print(t == time, t.formatDuration(5400), t.day(0), t.duration("1h30m"), days(1))
        print(type(time.releasedDay), pcall(time.studyStart))
        local report = require "report"
        print(report == _G.report)
        local tbl = report.table("sizes", { columns = { "name", "n" } })
        tbl:row { name = "a", n = 1 }
        print(pcall(tbl.row, tbl, { name = "b", size = 2 }))
        """#)
        let r = try sensorium(["run", "plain.lua"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "true\t1h 30m\t1970-01-01\t5400.0\t86400")
        XCTAssertTrue(lines.count > 3, r.stdout)
        XCTAssertTrue(lines[1].hasPrefix("function\tfalse\ttime.studyStart: this file declares no study{}"), lines[1])
        XCTAssertEqual(lines[2], "true")
        XCTAssertEqual(lines[3], "false\trow: report table 'sizes' has no column 'size' (declared: name, n)")
        assertContains(r.stdout, "sizes")
        XCTAssertTrue(r.stdout.range(of: #"\ba\s+1\b"#, options: .regularExpression) != nil, r.stdout)
    }

    /// The REPL's `time` and `report` are the modules `require` returns.
    func testTheReplHasTheSameTimeAndReport() throws {
        let r = try sensorium(["repl"], input: "=require('time') == time, type(time.releasedDay), require('report') == report\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        assertContains(r.stdout, "true")
        assertContains(r.stdout, "function")
        XCTAssertFalse(r.stdout.contains("false"), r.stdout)
    }
}
