import Foundation
import XCTest

/// `sensorium repl --recording STORE`: the prompt over a store made by `sensorium import`,
/// every participant of it (or the one `--participant` names), with SensorKit's rules on
/// the replayed data (the hold, the purge). Per-day counts and means typed at the prompt
/// equal those `scripts/export-daily-figures.py` computes from the export files on its own.
extension SensoriumCLITests {
    func testTheReplOpensARecordedStoreAndSeesWhatTheFilesHold() throws {
        let store = folder.appendingPathComponent("mdh.sqlite").path
        let imported = try sensorium(["import", "--format", "mdh-json", ExportFixtures.mdh, "--into", store], timeout: 120)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        // Per day and device, as a researcher would type it (each participant has a state of its own: :load).
        try write("daily.lua", """
            sensorkit.requestAuthorization({ "heartRate", "ambientLightSensor" }, function() end)
            function daily(name, field)
              local reader = sensorkit.reader(name)
              for _, d in ipairs(reader:devices()) do
                local set = reader:samples { device = d, from = time.studyStart() - 86400, to = time.now() }
                for _, g in ipairs(set:byDay():mean(field)) do
                  print(string.format("%s,%s,%s,\\"%s %s\\",%d,%.3f", sensorkit.participant(), g.key, name, d.model, d.productType, g.count, g.value))
                end
              end
            end
            """)
        let session = """
            :load daily.lua
            :advance to day 6 09:00
            daily("heartRate", "heartRate")
            daily("ambientLightSensor", "lux")
            :participant MDH-P2
            :load daily.lua
            :advance to day 6 09:00
            daily("heartRate", "heartRate")
            daily("ambientLightSensor", "lux")
            """ + "\n"
        let result = try sensorium(["repl", "--recording", store], input: session, timeout: 120)
        XCTAssertEqual(result.status, 0, result.stderr)
        let typed = Set(result.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("MDH-") && $0.split(separator: ",").count == 7 })
        let script = ExportFixtures.root.appendingPathComponent("scripts/export-daily-figures.py").path
        let python = try ChildProcess.run("/usr/bin/env", ["python3", script, "mdh-json", ExportFixtures.mdh], timeout: 120)
        XCTAssertEqual(python.status, 0, String(decoding: python.stderr, as: UTF8.self))
        // participant,day,sensor,device,samples,mean,hours: without the hours.
        let independent = Set(String(decoding: python.stdout, as: UTF8.self).split(separator: "\n").dropFirst()
            .filter { $0.contains(",heartRate,") || $0.contains(",ambientLightSensor,") }
            .map { line -> String in
                var fields = ExportFixtures.csvFields(String(line))
                fields.removeLast()
                return fields.map { $0.contains(",") || $0.contains(" ") ? "\"\($0)\"" : $0 }.joined(separator: ",")
            })
        XCTAssertEqual(independent.count, 12, "3 days: heart rate and both devices' light for MDH-P1, the phone's light for MDH-P2")
        XCTAssertEqual(typed.subtracting(independent).sorted(), [], "rows typed at the prompt that the files do not hold")
        XCTAssertEqual(independent.subtracting(typed).sorted(), [], "rows the files hold that the prompt did not show")

        // `:sensors` says what the recording holds, per device: the files' own totals.
        var totals: [String: Int] = [:]   // "participant sensor model": samples
        for row in independent {
            let f = ExportFixtures.csvFields(row)
            totals["\(f[0]) \(f[2]) \(f[3].split(separator: " ")[0])", default: 0] += Int(f[4])!
        }
        let held = try sensorium(["repl", "--recording", store], input: ":sensors\n:participant MDH-P2\n:sensors\n")
        XCTAssertEqual(held.status, 0, held.stderr)
        let lines = held.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.contains("the recording holds") },
                       ["participant MDH-P1: the recording holds 4 of 22 sensors", "participant MDH-P2: the recording holds 3 of 22 sensors"])
        let p1 = lines.prefix { !$0.hasPrefix("MDH-P2") }, p2 = lines.drop { !$0.hasPrefix("MDH-P2") }
        func line(_ part: some Sequence<String>, _ sensor: String) -> String { part.first { $0.hasPrefix(sensor + " ") } ?? "" }
        assertContains(line(p1, "heartRate"), "recorded: watch (Watch) \(totals["MDH-P1 heartRate Watch"] ?? -1) samples, written 2023-11-06 00:00 … 2023-11-08 23:55")
        assertContains(line(p1, "ambientLightSensor"),
                       "recorded: phone (iPhone) \(totals["MDH-P1 ambientLightSensor iPhone"] ?? -1), watch (Watch) \(totals["MDH-P1 ambientLightSensor Watch"] ?? -1) samples")
        assertContains(line(p2, "ambientLightSensor"), "recorded: phone (iPhone) \(totals["MDH-P2 ambientLightSensor iPhone"] ?? -1) samples")
        assertContains(line(p2, "heartRate"), "not in the recording")
        assertContains(line(p1, "rotationRate"), "not in the recording")

        // The README's example, run as written (in a folder holding mdh.sqlite, sensorium on the PATH).
        let example = try readmeBlock(startingWith: "printf '%s\\n' 'sensorkit.requestAuthorization")
        let executable = try XCTUnwrap(SensoriumCLITests.executable)
        let path = executable.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let readme = try ChildProcess.run("/bin/sh", ["-c", example], in: folder, environment: ["PATH": path], timeout: 120)
        XCTAssertEqual(readme.status, 0, String(decoding: readme.stderr, as: UTF8.self))
        assertContains(String(decoding: readme.stdout, as: UTF8.self), "{ count = 288, key = \"2023-11-07\", start = 1699315200.0, value = 288 }")

        // What the replay says of itself, as `run` says it: its span and its warnings.
        let flagged = try sensorium(["repl", "--recording", store, "--timezone", "Europe/Berlin", "--days", "2"], input: ":now\n")
        XCTAssertEqual(flagged.status, 0, flagged.stderr)
        assertContains(flagged.stderr, "replay: 2 days, 2023-11-06 00:00 to 2023-11-08 00:00 (GMT): chosen with --days")
        assertContains(flagged.stderr, "warning: --timezone Europe/Berlin is ignored in a replay")
        assertContains(flagged.stderr, "warning: participant 'MDH-P1': time zone unknown, UTC assumed")
        XCTAssertEqual(flagged.stdout, "2023-11-06 00:00 GMT (study day 1), SR 2592000\n")

        // One participant; the flag without a store is refused, as `run` refuses it.
        let one = try sensorium(["repl", "--recording", store, "--participant", "MDH-P2"], input: ":participant MDH-P1\n=sensorkit.participant()\n")
        XCTAssertEqual(one.status, 1, "a command that failed fails piped input")
        assertContains(one.stderr, "no participant 'MDH-P1' (participants: MDH-P2)")
        XCTAssertEqual(one.stdout, "\"MDH-P2\"\n")
        let alone = try sensorium(["repl", "--participant", "MDH-P2"], input: "=1\n")
        XCTAssertNotEqual(alone.status, 0)
        assertContains(alone.stderr, "--participant needs --recording")
    }
}
