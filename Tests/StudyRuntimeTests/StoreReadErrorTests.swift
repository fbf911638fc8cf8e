import Foundation
import GRDB
import XCTest
import Simulator
import StudyStore
import Importers
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
          local ok, n = pcall(function()
            local device = hr:devices()[1]
            return hr:samples { device = device, from = now - days(2), to = now - days(1) }:count()
          end)
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
            // The failure carries the store's read error itself, thrown up the data path.
            let read = try XCTUnwrap(error.error.hostError as? SampleReadError, "\(error)")
            XCTAssertEqual(read.store, storePath)
            XCTAssertEqual(read.participant, "p2")
            XCTAssertEqual(read.sensor, .heartRate)
            XCTAssertTrue(text.contains(read.description), text)
        }
    }

    /// A world of simulated participants whose source cannot read the data of `broken`:
    /// every read for that participant throws a `SampleReadError`.
    struct BrokenWorld: CohortWorld, WorkerWorld, SampleSource {
        let simulated: SimulatedSource
        let broken: String
        var source: any SampleSource { self }
        func open(fresh: Bool) -> any WorkerWorld { self }
        func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange] { [] }
        func devices(participant: String) -> [SRDevice] { simulated.devices(participant: participant) }
        func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double) throws -> SampleBatch {
            guard participant != broken else {
                throw SampleReadError(store: "test double", participant: participant, sensor: sensor, device: device,
                                      range: TimeRange(after: after, through: through), message: "unreadable on purpose")
            }
            return simulated.samples(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through)
        }
    }

    struct BrokenPlanner: CohortPlanner {
        func plan(_ options: StudyOptions) throws -> CohortPlan {
            let utc = TimeZone(identifier: "UTC")!
            let start = LocalTime.parse("2026-03-02", utc)!
            let ids = ["a", "broken", "c"]
            let simulated = try SimulatedSource(seed: 3, participants: ids.map {
                ParticipantDescription(id: $0, timeZone: "UTC", watch: nil, profile: ParticipantProfile(preset: .officeWorker))
            })
            let settings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                       start: start, days: 3, seed: 7, limits: options.limits, switches: WorldSwitches(), failFast: false)
            return CohortPlan(settings: settings, setups: ids.map { ParticipantSetup(id: $0, timeZone: utc) },
                              world: BrokenWorld(simulated: simulated, broken: "broken"), facts: [], warnings: [])
        }
    }

    /// Runs `body` (the protocol's daily 12:00 read of yesterday's pedometer data) over the
    /// cohort a, broken, c; checks that only `broken` failed, with the read error itself.
    func assertOnlyBrokenFails(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws -> (output: String, runner: StudyRunner) {
        let h = try ProtocolHarness()
        let path = try h.write("protocol.lua", """
            local T = require "t"
            T.study({ "pedometerData" })
            local ped = sensorkit.reader "pedometerData"
            sensorkit.requestAuthorization({ "pedometerData" }, function(e) ped:startRecording() end)
            schedule.daily("12:00", function(now)
              local from, to = now - days(2), now - days(1)
            \(body)
            end)
            """)
        var options = StudyOptions(protocolPath: path, moduleDirectories: [h.folder.path])
        options.limits.timeLimitMilliseconds = 0
        let runner = StudyRunner(options: options, planner: BrokenPlanner())
        var output = ""
        try runner.run { output += $0 }
        XCTAssertEqual(runner.failures.map(\.participant), ["broken"], output, file: file, line: line)
        let failure = try XCTUnwrap(runner.failures.first, file: file, line: line)
        let read = try XCTUnwrap(failure.error.hostError as? SampleReadError, "\(failure)", file: file, line: line)
        XCTAssertEqual(read.participant, "broken", file: file, line: line)
        XCTAssertEqual(read.sensor, .pedometerData, file: file, line: line)
        XCTAssertEqual(read.message, "unreadable on purpose", file: file, line: line)
        // The participant's finding says what the read error says; the others ran to the end.
        let finding = try XCTUnwrap(runner.findings.first { $0.participant == "broken" }, file: file, line: line)
        XCTAssertTrue(finding.message.contains("cannot read test double: participant broken, sensor pedometerData, device iPhone (phone)"),
                      finding.message, file: file, line: line)
        XCTAssertTrue(finding.message.contains(": unreadable on purpose"), finding.message, file: file, line: line)
        // Day 1 reads nothing yet (the hold); day 2's read stops `broken`.
        XCTAssertTrue(output.contains("broken\tread\t2026-03-02"), output, file: file, line: line)
        XCTAssertFalse(output.contains("broken\tread\t2026-03-03"), output, file: file, line: line)
        for id in ["a", "c"] {
            XCTAssertTrue(output.contains("\(id)\tread\t2026-03-04"), output, file: file, line: line)
            XCTAssertFalse(runner.report.coverage.hours[id]?[.pedometerData]?.isEmpty ?? true,
                           "the report's coverage follows what \(id)'s fetches delivered", file: file, line: line)
        }
        return (output, runner)
    }

    func testAReadErrorInASampleSetPassEndsOnlyThatParticipantWhateverItCatches() throws {
        _ = try assertOnlyBrokenFails("""
              local ok, n = pcall(function() return ped:samples { from = from, to = to }:count() end)
              print(sensorkit.participant(), "read", time.day(now), ok, n)
            """)
    }

    func testAReadErrorInTostringOfASetEndsThatParticipant() throws {
        _ = try assertOnlyBrokenFails("""
              local ok, text = pcall(tostring, ped:samples { from = from, to = to })
              print(sensorkit.participant(), "read", time.day(now), ok, text)
            """)
    }

    /// `reader:fetch` delivers from the event loop, in Swift: the read error is thrown there.
    func testAReadErrorWhileDeliveringAFetchEndsThatParticipant() throws {
        let (output, _) = try assertOnlyBrokenFails("""
              local n = 0
              ped.delegate = {
                didFetchResult = function() n = n + 1; return true end,
                didCompleteFetch = function() print(sensorkit.participant(), "read", time.day(now), n) end,
              }
              ped:fetch { from = from, to = to }
            """)
        XCTAssertTrue(output.contains("a\tread\t2026-03-04\t"), output)
    }
}
