import XCTest
@testable import SensorKitModel

final class RecordingTests: XCTestCase {
    func testStartRequiresEntitlementAndAuthorization() {
        var model = makeModel()
        if case .failed(let e) = model.startRecording(.visits) { XCTAssertEqual(e.code, .noAuthorization) } else { XCTFail() }
        if case .failed(let e) = model.stopRecording(.visits) { XCTAssertEqual(e.code, .noAuthorization) } else { XCTFail() }
        model.study.entitledSensors.remove(.visits)
        if case .failed(let e) = model.startRecording(.visits) { XCTAssertEqual(e.code, .invalidEntitlement) } else { XCTFail() }
        XCTAssertEqual(model.startRecording(.visits, stream: .deletionRecords), .ignored)
    }

    func testIdempotentStartStop() {
        var model = makeModel()
        _ = model.requestAuthorization([.visits], policy: .allowAll)
        XCTAssertEqual(model.startRecording(.visits), .willStart)
        model.advance(to: T0 + hour)
        XCTAssertEqual(model.startRecording(.visits), .willStart, "repeated start only ensures it is active")
        model.advance(to: T0 + 2 * hour)
        XCTAssertEqual(model.stopRecording(.visits), .didStop)
        XCTAssertEqual(model.stopRecording(.visits), .didStop, "stop while idle still reports didStop")
        model.advance(to: T0 + 5 * hour)
        XCTAssertEqual(model.recording.intervals(.visits, until: model.now), IntervalSet(after: T0, through: T0 + 2 * hour))
        XCTAssertFalse(model.recording.isActive(.visits, at: T0 + 3 * hour))
        XCTAssertTrue(model.recording.isActive(.visits, at: T0 + hour))
    }

    func testStakeholdersAreReferenceCounted() {
        var ledger = RecordingLedger()
        ledger.begin(.accelerometer, by: .system, at: T0)
        ledger.begin(.accelerometer, by: .studyApp, at: T0 + hour)
        XCTAssertEqual(ledger.stakeholders(.accelerometer, at: T0 + 2 * hour), [.studyApp, .system])
        ledger.end(.accelerometer, by: .studyApp, at: T0 + 3 * hour)
        XCTAssertTrue(ledger.isActive(.accelerometer, at: T0 + 4 * hour), "the system still records")
        ledger.end(.accelerometer, by: .system, at: T0 + 5 * hour)
        XCTAssertFalse(ledger.isActive(.accelerometer, at: T0 + 6 * hour))
        XCTAssertEqual(ledger.intervals(.accelerometer, until: T0 + day), IntervalSet(after: T0, through: T0 + 5 * hour))
        XCTAssertEqual(ledger.intervals(.accelerometer, by: .studyApp, until: T0 + day),
                       IntervalSet(after: T0 + hour, through: T0 + 3 * hour))
        XCTAssertEqual(ledger.lastStakeholderStops(.accelerometer, until: T0 + day), [T0 + 5 * hour])
        ledger.addInterval(.visits, by: .other("org.example.other"), after: T0, through: T0 + day)
        XCTAssertEqual(ledger.stakeholders(.visits, at: T0 + hour), [.other("org.example.other")])
    }

    func testRevocationEndsStakeholdership() {
        var model = makeModel()
        authorizeAndRecord(&model, [.accelerometer])
        model.advance(to: T0 + hour)
        let changes = model.revoke(.accelerometer)
        XCTAssertEqual(changes.map(\.to), [.denied, .denied])
        XCTAssertFalse(model.recording.isActive(.accelerometer, at: T0 + 2 * hour))
        if case .failed(let e) = model.startRecording(.accelerometer) { XCTAssertEqual(e.code, .noAuthorization) } else { XCTFail() }
        // Re-grant in Settings: recording resumes only when the app starts it again.
        model.advance(to: T0 + 2 * hour)
        XCTAssertEqual(model.grant(.accelerometer).count, 2)
        XCTAssertFalse(model.recording.isActive(.accelerometer, at: T0 + 2 * hour))
        XCTAssertEqual(model.startRecording(.accelerometer), .willStart)
        model.advance(to: T0 + 3 * hour)
        XCTAssertEqual(model.recording.intervals(.accelerometer, until: model.now),
                       IntervalSet([TimeRange(after: T0, through: T0 + hour), TimeRange(after: T0 + 2 * hour, through: T0 + 3 * hour)]))
    }

    func testGlobalSwitchOffGivesUnderlying4098() {
        var model = makeModel()
        _ = model.requestAuthorization([.visits], policy: .allowAll)
        let changes = model.setResearchDataCollection(enabled: false)
        // Every reader now reads denied, so every sensor's status changes (22 notifications).
        XCTAssertEqual(changes.count, 22)
        XCTAssertTrue(changes.contains(StatusChange(sensor: .visits, from: .authorized, to: .denied)))
        XCTAssertTrue(changes.allSatisfy { $0.to == .denied })
        XCTAssertEqual(model.setResearchDataCollection(enabled: true).first { $0.sensor == .visits }?.to, .authorized)
        XCTAssertEqual(model.setResearchDataCollection(enabled: false).count, 22)
        guard case .failed(let e) = model.startRecording(.visits) else { return XCTFail() }
        XCTAssertEqual(e.code, .noAuthorization)
        XCTAssertEqual(e.underlying?.code, .researchDataCollectionOff)
    }
}

final class ClockTests: XCTestCase {
    func testDeviceEpochAndConversions() {
        var clock = SRClock(activation: T0)
        XCTAssertEqual(clock.current(), SRAbsoluteTime(0))
        clock.advance(by: 100)
        XCTAssertEqual(clock.current(), SRAbsoluteTime(100))
        XCTAssertEqual(clock.srTime(atTrue: T0 + 50), SRAbsoluteTime(50))
        XCTAssertEqual(clock.trueTime(of: SRAbsoluteTime(50)), T0 + 50)
        let cfNow = T0 + 100 - cfAbsoluteTimeIntervalSince1970
        XCTAssertEqual(clock.toCFAbsoluteTime(clock.current()), cfNow)
        XCTAssertEqual(clock.fromCFAbsoluteTime(_cf: cfNow), SRAbsoluteTime(100))
        XCTAssertEqual(clock.toUnixTime(SRAbsoluteTime(50)), T0 + 50)
        XCTAssertEqual(clock.fromUnixTime(T0 + 50), SRAbsoluteTime(50))
        XCTAssertNotEqual(clock.current().rawValue, cfNow, "T10: SR time is not CF time by default")
    }

    func testCFAlignedEpoch() {
        let clock = SRClock(activation: T0, epochMode: .cfAligned(offset: 10), now: T0 + 5)
        XCTAssertEqual(clock.current().rawValue, T0 + 5 - cfAbsoluteTimeIntervalSince1970 + 10)
    }

    /// contract §14.5 #12: stored SR times unchanged; converted Dates of old samples shift.
    func testWallClockJump() {
        var clock = SRClock(activation: T0, now: T0 + day)
        let old = clock.srTime(atTrue: T0 + hour)
        let before = clock.toUnixTime(old)
        XCTAssertEqual(before, T0 + hour)
        clock.jumpWallClock(by: 3_600)
        XCTAssertEqual(clock.srTime(atTrue: T0 + hour), old, "SR values never change")
        XCTAssertEqual(clock.current(), SRAbsoluteTime(day), "SR now does not jump")
        XCTAssertEqual(clock.toUnixTime(old), before + 3_600, "the converted Date shifts by the jump")
        XCTAssertEqual(clock.wallNow, T0 + day + 3_600)
        XCTAssertEqual(clock.wallTime(atTrue: T0 + hour), T0 + hour, "what the device showed back then")
        // Round trip with one offset is exact.
        XCTAssertEqual(clock.fromUnixTime(clock.toUnixTime(old)), old)
        clock.advance(by: 10)
        clock.jumpWallClock(by: -7_200)
        XCTAssertEqual(clock.toUnixTime(old), before - 3_600)
    }

    func testRebootKeepsSRRunningButResetsUptime() {
        var clock = SRClock(activation: T0)
        clock.advance(to: T0 + 1_000)
        clock.reboot()
        clock.advance(to: T0 + 1_010)
        XCTAssertEqual(clock.current(), SRAbsoluteTime(1_010))
        XCTAssertEqual(clock.uptime(atTrue: clock.now), 10)
        XCTAssertEqual(clock.uptime(atTrue: T0 + 500), 500)
        XCTAssertEqual(clock.continuousTime(), 240_000_000)
        XCTAssertEqual(clock.fromContinuousTime(clock.continuousTime()), clock.current())
        XCTAssertEqual(clock.fromContinuousTime(0), SRAbsoluteTime(1_000))
    }
}

final class IntervalSetTests: XCTestCase {
    func testAlgebra() {
        let a = IntervalSet([TimeRange(after: 0, through: 10), TimeRange(after: 20, through: 30)])
        let b = IntervalSet(after: 5, through: 25)
        XCTAssertEqual(a.intersection(b), IntervalSet([TimeRange(after: 5, through: 10), TimeRange(after: 20, through: 25)]))
        XCTAssertEqual(a.subtracting(b), IntervalSet([TimeRange(after: 0, through: 5), TimeRange(after: 25, through: 30)]))
        XCTAssertEqual(a.union(b), IntervalSet(after: 0, through: 30))
        XCTAssertEqual(IntervalSet([TimeRange(after: 0, through: 1), TimeRange(after: 1, through: 2)]).ranges.count, 1)
        XCTAssertTrue(a.contains(10))
        XCTAssertFalse(a.contains(0), "(after, through] excludes `after`")
        XCTAssertFalse(a.contains(15))
        XCTAssertEqual(a.totalDuration, 20)
        XCTAssertEqual(a.subtracting(.everything), IntervalSet())
        XCTAssertEqual(a.shifted(by: 5).lowerBound, 5)
        XCTAssertEqual(IntervalSet(after: 0, through: 100).subtracting(IntervalSet([TimeRange(after: 10, through: 20),
                                                                                    TimeRange(after: 30, through: 40)])).ranges.count, 3)
    }
}
