import Foundation
import XCTest
import SensorKitModel
@testable import SensorBackends

/// simulate → export (native) → import → the store answers exactly what the simulator did.
final class RecordedRoundTripTests: XCTestCase {
    static let dense: Set<Sensor> = [.accelerometer, .rotationRate]

    func study(_ start: Double, _ end: Double, sensors: [Sensor]) -> NativeFormat.Study {
        NativeFormat.Study(start: start, end: end, participants: recTrio.map { p in
            NativeFormat.Study.Participant(
                id: p.id, timeZone: p.timeZone,
                authorization: [AuthorizationChange(sensor: .heartRate, at: start, status: .authorized),
                                AuthorizationChange(sensor: .heartRate, at: start + 30_000, status: .denied)],
                deletions: [DeletionEvent(sensor: .ambientLightSensor, device: nil, range: TimeRange(after: start + 3_600, through: start + 7_200),
                                          at: start + 10_000, reason: .userInitiated)])
        }, sensors: sensors)
    }

    /// Every sensor the simulator implements except the 50 Hz streams and PPG, over two days of three participants.
    func testEverySparseSensorRoundTripsOverTwoDays() throws {
        let sensors = SimulatedSource.implementedSensors.filter { !Self.dense.contains($0) && $0 != .photoplethysmogram }
        try roundTrip(sensors: sensors, start: recMonday, end: recMonday + 2 * recDay, pieces: 7)
    }

    /// PPG: 32 Hz windows whose every element holds nested optical and accelerometer
    /// samples (≈ 40 values a row), over two daytime hours of three participants.
    func testPhotoplethysmogramRoundTrip() throws {
        try roundTrip(sensors: [.photoplethysmogram], start: recMonday + 9 * 3_600, end: recMonday + 11 * 3_600, pieces: 3)
    }

    /// The 50 Hz streams (phone and watch), over half an hour of three participants (debug builds parse 17-digit doubles slowly).
    func testDenseSensorsRoundTrip() throws {
        let sensors = SimulatedSource.implementedSensors.filter { Self.dense.contains($0) }
        try roundTrip(sensors: sensors, start: recMonday + 9 * 3_600, end: recMonday + 9.5 * 3_600, pieces: 5)
    }

    func roundTrip(sensors: [Sensor], start: Double, end: Double, pieces: Int) throws {
        let sim = makeRecSource(seed: 11, recTrio)
        let dir = try recordedTempDir(self)
        let folder = dir.appendingPathComponent("export")
        let exported = try NativeFormat.export(study(start, end, sensors: sensors), source: sim, to: folder)
        XCTAssertGreaterThan(exported.rows, 0)
        let store = try RecordedStore(path: dir.appendingPathComponent("study.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
        XCTAssertEqual(stats.rowsRead, exported.rows)
        XCTAssertEqual(stats.rowsStored, exported.rows, "no row of the simulator is an exact duplicate")
        let rec = try store.source()
        // Importing the same folder again changes nothing.
        let digest = try store.contentDigest()
        let again = try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
        XCTAssertEqual(again.rowsStored, 0)
        XCTAssertEqual(again.metadataAdded, 0)
        XCTAssertEqual(again.duplicatesAlreadyStored, exported.rows)
        XCTAssertEqual(try store.contentDigest(), digest)

        XCTAssertEqual(rec.participants.map(\.id), recTrio.map(\.id), "in import order")
        for p in recTrio {
            XCTAssertEqual(rec.participant(p.id)?.timeZone, p.timeZone)
            XCTAssertEqual(rec.devices(participant: p.id), sim.devices(participant: p.id), "devices of \(p.id), phone first")
            XCTAssertEqual(rec.authorizationTimeline(participant: p.id).map(\.status), [.authorized, .denied])
            XCTAssertEqual(rec.deletions(participant: p.id).count, 1)
            XCTAssertFalse(rec.recordingIntervals(participant: p.id).isEmpty)
            for device in sim.devices(participant: p.id) {
                for sensor in sensors {
                    let what = "\(p.id) \(device.kind) \(sensor)"
                    // What the exporter asked the simulator: the span in its write-time pieces.
                    let piece = (sensor.info.cadence.nominalPeriod ?? 60) < 5 ? 3_600.0 : 86_400.0
                    var expected = SampleBatch.empty(for: sensor)
                    var t0 = start
                    while t0 < end {
                        expected.append(sim.samples(participant: p.id, sensor: sensor, device: device, writtenAfter: t0, through: min(end, t0 + piece)))
                        t0 += piece
                    }
                    // The whole span in one call, and in uneven pieces (as a fetch asks).
                    assertSameRows(rec.samples(participant: p.id, sensor: sensor, device: device, writtenAfter: start, through: end),
                                   expected, what)
                    let step = (end - start) / Double(pieces)
                    var t = start
                    while t < end {
                        let hi = min(end, t + step * 0.93)
                        let lo = expected.writeTimes.firstIndex { $0 > t } ?? expected.count
                        let up = expected.writeTimes.firstIndex { $0 > hi } ?? expected.count
                        assertSameRows(rec.samples(participant: p.id, sensor: sensor, device: device, writtenAfter: t, through: hi),
                                       lo < up ? expected.slice(lo..<up) : SampleBatch.empty(for: sensor), "\(what) (\(t - start), \(hi - start)]")
                        t = hi
                    }
                }
            }
        }
    }

    /// Through the model: a fetch over the recorded source delivers what the same fetch over the simulator does.
    func testFetchThroughTheModelMatches() throws {
        let sim = makeRecSource(seed: 5, [recTrio[0]])
        let dir = try recordedTempDir(self)
        let folder = dir.appendingPathComponent("export")
        let sensors: [Sensor] = [.ambientLightSensor, .heartRate, .deviceUsageReport]
        let start = recMonday, end = recMonday + 3 * recDay
        try NativeFormat.export(NativeFormat.Study(start: start, end: end, participants: [
            .init(id: "ana", timeZone: "Europe/Berlin"),
        ], sensors: sensors), source: sim, to: folder)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
        let rec = try store.source()
        var study = ResolvedStudy()
        study.entitledSensors = Set(sensors)
        var model = ParticipantModel(participant: "ana", study: study, activation: start - 30 * recDay)
        for s in sensors {
            _ = model.authorization.setStatus(s, .authorized)
            // Recording began well before the exported span: the export holds every row
            // *written* after `start`, including watch rows measured before it, which the
            // simulator delivers only if they were measured while recording (contract §6.2 item 2).
            model.recording.addInterval(s, by: .system, after: start - 2 * recDay, through: end)
        }
        model.advance(to: end)
        for s in sensors {
            for device in sim.devices(participant: "ana") where s.deviceKinds.contains(device.kind) {
                let req = FetchRequest(from: model.clock.srTime(atTrue: start), to: model.clock.srTime(atTrue: end), device: device)
                let a = model.fetch(req, sensor: s, source: rec).plan!.collect()
                let b = model.fetch(req, sensor: s, source: sim).plan!.collect()
                XCTAssertGreaterThan(b.count, 0, "\(s) has data")
                assertSameRows(a, b, "fetch \(s) \(device.kind)")
            }
        }
    }
}
