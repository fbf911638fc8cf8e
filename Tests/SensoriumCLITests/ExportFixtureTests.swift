import Foundation
import XCTest

/// The recorded-export fixtures (`Tests/Fixtures/exports`, written by
/// `scripts/make-export-fixtures.py` as MyDataHelps and MyHeartCounts write their exports)
/// imported by `sensorium import` in one command each and replayed by
/// `protocols/first_export_review`: its per-day counts, means and hours per sensor and device
/// must equal those `scripts/export-daily-figures.py` computes from the files on its own
/// (Python's gzip, json and csv and the `zstd` command; no Sensorium code).
enum ExportFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let mdh = root.appendingPathComponent("Tests/Fixtures/exports/mdh/RK.4F2A9C.Sleep and Light Pilot_20231106-20231109").path
    static let mhc = root.appendingPathComponent("Tests/Fixtures/exports/mhc").path

    static func csvFields(_ line: String) -> [String] {
        var fields: [String] = [], current = "", quoted = false
        for c in line {
            if c == "\"" { quoted.toggle() } else if c == "," && !quoted { fields.append(current); current = "" } else { current.append(c) }
        }
        fields.append(current)
        return fields
    }
}

extension SensoriumCLITests {

    /// Imports `source` as `format`, replays the review protocol over it, and compares its
    /// `daily` table with the independent figures. Returns the import's summary.
    func checkExportDailyFigures(format: String, source: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let store = folder.appendingPathComponent("\(format).sqlite").path
        let imported = try sensorium(["import", "--format", format, source, "--into", store], timeout: 120)
        XCTAssertEqual(imported.status, 0, imported.stderr, file: file, line: line)
        let out = folder.appendingPathComponent("out-\(format)").path
        let run = try sensorium(["run", ExportFixtures.root.appendingPathComponent("protocols/first_export_review").path,
                                 "--recording", store, "--out", out, "--quiet"], timeout: 120)
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        let script = ExportFixtures.root.appendingPathComponent("scripts/export-daily-figures.py").path
        let python = try ChildProcess.run("/usr/bin/env", ["python3", script, format, source], timeout: 120)
        XCTAssertEqual(python.status, 0, String(decoding: python.stderr, as: UTF8.self), file: file, line: line)
        let independent = Set(String(decoding: python.stdout, as: UTF8.self).split(separator: "\n").dropFirst().map(String.init))
        // The protocol's table without its unit column (participant,day,sensor,device,samples,mean,unit,hours).
        let table = try String(contentsOfFile: out + "/daily.csv", encoding: .utf8)
        let lines = table.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "participant,day,sensor,device,samples,mean,unit,hours", file: file, line: line)
        let protocolRows = Set(lines.dropFirst().map { row -> String in
            var fields = ExportFixtures.csvFields(row)
            fields.remove(at: 6)
            return fields.map { $0.contains(",") ? "\"\($0)\"" : $0 }.joined(separator: ",")
        })
        XCTAssertFalse(independent.isEmpty, file: file, line: line)
        XCTAssertEqual(protocolRows.subtracting(independent).sorted(), [], "rows Sensorium reports that the files do not hold", file: file, line: line)
        XCTAssertEqual(independent.subtracting(protocolRows).sorted(), [], "rows the files hold that Sensorium does not report", file: file, line: line)
        return imported.stdout
    }

    func testMyDataHelpsExportImportsWholeAndMatchesTheFiles() throws {
        let summary = try checkExportDailyFigures(format: "mdh-json", source: ExportFixtures.mdh)
        assertContains(summary, "ambientLightSensor watch Watch6,14")
        assertContains(summary, "form: MyDataHelps item timestamps in milliseconds since 1970: 26 file(s)")
        assertContains(summary, "form: MyDataHelps item timestamps in seconds since 1970: 4 file(s)")
        assertContains(summary, "heartRate date: absent in 873 sample(s); timed by their item's timestamp")
        assertContains(summary, "duplicates dropped: 18 (18 exact duplicates in the input, 0 already stored)")
        // Per participant and device: each participant's phone on a line of its own.
        assertContains(summary, "MDH-P1  accelerometer phone iPhone15,2 iOS 17.1          750 read, 750 stored")
        assertContains(summary, "MDH-P2  accelerometer phone iPhone15,2 iOS 17.1          750 read, 750 stored")
    }

    func testMyHeartCountsTreeImportsWholeAndMatchesTheFiles() throws {
        let summary = try checkExportDailyFigures(format: "mhc", source: ExportFixtures.mhc)
        assertContains(summary, "ambientLightSensor watch Watch7,2")
        assertContains(summary, "wristTemperature watch Watch6,1")
        // The re-upload of one day under a new name: its rows are dropped as duplicates.
        assertContains(summary, "u7Qm2Lx  ambientLightSensor phone iPhone16,1 iOS 17.4    256 read, 192 stored, duplicates: 64 in the input")
        assertContains(summary, "not SensorKit data (a HealthKit sample upload: 'HKQuantityTypeIdentifierStepCount')")
    }

    func testAnImportThatFindsNoSamplesFailsAndNamesWhatItSkipped() throws {
        try write("tree/users/u1/liveHealthSamples/HKQuantityTypeIdentifierStepCount_1.json", "[]")
        let r = try sensorium(["import", "--format", "mhc", folder.appendingPathComponent("tree").path, "--into", "s.sqlite"])
        XCTAssertEqual(r.status, 1)
        assertContains(r.stderr, "nothing was imported: no SensorKit uploads found")
        assertContains(r.stderr, "HKQuantityTypeIdentifierStepCount_1.json (not SensorKit data")
    }
}

/// The showcase protocols derive their expectations from the study's length: every one runs
/// clean (no findings) with the `--days` the README shows, short or long.
extension SensoriumCLITests {
    func testShowcaseProtocolsRunCleanForAnyStudyLength() throws {
        let protocols = ["daily_activity", "light_tutorial", "heart_rate_walk_rest", "typing_phone_use", "mobility_visits", "sleep_light"]
        for days in [2, 5] {
            for name in protocols {
                let path = ExportFixtures.root.appendingPathComponent("protocols/\(name)").path
                let r = try sensorium(["run", path, "--days", "\(days)", "--quiet"], timeout: 180)
                XCTAssertEqual(r.status, 0, "\(name) --days \(days): \(r.stderr)")
                XCTAssertFalse(r.stderr.contains("finding:"), "\(name) --days \(days): \(r.stderr)")
            }
        }
    }
}

/// A sensor a recording holds nothing of reads as empty with a warning, once per sensor and
/// participant — not as zero in silence.
extension SensoriumCLITests {
    func testAFetchOfASensorTheRecordingLacksWarnsOnce() throws {
        let imported = try sensorium(["import", "--format", "mdh-json", ExportFixtures.mdh, "--into", "s.sqlite"], timeout: 120)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        try write("p.lua", """
            study { id = "t", usage = "u", entitlements = { "heart-rate", "ambient-light-sensor" },
                    sensors = { heartRate = { detail = "d" }, ambientLightSensor = { detail = "d" } } }
            schedule.daily("09:00", function(now)
              sensors.heartRate:samples { from = now - days(2), to = now - days(1) }
              sensors.ambientLightSensor:samples { from = now - days(2), to = now - days(1) }
            end)
            """)
        let r = try sensorium(["run", "p.lua", "--recording", "s.sqlite", "--participant", "MDH-P2"], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stdout.split(separator: "\n").filter { $0.contains("warn: heartRate: the recording holds no data of this sensor") }
        XCTAssertEqual(warnings.count, 1, r.stdout)
        XCTAssertFalse(r.stdout.contains("ambientLightSensor: the recording holds no data"), r.stdout)
        // The replay says its span first: the three recorded days, one of hold, one for a morning schedule.
        XCTAssertTrue(r.stderr.hasPrefix("replay: 5 days, 2023-11-06 00:00 to 2023-11-11 00:00"), r.stderr)
        let chosen = try sensorium(["run", "p.lua", "--recording", "s.sqlite", "--participant", "MDH-P2", "--days", "2"], timeout: 120)
        XCTAssertTrue(chosen.stderr.hasPrefix("replay: 2 days, 2023-11-06 00:00 to 2023-11-08 00:00 (GMT): chosen with --days"), chosen.stderr)
    }
}
