import Foundation
import XCTest

/// Bad values from outside — scenario fields, profiles, switches, events, flags, script
/// arguments — each run in a child process under an address-space cap and a timeout, so
/// a Swift trap, a hang or a runaway allocation fails the case instead of the runner.
/// Every case must end with a clear error (exit 1, or 64 for a flag) that names where
/// the value came from and what is allowed, in a message of bounded length.
enum BadInput {
    struct Case {
        var name: String
        var scenario: String?
        var script: String = "schedule.at(time.studyStart() + 60, function() print(time.now()) end)"
        var flags: [String] = []
        var status: Int32 = 1
        var says: [String]
    }

    /// A protocol that touches what the bad values fed: light, heart rate, phone use, the clock.
    static let fetchingProtocol = """
    study {
      id = "bad-input", title = "Bad input", usage = "Reads a few sensors.", privacy_policy = "https://example.org/privacy",
      entitlements = { "ambient-light-sensor", "heart-rate", "device-usage" },
      sensors = { ambientLightSensor = { detail = "Light." }, heartRate = { detail = "Pulse." }, deviceUsageReport = { detail = "Use." } },
    }
    local readers = { sensorkit.reader "ambientLightSensor", sensorkit.reader "heartRate", sensorkit.reader "deviceUsageReport" }
    sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate", "deviceUsageReport" }, function()
      for _, r in ipairs(readers) do r:startRecording() end
    end)
    schedule.daily("12:00", function(now)
      for _, r in ipairs(readers) do print(r:samples { from = now - days(2), to = now - days(1) }:count(), time.now()) end
    end)
    """

    static let scenarioCases: [Case] = [
        Case(name: "light period 0", scenario: "simulation = { ambientLightPeriod = 0 }",
             says: ["simulation.ambientLightPeriod: 0 is outside the allowed range (from 1 to 86400 seconds)"]),
        Case(name: "light period nan", scenario: "simulation = { ambientLightPeriod = 0/0 }", says: ["ambientLightPeriod: nan is outside"]),
        Case(name: "light period negative", scenario: "simulation = { ambientLightPeriod = -5 }", says: ["ambientLightPeriod: -5 is outside"]),
        Case(name: "write batch tiny", scenario: "simulation = { writeBatchSeconds = 1e-300 }", says: ["simulation.writeBatchSeconds"]),
        Case(name: "report window 0", scenario: "simulation = { reportWindow = 0 }", says: ["simulation.reportWindow: 0 is outside"]),
        Case(name: "pickups 1e12", scenario: "participants = { { id = 'a' }, { id = 'b', profile = { pickupsPerDay = 1e12 } } }",
             says: ["participants[2].profile.pickupsPerDay: 1000000000000 is outside the allowed range (from 0 to 1000 pickups per day)"]),
        Case(name: "sleep need negative", scenario: "participants = { { profile = { sleepNeedHours = -1e12 } } }",
             says: ["participants[1].profile.sleepNeedHours: -1000000000000 is outside", "from 3 to 14 hours"]),
        Case(name: "mid-sleep huge", scenario: "participants = { { profile = { midSleepFreeDays = 1e12 } } }",
             says: ["profile.midSleepFreeDays"]),
        Case(name: "steps nan", scenario: "participants = { { profile = { dailySteps = 0/0 } } }", says: ["profile.dailySteps: nan is outside"]),
        Case(name: "heart rate inf", scenario: "participants = { { profile = { restingHeartRate = 1/0 } } }", says: ["restingHeartRate: inf is outside"]),
        Case(name: "age text", scenario: "participants = { { profile = { age = 'old' } } }", says: ["profile.age: expected a number (from 13 to 110 years), got \"old\""]),
        Case(name: "clock jump nan", scenario: "participants = { { events = { { clockJump = 0/0, at = 'day 1 10:00' } } } }",
             says: ["participants[1].events[1].clockJump: nan is outside"]),
        Case(name: "clock jump huge", scenario: "participants = { { events = { { clockJump = '9999999w', at = 'day 1 10:00' } } } }",
             says: ["events[1].clockJump:", "is outside the allowed range"]),
        Case(name: "phone off forever", scenario: "participants = { { events = { { phoneOff = true, from = -1e308, to = 1e308 } } } }",
             says: ["participants[1].events[1].from:", "-1e+308 is outside the study (from 2026-03-02 00:00 to 2026-03-05 00:00"]),
        Case(name: "event at nan", scenario: "participants = { { events = { { revoke = 'heartRate', at = 0/0 } } } }",
             says: ["events[1].at: nan is outside the study"]),
        Case(name: "event after the study", scenario: "days = 2, participants = { { events = { { reboot = 'phone', at = '2027-01-01 10:00' } } } }",
             says: ["events[1].at: 2027-01-01 10:00 is outside the study (from 2026-03-02 00:00 to 2026-03-04 00:00"]),
        Case(name: "study day far away", scenario: "participants = { { events = { { reboot = 'phone', at = 'day 999999999 12:00' } } } }",
             says: ["events[1].at: expected \"day N HH:MM\""]),
        Case(name: "empty cohort", scenario: "participants = {}", says: ["participants: an empty list"]),
        Case(name: "participants nan", scenario: "participants = 0/0", says: ["participants: nan is outside"]),
        Case(name: "days huge", scenario: "days = 1e9", says: ["days: 1000000000 is outside the allowed range (a whole number from 1 to 366 days)"]),
        Case(name: "start far future", scenario: "start = '9999-01-01'", says: ["start: the study must start in the years 2000 to 2100"]),
        Case(name: "dot-dot id", scenario: "participants = { { id = '..' } }", says: ["participants[1].id: a participant id cannot start with '.'"]),
        Case(name: "slash id", scenario: "participants = { { id = 'a/b' } }", says: ["participants[1].id:", "has \"/\""]),
        Case(name: "long id", scenario: "participants = { { id = string.rep('x', 100000) } }", says: ["participants[1].id: a participant id has at most 64 bytes"]),
        Case(name: "purge every millisecond", scenario: "switches = { agePurgeInterval = 0.001 }", says: ["agePurgeInterval", "from 1m to 3660d"]),
        Case(name: "sync lag huge", scenario: "switches = { watchSyncLag = 1e300 }", says: ["watchSyncLag"]),
        Case(name: "report window switch 0", scenario: "switches = { reportWindow = { deviceUsageReport = 0 } }", says: ["reportWindow.deviceUsageReport"]),
        Case(name: "huge switch text", scenario: "switches = { tombstoneRetention = string.rep('x', 100000) }",
             says: ["switches.tombstoneRetention", "bytes of this message left out"]),
    ]

    static let scriptCases: [Case] = [
        Case(name: "every 1e-300", script: "schedule.every(1e-300, function() end)",
             says: ["interval: 1e-300 is outside the allowed range (from 1 to 31622400 seconds)"]),
        Case(name: "at nan", script: "schedule.at(0/0, function() end)", says: ["expected a time, got nan"]),
        Case(name: "after inf", script: "schedule.after(1/0, function() end)", says: ["expected a duration, got inf"]),
        Case(name: "every nan text", script: "schedule.every('nan', function() end)", says: ["expected a duration like"]),
        Case(name: "report format width", script: "report.table('t', { formats = { x = '%999999999d' } })", says: ["format for 'x'"]),
        Case(name: "report %d of 1e19", script: "report.table('t', { formats = { x = '%d' } }) report.row('t', { x = 1e19 })", status: 0,
             says: ["10000000000000000000"]),
        Case(name: "colliding tables", script: "report.row('a b', { x = 1 }) report.row('a_b', { x = 2 })",
             says: ["report tables 'a b' and 'a_b' would both be written to a_b.csv"]),
        Case(name: "long column name", script: "report.row('t', { [string.rep('c', 100000)] = 1 })", status: 0, says: ["ccccc"]),
        Case(name: "byWindow tiny", script: "study { id = 'w', title = 'W', usage = 'Light.', privacy_policy = 'https://example.org/privacy', " +
             "entitlements = { 'ambient-light-sensor' }, sensors = { ambientLightSensor = { detail = 'Light.' } } } " +
             "local s = sensorkit.reader('ambientLightSensor') " +
             "sensorkit.requestAuthorization({ 'ambientLightSensor' }, function() s:startRecording() end) " +
             "schedule.at('day 3 12:00', function(now) local set = s:samples { from = now - days(2), to = now - days(1) } " +
             "for _, args in ipairs { { 1e-300 }, { 1/0 }, { 3600, 0/0 }, { 0/0 } } do " +
             "local ok, err = pcall(set.byWindow, set, table.unpack(args)) assert(not ok, 'accepted') print(err) end end)",
             status: 0, says: ["window length: 1e-300 is outside", "window length: inf is outside", "origin: nan is outside", "window length: nan is outside"]),
    ]

    /// A fetch whose range is backwards names the range in wall-clock time, not SR seconds.
    static let fetchRangeCase = Case(name: "backwards fetch", script: "study { id = 'w', title = 'W', usage = 'Light.', privacy_policy = 'https://example.org/privacy', " +
        "entitlements = { 'ambient-light-sensor' }, sensors = { ambientLightSensor = { detail = 'Light.' } } } " +
        "local s = sensorkit.reader('ambientLightSensor') sensorkit.requestAuthorization({ 'ambientLightSensor' }, function() s:startRecording() end) " +
        "schedule.at('day 2 12:00', function(now) local ok, err = pcall(s.samples, s, { from = now - days(1), to = now - days(1) - 60 }) print(err.message) end)",
        status: 0, says: ["`from` (2026-03-02 12:00:00 UTC) is after `to` (2026-03-02 11:59:00 UTC)"])

    /// `device = {}` names no device: an error, not the current phone.
    static let emptyDeviceCase = Case(name: "empty device", script: "study { id = 'w', title = 'W', usage = 'Light.', privacy_policy = 'https://example.org/privacy', " +
        "entitlements = { 'ambient-light-sensor' }, sensors = { ambientLightSensor = { detail = 'Light.' } } } " +
        "local s = sensorkit.reader('ambientLightSensor') sensorkit.requestAuthorization({ 'ambientLightSensor' }, function() s:startRecording() end) " +
        "schedule.at('day 2 12:00', function(now) print(select(2, pcall(s.samples, s, { from = now - days(1) - 60, to = now - days(1), device = {} }))) end)",
        status: 0, says: ["request.device names no device"])

    static let flagCases: [Case] = [
        Case(name: "time limit inf", flags: ["--time-limit", "inf"], status: 64, says: ["--time-limit: inf is outside the allowed range (from 0 to 86400 seconds)"]),
        Case(name: "time limit nan", flags: ["--time-limit", "nan"], status: 64, says: ["--time-limit: nan is outside"]),
        Case(name: "memory limit negative", flags: ["--memory-limit", "-1"], status: 64, says: ["--memory-limit: -1 is outside"]),
        Case(name: "days -1", flags: ["--days", "-1"], status: 64, says: ["--days: -1 is outside the allowed range (a whole number from 1 to 366 days)"]),
        Case(name: "days 0", flags: ["--days", "0"], status: 64, says: ["--days: 0 is outside"]),
        Case(name: "participants huge", flags: ["--participants", "100000000"], status: 64, says: ["--participants: 100000000 is outside"]),
        Case(name: "start year 1", flags: ["--start", "0001-01-01"], says: ["--start: the study must start in the years 2000 to 2100"]),
        Case(name: "negative seed", flags: ["--seed", "-5", "--days", "1"], status: 0, says: []),
    ]

}

extension SensoriumCLITests {
    typealias Case = BadInput.Case

    /// Runs `sensorium run` on the case in a shell with `ulimit -v` (2 GiB) and a 60 s timeout.
    func runCapped(_ c: Case) throws -> (status: Int32, signaled: Bool, stdout: String, stderr: String) {
        let dir = "case-\(abs(c.name.hashValue))"
        try write("\(dir)/protocol.lua", c.scenario == nil ? c.script : BadInput.fetchingProtocol + "\n" + c.script)
        var args = ["run", dir] + c.flags
        if let scenario = c.scenario {
            try write("\(dir)/scenario.lua", "return { days = 3, " + scenario + " }")
        } else {
            if !c.flags.contains("--days") { args += ["--days", "3"] }
            if !c.flags.contains("--participants") { args += ["--participants", "1"] }
        }
        let result = try capped(args)
        return result
    }

    /// `sensorium ARGS` in the test's folder under an address-space cap (`ulimit -v`) and a
    /// timeout; `signaled` when it died of a signal (a trap) or was killed by the timeout.
    func capped(_ args: [String], memoryKiB: Int = 2 << 20, seconds: Int = 60) throws -> (status: Int32, signaled: Bool, stdout: String, stderr: String) {
        let exe = SensoriumCLITests.executable!.path
        let quoted = ([exe] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        var environment = ProcessInfo.processInfo.environment
        environment["SENSORIUM_STDLIB"] = nil
        let outcome = try ChildProcess.run("/bin/sh", ["-c", "ulimit -v \(memoryKiB); exec timeout -s KILL \(seconds) \(quoted) </dev/null"],
                                           in: folder, environment: environment, timeout: TimeInterval(seconds + 30))
        // timeout(1) exits 124 after killing a hung child and 128 + N for a child killed by signal N.
        return (outcome.status, outcome.signaled || outcome.status >= 124,
                String(decoding: outcome.stdout, as: UTF8.self), String(decoding: outcome.stderr, as: UTF8.self))
    }

    func check(_ cases: [Case]) throws {
        for c in cases {
            let r = try runCapped(c)
            XCTAssertFalse(r.signaled, "\(c.name): killed by a signal or timeout (status \(r.status))\n\(r.stderr.suffix(2000))")
            XCTAssertEqual(r.status, c.status, "\(c.name): exit \(r.status)\n\(r.stderr.suffix(2000))")
            for part in c.says {
                XCTAssertTrue((r.stderr + r.stdout).contains(part), "\(c.name): expected the output to contain \(part)\nstderr: \(r.stderr.prefix(2000))")
            }
            XCTAssertLessThan(r.stderr.utf8.count, 9_000, "\(c.name): an error message must stay short")
            if c.scenario != nil && c.status != 0 { XCTAssertTrue(r.stderr.contains("scenario.lua"), "\(c.name): names the file\n\(r.stderr)") }
        }
    }

    func testBadInputScenarioValuesAreRefusedWithFileKeyValueAndRange() throws { try check(BadInput.scenarioCases) }
    func testBadInputScriptArgumentsAreErrorsNotHangsOrTraps() throws { try check(BadInput.scriptCases + [BadInput.fetchRangeCase, BadInput.emptyDeviceCase]) }
    func testBadInputFlagsAreRefusedWithTheirRange() throws { try check(BadInput.flagCases) }
}

/// Exports that cannot fit, and the installed layout (`make install`).
extension SensoriumCLITests {
    func testAnExportThatCannotFitIsRefusedBeforeItStarts() throws {
        let r = try sensorium(["export", "--into", "huge", "--days", "366", "--participants", "1000"])
        XCTAssertEqual(r.status, 1, r.stderr)
        assertContains(r.stderr, "export: up to about")
        assertContains(r.stderr, "export: not started: huge has")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("huge").path), "nothing written")

        let small = try sensorium(["export", "--into", "small", "--days", "1", "--participants", "1", "--sensors", "heartRate"])
        XCTAssertEqual(small.status, 0, small.stderr)
        assertContains(small.stderr, "export: up to about")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("small/manifest.json").path))
    }
}

/// The REPL on a real terminal (tmux): Ctrl-C at the prompt or mid-line drops the line and keeps the session.
extension SensoriumCLITests {
    /// `tmux ARGS` on this test's own server (its own socket, no configuration file), so
    /// no tmux the machine already runs is touched; returns what it printed.
    func tmux(_ args: [String]) throws -> String {
        let outcome = try ChildProcess.run("/usr/bin/tmux", ["-L", "sensorium-test-\(getpid())", "-f", "/dev/null"] + args,
                                           mergeErrors: true, timeout: 20)
        return String(decoding: outcome.stdout, as: UTF8.self)
    }

    /// Waits (up to 30 s) until the pane shows `text`; returns the pane.
    func waitForPane(_ session: String, _ text: String) throws -> String {
        var pane = ""
        for _ in 0..<300 {
            pane = try tmux(["capture-pane", "-p", "-t", session])
            if pane.contains(text) { return pane }
            usleep(100_000)
        }
        XCTFail("the pane never showed \(String(reflecting: text)):\n\(pane)")
        return pane
    }

    func testReplSurvivesCtrlCAtThePromptAndMidLine() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else { throw XCTSkip("tmux is not installed (make deps installs it)") }
        let session = "sensorium-ctrlc-\(getpid())"
        let exe = SensoriumCLITests.executable!.path
        _ = try tmux(["new-session", "-d", "-s", session, "-x", "250", "-y", "40", "-c", folder.path,
                      "\(exe) repl --days 1 --participants 1 --time-limit 0 --history \(folder.path)/history; echo REPL-ENDED-$?; sleep 30"])
        defer { _ = try? tmux(["kill-server"]) }
        _ = try waitForPane(session, ":help for help")
        // Ctrl-C at an empty prompt. A key sent before the REPL sits in its read is not seen
        // as one at the prompt, so it is sent again until the pane shows it was taken.
        var taken = false
        for _ in 0..<20 where !taken {
            _ = try tmux(["send-keys", "-t", session, "C-c"])
            usleep(500_000)
            taken = try tmux(["capture-pane", "-p", "-t", session]).contains("^C")
        }
        XCTAssertTrue(taken, "Ctrl-C at the prompt was never shown")
        _ = try tmux(["send-keys", "-t", session, "x = 'half a line", ""])      // mid-line, then Ctrl-C
        usleep(300_000)
        _ = try tmux(["send-keys", "-t", session, "C-c"])
        usleep(300_000)
        _ = try tmux(["send-keys", "-t", session, "=40 + 2", "Enter"])
        let pane = try waitForPane(session, "42")
        XCTAssertFalse(pane.contains("REPL-ENDED"), pane)
        _ = try tmux(["send-keys", "-t", session, "=x", "Enter"])
        _ = try waitForPane(session, "nil")                                     // the dropped line never ran
        // Ctrl-C while a statement runs (no time limit would ever stop it) interrupts it.
        _ = try tmux(["send-keys", "-t", session, "while true do end", "Enter"])
        usleep(1_000_000)
        _ = try tmux(["send-keys", "-t", session, "C-c"])
        _ = try waitForPane(session, "stopped: interrupted")
        _ = try tmux(["send-keys", "-t", session, "=6 * 7 + 1", "Enter"])
        _ = try waitForPane(session, "43")
        _ = try tmux(["send-keys", "-t", session, ":quit", "Enter"])
        _ = try waitForPane(session, "REPL-ENDED-0")
    }
}

/// `sensorium check` names the line of each problem and suggests a spelling once.
extension SensoriumCLITests {
    func testCheckNamesLinesAndSuggestsOnce() throws {
        try write("lines/protocol.lua", """
        study {
          id = "x", title = "X", usage = "Uses.",
          entitlements = { "ambient-light-sensr", "heart-rate" },
          sensors = {
            ambientLightSensr = { detail = "Light." },
            heartRate = { detail = "" },
          },
        }
        local h = sensorkit.reader "heartRate"
        local r = sensorkit.reader "pedometerData"
        """)
        let r = try sensorium(["check", "lines/protocol.lua"])
        XCTAssertEqual(r.status, 1)
        assertContains(r.stdout, "protocol.lua:1: warning[missing-privacy-policy]")
        assertContains(r.stdout, "protocol.lua:3: warning[unknown-entitlement]")
        assertContains(r.stdout, "protocol.lua:5: error[unknown-sensor]")
        assertContains(r.stdout, "protocol.lua:6: error[missing-detail-text] sensors.heartRate: the usage detail's `detail` text is empty")
        assertContains(r.stdout, "protocol.lua:10: error[used-without-entitlement]")
        for line in r.stdout.split(separator: "\n") {
            XCTAssertLessThanOrEqual(line.components(separatedBy: "did you mean").count - 1, 1, "suggested twice: \(line)")
        }
    }
}

extension SensoriumCLITests {
    /// `--days` shorter than the scenario's own study: events after the run's end are left out
    /// with a warning naming them; events after the scenario's own end stay an error.
    func testEventsAfterAShortenedRunAreLeftOutWithAWarning() throws {
        try write("short/protocol.lua", BadInput.fetchingProtocol)
        try write("short/scenario.lua", "return { days = 10, participants = { { id = 'A', events = { { phoneOff = true, from = 'day 8 10:00', to = 'day 8 12:00' } } } } }")
        let shortened = try sensorium(["run", "short", "--days", "3"], timeout: 120)
        XCTAssertEqual(shortened.status, 0, shortened.stderr)
        assertContains(shortened.stderr, "warning: short/scenario.lua: participants[1].events[1] at 2026-03-09 10:00 begins after the run's end (2026-03-05 00:00); left out")
        let whole = try sensorium(["run", "short", "--days", "10"], timeout: 120)
        XCTAssertFalse(whole.stderr.contains("left out"), whole.stderr)
        try write("short/scenario.lua", "return { days = 10, participants = { { id = 'A', events = { { phoneOff = true, from = 'day 12 10:00', to = 'day 12 12:00' } } } } }")
        let beyond = try sensorium(["run", "short", "--days", "3"], timeout: 120)
        XCTAssertEqual(beyond.status, 1, beyond.stderr)
        assertContains(beyond.stderr, "is outside the study")
    }
}

extension SensoriumCLITests {
    /// File and store problems are told in the user's terms (path, what, what to do), never as
    /// `NSCocoaErrorDomain Code=516` or `SQLite error 14`.
    func testFileAndStoreErrorsNameThePathAndTheProblem() throws {
        try write("r.lua", "report.row('t', { a = 1 })")
        try write("afile", "not a folder")
        let cases: [([String], String)] = [
            (["run", "r.lua", "--days", "1", "--participants", "1", "--out", "afile"], "afile: a file of that name is in the way (a folder is needed here)"),
            (["export", "--days", "1", "--participants", "1", "--sensors", "pedometerData", "--into", "afile"], "afile: a file of that name is in the way"),
            (["import", "--format", "mhc-csv", "--participant", "p", "afile", "--into", "no/such/dir/s.sqlite"],
             "no/such/dir/s.sqlite: cannot open the store: the folder "), (["inspect", "afile"], "afile: not a Sensorium study store"),
        ]
        for (arguments, message) in cases {
            let result = try sensorium(arguments, timeout: 120)
            XCTAssertEqual(result.status, 1, arguments.joined(separator: " ") + "\n" + result.stderr)
            assertContains(result.stderr, message)
            XCTAssertFalse(result.stderr.contains("Domain="), result.stderr)
            XCTAssertFalse(result.stderr.contains("SQLite error"), result.stderr)
        }
    }
}
