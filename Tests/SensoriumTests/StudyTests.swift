import Foundation
import Sensorium
import XCTest

/// A small data source: one watch-wearing participant with heart-rate readings every
/// 10 minutes of 2026-03-02 (UTC), 60 bpm at night, 120 bpm from 12:00 to 14:00.
struct TestHeartRate: StudyDataSource {
    var dropField: String?
    var fails = false
    static let day = 1_772_409_600.0   // 2026-03-02 00:00 UTC

    func participants() -> [StudyParticipant] { [StudyParticipant(id: "P1", hasWatch: true)] }

    func samples(of sensor: String, participant: String, device: StudyDevice, writtenAfter after: Double, through: Double) throws -> [Sample] {
        struct Broken: Error, CustomStringConvertible { var description: String { "disk unplugged" } }
        if fails { throw Broken() }
        guard sensor == "heartRate", device == .watch else { return [] }
        return (0..<144).map { i -> Sample in
            let t = TestHeartRate.day + Double(i) * 600
            let hour = i / 6
            var fields: [String: SampleValue] = ["heartRate": .number(hour >= 12 && hour < 14 ? 120 : 60), "confidence": "high", "timestamp": .number(t)]
            if let dropField { fields[dropField] = nil }
            return Sample(written: t + 30, time: t, fields: fields)
        }.filter { $0.written > after && $0.written <= through }
    }
}

let heartProtocol = """
study { id = "t", title = "t", usage = "u", entitlements = { "heart-rate" },
        sensors = { heartRate = { detail = "d", required = true } } }
local report = require "report"
local t = report.table("hr", { columns = { "day", "samples", "mean", "fast" } })
schedule.daily("09:00", function(now)
  local day = require("time").releasedDay(now)
  if not day then return end
  for _, device in ipairs(sensors.heartRate:devices()) do
    local set = sensors.heartRate:samples { device = device, from = day.start, to = day.stop }
    if set:count() > 0 then
      t:row { day = day.day, samples = set:count(), mean = set:mean("heartRate"), fast = countFast(set:column("heartRate"), 100) }
    end
  end
end)
"""

final class StudyTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func heartStudy(_ data: TestHeartRate = TestHeartRate()) -> Study {
        var study = Study(.source(heartProtocol, name: "hr.lua"), world: .data(data))
        study.configuration.days = 4
        study.register("countFast") { (values: [Double], limit: Double) -> Int in values.filter { $0 > limit }.count }
        return study
    }

    /// The data source's samples pass the SensorKit rules and reach the protocol; the
    /// registered function counts; the rows come back typed.
    func testDataSourceAndRegisteredFunction() throws {
        let result = try heartStudy().run()
        XCTAssertEqual(result.participants, ["P1"])
        let table = try XCTUnwrap(result.table("hr"))
        XCTAssertEqual(Set(table.columns), ["day", "samples", "mean", "fast", "participant"])
        XCTAssertEqual(table.rows.count, 1)
        let row = table.rows[0]
        XCTAssertEqual(row["day"], .text("2026-03-02"))
        // 138 of the day's 144 readings: the model's watch sync lag (one hour, the
        // `watchSyncLag` switch) keeps an hour of the watch's 60-bpm readings out of this day's range.
        XCTAssertEqual(row["samples"], .integer(138))
        XCTAssertEqual(row["fast"], .integer(12))
        XCTAssertEqual(row["mean"].doubleValue ?? 0, (126 * 60 + 12 * 120) / 138.0, accuracy: 1e-9)
        XCTAssertEqual(row["participant"], .text("P1"))
        struct Row: Decodable { var day: String; var fast: Int; var mean: Double }
        let decoded = try table.decodeRows(as: Row.self)
        XCTAssertEqual(decoded.map(\.fast), [12])
        XCTAssertTrue(table.text.hasPrefix("== hr (1 rows) =="), table.text)
        XCTAssertTrue(result.findings.isEmpty)
    }

    /// The same study gives the same result on any number of jobs and on every run.
    func testDeterministic() throws {
        var twice = heartStudy()
        twice.configuration.jobs = 2
        XCTAssertEqual(try heartStudy().run().reportText, try twice.run().reportText)
    }

    /// A sample without a required field stops that participant's run with a finding that
    /// names the participant, sensor, field and what was expected.
    func testSampleMissingAFieldIsAFinding() throws {
        let result = try heartStudy(TestHeartRate(dropField: "confidence")).run()
        let finding = try XCTUnwrap(result.findings.first)
        XCTAssertTrue(finding.isStoppedRun)
        XCTAssertTrue(finding.message.contains("participant P1, heartRate.confidence: missing in the sample written at"), finding.message)
        XCTAssertTrue(finding.message.contains("(a enumeration is required)"), finding.message)
    }

    /// A data source that throws stops the run with its message; the protocol's pcall cannot hide it.
    func testDataSourceErrorCannotBeCaughtByTheProtocol() throws {
        let hiding = heartProtocol.replacingOccurrences(of: "local set = sensors.heartRate:samples { device = device, from = day.start, to = day.stop }",
                                                        with: "local ok, set = pcall(sensors.heartRate.samples, sensors.heartRate, { device = device, from = day.start, to = day.stop }); if not ok then return end")
        XCTAssertNotEqual(hiding, heartProtocol)
        var study = Study(.source(hiding, name: "hr.lua"), world: .data(TestHeartRate(fails: true)))
        study.configuration.days = 4
        study.register("countFast") { (values: [Double], limit: Double) -> Int in 0 }
        let result = try study.run()
        let finding = try XCTUnwrap(result.findings.first)
        XCTAssertTrue(finding.message.contains("the data source failed: disk unplugged"), finding.message)
    }

    /// A registered function's argument error names the function and the protocol's line.
    func testTypedArgumentErrorNamesFunctionAndLine() throws {
        var study = Study(.source("study { id = 's', title = 't', usage = 'u' }\nlocal x = half('two')\n", name: "mine.lua"),
                          world: .data(TestHeartRate()))
        study.register("half") { (x: Double) -> Double in x / 2 }
        XCTAssertThrowsError(try study.run()) { error in
            XCTAssertTrue("\(error)".contains("mine.lua:2: bad argument #1 to 'half' (number expected, got string)"), "\(error)")
        }
    }

    /// A protocol folder in a simulated world gives what `sensorium run` prints (the golden).
    func testSimulatedFolderMatchesTheGolden() throws {
        let folder = StudyTests.repository.appendingPathComponent("protocols/light_tutorial").path
        let result = try Study(.folder(folder)).run()
        let golden = try String(contentsOfFile: folder + "/expected/stdout.txt", encoding: .utf8)
        XCTAssertEqual(result.output + result.reportText, golden)
    }

    /// Bad input names what was expected.
    func testConfigurationErrors() throws {
        XCTAssertThrowsError(try StudyProtocol.folder("/nonexistent")) { XCTAssertEqual("\($0)", "/nonexistent is a folder without protocol.lua") }
        var study = heartStudy()
        study.configuration.start = "March"
        XCTAssertThrowsError(try study.run()) { XCTAssertEqual("\($0)", "start: expected a date like 2026-03-02, got 'March'") }
    }

    /// `StudyConfiguration.shard` runs one slice of the cohort and `write(to:)` adds the
    /// shard file; `progress` follows each participant; a participant an error stops is
    /// among `failures` and `findings`.
    func testShardProgressAndFailures() throws {
        let source = """
        study { id = "s", title = "s", usage = "u", entitlements = { "heart-rate" }, sensors = { heartRate = { detail = "d" } } }
        schedule.at(time.studyStart() + 3600, function() error("stopped here") end)
        """
        var study = Study(.source(source, name: "s.lua"))
        study.configuration.participants = 4
        study.configuration.days = 1
        study.configuration.shard = StudyShard(parsing: "2/2")
        XCTAssertNil(StudyShard(parsing: "3/2"))
        XCTAssertEqual(StudyShard(index: 2, count: 2), study.configuration.shard)
        var steps: [[Int]] = []
        var announced = 0
        let result = try study.run(announce: { _ in announced += 1 }, progress: { steps.append([$0, $1]) })
        XCTAssertEqual(result.participants, ["P3", "P4"])
        XCTAssertEqual(announced, 1)
        XCTAssertEqual(steps, [[1, 2], [2, 2]])
        XCTAssertEqual(result.failures.count, 2)
        XCTAssertTrue(result.failures[0].contains("stopped here"), result.failures[0])
        XCTAssertEqual(result.findings.filter(\.isStoppedRun).map(\.participant), ["P3", "P4"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-shard-test-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try result.write(to: folder.path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("shard.json").path))
        study.configuration.shard = nil
        let whole = try study.run()
        XCTAssertEqual(whole.participants, ["P1", "P2", "P3", "P4"])
        try? FileManager.default.removeItem(at: folder)
        try whole.write(to: folder.path)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("shard.json").path))
    }
}
