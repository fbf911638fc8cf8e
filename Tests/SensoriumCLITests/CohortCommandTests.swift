import Foundation
import XCTest

/// Cohort runs: `--jobs`, `--shard` + `merge`, findings from failed `expect` checks.
extension SensoriumCLITests {
    /// A protocol whose participants differ in work (P1 is by far the slowest, so with
    /// several jobs it finishes last), in printed output, and in the columns of an
    /// undeclared table (only P5 reports `late`), with a failed expect check for P2 and P6.
    static let cohortProtocol = """
        study { id = "cohort", title = "Cohort", entitlements = {}, sensors = {} }
        local report = require "report"
        local expect = require "expect"
        local steps = report.table("steps", { columns = { "day", "n" }, formats = { n = "%.1f" } })
        local id = sensorkit.participant()
        local spin = id == "P1" and 3000000 or 10
        schedule.daily("09:00", function(now)
          local x = 0
          for i = 1, spin do x = x + i % 7 end
          print(id, time.day(now), x % 5)
          steps:row { day = time.day(now), n = #id + x % 3 + 1 / 3 }
          local free = { day = time.day(now) }
          if id == "P5" then free.late = true end
          report.row("free", free)
          if id == "P2" or id == "P6" then expect.atLeast(x, 100, "spins on " .. time.day(now)) end
        end)
        """

    /// Every file `sensorium run --out` wrote, by name (without shard.json).
    func tables(_ dir: String) throws -> [String: Data] {
        let url = folder.appendingPathComponent(dir)
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name != "shard.json" {
            out[name] = try Data(contentsOf: url.appendingPathComponent(name))
        }
        return out
    }

    func testJobsGiveOneJobsOutputInParticipantOrder() throws {
        try write("cohort.lua", SensoriumCLITests.cohortProtocol)
        let common = ["run", "cohort.lua", "--days", "2", "--participants", "6", "--time-limit", "0"]
        let one = try sensorium(common + ["--jobs", "1", "--out", "one"], timeout: 120)
        let three = try sensorium(common + ["--jobs", "3", "--out", "three"], timeout: 120)
        XCTAssertEqual(one.status, 1, one.stderr)    // P2's and P6's findings
        XCTAssertEqual(three.status, 1, three.stderr)
        XCTAssertEqual(one.stdout, three.stdout)
        XCTAssertEqual(one.stderr, three.stderr)
        XCTAssertEqual(try tables("one"), try tables("three"))
        // Printed lines and rows follow participant order, although P1 finished last.
        let printedIDs = three.stdout.split(separator: "\n").prefix(12).map { String($0.prefix(2)) }
        XCTAssertEqual(printedIDs, ["P1", "P1", "P2", "P2", "P3", "P3", "P4", "P4", "P5", "P5", "P6", "P6"])
        let csv = String(decoding: try tables("three")["steps.csv"]!, as: UTF8.self)
        XCTAssertEqual(csv.split(separator: "\n").dropFirst().map { String($0.prefix(2)) },
                       ["P1", "P1", "P2", "P2", "P3", "P3", "P4", "P4", "P5", "P5", "P6", "P6"])
        // The column only P5 reported is a column of the whole table.
        let free = String(decoding: try tables("three")["free.csv"]!, as: UTF8.self)
        XCTAssertTrue(free.hasPrefix("participant,day,late\n"), free)
        // No progress bar when stderr is not a terminal: stderr holds only the findings.
        XCTAssertFalse(three.stderr.contains("\r"), three.stderr)
        XCTAssertFalse(three.stderr.contains("participants  "), three.stderr)
    }

    func testFailedExpectationsAreFindingsAndTheRunGoesOn() throws {
        try write("cohort.lua", SensoriumCLITests.cohortProtocol)
        let result = try sensorium(["run", "cohort.lua", "--days", "2", "--participants", "6", "--jobs", "2", "--out", "t"], timeout: 120)
        XCTAssertEqual(result.status, 1)
        // Every participant ran every day although P2 failed a check on day 1.
        XCTAssertTrue(result.stdout.contains("== steps (12 rows) =="), result.stdout)
        let findings = String(decoding: try tables("t")["findings.csv"]!, as: UTF8.self)
        XCTAssertEqual(findings, """
            participant,time,location,message
            P2,2026-03-02 09:00,cohort.lua:15,"expected spins on 2026-03-02 at least 100, got 27"
            P2,2026-03-03 09:00,cohort.lua:15,"expected spins on 2026-03-03 at least 100, got 27"
            P6,2026-03-02 09:00,cohort.lua:15,"expected spins on 2026-03-02 at least 100, got 27"
            P6,2026-03-03 09:00,cohort.lua:15,"expected spins on 2026-03-03 at least 100, got 27"

            """)
        assertContains(result.stderr, "finding: [P2 2026-03-02 09:00] cohort.lua:15: expected spins on 2026-03-02 at least 100, got 27")
        assertContains(result.stderr, "4 findings (failed expect checks) in 2 participants")
        XCTAssertTrue(result.stdout.hasSuffix("""
            == findings (4 rows) ==
            participant  time              location       message
            -----------  ----------------  -------------  -------------------------------------------------
            P2           2026-03-02 09:00  cohort.lua:15  expected spins on 2026-03-02 at least 100, got 27
            P2           2026-03-03 09:00  cohort.lua:15  expected spins on 2026-03-03 at least 100, got 27
            P6           2026-03-02 09:00  cohort.lua:15  expected spins on 2026-03-02 at least 100, got 27
            P6           2026-03-03 09:00  cohort.lua:15  expected spins on 2026-03-03 at least 100, got 27


            """), result.stdout)

        // --fail-fast: the first failed check ends the run with the old error.
        let fast = try sensorium(["run", "cohort.lua", "--days", "2", "--participants", "6", "--jobs", "2", "--fail-fast"], timeout: 120)
        XCTAssertEqual(fast.status, 1)
        assertContains(fast.stderr, "[P2 2026-03-02 09:00] cohort.lua:15: expected spins on 2026-03-02 at least 100, got 27")
        XCTAssertFalse(fast.stdout.contains("P3"), fast.stdout)
        XCTAssertFalse(fast.stdout.contains("== steps"), fast.stdout)
    }

    func testTestCommandFailsOnFindings() throws {
        try write("study/protocol.lua", SensoriumCLITests.cohortProtocol)
        try write("study/scenario.lua", "return { days = 1, participants = 2 }")
        try write("study/expected/stdout.txt", "")
        let result = try sensorium(["test", "study", "--jobs", "2"], timeout: 120)
        XCTAssertEqual(result.status, 1)
        assertContains(result.stdout, "FAIL study: 1 failed expect check (findings)")
        assertContains(result.stdout, "finding: [P2 2026-03-02 09:00] study/protocol.lua:15")
    }

    func testShardsMergeIntoExactlyOneProcesssOutput() throws {
        try write("cohort.lua", SensoriumCLITests.cohortProtocol)
        let common = ["run", "cohort.lua", "--days", "2", "--participants", "7", "--seed", "5"]
        let whole = try sensorium(common + ["--out", "whole", "--jobs", "1"], timeout: 120)
        XCTAssertEqual(whole.status, 1, whole.stderr)
        for i in 1...3 {
            let shard = try sensorium(common + ["--shard", "\(i)/3", "--out", "s\(i)", "--jobs", "2"], timeout: 120)
            XCTAssertTrue(shard.status == 0 || shard.status == 1, shard.stderr)
        }
        // Any order on the command line; the result is the one process's, byte for byte.
        let merged = try sensorium(["merge", "s3", "s1", "s2", "--into", "merged"])
        XCTAssertEqual(merged.status, 1, merged.stderr)   // the findings, as the run
        XCTAssertEqual(merged.stdout, whole.stdout)
        XCTAssertEqual(try tables("merged"), try tables("whole"))
        XCTAssertEqual(Set(try tables("merged").keys), ["steps.csv", "steps.json", "free.csv", "free.json", "findings.csv", "findings.json", "index.html"])

        let missing = try sensorium(["merge", "s1", "s3", "--into", "m2"])
        XCTAssertEqual(missing.status, 1)
        assertContains(missing.stderr, "missing shard 2/3")
        let twice = try sensorium(["merge", "s1", "s2", "s2", "s3", "--into", "m3"])
        XCTAssertEqual(twice.status, 1)
        assertContains(twice.stderr, "shard 2/3 given twice: s2 and s2")
        let other = try sensorium(["run", "cohort.lua", "--days", "2", "--participants", "7", "--seed", "6", "--shard", "2/3", "--out", "s2b"],
                                  timeout: 120)
        XCTAssertTrue(other.status == 0 || other.status == 1, other.stderr)
        let mixed = try sensorium(["merge", "s1", "s2b", "s3", "--into", "m4"])
        XCTAssertEqual(mixed.status, 1)
        assertContains(mixed.stderr, "s2b and s1 are shards of different runs (they differ in: seed)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("m4").path))

        let bad = try sensorium(["run", "cohort.lua", "--shard", "4/3", "--out", "x"])
        XCTAssertNotEqual(bad.status, 0)
        assertContains(bad.stderr, "--shard: expected i/n with 1 ≤ i ≤ n")
    }

    func testImportAndExportDrawNoProgressWithoutATerminal() throws {
        let export = try sensorium(["export", "--days", "1", "--participants", "1", "--sensors", "pedometerData", "--into", "exp"], timeout: 120)
        XCTAssertEqual(export.status, 0, export.stderr)
        // Only the size estimate export states before it starts: no bar, no carriage return.
        XCTAssertFalse(export.stderr.contains("\r"), export.stderr)
        XCTAssertEqual(export.stderr.split(separator: "\n").count, 1, export.stderr)
        XCTAssertTrue(export.stderr.hasPrefix("export: up to about "), export.stderr)
        let imported = try sensorium(["import", "--format", "native", "exp", "--into", "s.sqlite"], timeout: 120)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(imported.stderr, "")
    }
}

/// One participant's error stops that participant only: the others run, the output and
/// `--out` are written, the error is a finding with its time and traceback, and the run
/// exits 1 naming who stopped; `--fail-fast` keeps the first error fatal.
extension SensoriumCLITests {
    func testOneParticipantsErrorIsAFindingAndTheCohortGoesOn() throws {
        try write("c/protocol.lua", """
            study { id = "c", usage = "u", entitlements = { "pedometer" }, sensors = { pedometerData = { detail = "d" } } }
            local time = require "time"
            local function check(n) if sensorkit.participant() == "p2" and n == 2 then error("p2 broke on day " .. n) end end
            schedule.daily("09:00", function(now)
              check(time.studyDay(now))
              report.row("days", { day = time.day(now) })
            end)
            """)
        try write("c/scenario.lua", "return { days = 3, participants = { { id = 'p1' }, { id = 'p2' }, { id = 'p3' } } }")
        let r = try sensorium(["run", "c", "--out", "out", "--jobs", "2"], timeout: 120)
        XCTAssertEqual(r.status, 1, r.stderr)
        // p1 and p3 ran to the end (3 days each); p2 stopped on its second day.
        let table = try String(contentsOf: folder.appendingPathComponent("out/days.csv"), encoding: .utf8)
        XCTAssertEqual(table.split(separator: "\n").filter { $0.hasPrefix("p1,") }.count, 3, table)
        XCTAssertEqual(table.split(separator: "\n").filter { $0.hasPrefix("p2,") }.count, 1, table)
        XCTAssertEqual(table.split(separator: "\n").filter { $0.hasPrefix("p3,") }.count, 3, table)
        let findings = try String(contentsOf: folder.appendingPathComponent("out/findings.csv"), encoding: .utf8)
        assertContains(findings, "p2,")
        assertContains(findings, "run stopped: ")
        assertContains(findings, "p2 broke on day 2")
        assertContains(findings, "traceback: ")
        assertContains(r.stderr, "0 findings (failed expect checks) and 1 run stopped by an error (p2) in 1 participant")
        assertContains(r.stderr, "stack traceback:")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out/index.html").path))
        let fast = try sensorium(["run", "c", "--fail-fast", "--jobs", "1"], timeout: 120)
        XCTAssertEqual(fast.status, 1)
        assertContains(fast.stderr, "p2 broke on day 2")
        XCTAssertFalse(fast.stdout.contains("p3"), fast.stdout)
    }
}

extension SensoriumCLITests {
    /// `bench cohort --curve --processes`: every power of two of jobs up to N, identical
    /// output at each, then the cohort as N shard processes (whose findings exit 1: not a
    /// failure) and the ratio of one process to them.
    func testBenchCohortPrintsTheCurveAndTheShardProcesses() throws {
        try write("cohort.lua", SensoriumCLITests.cohortProtocol)
        let bench = try sensorium(["bench", "cohort", "cohort.lua", "--participants", "6", "--days", "1", "--jobs", "3",
                                   "--curve", "--processes"], timeout: 300)
        XCTAssertEqual(bench.status, 0, bench.stdout + bench.stderr)
        let steps = bench.stdout.split(separator: "\n").filter { $0.hasPrefix("  --jobs ") }.map { $0.split(separator: ":")[0] }
        XCTAssertEqual(steps, ["  --jobs 1", "  --jobs 2", "  --jobs 3"], bench.stdout)
        XCTAssertTrue(bench.stdout.contains("output identical: yes"), bench.stdout)
        XCTAssertTrue(bench.stdout.contains("3 processes × --jobs 1 (--shard i/3"), bench.stdout)
        XCTAssertTrue(bench.stdout.contains("one process --jobs 3 / 3 processes: "), bench.stdout)
    }
}
