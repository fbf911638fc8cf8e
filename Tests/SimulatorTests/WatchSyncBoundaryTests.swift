import Foundation
import XCTest
import SensorKitModel
import Simulator

/// Watch data reach the phone at the first sync after measurement + `watchSyncLag`
/// (contract §4.3), so a sync carries data from both sides of a `startRecording`,
/// `stopRecording` or revocation. A fetch must return exactly the watch samples
/// measured while recording was on: none from outside, none lost inside (contract §6.2 item 2).
final class WatchSyncBoundaryTests: XCTestCase {
    let ana = ParticipantDescription(id: "ana", timeZone: "Europe/Berlin", watch: .defaultWatch, profile: {
        var p = ParticipantProfile(preset: .officeWorker)
        p.wearsWatchToSleep = true
        return p
    }())

    func model(_ source: SimulatedSource) -> ParticipantModel {
        var sw = WorldSwitches()
        sw.duplicateRate = 0
        return ParticipantModel(participant: "ana", study: .permissive, switches: sw, activation: simMonday - 30 * simDay)
    }

    /// Start, stop, start, revocation, re-grant and start, stop — at times off the sync grid.
    func recordWithBoundaries(_ m: inout ParticipantModel, _ sensors: [Sensor]) {
        m.advance(to: simMonday + 9 * 3_600 + 7 * 60 + 13)
        XCTAssertNil(m.requestAuthorization(Set(sensors), policy: .allowAll).error)
        for s in sensors { XCTAssertEqual(m.startRecording(s), .willStart) }
        m.advance(to: simMonday + simDay + 14 * 3_600 + 22 * 60 + 41)
        for s in sensors { XCTAssertEqual(m.stopRecording(s), .didStop) }
        m.advance(to: simMonday + simDay + 18 * 3_600 + 5 * 60 + 9)
        for s in sensors { XCTAssertEqual(m.startRecording(s), .willStart) }
        m.advance(to: simMonday + 2 * simDay + 11 * 3_600 + 31 * 60 + 17)
        for s in sensors { _ = m.revoke(s) }
        m.advance(to: simMonday + 3 * simDay + 1 * 3_600 + 2 * 60 + 3)
        for s in sensors { _ = m.grant(s) }
        m.advance(to: simMonday + 3 * simDay + 2 * 3_600 + 13 * 60 + 7)
        for s in sensors { XCTAssertEqual(m.startRecording(s), .willStart) }
        m.advance(to: simMonday + 4 * simDay + 7 * 3_600 + 41 * 60 + 29)
        for s in sensors { XCTAssertEqual(m.stopRecording(s), .didStop) }
        m.advance(to: simMonday + 7 * simDay)
    }

    /// The same participant recorded by the system all along: every sample that exists.
    func everything(_ source: SimulatedSource, _ sensor: Sensor, now: Double) throws -> SampleBatch {
        var m = model(source)
        _ = m.authorization.setStatus(sensor, .authorized)
        m.recording.addInterval(sensor, by: .system, after: simMonday - 2 * simDay, through: now)
        m.advance(to: now)
        let req = FetchRequest(from: m.clock.srTime(atTrue: simMonday - 2 * simDay), to: m.clock.srTime(atTrue: now),
                               device: .defaultWatch)
        return try m.fetch(req, sensor: sensor, source: source).plan!.collect()
    }

    func testHeartRateFetchIsExactlyWhatWasMeasuredWhileRecording() throws {
        let source = makeSimSource([ana])
        var m = model(source)
        recordWithBoundaries(&m, [.heartRate])
        let recorded = m.recording.intervals(.heartRate, until: m.now)
        XCTAssertEqual(recorded.ranges.count, 3)
        let req = FetchRequest(from: m.clock.srTime(atTrue: simMonday - simDay), to: m.clock.srTime(atTrue: m.now),
                               device: .defaultWatch)
        let got = try m.fetch(req, sensor: .heartRate, source: source).plan!.collect()

        let all = try everything(source, .heartRate, now: m.now)
        let keep = all.times.indices.filter { recorded.contains(all.times[$0]) }
        let expected = all.gather(keep)
        XCTAssertGreaterThan(expected.count, 50_000)

        // The scenario does cross syncs: a fixed lag on the write axis would both leak
        // samples measured before a start and lose samples measured before a stop.
        let shifted = recorded.shifted(by: SimulationSettings().watchSyncLag)
        let leaks = all.times.indices.filter { shifted.contains(all.writeTimes[$0]) && !recorded.contains(all.times[$0]) }
        let losses = all.times.indices.filter { !shifted.contains(all.writeTimes[$0]) && recorded.contains(all.times[$0]) }
        XCTAssertGreaterThan(leaks.count, 0)
        XCTAssertGreaterThan(losses.count, 0)

        XCTAssertEqual(got.count, expected.count)
        let outside = got.times.filter { !recorded.contains($0) }
        XCTAssertEqual(outside.count, 0, "samples measured while not recording: \(outside.prefix(5))")
        XCTAssertEqual(got.times, expected.times, "every sample measured while recording, none lost")
        XCTAssertEqual(got.writeTimes, expected.writeTimes)
        XCTAssertEqual(got.column("heartRate"), expected.column("heartRate"))
    }

    func testWatchAccelerometerBatchesAroundAStartFollowTheWatchWrite() throws {
        let source = makeSimSource([ana])
        var m = model(source)
        recordWithBoundaries(&m, [.accelerometer])
        let recorded = m.recording.intervals(.accelerometer, until: m.now)
        let start = recorded.ranges[0].after
        // The syncs around the first start: written one lag later, give or take a sync.
        let req = FetchRequest(from: m.clock.srTime(atTrue: start + 3_600 - 1_800),
                               to: m.clock.srTime(atTrue: start + 3_600 + 3_600), device: .defaultWatch)
        let got = try m.fetch(req, sensor: .accelerometer, source: source).plan!.collect()
        XCTAssertGreaterThan(got.count, 0)
        // A watch batch is written by the watch at its end (the last element + 1/50 s).
        guard let ids = got.column("identifier")?.data.ints else { return XCTFail("no identifier column") }
        var lastOfBatch: [Int64: Double] = [:]
        for (i, id) in ids.enumerated() { lastOfBatch[id] = max(lastOfBatch[id] ?? -.infinity, got.times[i]) }
        for (id, last) in lastOfBatch {
            XCTAssertTrue(recorded.contains(last + 0.02), "batch \(id) ends at \(last), before recording started at \(start)")
        }
        // And the first batch written by the watch after the start is there.
        let firstBatchEnd = (start / 60).rounded(.up) * 60
        XCTAssertTrue(got.times.contains { abs($0 - (firstBatchEnd - 0.02)) < 1e-6 }, "the first recorded batch is delivered")
        // The same syncs carry batches the watch wrote before the start (so the filter is exercised).
        let raw = source.samples(participant: "ana", sensor: .accelerometer, device: .defaultWatch,
                                 writtenAfter: start + 3_600 - 1_800, through: start + 3_600 + 3_600)
        XCTAssertGreaterThan(raw.times.filter { $0 < start - 60 }.count, 0)
        XCTAssertLessThan(got.count, raw.count)
    }

    func testOnWristRecordsOutsideRecordingAreNotDelivered() throws {
        let source = makeSimSource([ana])
        var m = model(source)
        recordWithBoundaries(&m, [.onWristState])
        let recorded = m.recording.intervals(.onWristState, until: m.now)
        let req = FetchRequest(from: m.clock.srTime(atTrue: simMonday - simDay), to: m.clock.srTime(atTrue: m.now),
                               device: .defaultWatch)
        let got = try m.fetch(req, sensor: .onWristState, source: source).plan!.collect()
        XCTAssertGreaterThan(got.count, 4)
        guard case .bool(let on)? = got.column("onWrist")?.data, case .double(let onDate)? = got.column("onWristDate")?.data,
              case .double(let offDate)? = got.column("offWristDate")?.data else { return XCTFail("columns") }
        for i in 0..<got.count {
            // The change this record reports happened at its onWristDate (put on) or offWristDate (taken off).
            let changed = on[i] ? onDate[i] : offDate[i]
            XCTAssertTrue(recorded.contains(changed), "wear change at \(changed) reported although not recording")
        }
    }
}
