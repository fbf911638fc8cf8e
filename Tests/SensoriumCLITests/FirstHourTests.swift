import Foundation
import XCTest

/// What a researcher meets in the first hour (issue 22): mistakes caught where they are
/// made, usage only for usage errors, no empty store left by an import, a piped REPL that
/// fails when its input failed, and a build without compiler warnings.
extension SensoriumCLITests {
    static let misspeltStudy = """
    study {
      id = "t", title = "T", usage = "Measures light.",
      privacy_policy = "https://example.org/p",
      entitlements = { "ambient-light-sensor" },
      sensors = {
        ambientLightSenor = { detail = "Records light." },
      },
    }
    local light = sensors.ambientLightSensor
    schedule.daily("09:00", function() print(light:samples { from = time.studyStart(), to = time.now() }:count()) end)
    """

    func testRunAndTestRefuseAMisspeltSensorWithChecksMessage() throws {
        try write("typo/protocol.lua", SensoriumCLITests.misspeltStudy)
        let message = "typo/protocol.lua:6: error[unknown-sensor] sensors.ambientLightSenor: unknown sensor 'ambientLightSenor' — did you mean 'ambientLightSensor'?"
        let check = try sensorium(["check", "typo"])
        XCTAssertEqual(check.status, 1)
        assertContains(check.stdout, message)
        let run = try sensorium(["run", "typo", "--days", "3", "--participants", "1"])
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(run.stdout, "")                              // refused before day 1
        assertContains(run.stderr, "[P1 2026-03-02 00:00] " + message)
        XCTAssertFalse(run.stderr.contains("attempt to index a nil value"), run.stderr)
        let test = try sensorium(["test", "typo"])
        XCTAssertEqual(test.status, 1, test.stdout + test.stderr)
        assertContains(test.stdout + test.stderr, message)
    }

    func testAnUndeclaredSensorIsAnErrorThatNamesTheDeclaredOnes() throws {
        try write("undeclared/protocol.lua", SensoriumCLITests.misspeltStudy
            .replacingOccurrences(of: "ambientLightSenor = {", with: "ambientLightSensor = {")
            .replacingOccurrences(of: "local light = sensors.ambientLightSensor", with: "local light = sensors.ambientLightSenor"))
        let run = try sensorium(["run", "undeclared", "--days", "3", "--participants", "1"])
        XCTAssertEqual(run.status, 1, run.stderr)
        assertContains(run.stderr, "undeclared/protocol.lua:9: sensors.ambientLightSenor: no such sensor; study{} declares ambientLightSensor — did you mean 'ambientLightSensor'?")
    }

    func testAFolderWithoutStudySaysWhichStudyFieldsToWrite() throws {
        try write("nostudy/protocol.lua", """
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(err) if err then log.warn("auth: %s", tostring(err)) end end)
        """)
        let example = #"study{ id = "my-study", usage = "Why the study needs these data.", entitlements = { "ambient-light-sensor" }, sensors = { ambientLightSensor = { detail = "What it records and why." } } }"#
        let run = try sensorium(["run", "nostudy", "--days", "1", "--participants", "1"])
        assertContains(run.stdout, "Your bundle's Info.plist must have an NSSensorKitUsageDescription key — this protocol declares no study{}; declare the study first")
        assertContains(run.stdout, example)
        let check = try sensorium(["check", "nostudy"])
        XCTAssertEqual(check.status, 1)
        assertContains(check.stdout, "nostudy/protocol.lua: error[missing-study]: no study{} declaration; declare the study first")
        assertContains(check.stdout, example)
    }

    /// A folder is a protocol run with its scenario, whether or not it declares study{}; a
    /// file is one when it calls `study`, also for its value; a field named study is not.
    func testAFolderAndAStudyDeclaredForItsValueRunAsProtocols() throws {
        try write("bare/protocol.lua", "print(sensorkit.participant(), time.format(time.studyStart()))\n")
        try write("bare/scenario.lua", "return { days = 1, timezone = 'America/Los_Angeles', start = '2026-03-02', participants = { { id = 'Z1' } } }\n")
        let bare = try sensorium(["run", "bare"])
        XCTAssertEqual(bare.status, 0, bare.stderr)
        assertContains(bare.stdout, "Z1\t2026-03-02 00:00")
        try write("valued.lua", #"""
            local readers = study { id = "v", title = "V", usage = "U.", privacy_policy = "https://example.org/p",
                                    entitlements = { "pedometer" }, sensors = { pedometerData = { detail = "Steps." } } }
            print(type(readers.pedometerData))
            """#)
        let valued = try sensorium(["run", "valued.lua", "--participants", "1"])
        XCTAssertEqual(valued.status, 0, valued.stderr)
        XCTAssertEqual(valued.stdout.split(separator: "\n").first, "userdata")
        let valuedAlone = try sensorium(["run", "valued.lua"])
        XCTAssertEqual(valuedAlone.status, 0, valuedAlone.stderr)
        assertContains(valuedAlone.stdout, "userdata")
        try write("field.lua", "local t = { study = function(x) return x end }\nprint(t.study { 7 }[1])\n")
        let field = try sensorium(["run", "field.lua"])
        XCTAssertEqual(field.status, 0, field.stderr)
        XCTAssertEqual(field.stdout, "7\n")
    }

    /// Events after the study's end never run, at a prompt as in a run: the prompt's clock
    /// may pass the end, the schedules stop there, and a one-off asked for after it says so.
    func testAPromptRunsNoScheduleAfterTheStudysEnd() throws {
        let session = """
            schedule.at(time.studyEnd() + hours(1), function(now) print("late", time.format(now)) end)
            schedule.daily("09:00", function(now) print("daily", time.format(now)) end)
            :advance 5d
            """ + "\n"
        let repl = try sensorium(["repl", "--days", "2", "--participants", "1"], input: session)
        XCTAssertEqual(repl.status, 0, repl.stderr)
        XCTAssertEqual(repl.stdout.split(separator: "\n").filter { $0.hasPrefix("daily") || $0.hasPrefix("late") }.count, 2, repl.stdout)
        assertContains(repl.stdout, "note: this passed the study's end")
        assertContains(repl.stdout, "warn: schedule.at: 2026-03-04 01:00 is after the study's end (2026-03-04 00:00): the call never runs")
    }

    /// README's Slurm cohort, 10,000 participants in 50 shards: a shard of it runs (the
    /// flag's range allows it), with its 200 participants.
    func testTheReadmesTenThousandParticipantCohortRunsAShard() throws {
        let readme = try String(contentsOf: ExportFixtures.root.appendingPathComponent("README.md"), encoding: .utf8)
        assertContains(readme, "shards/ result/ --participants 10000 -- ")
        let path = ExportFixtures.root.appendingPathComponent("protocols/data_quality").path
        let shard = try sensorium(["run", path, "--participants", "10000", "--shard", "50/50", "--out", "shard-50", "--days", "1", "--quiet"], timeout: 300)
        XCTAssertEqual(shard.status, 0, shard.stderr)
        let consent = try String(contentsOf: folder.appendingPathComponent("shard-50/consent.csv"), encoding: .utf8)
        let people = Set(consent.split(separator: "\n").dropFirst().map { $0.split(separator: ",")[0] })
        XCTAssertEqual(people.count, 200)
        XCTAssertTrue(people.contains("P10000"), "\(people.sorted().suffix(3))")
    }

    func testAPlainScriptThatTouchesSensorkitSaysItNeedsAStudy() throws {
        try write("plain.lua", "print('before')\nlocal r = sensorkit.reader 'ambientLightSensor'\n")
        let run = try sensorium(["run", "plain.lua"])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.stdout, "before\n")
        assertContains(run.stderr, "plain.lua:2: sensorkit.reader: this file declares no study{}, so it runs as a plain Lua script; sensorkit needs a study: declare study{")
        assertContains(run.stderr, "(see docs/lua-api.md)")
        XCTAssertFalse(run.stderr.contains("attempt to index a nil value"), run.stderr)
        // The rest of a plain script is stock Lua: a global of that name may still be set.
        try write("own.lua", "sensorkit = 42\nprint(sensorkit)\n")
        XCTAssertEqual(try sensorium(["run", "own.lua"]).stdout, "42\n")
    }

    func testAnImportThatStoresNothingLeavesNoStoreItCreated() throws {
        let fm = FileManager.default
        let missing = try sensorium(["import", "--format", "native", "nosuch", "--into", "new.sqlite"])
        XCTAssertEqual(missing.status, 1)
        assertContains(missing.stderr, "nothing was stored")
        let leftovers = try fm.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("new.sqlite") }
        XCTAssertEqual(leftovers, [], "the failed import left its new store behind")
        // A store that was there before the failed import stays.
        let export = try sensorium(["export", "--days", "1", "--participants", "1", "--sensors", "pedometerData", "--into", "exp"], timeout: 120)
        XCTAssertEqual(export.status, 0, export.stderr)
        let first = try sensorium(["import", "--format", "native", "exp", "--into", "kept.sqlite"], timeout: 120)
        XCTAssertEqual(first.status, 0, first.stderr)
        let again = try sensorium(["import", "--format", "native", "nosuch", "--into", "kept.sqlite"])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(fm.fileExists(atPath: folder.appendingPathComponent("kept.sqlite").path))
        assertContains(try sensorium(["inspect", "kept.sqlite"]).stdout, "pedometerData")
        XCTAssertFalse(try sensorium(["inspect", "kept.sqlite"]).stderr.contains("warning"))
        // A -journal beside it (an import under way, or one killed before its end): inspect says so.
        try write("kept.sqlite-journal", "")
        let journal = try sensorium(["inspect", "kept.sqlite"])
        XCTAssertEqual(journal.status, 0, journal.stderr)
        assertContains(journal.stderr, "warning: kept.sqlite-journal lies beside the store: an import into it is under way, or was stopped before it ended")
    }

    func testUsageIsPrintedOnlyForUsageErrors() throws {
        for arguments in [["inspect", "nofile.sqlite"], ["run", "nosuch.lua"], ["test", "nosuch"], ["check", "nosuch"]] {
            let r = try sensorium(arguments)
            XCTAssertEqual(r.status, 1, arguments.joined(separator: " "))
            assertContains(r.stderr, "Error: " + arguments[1] + ": no such")
            XCTAssertFalse(r.stderr.contains("Usage:"), arguments.joined(separator: " ") + ": " + r.stderr)
        }
        // A flag given wrong is a usage error, and shows the usage.
        let flag = try sensorium(["inspect", "nofile.sqlite", "--gap-minutes", "-1"])
        XCTAssertEqual(flag.status, 64)
        assertContains(flag.stderr, "Usage:")
    }

    func testAPipedReplExitsNonZeroWhenAChunkFailed() throws {
        let failed = try sensorium(["repl"], input: "x = nil + 1\nprint('after')\n")
        XCTAssertEqual(failed.status, 1)
        XCTAssertEqual(failed.stdout, "after\n")                   // the chunks after it still run
        assertContains(failed.stderr, "stdin:1: attempt to perform arithmetic on a nil value")
        let clean = try sensorium(["repl"], input: "print('fine')\n")
        XCTAssertEqual(clean.status, 0, clean.stderr)
        XCTAssertEqual(clean.stdout, "fine\n")
        let unfinished = try sensorium(["repl"], input: "for i = 1, 2 do\n")
        XCTAssertEqual(unfinished.status, 1)
    }

    /// The project's own sources compile without warnings: scripts/check-warnings.sh, over the
    /// diagnostics this test bundle's build left (make test also runs it as its build).
    func testTheProjectsOwnSourcesCompileWithoutWarnings() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let bin = try XCTUnwrap(SensoriumCLITests.executable).deletingLastPathComponent()
        let outcome = try ChildProcess.run("/bin/sh", [root.appendingPathComponent("scripts/check-warnings.sh").path, "--no-build"], in: root,
                                           environment: ProcessInfo.processInfo.environment.merging(["BIN_PATH": bin.path]) { _, new in new },
                                           input: nil, timeout: 60)
        let stderr = String(decoding: outcome.stderr, as: UTF8.self)
        XCTAssertEqual(outcome.status, 0, stderr)
        assertContains(String(decoding: outcome.stdout, as: UTF8.self), "no compiler warnings in the project's own sources")
    }
}
