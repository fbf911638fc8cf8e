import Foundation
import XCTest

/// The REPL's editing on a real terminal (tmux, as the Ctrl-C test): Tab completion from the
/// API description, `_`, a multi-line chunk as one history entry, `:load`, `:advance to`, the
/// note at the study's end and `:help` for stdlib modules.
extension SensoriumCLITests {
    /// Waits (up to 30 s) until the pane's whole scrollback shows `text`; returns it.
    func waitForScrollback(_ session: String, _ text: String) throws -> String {
        var pane = ""
        for _ in 0..<300 {
            pane = try tmux(["capture-pane", "-p", "-J", "-S", "-", "-t", session])
            if pane.contains(text) { return pane }
            usleep(100_000)
        }
        XCTFail("the pane never showed \(String(reflecting: text)):\n\(pane)")
        return pane
    }

    /// Sends keys, then lets the REPL draw them.
    func keys(_ session: String, _ keys: String...) throws {
        _ = try tmux(["send-keys", "-t", session] + keys)
        usleep(400_000)
    }

    func testReplCompletesKeepsUnderscoreHistoryLoadAdvanceAndHelp() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else { throw XCTSkip("tmux is not installed (make deps installs it)") }
        try write("lib.lua", "loaded = 77\n")
        let session = "sensorium-edit-\(getpid())"
        let exe = SensoriumCLITests.executable!.path
        let history = folder.appendingPathComponent("history").path
        _ = try tmux(["new-session", "-d", "-s", session, "-x", "200", "-y", "50", "-c", folder.path,
                      "\(exe) repl --days 2 --participants 1 --history \(history); echo REPL-ENDED-$?; sleep 30"])
        defer { _ = try? tmux(["kill-server"]) }
        _ = try waitForPane(session, ":help for help")
        usleep(500_000)

        // Completion of a module's functions: two candidates listed, then one completed.
        try keys(session, "sensorkit.re", "Tab")
        try keys(session, "Tab")
        _ = try waitForPane(session, "sensorkit.requestAuthorization")
        try keys(session, "a", "Tab")
        // A sensor name inside sensorkit.reader "…".
        try keys(session, " \"ambientL", "Tab")
        _ = try waitForPane(session, "sensorkit.reader \"ambientLightSensor")
        try keys(session, "\"", "Enter")
        _ = try waitForPane(session, "SRSensorReader(ambientLightSensor)")
        // `_` is the value printed last.
        try keys(session, "light = _", "Enter")
        try keys(session, "=light.sensor .. '!'", "Enter")
        _ = try waitForPane(session, "ambientLightSensor!")
        // Methods of a value's class.
        try keys(session, "light:startR", "Tab")
        _ = try waitForPane(session, "light:startRecording")
        try keys(session, "C-u")
        // Field names inside an aggregate, for the sensor the line reads.
        try keys(session, "=sensorkit.reader \"accelerometer\":samples{ from = 0, to = 1 }:mean(\"magn", "Tab")
        _ = try waitForPane(session, ":mean(\"magnitude")
        try keys(session, "C-u")

        // A multi-line chunk is one history entry: recalled whole, it runs again.
        try keys(session, "n = (n or 0) + 1; t = {", "Enter")
        try keys(session, "n }", "Enter")
        try keys(session, "Up", "Enter")
        try keys(session, "=n * 1000 + #t", "Enter")
        _ = try waitForPane(session, "2001")
        let saved = try String(contentsOfFile: history, encoding: .utf8)
        XCTAssertTrue(saved.contains("t\\040=\\040{\\012n\\040}"), "the chunk is not one history entry:\n\(saved)")

        // :load FILE runs a file in the participant's state.
        try keys(session, ":load lib.lua", "Enter")
        try keys(session, "=loaded + 1", "Enter")
        _ = try waitForPane(session, "78")

        // :advance to a clock time; past the study's end it says so.
        try keys(session, ":advance to tomorrow 09:00", "Enter")
        _ = try waitForPane(session, "2026-03-03 09:00")
        try keys(session, ":advance 3d", "Enter")
        _ = try waitForPane(session, "note: this passed the study's end")

        // :help covers the stdlib modules and their exports.
        try keys(session, ":help plot.line", "Enter")
        _ = try waitForScrollback(session, "plot.line(name, spec)")
        try keys(session, ":help plot", "Enter")
        _ = try waitForScrollback(session, "require \"plot\" loads the charts")
        try keys(session, ":quit", "Enter")
        _ = try waitForPane(session, "REPL-ENDED-0")
    }
}

/// `sensorium luals DIR` sets a protocol folder up for the Lua language server.
extension SensoriumCLITests {
    func testLualsWritesDefinitionsAndLuarc() throws {
        try write("study/protocol.lua", "local r = sensorkit.reader \"ambientLightSensor\"\n")
        let r = try sensorium(["luals", "study"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let dir = folder.appendingPathComponent("study")
        for file in [".luarc.json", ".sensorium/library/sensorium.lua", ".sensorium/library/plot.lua", ".sensorium/library/time.lua"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent(file).path), "\(file) not written:\n\(r.stdout)")
        }
        let host = try String(contentsOf: dir.appendingPathComponent(".sensorium/library/sensorium.lua"), encoding: .utf8)
        XCTAssertTrue(host.contains("function sensorkit.reader(name) end") && host.contains("---| \"ambientLightSensor\""))
        let plot = try String(contentsOf: dir.appendingPathComponent(".sensorium/library/plot.lua"), encoding: .utf8)
        XCTAssertTrue(plot.contains("function M.line(name, spec) end") && plot.hasSuffix("return M\n"))
        // Not a folder: a clear error, no trap.
        let bad = try sensorium(["luals", "study/protocol.lua"])
        XCTAssertEqual(bad.status, 1)
        assertContains(bad.stderr, "is not a folder")
    }
}

/// `sensorium repl --machine`, the engine under the Jupyter kernel: one JSON answer a line.
extension SensoriumCLITests {
    func testMachineModeAnswersCellsCompletionAndInspection() throws {
        let requests = [
            #"{"execute": "print(\"hi\")\nlocal a = 6\na * 7"}"#,
            #"{"execute": ":advance 26h\nrows = { { day = \"a\", n = 1 }, { day = \"b<\", n = 2.5 } }\nrows"}"#,
            #"{"execute": "local plot = require \"plot\"\nplot.bars(\"b\", { categories = { \"x\" }, values = { 1 } })"}"#,
            #"{"execute": "error(\"boom\")"}"#,
            #"{"complete": "x = sensorkit.re", "cursor": 16}"#,
            #"{"inspect": "sensorkit.reader \"x\"", "cursor": 12}"#,
            "not json",
        ]
        let r = try sensorium(["repl", "--machine", "--days", "2", "--participants", "1"], input: requests.joined(separator: "\n") + "\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        let answers = try r.stdout.split(separator: "\n").map {
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(answers.count, requests.count)
        XCTAssertEqual(answers[0]["stdout"] as? String, "hi\n")
        XCTAssertEqual(answers[0]["value"] as? String, "42")
        XCTAssertTrue((answers[1]["stdout"] as? String ?? "").contains("2026-03-03 02:00"))
        XCTAssertEqual(answers[1]["html"] as? String, "<table>\n<thead><tr><th>day</th><th>n</th></tr></thead>\n<tbody>\n"
                       + "<tr><td>a</td><td>1</td></tr>\n<tr><td>b&lt;</td><td>2.5</td></tr>\n</tbody>\n</table>\n")
        XCTAssertTrue(((answers[2]["svgs"] as? [String])?.first ?? "").hasPrefix("<svg"))
        XCTAssertEqual((answers[3]["error"] as? [String: Any])?["message"] as? String, "stdin:1: boom")
        XCTAssertEqual(answers[4]["matches"] as? [String], ["sensorkit.reader", "sensorkit.requestAuthorization"])
        XCTAssertEqual(answers[4]["start"] as? Int, 4)
        XCTAssertTrue((answers[5]["text"] as? String ?? "").hasPrefix("sensorkit.reader"))
        XCTAssertTrue(((answers[6]["error"] as? [String: Any])?["message"] as? String ?? "").hasPrefix("not a JSON object"))
    }
}
