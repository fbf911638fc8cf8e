import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `sensorium test`, the golden-output runner, tested as a user meets it.
extension SensoriumCLITests {
    static let goldenProtocol = """
    study {
      id = "golden", title = "Golden", usage = "Tests the runner.", privacy_policy = "https://example.org/privacy",
      entitlements = { "ambient-light-sensor" },
      sensors = { ambientLightSensor = { detail = "Light." } },
    }
    local light = sensorkit.reader "ambientLightSensor"
    light.delegate = { didChangeAuthorizationStatus = function(r, s) if s == "authorized" then r:startRecording() end end }
    sensorkit.requestAuthorization({ "ambientLightSensor" })
    local threshold = 5
    schedule.daily("09:00", function(now)
      local day = light:samples { from = now - days(2), to = now - days(1) }
      report.row("light", { day = time.day(now - days(2)), bright = day:where("lux", ">", threshold):count() })
    end)
    """

    static let goldenScenario = "return { days = 4, participants = 1, seed = 3 }\n"

    func testGoldenRunnerFreezesThenCatchesAChangedNumberWithADiff() throws {
        try write("protocols/golden/protocol.lua", SensoriumCLITests.goldenProtocol)
        try write("protocols/golden/scenario.lua", SensoriumCLITests.goldenScenario)
        let missing = try sensorium(["test", "protocols"])
        XCTAssertNotEqual(missing.status, 0)
        assertContains(missing.stdout, "no expected output")

        let update = try sensorium(["test", "protocols", "--update"])
        XCTAssertEqual(update.status, 0, update.stdout + update.stderr)
        assertContains(update.stdout, "added   protocols/golden/expected/light.csv")
        assertContains(update.stdout, "added   protocols/golden/expected/stdout.txt")
        let frozen = try String(contentsOf: folder.appendingPathComponent("protocols/golden/expected/light.csv"), encoding: .utf8)
        XCTAssertTrue(frozen.hasPrefix("participant,bright,day\n"), frozen)

        let pass = try sensorium(["test", "protocols"])
        XCTAssertEqual(pass.status, 0, pass.stdout + pass.stderr)
        assertContains(pass.stdout, "1 passed, 0 failed")

        // Change one number in the protocol: the runner fails with a readable unified diff.
        try write("protocols/golden/protocol.lua", SensoriumCLITests.goldenProtocol.replacingOccurrences(of: "local threshold = 5", with: "local threshold = 500"))
        let fail = try sensorium(["test", "protocols"])
        XCTAssertNotEqual(fail.status, 0)
        assertContains(fail.stdout, "FAIL protocols/golden: light.csv differs")
        assertContains(fail.stdout, "--- expected/light.csv")
        assertContains(fail.stdout, "+++ actual/light.csv")
        assertContains(fail.stdout, "0 passed, 1 failed")
        XCTAssertTrue(fail.stdout.split(separator: "\n").contains { $0.hasPrefix("-P1,") } &&
                      fail.stdout.split(separator: "\n").contains { $0.hasPrefix("+P1,") }, fail.stdout)

        // --update accepts the change and says what changed.
        let accept = try sensorium(["test", "protocols/golden", "--update"])
        assertContains(accept.stdout, "changed protocols/golden/expected/light.csv")
    }

    func testGoldenRunnerFlagsOutputThatVariesBetweenRuns() throws {
        let varying = SensoriumCLITests.goldenProtocol + """
        schedule.at("day 3 10:00", function() report.row("process", { pid = __test.pid() }) end)
        """
        try write("protocols/varying/protocol.lua", varying)
        try write("protocols/varying/scenario.lua", SensoriumCLITests.goldenScenario)
        let result = try sensorium(["test", "protocols", "--update"], environment: ["SENSORIUM_TEST_BUILTINS": "1"])
        XCTAssertNotEqual(result.status, 0)
        assertContains(result.stdout, "FAIL protocols/varying: non-deterministic output: table process (process.csv) line 2 differs between two runs")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("protocols/varying/expected").path),
                       "non-deterministic output must not be frozen")
    }
}

/// `sensorium test` for CI: --filter, --fail-fast, per-protocol timing, JUnit XML; `--version`.
extension SensoriumCLITests {
    func testGoldenRunnerFiltersStopsEarlyTimesAndWritesJUnit() throws {
        for name in ["alpha", "beta", "gamma"] {
            try write("protocols/\(name)/protocol.lua", SensoriumCLITests.goldenProtocol)
            try write("protocols/\(name)/scenario.lua", "return { days = 3, participants = 1, seed = 3 }\n")
        }
        XCTAssertEqual(try sensorium(["test", "protocols", "--update"]).status, 0)
        // alpha and beta now differ from their expected output; gamma does not.
        for name in ["alpha", "beta"] {
            try write("protocols/\(name)/protocol.lua", SensoriumCLITests.goldenProtocol.replacingOccurrences(of: "local threshold = 5", with: "local threshold = 500"))
        }

        let only = try sensorium(["test", "protocols", "--filter", "gam"])
        XCTAssertEqual(only.status, 0, only.stdout)
        assertContains(only.stdout, "1 passed, 0 failed")
        XCTAssertFalse(only.stdout.contains("alpha"), only.stdout)
        XCTAssertTrue(only.stdout.range(of: #"protocols/gamma: [0-9]+\.[0-9]{2} s"#, options: .regularExpression) != nil, only.stdout)
        let none = try sensorium(["test", "protocols", "--filter", "delta"])
        XCTAssertNotEqual(none.status, 0)
        assertContains(none.stderr, "no protocol folder matches --filter delta")

        let fast = try sensorium(["test", "protocols", "--fail-fast", "--junit", "results.xml"])
        XCTAssertEqual(fast.status, 1)
        assertContains(fast.stdout, "0 passed, 1 failed, 2 not run (--fail-fast)")
        XCTAssertFalse(fast.stdout.contains("FAIL protocols/beta"), fast.stdout)

        let all = try sensorium(["test", "protocols", "--junit", "results.xml"])
        XCTAssertEqual(all.status, 1)
        assertContains(all.stdout, "1 passed, 2 failed")
        let xml = try String(contentsOf: folder.appendingPathComponent("results.xml"), encoding: .utf8)
        assertContains(xml, #"<testsuite name="sensorium" tests="3" failures="2" errors="0""#)
        assertContains(xml, #"<testcase classname="protocols" name="gamma" time=""#)
        assertContains(xml, #"<failure message="FAIL protocols/alpha: light.csv differs from protocols/alpha/expected/light.csv">"#)
        let parsed = try XMLDocument(data: Data(xml.utf8))
        XCTAssertEqual(try parsed.nodes(forXPath: "//testcase").count, 3)
        XCTAssertEqual(try parsed.nodes(forXPath: "//testcase/failure").count, 2)
    }

    func testVersionFlag() throws {
        let r = try sensorium(["--version"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.hasPrefix("sensorium "), r.stdout)
    }
}
