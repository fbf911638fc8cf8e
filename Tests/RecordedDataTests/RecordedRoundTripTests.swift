import Foundation
import XCTest
import SensorKitModel
import Simulator
@testable import StudyStore
@testable import Importers

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
                    assertSameRows(try rec.samples(participant: p.id, sensor: sensor, device: device, writtenAfter: start, through: end),
                                   expected, what)
                    let step = (end - start) / Double(pieces)
                    var t = start
                    while t < end {
                        let hi = min(end, t + step * 0.93)
                        let lo = expected.writeTimes.firstIndex { $0 > t } ?? expected.count
                        let up = expected.writeTimes.firstIndex { $0 > hi } ?? expected.count
                        assertSameRows(try rec.samples(participant: p.id, sensor: sensor, device: device, writtenAfter: t, through: hi),
                                       lo < up ? expected.slice(lo..<up) : SampleBatch.empty(for: sensor), "\(what) (\(t - start), \(hi - start)]")
                        t = hi
                    }
                }
            }
        }
    }

    /// Float32 columns: the export writes them as Float32 text (`Float.description`) and lists
    /// them in the manifest; a column whose later values are not all Float32s is written again
    /// as doubles; import gives back every value bit-exact (subnormals, -0.0, integers, huge and
    /// tiny exponents) and export → import → export the same bytes.
    func testFloat32ColumnsRoundTripBitExact() throws {
        let specials: [Float] = [.leastNonzeroMagnitude, -0.0, 0, 1, -3, 1e30, -1e-30, 0.1, 16_777_216, .greatestFiniteMagnitude,
                                 1e-4, 9.9e-5, 0.0123, -0.98, Float(3e-42 as Double)]
        let fields = Sensor.accelerometer.info.columnFields
        func batch(_ w: Double, _ first: Int) -> SampleBatch {
            let n = specials.count
            let times = (0..<n).map { w - 60 + Double($0) * 0.02 }
            let cols = fields.map { f -> Column in
                switch f.name {
                case "x": Column(name: "x", data: .double(specials.map { Double($0) }))
                // Float32s in the first batch; the second holds one double that is not.
                case "y": Column(name: "y", data: .double((0..<n).map { first > 0 && $0 == 3 ? 0.1 : Double(Float(first + $0) * 0.37) }))
                case "z": Column(name: "z", data: .double((0..<n).map { 1.0 / Double(first + $0 + 3) }))
                case "timestamp": Column(name: "timestamp", data: .double(times.map { $0 - 1_772_000_000 }))
                default: Column(name: f.name, data: .int((0..<n).map { Int64(first + $0) }))
                }
            }
            return SampleBatch(sensor: .accelerometer, writeTimes: Array(repeating: w, count: n), times: times, columns: cols)
        }
        var all = batch(recMonday + 60, 0)
        all.append(batch(recMonday + 120, specials.count))
        let source = FixedSource(device: recordedPhone, batch: all)
        let dir = try recordedTempDir(self)
        let study = NativeFormat.Study(start: recMonday, end: recMonday + 3_600, participants: [.init(id: "P", timeZone: "UTC")],
                                       sensors: [.accelerometer])
        let first = dir.appendingPathComponent("first"), second = dir.appendingPathComponent("second")
        XCTAssertEqual(try NativeFormat.export(study, source: source, to: first).rows, all.count)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: first.appendingPathComponent("manifest.json"))) as? [String: Any]
        let stream = ((manifest?["participants"] as? [[String: Any]])?.first?["streams"] as? [[String: Any]])?.first
        XCTAssertEqual(stream?["float32"] as? [String], ["x"], "y was written again as doubles; z never held Float32s")
        let csv = try String(contentsOf: first.appendingPathComponent("P/phone/accelerometer.csv"), encoding: .utf8)
        XCTAssertTrue(csv.contains(",0.0123,") && csv.contains(",1e+30,") && csv.contains(",-0.0,"), "Float32 text")
        XCTAssertFalse(csv.contains(Double(Float(0.0123)).description), "not the widened double's 17 digits")
        XCTAssertTrue(csv.contains(",0.1,"), "y's double 0.1 as a double")

        let store = try RecordedStore(path: dir.appendingPathComponent("study.sqlite").path)
        try store.importData(ImportRequest(format: .native, sources: [first.path], progressBar: false))
        let rec = try store.source()
        assertSameRows(try rec.samples(participant: "P", sensor: .accelerometer, device: recordedPhone,
                                   writtenAfter: recMonday, through: recMonday + 3_600), all, "stored rows")
        try NativeFormat.export(study, source: rec, to: second)
        for file in ["manifest.json", "P/phone/accelerometer.csv"] {
            XCTAssertEqual(try Data(contentsOf: first.appendingPathComponent(file)), try Data(contentsOf: second.appendingPathComponent(file)),
                           "\(file): export → import → export gives the same bytes")
        }

        // A manifest may list only number columns.
        let text = try String(contentsOf: first.appendingPathComponent("manifest.json"), encoding: .utf8)
        try text.replacingOccurrences(of: "\"float32\":[\"x\"]", with: "\"float32\":[\"identifier\"]")
            .write(to: first.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .native, sources: [first.path], progressBar: false))) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("$.participants[0].streams[0].float32[0]") && message.contains("x, y, z, timestamp")
                          && message.contains("\"identifier\""), message)
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
                let a = try model.fetch(req, sensor: s, source: rec).plan!.collect()
                let b = try model.fetch(req, sensor: s, source: sim).plan!.collect()
                XCTAssertGreaterThan(b.count, 0, "\(s) has data")
                assertSameRows(a, b, "fetch \(s) \(device.kind)")
            }
        }
    }
}

/// One device's rows of one batch, answered by write time.
struct FixedSource: SampleSource {
    let device: SRDevice
    let batch: SampleBatch

    func devices(participant: String) -> [SRDevice] { [device] }

    func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double) -> SampleBatch {
        guard sensor == batch.sensor, device == self.device else { return SampleBatch.empty(for: sensor) }
        let rows = batch.writeTimes.indices.filter { batch.writeTimes[$0] > after && batch.writeTimes[$0] <= through }
        guard let lo = rows.first, let hi = rows.last else { return SampleBatch.empty(for: sensor) }
        return batch.slice(lo..<hi + 1)
    }
}
