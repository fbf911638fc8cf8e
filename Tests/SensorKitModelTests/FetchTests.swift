import XCTest
@testable import SensorKitModel

final class FetchTests: XCTestCase {
    let source = MinuteSource()
    let phone = SRDevice.defaultPhone
    let watch = SRDevice.defaultWatch

    func request(_ model: ParticipantModel, after: Double, through: Double, device: SRDevice? = .defaultPhone) -> FetchRequest {
        FetchRequest(from: model.sr(after), to: model.sr(through), device: device)
    }

    // MARK: Validation and gates (contract §7.2)

    func testInvalidRequests() {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData])
        let e1 = model.fetch(FetchRequest(from: SRAbsoluteTime(10), to: SRAbsoluteTime(5), device: phone), sensor: .pedometerData, source: source).error
        XCTAssertEqual(e1?.code, .fetchRequestInvalid)
        XCTAssertEqual(model.fetch(FetchRequest(from: SRAbsoluteTime(0), device: phone), sensor: .pedometerData, source: source)
            .error?.code, .fetchRequestInvalid)
        XCTAssertEqual(model.fetch(FetchRequest(), sensor: .pedometerData, source: source).error?.code.rawValue, 3)
        // from == to: empty, no error.
        let same = model.fetch(FetchRequest(from: SRAbsoluteTime(5), to: SRAbsoluteTime(5), device: phone), sensor: .pedometerData, source: source)
        XCTAssertEqual(same.plan?.isEmpty, true)
        // Validation comes before the entitlement check.
        model.study.entitledSensors.remove(.pedometerData)
        XCTAssertEqual(model.fetch(FetchRequest(from: SRAbsoluteTime(10), to: SRAbsoluteTime(5)), sensor: .pedometerData, source: source)
            .error?.code, .fetchRequestInvalid)
    }

    func testEntitlementThenAuthorizationThenLock() {
        var model = makeModel()
        let r = request(model, after: T0, through: T0 + hour)
        XCTAssertEqual(model.fetch(r, sensor: .visits, source: source).error?.code, .noAuthorization, "contract §14.5 #1: notDetermined")
        model.study.entitledSensors.remove(.visits)
        XCTAssertEqual(model.fetch(r, sensor: .visits, source: source).error?.code, .invalidEntitlement, "0 before 1")
        model.study.entitledSensors.insert(.visits)
        _ = model.requestAuthorization([.visits], policy: .allowAll)
        model.deviceLocked = true
        XCTAssertEqual(model.fetch(r, sensor: .visits, source: source).error?.code, .dataInaccessible)
        model.switches.lockedFetchError = .internalError
        XCTAssertEqual(model.fetch(r, sensor: .visits, source: source).error?.code.rawValue, 8194)
        model.deviceLocked = false
        XCTAssertNotNil(model.fetch(r, sensor: .visits, source: source).plan)
        model.switches.platform = .catalyst
        guard case .ignored = model.fetch(r, sensor: .visits, source: source) else { return XCTFail() }
    }

    /// contract §14.5 #10.
    func testRevocationThenNoAuthorization() {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData])
        model.advance(to: T0 + 25 * hour)
        XCTAssertEqual(model.fetch(request(model, after: T0, through: model.now), sensor: .pedometerData, source: source)
            .batch().count, 60)
        let changes = model.revoke(.pedometerData)
        XCTAssertEqual(changes, [StatusChange(sensor: .pedometerData, from: .authorized, to: .denied)])
        XCTAssertEqual(model.status(.pedometerData), .denied)
        XCTAssertEqual(model.fetch(request(model, after: T0, through: model.now), sensor: .pedometerData, source: source)
            .error?.code, .noAuthorization)
        XCTAssertEqual(model.fetch(request(model, after: T0, through: model.now), sensor: .pedometerData, stream: .deletionRecords,
                                   source: source).error?.code, .noAuthorization, "the tombstone stream shares the status")
        let again = model.requestAuthorization([.pedometerData], policy: .allowAll)
        XCTAssertEqual(again.error?.code, .promptDeclined)
        XCTAssertEqual(again.error?.underlying?.code.rawValue, 8201)
    }

    // MARK: Holding period (contract §8.1, §14.5 #5)

    func testHoldingPeriodClamp() throws {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData])
        model.advance(to: T0 + hour)
        let early = model.fetch(FetchRequest(from: SRAbsoluteTime(0), to: model.clock.current(), device: phone),
                                sensor: .pedometerData, source: source)
        XCTAssertEqual(early.plan?.isEmpty, true)
        XCTAssertEqual(early.batch().count, 0, "an hour after start: nothing")
        model.advance(to: T0 + 25 * hour)
        let plan = model.fetch(FetchRequest(from: SRAbsoluteTime(0), to: model.clock.current(), device: phone),
                               sensor: .pedometerData, source: source).plan!
        let rows = try plan.collect()
        XCTAssertEqual(rows.count, 60, "about an hour of data: one sample per minute")
        XCTAssertEqual(rows.writeTimes.first, T0 + 60)
        XCTAssertEqual(rows.writeTimes.last, T0 + hour)
        XCTAssertTrue(plan.notes.contains { $0.contains("clamped") })
        XCTAssertEqual(plan.ranges, IntervalSet(after: T0, through: T0 + hour))
    }

    func testHoldingPeriodStrictDoc() {
        var model = makeModel { $0.holdingMode = .strictDoc }
        authorizeAndRecord(&model, [.pedometerData])
        model.advance(to: T0 + 25 * hour)
        XCTAssertEqual(model.fetch(request(model, after: T0 - day, through: model.now), sensor: .pedometerData, source: source)
            .batch().count, 0, "overlap ⇒ zero results")
        XCTAssertEqual(model.fetch(request(model, after: T0 - day, through: T0 + hour), sensor: .pedometerData, source: source)
            .batch().count, 60, "a range ending at now − 24 h is fine")
    }

    func testFaceMetricsHoldsSevenAndAHalfDays() {
        var model = makeModel()
        authorizeAndRecord(&model, [.faceMetrics])
        model.advance(to: T0 + 7 * day)
        XCTAssertEqual(model.fetch(request(model, after: T0, through: model.now), sensor: .faceMetrics, source: source).batch().count, 0)
        model.advance(to: T0 + 7.5 * day + hour)
        XCTAssertEqual(model.fetch(request(model, after: T0, through: model.now), sensor: .faceMetrics, source: source).batch().count, 60)
    }

    // MARK: Recording gating (contract §6, T9)

    func testOnlyDataWrittenWhileRecording() {
        var model = makeModel()
        _ = model.requestAuthorization([.pedometerData], policy: .allowAll)
        model.advance(to: T0 + 25 * hour)
        XCTAssertEqual(model.fetch(request(model, after: T0 - day, through: model.now), sensor: .pedometerData, source: source)
            .batch().count, 0, "T9: never recorded ⇒ zero results, no error")

        var m2 = makeModel()
        authorizeAndRecord(&m2, [.pedometerData])
        m2.advance(to: T0 + 2 * hour)
        XCTAssertEqual(m2.stopRecording(.pedometerData), .didStop)
        m2.advance(to: T0 + 5 * hour)
        XCTAssertEqual(m2.startRecording(.pedometerData), .willStart)
        m2.advance(to: T0 + 30 * hour)
        let b = m2.fetch(request(m2, after: T0, through: m2.now), sensor: .pedometerData, source: source).batch()
        XCTAssertEqual(b.count, 120 + 60)
        XCTAssertFalse(b.writeTimes.contains { $0 > T0 + 2 * hour && $0 <= T0 + 5 * hour })
        XCTAssertEqual(b.writeTimes.last, T0 + 6 * hour)
    }

    /// contract §6.2 item 8.
    func testPriorDataVisibility() {
        func rows(_ mode: WorldSwitches.PriorDataVisibility) -> Int {
            var model = makeModel { $0.priorDataVisibility = mode }
            model.recording.begin(.pedometerData, by: .system, at: T0 - 3 * day)
            authorizeAndRecord(&model, [.pedometerData])
            model.advance(to: T0 + 25 * hour)
            return model.fetch(request(model, after: T0 - 10 * day, through: model.now), sensor: .pedometerData, source: source)
                .batch().count
        }
        XCTAssertEqual(rows(.sevenDaysIfSensorActive), 3 * 1_440 + 60)
        XCTAssertEqual(rows(.sinceOwnStartRecording), 60)
    }

    // MARK: Retention and deletions (contract §8.2, §8.3, §14.5 #8, #9)

    func testRetentionAndAgeLimitTombstones() {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData])
        model.advance(to: T0 + 10 * day)
        let b = model.fetch(request(model, after: T0 - day, through: model.now), sensor: .pedometerData, source: source).batch()
        XCTAssertEqual(b.writeTimes.first, T0 + 2 * day + 60, "older than 7 d + hold is gone")
        XCTAssertEqual(b.writeTimes.last, T0 + 9 * day)
        XCTAssertEqual(b.count, 7 * 1_440)

        let t = model.fetch(request(model, after: T0 - day, through: model.now), sensor: .pedometerData, stream: .deletionRecords,
                            source: source).batch()
        XCTAssertEqual(t.columns.map(\.name), ["startTime", "endTime", "reason"])
        XCTAssertEqual(t.count, 24, "hourly purges whose records are past their own hold")
        XCTAssertEqual(t.column("reason")?.data, .int([Int64](repeating: Int64(SRDeletionReason.ageLimit.rawValue), count: 24)))
        guard case .double(let starts)? = t.column("startTime")?.data, case .double(let ends)? = t.column("endTime")?.data else {
            return XCTFail()
        }
        XCTAssertEqual(starts.first, 0, "SR time of the recording start (device epoch)")
        XCTAssertEqual(ends.first, 3_600)
        XCTAssertEqual(ends.last, day)
        XCTAssertEqual(Array(starts.dropFirst()), Array(ends.dropLast()), "contiguous, no double deletion")
        XCTAssertEqual(t.writeTimes.first, T0 + 8 * day + hour)
        XCTAssertEqual(t.writeTimes.last, T0 + 9 * day)
    }

    func testUserDeletionDuringHold() {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData])
        model.advance(to: T0 + 10 * hour)
        model.deleteData(.pedometerData, range: TimeRange(after: T0 + 2 * hour, through: T0 + 3 * hour))
        model.advance(to: T0 + 30 * hour)
        let b = model.fetch(request(model, after: T0, through: model.now), sensor: .pedometerData, source: source).batch()
        XCTAssertEqual(b.count, 6 * 60 - 60)
        XCTAssertFalse(b.writeTimes.contains { $0 > T0 + 2 * hour && $0 <= T0 + 3 * hour }, "deleted data is never delivered")
        let tombstones = { (m: ParticipantModel) in
            m.fetch(self.request(m, after: T0, through: m.now), sensor: .pedometerData, stream: .deletionRecords, source: self.source).batch()
        }
        XCTAssertEqual(tombstones(model).count, 0, "the record itself is still held")
        model.advance(to: T0 + 35 * hour)
        let t = tombstones(model)
        XCTAssertEqual(t.count, 1)
        XCTAssertEqual(t.column("startTime")?.data, .double([2 * hour]))
        XCTAssertEqual(t.column("endTime")?.data, .double([3 * hour]))
        XCTAssertEqual(t.column("reason")?.data, .int([0]))
        XCTAssertEqual(t.writeTimes.array, [T0 + 10 * hour])
        // Deleting a range with no recorded data writes no record.
        model.deleteData(.pedometerData, range: TimeRange(after: T0 - 5 * day, through: T0 - 4 * day))
        model.advance(to: T0 + 60 * hour)
        XCTAssertEqual(tombstones(model).count, 1)
    }

    func testNoInterestedClientsPurge() {
        func run(_ purge: Bool) -> (Int, SampleBatch) {
            var model = makeModel { $0.purgeWhenNoInterestedClients = purge }
            authorizeAndRecord(&model, [.pedometerData])
            model.advance(to: T0 + 5 * hour)
            _ = model.stopRecording(.pedometerData)
            model.advance(to: T0 + 40 * hour)
            let rows = model.fetch(request(model, after: T0, through: model.now), sensor: .pedometerData, source: source).batch().count
            let t = model.fetch(request(model, after: T0, through: model.now), sensor: .pedometerData, stream: .deletionRecords,
                                source: source).batch()
            return (rows, t)
        }
        XCTAssertEqual(run(false).0, 300)
        XCTAssertEqual(run(false).1.count, 0)
        let (rows, t) = run(true)
        XCTAssertEqual(rows, 0)
        XCTAssertEqual(t.column("reason")?.data, .int([Int64(SRDeletionReason.noInterestedClients.rawValue)]))
        XCTAssertEqual(t.column("endTime")?.data, .double([5 * hour]))
    }

    // MARK: Delivery (contract §7.2 step 5, contract §7.4)

    func testDelegateStopCutsAtN() throws {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData, .accelerometer])
        model.advance(to: T0 + 25 * hour)
        let obj = model.fetch(request(model, after: T0, through: model.now), sensor: .pedometerData, source: source).plan!
        let seven = try obj.collect(maxResults: 7)
        XCTAssertEqual(seven.count, 7)
        XCTAssertEqual(seven.writeTimes.array, (1...7).map { T0 + Double($0) * 60 })

        let arr = model.fetch(request(model, after: T0, through: model.now), sensor: .accelerometer, source: source).plan!
        var it = arr.makeIterator()
        let chunk = try it.next()!
        XCTAssertEqual(chunk.resultCount * 3, chunk.batch.count, "one result = one write batch of three elements")
        XCTAssertEqual(chunk.rows(ofResult: 1), 3..<6)
        XCTAssertEqual(chunk.timestamp(ofResult: 0), SRAbsoluteTime(60))
        let cut = chunk.prefix(results: 2)
        XCTAssertEqual(cut.batch.count, 6)
        XCTAssertEqual(cut.resultCount, 2)
        XCTAssertEqual(try arr.collect(maxResults: 5).count, 15)
        XCTAssertEqual(try arr.resultCount(), 60)
    }

    /// contract §14.5 #6 and the design's "one call or a hundred": a week in one request equals
    /// 168 hourly requests, duplicates and jitter included.
    func testWeekInOneRequestEqualsHourlyRequests() {
        var model = makeModel {
            $0.duplicateRate = 0.05
            $0.outOfOrderJitter[.accelerometer] = 30
        }
        model.chunkRows = 7_000 // 140-s chunks: boundaries differ between the two fetch patterns
        authorizeAndRecord(&model, [.accelerometer])
        model.advance(to: T0 + 8 * day + hour)
        let start = T0 + hour
        let week = model.fetch(request(model, after: start, through: start + 7 * day), sensor: .accelerometer, source: source).batch()
        var hourly = SampleBatch.empty(for: .accelerometer)
        for k in 0..<168 {
            let a = start + Double(k) * hour
            hourly.append(model.fetch(request(model, after: a, through: a + hour), sensor: .accelerometer, source: source).batch())
        }
        XCTAssertEqual(week, hourly)
        XCTAssertGreaterThan(week.count, 168 * 60 * 3, "some results were duplicated")
        XCTAssertLessThan(week.count, 168 * 60 * 3 * 11 / 10)
        // Same seed ⇒ same output; another seed ⇒ other duplicates.
        XCTAssertEqual(week, model.fetch(request(model, after: start, through: start + 7 * day), sensor: .accelerometer, source: source).batch())
        var other = model
        other.seed = 7
        XCTAssertNotEqual(week, other.fetch(request(other, after: start, through: start + 7 * day), sensor: .accelerometer, source: source).batch())
    }

    func testDuplicatesAreAdjacentCopiesAndJitterOnlyReorders() throws {
        var model = makeModel { $0.duplicateRate = 0.5 }
        authorizeAndRecord(&model, [.pedometerData, .accelerometer])
        model.advance(to: T0 + 26 * hour)
        let plan = model.fetch(request(model, after: T0, through: T0 + 2 * hour), sensor: .pedometerData, source: source).plan!
        let b = try plan.collect()
        XCTAssertGreaterThan(b.count, 120)
        XCTAssertEqual(Set(b.writeTimes).count, 120, "only copies, nothing invented")
        var i = 0
        while i + 1 < b.count {
            if b.writeTimes[i] == b.writeTimes[i + 1] { XCTAssertEqual(b.slice(i..<(i + 1)).columns, b.slice((i + 1)..<(i + 2)).columns) }
            i += 1
        }
        XCTAssertEqual(b.writeTimes.array, b.writeTimes.sorted(), "ordered by write time")

        var jm = model
        jm.switches.duplicateRate = 0
        let sorted = jm.fetch(request(jm, after: T0, through: T0 + 2 * hour), sensor: .accelerometer, source: source).batch()
        jm.switches.outOfOrderJitter[.accelerometer] = 30
        let jittered = jm.fetch(request(jm, after: T0, through: T0 + 2 * hour), sensor: .accelerometer, source: source).batch()
        XCTAssertEqual(jittered.count, sorted.count)
        XCTAssertNotEqual(jittered.times, sorted.times, "some elements are out of order")
        XCTAssertEqual(jittered.times.sorted(), sorted.times.sorted())
        XCTAssertEqual(jittered.writeTimes, sorted.writeTimes, "results stay in write order")
    }

    // MARK: Devices (contract §7.5, §9, §14.5 #11)

    func testNilDeviceModes() {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData])
        model.advance(to: T0 + 25 * hour)
        let plan = model.fetch(request(model, after: T0, through: model.now, device: nil), sensor: .pedometerData, source: source).plan!
        XCTAssertEqual(plan.device, phone)
        XCTAssertEqual(plan.request.device, phone, "written back into the request")
        XCTAssertEqual(try plan.collect().count, 60)
        model.switches.nilDeviceMode = .decompiledEmpty
        let empty = model.fetch(request(model, after: T0, through: model.now, device: nil), sensor: .pedometerData, source: source).plan!
        XCTAssertTrue(empty.isEmpty)
        XCTAssertNil(empty.device)
        XCTAssertEqual(try empty.collect().count, 0)
    }

    func testWatchDataArriveAfterSyncLag() {
        var model = makeModel()
        authorizeAndRecord(&model, [.heartRate, .accelerometer])
        model.advance(to: T0 + 2 * hour)
        XCTAssertEqual(try model.fetchDevices(.accelerometer, source: source), .devices([]), "T24: nothing readable on day 1")
        model.advance(to: T0 + 25 * hour)
        XCTAssertEqual(try model.fetchDevices(.accelerometer, source: source), .devices([phone]))
        XCTAssertEqual(try model.fetchDevices(.heartRate, source: source), .devices([]))
        model.advance(to: T0 + 26 * hour)
        XCTAssertEqual(try model.fetchDevices(.accelerometer, source: source), .devices([phone, watch]))
        XCTAssertEqual(try model.fetchDevices(.heartRate, source: source), .devices([watch]))
        let hr = model.fetch(request(model, after: T0, through: model.now, device: watch), sensor: .heartRate, source: source).batch()
        XCTAssertEqual(hr.count, 60)
        XCTAssertEqual(hr.writeTimes.first, T0 + 60 + hour, "stored on the phone one sync lag after recording began")
        XCTAssertEqual(hr.times.first, T0 + 30, "measured just after recording began")
        XCTAssertEqual(hr.writeTimes.last, T0 + 2 * hour, "clamped to now − hold on the phone axis")
        // Stopping recording cuts watch data one sync lag later on the write axis.
        model.advance(to: T0 + 27 * hour)
        _ = model.stopRecording(.heartRate)
        model.advance(to: T0 + 60 * hour)
        let all = model.fetch(request(model, after: T0, through: model.now, device: watch), sensor: .heartRate, source: source).batch()
        XCTAssertEqual(all.writeTimes.last, T0 + 28 * hour)
        XCTAssertEqual(all.times.last, T0 + 27 * hour - 30)
        XCTAssertEqual(model.fetch(request(model, after: T0, through: model.now, device: phone), sensor: .heartRate, source: source)
            .batch().count, 0, "heart rate never comes from the phone")
    }

    func testFetchDevicesFailures() throws {
        var model = makeModel()
        XCTAssertEqual(try model.fetchDevices(.visits, source: source), .failed(SensorKitError(.connectionNotFound,
            "fetchDevices failed: not authorized for visits")), "T18: not noAuthorization")
        _ = model.requestAuthorization([.visits], policy: .denyAll)
        guard case .failed(let e) = try model.fetchDevices(.visits, source: source) else { return XCTFail() }
        XCTAssertEqual(e.code.rawValue, 8193)
        model.study.entitledSensors.remove(.visits)
        guard case .failed(let e0) = try model.fetchDevices(.visits, source: source) else { return XCTFail() }
        XCTAssertEqual(e0.code, .invalidEntitlement)
    }

    /// The deletion-record stream is fetch-only: fetchDevices on it is ignored (no callback),
    /// while the samples stream of the same sensor answers (contract §8.3).
    func testTombstoneStreamIgnoresFetchDevices() {
        var model = makeModel()
        authorizeAndRecord(&model, [.pedometerData])
        model.advance(to: T0 + 10 * day)
        XCTAssertEqual(try model.fetchDevices(.pedometerData, stream: .deletionRecords, source: source), .ignored)
        XCTAssertEqual(try model.fetchDevices(.pedometerData, source: source), .devices([phone]))
    }

    // MARK: Streaming (design: bounded memory)

    func testDenseStreamIsChunked() throws {
        var model = makeModel()
        authorizeAndRecord(&model, [.accelerometer])
        model.advance(to: T0 + 30 * hour)
        let dense = DenseAccelerometer()
        let plan = model.fetch(request(model, after: T0, through: T0 + 2 * hour), sensor: .accelerometer, source: dense).plan!
        var total = 0, chunks = 0, largest = 0, results = 0
        var it = plan.makeIterator()
        while let chunk = try it.next() {
            chunks += 1
            total += chunk.batch.count
            results += chunk.resultCount
            largest = max(largest, chunk.batch.count)
        }
        XCTAssertEqual(total, 2 * 3_600 * 50)
        XCTAssertEqual(results, 120)
        XCTAssertGreaterThan(chunks, 4)
        XCTAssertLessThanOrEqual(largest, 66_000, "never more than a chunk in memory")
    }
}

/// 50 Hz accelerometer written in 60-s batches of 3 000 elements.
struct DenseAccelerometer: SampleSource {
    func devices(participant: String) -> [SRDevice] { [.defaultPhone] }
    func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double) -> SampleBatch {
        let first = Int64((after / 60).rounded(.down)) + 1, last = Int64((through / 60).rounded(.down))
        guard last >= first, sensor == .accelerometer, device == .defaultPhone else { return .empty(for: sensor) }
        let n = Int(last - first + 1) * 3_000
        var writes = [Double](), times = [Double](), ids = [Int64]()
        writes.reserveCapacity(n); times.reserveCapacity(n); ids.reserveCapacity(n)
        for m in first...last {
            let w = Double(m) * 60
            for e in 0..<3_000 {
                writes.append(w)
                times.append(w - 60 + Double(e + 1) * 0.02)
                ids.append(m)
            }
        }
        let zeros = [Double](repeating: 0, count: n)
        return SampleBatch(sensor: sensor, writeTimes: writes, times: times, columns: [
            Column(name: "x", data: .double(zeros)), Column(name: "y", data: .double(zeros)),
            Column(name: "z", data: .double([Double](repeating: 1, count: n))),
            Column(name: "timestamp", data: .double(times.map { $0 - T0 })), Column(name: "identifier", data: .int(ids)),
        ])
    }
}

/// An array sensor's batch keeps only rows measured within recording (contract §6.2):
/// a batch wholly inside the ranges passes unchanged; NaN times are inside none.
final class MeasuredWithinTests: XCTestCase {
    func batch(_ times: [Double]) -> SampleBatch {
        SampleBatch(sensor: .accelerometer, writeTimes: times.map { _ in 100 }, times: times,
                    columns: [Column(name: "x", data: .double(times.map { $0 * 2 }))])
    }

    func testRowsOutsideEveryRangeAreLeftOut() {
        let ranges = IntervalSet([TimeRange(after: 10, through: 20), TimeRange(after: 30, through: 40)])
        let inside = batch([10, 12, 20, 15])
        XCTAssertEqual(FetchPlan.measured(inside, within: ranges).times, [10, 12, 20, 15])
        let across = batch([9, 10, 25, 30, 40, 41, .nan, 35])
        let kept = FetchPlan.measured(across, within: ranges)
        XCTAssertEqual(kept.times, [10, 30, 40, 35])
        guard case .double(let x) = kept.columns[0].data else { return XCTFail("x") }
        XCTAssertEqual(x, [20, 60, 80, 70])
        XCTAssertEqual(FetchPlan.measured(batch([12, 35, 15, 40]), within: ranges).times, [12, 35, 15, 40])
        XCTAssertEqual(FetchPlan.measured(batch([12, .nan]), within: ranges).times, [12])
        XCTAssertEqual(FetchPlan.measured(batch([25, 5, 12]), within: ranges).times, [12])
        XCTAssertEqual(FetchPlan.measured(batch([12]), within: IntervalSet()).count, 0)
        XCTAssertEqual(FetchPlan.measured(batch([]), within: ranges).count, 0)
    }

    /// Rows of one range in one contiguous stretch (a batch written just after recording
    /// started: its first rows measured before) are kept as a slice, with the same rows,
    /// columns and write times as row by row; rows of another range elsewhere are kept too.
    func testContiguousRowsOfOneRangeAreKeptWhole() {
        let ranges = IntervalSet([TimeRange(after: 0, through: 6), TimeRange(after: 10, through: 20)])
        func ids(_ b: SampleBatch) -> [Int64]? { b.column("identifier")?.data.ints }
        var late = batch([7, 8, 12, 15, 18])
        late.columns.append(Column(name: "identifier", data: .intRuns(RunArray([1, 1, 2, 2, 2]))))
        late.writeTimes = WriteTimes([100, 100, 100, 101, 101])
        let kept = FetchPlan.measured(late, within: ranges)
        XCTAssertEqual(kept.times, [12, 15, 18])
        XCTAssertEqual(kept.column("x")?.data, .double([24, 30, 36]))
        XCTAssertEqual(ids(kept), [2, 2, 2])
        XCTAssertEqual(kept.writeTimes.array, [100, 101, 101])
        XCTAssertEqual(kept, late.gather([2, 3, 4]))
        XCTAssertEqual(FetchPlan.measured(batch([12, 15, 25]), within: ranges).times, [12, 15])
        XCTAssertEqual(FetchPlan.measured(batch([12, 25, 15]), within: ranges).times, [12, 15])
        XCTAssertEqual(FetchPlan.measured(batch([5, 8, 12, 15]), within: ranges).times, [5, 12, 15])
        XCTAssertEqual(FetchPlan.measured(batch([8, 5, 7]), within: ranges).times, [5])
        XCTAssertEqual(FetchPlan.measured(batch([.nan, 12, 15]), within: ranges).times, [12, 15])
    }

    /// A batch stating `timesWithin` inside one range is kept whole without a look at its
    /// rows (so a false statement shows); one whose range reaches outside every range, or
    /// spans two, is judged row by row exactly as a batch stating nothing.
    func testTheStatedRangeOfTimesDecidesOnlyWhenItLiesInsideOneRange() {
        let ranges = IntervalSet([TimeRange(after: 10, through: 20), TimeRange(after: 30, through: 40)])
        func stating(_ times: [Double], _ within: ClosedRange<Double>) -> SampleBatch {
            var b = batch(times)
            b.timesWithin = within
            return b
        }
        XCTAssertEqual(FetchPlan.measured(stating([12, 15, 18], 10...20), within: ranges).times, [12, 15, 18])
        XCTAssertEqual(FetchPlan.measured(stating([5, 25, 45], 30...40), within: ranges).times, [5, 25, 45],
                       "trusted: the rows are not looked at")
        for (times, within) in [([9, 10, 25, 30, 40, 41, .nan, 35], 9...41), ([12, 35, 15, 40], 12...40),
                                ([8, 12, 15], 8...15), ([12, 15, 21], 12...21), ([18, 12, 31, 15], 12...31)] as [([Double], ClosedRange<Double>)] {
            let judged = FetchPlan.measured(stating(times, within), within: ranges)
            XCTAssertEqual(judged, FetchPlan.measured(batch(times), within: ranges), "\(times)")
        }
    }

    /// `timesWithin` survives what only drops, reorders or repeats rows, is forgotten when
    /// the times change, joins by union in `append` (only when both state one), and is not
    /// part of equality.
    func testTheStatedRangeOfTimesFollowsTheRows() {
        var b = batch([12, 15, 18, 11])
        b.timesWithin = 11...18
        XCTAssertEqual(b.slice(1..<3).timesWithin, 11...18)
        XCTAssertEqual(b.gather([3, 3, 0]).timesWithin, 11...18)
        XCTAssertEqual(b.keeping(.none).timesWithin, 11...18)
        XCTAssertEqual(b.removingColumns(["x"]).timesWithin, 11...18)
        XCTAssertEqual(b, batch([12, 15, 18, 11]), "not part of equality")
        var changed = b
        changed.times[0] = 50
        XCTAssertNil(changed.timesWithin)
        var replaced = b
        replaced.times = [1, 2, 3, 4]
        XCTAssertNil(replaced.timesWithin)
        var joined = b
        var other = batch([30, 31])
        other.timesWithin = 30...31
        joined.append(other)
        XCTAssertEqual(joined.timesWithin, 11...31)
        joined.append(batch([5]))
        XCTAssertNil(joined.timesWithin, "a batch stating nothing widens it to unknown")
        XCTAssertEqual(joined.times, [12, 15, 18, 11, 30, 31, 5])
        XCTAssertNil(SampleBatch(sensor: .accelerometer, writeTimes: [1], times: [1]).timesWithin)
    }
}

/// `fetchDevices` answers whether a device has any row by reading small pieces from the
/// start of the recording, not a day of rows a piece.
final class FetchDevicesProbeTests: XCTestCase {
    /// Heart rate every 5 s on the watch, from `firstRow` on; counts the rows it makes.
    final class LateWatch: SampleSource, @unchecked Sendable {
        let firstRow: Double
        var rowsMade = 0
        init(firstRow: Double) { self.firstRow = firstRow }

        func devices(participant: String) -> [SRDevice] { [.defaultPhone, .defaultWatch] }

        func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double) -> SampleBatch {
            guard device.kind == .watch, sensor == .heartRate else { return .empty(for: sensor) }
            var t = max(firstRow, (after / 5).rounded(.down) * 5 + 5)
            var times: [Double] = []
            while t <= through { times.append(t); t += 5 }
            rowsMade += times.count
            let columns = sensor.info.columnFields.map { field -> Column in
                switch field.type.columnKind {
                case .int: return Column(name: field.name, data: .int(times.map { _ in 1 }))
                case .string: return Column(name: field.name, data: .string(times.map { _ in "" }))
                case .bool: return Column(name: field.name, data: .bool(times.map { _ in false }))
                case .value: return Column(name: field.name, data: .value(times.map { _ in .double(1) }))
                case .double: return Column(name: field.name, data: .double(times.map { _ in 70 }))
                }
            }
            return SampleBatch(sensor: sensor, writeTimes: times, times: times, columns: columns)
        }
    }

    func testADeviceIsFoundByItsFirstRowsAlone() throws {
        var model = makeModel()
        authorizeAndRecord(&model, [.heartRate])
        model.advance(to: T0 + 5 * day)
        // The watch's first row comes 20 hours into the recording: every piece before it is empty.
        let source = LateWatch(firstRow: T0 + 20 * hour)
        XCTAssertEqual(try model.fetchDevices(.heartRate, source: source), .devices([.defaultWatch]))
        XCTAssertGreaterThan(source.rowsMade, 0)
        XCTAssertLessThanOrEqual(source.rowsMade, FetchEngine.probeRows, "one small piece read, not a day of rows (17,280)")
        // A watch without a row in the readable span is not listed.
        XCTAssertEqual(try model.fetchDevices(.heartRate, source: LateWatch(firstRow: T0 + 10 * day)), .devices([]))
    }
}
