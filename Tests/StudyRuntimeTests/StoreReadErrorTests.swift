import Foundation
import GRDB
import XCTest
import SensorBackends
import SensorKitModel
@testable import StudyRuntime
@testable import StudyWorlds

/// Broken data is an error, never missing data: a stored chunk that cannot be read stops
/// the participant's run with the store, participant, sensor, device, range and message.
final class StoreReadErrorTests: XCTestCase {
    static let watch = "\"<SRDevice: 0x2835; name = Apple Watch; model = Watch; systemName = watchOS; systemVersion = 10.4; productType = Watch6,1>\""
    /// 2024-11-20 00:00 UTC.
    static let t0 = 1_732_060_800.0

    func testACorruptChunkStopsTheRunNamingStoreParticipantSensorAndDevice() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("StoreReadError-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("mhc"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var hr = "timestamp,value,confidence,device\n"
        for i in 0..<(3 * 1_440) { hr += "\(Self.t0 + Double(i) * 60 + 30),\(60 + i % 30),3,\(Self.watch)\n" }
        try hr.write(to: dir.appendingPathComponent("mhc/heartRate_1.csv"), atomically: true, encoding: .utf8)
        let storePath = dir.appendingPathComponent("study.sqlite").path
        for participant in ["p1", "p2"] {
            let store = try RecordedStore(path: storePath)
            try store.importData(ImportRequest(format: .mhcCSV, sources: [dir.appendingPathComponent("mhc").path], participant: participant,
                                               timeZone: "UTC", progressBar: false))
            try store.close()
        }
        let protocolText = """
        study {
          id = "broken", title = "Broken", usage = "Reads heart rate.", privacy_policy = "https://example.org/privacy",
          entitlements = { "\(Sensor.heartRate.info.entitlement)" },
          sensors = { heartRate = { detail = "Heart rate." } },
        }
        local hr = sensorkit.reader("heartRate")
        sensorkit.requestAuthorization({ "heartRate" }, function(err) hr:startRecording() end)
        schedule.daily("12:00", function(now)
          -- The protocol's own pcall cannot turn the broken read into missing data.
          local device = hr:devices()[1]
          local ok, n = pcall(function() return hr:samples { device = device, from = now - days(2), to = now - days(1) }:count() end)
          print(sensorkit.participant(), time.day(now), ok, n)
        end)
        """
        let protocolPath = dir.appendingPathComponent("protocol.lua").path
        try protocolText.write(toFile: protocolPath, atomically: true, encoding: .utf8)
        func run(jobs: Int) -> (output: String, error: Error?) {
            var options = StudyOptions(protocolPath: protocolPath, moduleDirectories: [dir.path])
            options.recordingPath = storePath
            options.limits.timeLimitMilliseconds = 0
            options.jobs = jobs
            final class Collector: @unchecked Sendable { var text = "" }
            let out = Collector()
            // A participant's error stops that participant only: the runner lists it in `failures`.
            let runner = StudyRunner(options: options)
            do { try runner.run { out.text += $0 } } catch { return (out.text, error) }
            return (out.text, runner.failures.first)
        }
        let intact = run(jobs: 1)
        XCTAssertNil(intact.error)
        XCTAssertTrue(intact.output.contains("p2\t2024-11-22\ttrue\t1440"), intact.output)

        // Corrupt p2's heart-rate chunk: its value column no longer decodes.
        let queue = try DatabaseQueue(path: storePath)
        try queue.write { db in
            try db.execute(sql: """
                UPDATE chunkColumn SET data = x'ffffffffffffffff' WHERE name = 'heartRate' AND chunk IN
                  (SELECT chunk.id FROM chunk JOIN stream ON stream.id = chunk.stream WHERE stream.participant = 'p2')
                """)
        }
        try queue.close()
        for jobs in [1, 2] {
            let broken = run(jobs: jobs)
            let error = try XCTUnwrap(broken.error as? RunError, "jobs \(jobs): \(String(describing: broken.error))")
            let text = error.description
            XCTAssertEqual(error.participant, "p2")
            XCTAssertTrue(text.contains("cannot read \(storePath): participant p2, sensor heartRate, device Apple Watch (watch)"), text)
            XCTAssertTrue(text.contains("samples written in ("), text)
            XCTAssertTrue(text.contains("corrupt"), text)
            // p1 ran in full before; p2 stopped at its first read of the corrupt chunk, printing
            // no count (its first day reads nothing yet: the data is still in the hold).
            XCTAssertTrue(broken.output.contains("p1\t2024-11-23\ttrue\t1440"), broken.output)
            XCTAssertTrue(broken.output.hasSuffix("p2\t2024-11-20\ttrue\t0\n"), broken.output)
            XCTAssertTrue(text.hasPrefix("[p2 2024-11-21 12:00] "), text)
        }
    }
}
