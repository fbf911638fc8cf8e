import XCTest
import SensorKitModel
import Simulator

/// contract §14.3: when each kind of record reaches the store.
final class WriteTimeTests: XCTestCase {
    let source = makeSimSource(seed: 31, simTrio)

    /// Array streams: 60-s batches sharing one identifier that increases between batches,
    /// written just after the batch's last sample.
    func testAccelerometerBatches() {
        let a = simMonday + 5 * 3_600, b = a + 3 * 3_600
        for device in source.devices(participant: "ana") {
            let acc = source.samples(participant: "ana", sensor: .accelerometer, device: device, writtenAfter: a, through: b)
            let ids = simInts(acc, "identifier")
            XCTAssertGreaterThan(acc.count, 100_000)
            var start = 0
            var batches = 0
            var lastID: Int64 = .min
            while start < acc.count {
                var end = start
                while end < acc.count && ids[end] == ids[start] { end += 1 }
                batches += 1
                XCTAssertGreaterThan(ids[start], lastID, "identifiers do not increase")
                lastID = ids[start]
                let w = acc.writeTimes[start]
                XCTAssertTrue(acc.writeTimes[start..<end].allSatisfy { $0 == w }, "one batch, several write times")
                let first = acc.times[start], last = acc.times[end - 1]
                XCTAssertLessThan(last - first, 60, "batch longer than 60 s")
                XCTAssertGreaterThanOrEqual(w, last, "batch written before its last sample")
                if device.kind == .phone { XCTAssertLessThan(w - last, 3, "phone batch written late") }
                // 50 Hz inside the batch.
                if end - start > 1 { XCTAssertEqual((last - first) / Double(end - start - 1), 0.02, accuracy: 1e-6) }
                start = end
            }
            XCTAssertGreaterThanOrEqual(batches, 170)
            // Uptime (CMLogItem.timestamp) moves with the wall clock.
            let up = simDoubles(acc, "timestamp")
            XCTAssertEqual(up[1000] - up[0], acc.times[1000] - acc.times[0], accuracy: 1e-6)
            XCTAssertGreaterThan(up[0], 0)
        }
        let gyro = source.samples(participant: "ana", sensor: .rotationRate, device: .defaultPhone, writtenAfter: a, through: b)
        XCTAssertEqual(gyro.columns.map(\.name), ["x", "y", "z", "timestamp"])
        XCTAssertEqual(gyro.count, 3 * 3_600 * 50, accuracy: 100)
    }

    /// Watch streams are written when the watch syncs: never before sample time + lag.
    func testWatchRowsWaitForTheSyncLag() {
        for lag in [3_600.0, 600] {
            var settings = SimulationSettings()
            settings.watchSyncLag = lag
            let s = makeSimSource(seed: 31, simTrio, settings: settings)
            let a = simMonday + 2 * simDay, b = a + simDay
            let hr = s.samples(participant: "ben", sensor: .heartRate, device: .defaultWatch, writtenAfter: a, through: b)
            XCTAssertGreaterThan(hr.count, 20_000)
            for i in 0..<hr.count { XCTAssertGreaterThanOrEqual(hr.writeTimes[i], hr.times[i] + lag) }
            let delays = hr.times.indices.map { hr.writeTimes[$0] - hr.times[$0] - lag }
            XCTAssertLessThanOrEqual(delays.max()!, settings.watchSyncInterval + 1, "a sync opportunity was skipped")
            // Sync happens in bursts: few distinct write times.
            XCTAssertLessThanOrEqual(Set(hr.writeTimes).count, Int(simDay / settings.watchSyncInterval) + 1)
            let acc = s.samples(participant: "ben", sensor: .accelerometer, device: .defaultWatch, writtenAfter: a, through: a + 4 * 3_600)
            for i in stride(from: 0, to: acc.count, by: 997) { XCTAssertGreaterThanOrEqual(acc.writeTimes[i], acc.times[i] + lag) }
            let wrist = s.samples(participant: "ben", sensor: .onWristState, device: .defaultWatch, writtenAfter: a, through: b)
            let on = simBools(wrist, "onWrist"), onDate = simDoubles(wrist, "onWristDate"), offDate = simDoubles(wrist, "offWristDate")
            for i in 0..<wrist.count { XCTAssertGreaterThanOrEqual(wrist.writeTimes[i], (on[i] ? onDate[i] : offDate[i]) + lag) }
        }
    }

    /// Report streams: one record per 15-min window, written after the window ends.
    func testReportWindows() {
        let a = simMonday + simDay, b = a + simDay
        let usage = source.samples(participant: "ana", sensor: .deviceUsageReport, device: .defaultPhone, writtenAfter: a, through: b)
        XCTAssertEqual(usage.count, 96, "one device-usage report per 15 minutes")
        for w in usage.writeTimes {
            let past = w - (w / 900).rounded(.down) * 900
            XCTAssertTrue((5...65).contains(past), "report written \(past) s after its window")
        }
        XCTAssertEqual(usage.times, usage.writeTimes.array, "reports have no date of their own: times = write times")
        let kb = source.samples(participant: "ana", sensor: .keyboardMetrics, device: .defaultPhone, writtenAfter: a, through: b)
        XCTAssertGreaterThan(kb.count, 5)
        XCTAssertLessThanOrEqual(kb.count, 96)
        XCTAssertTrue(simDoubles(kb, "duration").allSatisfy { $0 == 900 })
        let ped = source.samples(participant: "ana", sensor: .pedometerData, device: .defaultPhone, writtenAfter: a, through: b)
        let ends = simDoubles(ped, "endDate")
        for i in 0..<ped.count {
            XCTAssertLessThanOrEqual(ped.times[i], ends[i])
            XCTAssertLessThanOrEqual(ends[i] - ped.times[i], 150)
            XCTAssertGreaterThanOrEqual(ped.writeTimes[i], ends[i])
            XCTAssertLessThan(ped.writeTimes[i] - ends[i], 160)
        }
    }

    /// Local days follow the participant's time zone through DST and travel.
    func testTimeZonesDSTAndTravel() {
        // Europe/Berlin springs forward on 2026-03-29: that day is 23 hours long.
        let berlin = makeSimSource(seed: 4, [ParticipantDescription(id: "b", timeZone: "Europe/Berlin",
                                                                  profile: ParticipantProfile(preset: .retiree))])
        let march29 = 1_774_735_200.0   // 2026-03-29 00:00 in Berlin (UTC+1)
        let ds = berlin.diaries(participant: "b", from: march29 - 3 * simDay, to: march29 + 3 * simDay)
        XCTAssertTrue(ds.map(\.date).contains("2026-03-29"))
        XCTAssertEqual(zip(ds, ds.dropFirst()).filter { $1.dayNumber != $0.dayNumber + 1 }.count, 0, "days skipped or repeated")
        for (a, b) in zip(ds, ds.dropFirst()) { XCTAssertEqual(a.end, b.start, "days must tile time") }
        // Wake-up keeps its local clock time across the change (within the simDay-to-simDay jitter).
        func localHour(_ t: Double, _ zone: String) -> Double {
            var cal = Calendar(identifier: .gregorian)
            cal.timeZone = TimeZone(identifier: zone)!
            let c = cal.dateComponents([.hour, .minute], from: Date(timeIntervalSince1970: t))
            return Double(c.hour!) + Double(c.minute!) / 60
        }
        let wakes = ds.map { localHour($0.wake, "Europe/Berlin") }
        XCTAssertLessThan(wakes.max()! - wakes.min()!, 2.5, "wake times \(wakes)")
        // Travel from New York to Tokyo: after a few days the local wake time is the same as at
        // home. (The flight skips 14 h of local clock: a night that falls in them is lost.)
        let fly = simMonday + 3 * simDay
        let t = makeSimSource(seed: 4, [ParticipantDescription(id: "t", timeZone: "America/New_York",
                                                             profile: ParticipantProfile(preset: .retiree),
                                                             events: [.travel(at: fly, timeZone: "Asia/Tokyo")])])
        let before = t.diaries(participant: "t", from: simMonday, to: fly - simDay).map { localHour($0.wake, "America/New_York") }
        let after = t.diaries(participant: "t", from: fly + 2 * simDay, to: fly + 6 * simDay).map { localHour($0.wake, "Asia/Tokyo") }
        XCTAssertEqual(simMean(before), simMean(after), accuracy: 1.5)
        let all = t.diaries(participant: "t", from: simMonday, to: fly + 6 * simDay)
        for (a, b) in zip(all, all.dropFirst()) {
            XCTAssertEqual(a.end, b.start, "days must tile time across travel")
            XCTAssertLessThanOrEqual(a.sleepOnset, a.wake)
        }
        // Data keep flowing through the trip.
        let acc = t.samples(participant: "t", sensor: .pedometerData, device: .defaultPhone, writtenAfter: fly - simDay, through: fly + simDay)
        XCTAssertGreaterThan(acc.count, 20)
    }
}
