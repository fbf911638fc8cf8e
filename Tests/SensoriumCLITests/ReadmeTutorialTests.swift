import Foundation
import XCTest

/// The README's tutorial is run as written: its protocol and scenario are taken from
/// the README's code blocks, and what `sensorium run my_study` prints must be the
/// output the README shows — before and after the tutorial's change in step 5.
extension SensoriumCLITests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The fenced code blocks of the README, in order: (info string, body).
    static func readmeBlocks() throws -> [(info: String, body: String)] {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [(String, String)] = []
        var info: String?
        var body: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let open = info {
                    blocks.append((open, body.joined(separator: "\n") + "\n"))
                    info = nil
                } else {
                    info = String(line.dropFirst(3))
                    body = []
                }
            } else if info != nil {
                body.append(line)
            }
        }
        return blocks
    }

    /// The block whose first line starts with `prefix`.
    func readmeBlock(startingWith prefix: String) throws -> String {
        let found = try SensoriumCLITests.readmeBlocks().first { $0.body.hasPrefix(prefix) }
        return try XCTUnwrap(found, "README has no code block starting with \(prefix)").body
    }

    /// The lines a shell transcript shows after `$ command` up to the next `$` line.
    func transcript(_ block: String, after command: String) -> String {
        var lines: [Substring] = []
        var inside = false
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("$ ") { inside = line == "$ " + command; continue }
            if inside { lines.append(line) }
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }

    func testReadmeTutorialRunsAsShown() throws {
        let environment = ["SENSORIUM_STDLIB": SensoriumCLITests.repositoryRoot.appendingPathComponent("stdlib").path]
        let source = try readmeBlock(startingWith: "-- My first protocol")
        try write("my_study/protocol.lua", source)
        try write("my_study/scenario.lua", try readmeBlock(startingWith: "return {\n  days = 5,"))

        // Step 2: the output of the run, byte for byte.
        let shown = transcript(try readmeBlock(startingWith: "$ sensorium run my_study\n== daily_steps"), after: "sensorium run my_study")
        let run = try sensorium(["run", "my_study"], environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        // The run ends its last table with a blank line; the README leaves it out.
        XCTAssertEqual(run.stdout.replacingOccurrences(of: "\n+$", with: "\n", options: .regularExpression), shown)

        // Step 3: the REPL session (two blocks), its commands piped: every printed line as shown.
        let session = try readmeBlock(startingWith: "$ sensorium repl my_study\n") + "\n" + (try readmeBlock(startingWith: "> :advance 12h\n"))
        let lines = session.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("$ ") && !$0.isEmpty }
        let commands = lines.filter { $0.hasPrefix("> ") }.map { String($0.dropFirst(2)) }
        XCTAssertEqual(commands.count, 12, session)
        let repl = try sensorium(["repl", "my_study"], input: commands.joined(separator: "\n") + "\n", environment: environment)
        XCTAssertEqual(repl.status, 0, repl.stderr)
        XCTAssertEqual(repl.stdout.split(separator: "\n").filter { !$0.isEmpty }.map(String.init),
                       lines.filter { !$0.hasPrefix("> ") }.map(String.init))

        // Step 1: a misspelt sensor stops the run with the message the README quotes.
        let typo = try readmeBlock(startingWith: "-- My first protocol").replacingOccurrences(of: "pedometerData = {", with: "pedometerDta = {")
        try write("typo/protocol.lua", typo)
        let typoRun = try sensorium(["run", "typo", "--participants", "1"], environment: environment)
        XCTAssertEqual(typoRun.status, 1)
        let readme = try String(contentsOf: SensoriumCLITests.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let quoted = try XCTUnwrap(readme.range(of: "`protocol.lua:[0-9]+: error\\[unknown-sensor\\][^`]*`", options: .regularExpression).map { readme[$0].dropFirst().dropLast() })
        assertContains(typoRun.stderr.replacingOccurrences(of: "\n", with: " "), String(quoted).replacingOccurrences(of: "\n", with: " "))

        // Step 4: the chart the README shows is the one the run draws, byte for byte.
        let drawn = try sensorium(["run", "my_study", "--out", "first"], environment: environment)
        XCTAssertEqual(drawn.status, 0, drawn.stderr)
        let svg = try Data(contentsOf: folder.appendingPathComponent("first/daily_steps.svg"))
        let shownSVG = try Data(contentsOf: SensoriumCLITests.repositoryRoot.appendingPathComponent("docs/images/tutorial-daily-steps.svg"))
        XCTAssertEqual(svg, shownSVG, "docs/images/tutorial-daily-steps.svg is stale: copy first/daily_steps.svg of the tutorial run there")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("first/index.html").path))

        // Step 5: only brisk walking; the README's diff shows the new CSV rows.
        let change = "    :where(\"currentCadence\", \">=\", 1.5)               -- only brisk walking\n"
        XCTAssertTrue(try readmeBlock(startingWith: "  local set = steps:samples").contains(change))
        let anchor = "    :where(\"time\", \">=\", day):where(\"time\", \"<\", day + days(1))\n"
        XCTAssertTrue(source.contains(anchor))
        try write("my_study/protocol.lua", source.replacingOccurrences(of: anchor, with: anchor + change))
        let diff = try readmeBlock(startingWith: "$ sensorium test my_study\nFAIL")
        let added = diff.split(separator: "\n").filter { $0.hasPrefix("+") && !$0.hasPrefix("+++") }.map { String($0.dropFirst()) }
        XCTAssertEqual(added.count, 6, diff)
        let changed = try sensorium(["run", "my_study", "--out", "tables"], environment: environment)
        XCTAssertEqual(changed.status, 0, changed.stderr)
        let csv = try String(contentsOf: folder.appendingPathComponent("tables/daily_steps.csv"), encoding: .utf8)
        XCTAssertEqual(csv, "participant,day,steps,km\n" + added.joined(separator: "\n") + "\n")

        // Step 5, the expect guard: with the range raised, the run records findings and goes on
        // (the README shows stderr), and with --fail-fast it stops naming the line and the day.
        let guarded = source.replacingOccurrences(of: "expect.between(t.steps, 1500, 25000", with: "expect.between(t.steps, 8000, 25000")
        try write("my_study/protocol.lua", guarded.replacingOccurrences(of: anchor, with: anchor + change))
        let findings = try sensorium(["run", "my_study"], environment: environment)
        XCTAssertEqual(findings.status, 1)
        let listed = transcript(try readmeBlock(startingWith: "$ sensorium run my_study > /dev/null\n"), after: "sensorium run my_study > /dev/null")
        XCTAssertEqual(findings.stderr, listed)
        let stopped = try sensorium(["run", "my_study", "--fail-fast"], environment: environment)
        XCTAssertEqual(stopped.status, 1)
        let expectation = try readmeBlock(startingWith: "$ sensorium run my_study --fail-fast\n[")
        let firstLine = try XCTUnwrap(expectation.split(separator: "\n").dropFirst().first)
        XCTAssertTrue((stopped.stdout + stopped.stderr).contains(firstLine), stopped.stdout + stopped.stderr)
    }
}
