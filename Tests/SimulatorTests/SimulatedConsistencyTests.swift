import XCTest
import SensorKitModel
import Simulator

/// Sensors are views of one story: they must agree with each other.
final class ConsistencyTests: XCTestCase {
    let source = makeSimSource(seed: 21, simTrio)

    /// Accelerometer magnitude variance and heart rate while the pedometer counts walking
    /// (cadence ≥ 1.6 steps/s) versus a quiet stretch of the same day with no steps.
    func testWalkingRaisesStepsMovementAndHeartRate() {
        for id in ["ana", "ben", "cho"] {
            let day0 = simMonday + 86_400
            let ped = source.samples(participant: id, sensor: .pedometerData, device: .defaultPhone,
                                     writtenAfter: day0, through: day0 + simDay)
            let cadence = simDoubles(ped, "currentCadence"), ends = simDoubles(ped, "endDate"), steps = simInts(ped, "numberOfSteps")
            // Walking windows: bins with brisk cadence covering at least 100 s.
            let walking = ped.times.indices.filter { cadence[$0] >= 1.6 && ends[$0] - ped.times[$0] >= 100 }
            XCTAssertGreaterThan(walking.count, 3, "\(id): no brisk walking found")
            let diary = source.diaries(participant: id, from: day0, to: day0 + simDay).first { $0.getUp < day0 + simDay / 2 }!
            let hr = source.samples(participant: id, sensor: .heartRate, device: .defaultWatch,
                                    writtenAfter: day0, through: day0 + simDay + 7_200)
            let bpm = simDoubles(hr, "heartRate")
            // Quiet windows: awake, 10 minutes with no step at all, watch worn.
            var quiet: [(Double, Double)] = []
            var t = diary.getUp + 1_800
            while t + 600 < diary.end - 1_800 && quiet.count < 6 {
                let hasSteps = ped.times.indices.contains { ped.times[$0] < t + 600 && ends[$0] > t && steps[$0] > 0 }
                if !hasSteps && simRows(hr, from: t, to: t + 600).count > 500 { quiet.append((t, t + 600)) }
                t += 1_800
            }
            XCTAssertGreaterThan(quiet.count, 2, "\(id): no quiet stretch found")
            for device in source.devices(participant: id) {
                let acc = source.samples(participant: id, sensor: .accelerometer, device: device,
                                         writtenAfter: day0, through: day0 + simDay + (device.kind == .watch ? 7_200 : 0))
                let x = simDoubles(acc, "x"), y = simDoubles(acc, "y"), z = simDoubles(acc, "z")
                func magnitudeVariance(_ a: Double, _ b: Double) -> Double {
                    simVariance(simRows(acc, from: a, to: b).map { (x[$0] * x[$0] + y[$0] * y[$0] + z[$0] * z[$0]).squareRoot() })
                }
                let walkVar = simMean(walking.map { magnitudeVariance(ped.times[$0], ends[$0]) }.filter { !$0.isNaN })
                let restVar = simMean(quiet.map { magnitudeVariance($0.0, $0.1) }.filter { !$0.isNaN })
                XCTAssertGreaterThan(walkVar, 10 * restVar, "\(id) \(device.kind): |a| variance walking \(walkVar) vs rest \(restVar)")
                XCTAssertGreaterThan(walkVar, 0.01, "\(id) \(device.kind): walking barely moves the accelerometer")
            }
            // Heart rate lags effort (time constant 40 s): use the second half of each bin.
            let walkHR = simMean(walking.flatMap { i in simRows(hr, from: (ped.times[i] + ends[i]) / 2, to: ends[i]).map { bpm[$0] } })
            let restHR = simMean(quiet.flatMap { q in simRows(hr, from: q.0, to: q.1).map { bpm[$0] } })
            XCTAssertGreaterThan(walkHR, restHR + 15, "\(id): walking HR \(walkHR) vs rest \(restHR)")
        }
    }

    /// While asleep the screen is (almost always) off and the light the phone sees is dim.
    func testNightIsDarkAndScreenOff() {
        for id in ["ana", "ben", "cho"] {
            let als = source.samples(participant: id, sensor: .ambientLightSensor, device: .defaultPhone,
                                     writtenAfter: simMonday, through: simMonday + 7 * simDay)
            let lux = simDoubles(als, "lux")
            let usage = source.samples(participant: id, sensor: .deviceUsageReport, device: .defaultPhone,
                                       writtenAfter: simMonday, through: simMonday + 7 * simDay)
            let unlocked = simDoubles(usage, "totalUnlockDuration")
            for d in source.diaries(participant: id, from: simMonday + simDay, to: simMonday + 6 * simDay) {
                // ALS rows carry their write time (≈ sample time + 0.5 s).
                let night = simRows(als, from: d.sleepOnset, to: d.wake).map { lux[$0] }
                XCTAssertLessThan(night.count, 60, "\(id) \(d.date): \(night.count) light samples while asleep")
                if !night.isEmpty { XCTAssertLessThan(simMean(night), 5, "\(id) \(d.date): lux while asleep") }
                // Unlocked time in the 15-min reports that lie wholly inside the night.
                let inside = usage.times.indices.filter { usage.times[$0] - 900 - 65 >= d.sleepOnset && usage.times[$0] <= d.wake }
                let phoneAtNight = inside.reduce(0) { $0 + unlocked[$1] }
                XCTAssertLessThan(phoneAtNight, 600, "\(id) \(d.date): \(phoneAtNight) s unlocked while asleep")
                // And in the day the phone is used, in daylight or lamp light.
                let dayLux = simRows(als, from: d.getUp + 3_600, to: d.end - 3_600).map { lux[$0] }
                XCTAssertGreaterThan(dayLux.count, 200, "\(id) \(d.date): too few daytime light samples")
                XCTAssertGreaterThan(simPercentile(dayLux, 0.5), 20, "\(id) \(d.date): daytime median lux")
            }
        }
    }

    func testHeartRateAbsentWhileWatchOffWrist() {
        let offFrom = simMonday + 2 * simDay + 10 * 3_600, offTo = offFrom + 5 * 3_600
        let p = ParticipantDescription(id: "dee", timeZone: "Europe/Paris", watch: .defaultWatch,
                                       profile: ParticipantProfile(preset: .officeWorker),
                                       events: [.watchOffWrist(from: offFrom, to: offTo)])
        let s = makeSimSource(seed: 2, [p])
        let hr = s.samples(participant: "dee", sensor: .heartRate, device: .defaultWatch,
                           writtenAfter: offFrom - simDay, through: offTo + simDay)
        XCTAssertEqual(simRows(hr, from: offFrom, to: offTo).count, 0, "heart rate recorded while off the wrist")
        XCTAssertGreaterThan(simRows(hr, from: offFrom - 3_600, to: offFrom).count, 3_000, "no heart rate before taking the watch off")
        XCTAssertGreaterThan(simRows(hr, from: offTo, to: offTo + 3_600).count, 3_000, "no heart rate after putting it back on")
        // The routine also takes the watch off (charging, night): no heart rate then either.
        for d in s.diaries(participant: "dee", from: simMonday + simDay, to: simMonday + 5 * simDay) {
            for gap in d.watchOffWrist where gap.upperBound - gap.lowerBound > 120 {
                XCTAssertEqual(simRows(hr, from: gap.lowerBound + 1, to: gap.upperBound - 1).count, 0, "\(d.date): HR while charging")
            }
        }
        // On-wrist records: off at the event start, on again at its end.
        let wrist = s.samples(participant: "dee", sensor: .onWristState, device: .defaultWatch,
                              writtenAfter: offFrom - simDay, through: offTo + simDay)
        let on = simBools(wrist, "onWrist"), offDates = simDoubles(wrist, "offWristDate"), onDates = simDoubles(wrist, "onWristDate")
        XCTAssertTrue(wrist.count >= 2)
        XCTAssertTrue(wrist.writeTimes.indices.contains { !on[$0] && offDates[$0] == offFrom }, "no off-wrist record at the event start")
        XCTAssertTrue(wrist.writeTimes.indices.contains { on[$0] && onDates[$0] == offTo }, "no on-wrist record at the event end")
        // Records alternate, and each carries the latest change of each kind.
        for i in 1..<wrist.count {
            XCTAssertNotEqual(on[i], on[i - 1], "two consecutive records with the same state")
            if on[i] { XCTAssertEqual(offDates[i], offDates[i - 1]) } else { XCTAssertEqual(onDates[i], onDates[i - 1]) }
        }
    }

    /// Everything the phone records stops while it is off; its uptime clock restarts after.
    func testPhoneOffStopsPhoneDataAndRestartsUptime() {
        let offFrom = simMonday + 3 * simDay + 13 * 3_600, offTo = offFrom + 2 * 3_600
        let p = ParticipantDescription(id: "eli", timeZone: "America/Chicago", watch: .defaultWatch,
                                       profile: ParticipantProfile(preset: .student),
                                       events: [.deviceOff(.phone, from: offFrom, to: offTo)])
        let s = makeSimSource(seed: 8, [p])
        for sensor in [Sensor.accelerometer, .rotationRate, .pedometerData, .ambientLightSensor] {
            let b = s.samples(participant: "eli", sensor: sensor, device: .defaultPhone,
                              writtenAfter: offFrom - 6 * 3_600, through: offTo + 6 * 3_600)
            // ALS rows carry write times ≈ sample time + 0.5 s.
            let inside = b.times.indices.filter { b.times[$0] > offFrom + 1 && b.times[$0] < offTo }
            XCTAssertEqual(inside.count, 0, "\(sensor) recorded while the phone was off")
        }
        let acc = s.samples(participant: "eli", sensor: .accelerometer, device: .defaultPhone,
                            writtenAfter: offTo, through: offTo + 600)
        let uptime = simDoubles(acc, "timestamp")
        XCTAssertEqual(uptime.first ?? -1, acc.times.first! - offTo, accuracy: 1e-6, "uptime does not restart at boot")
        // Watch data recorded meanwhile reach the phone only once it is back on.
        let hr = s.samples(participant: "eli", sensor: .heartRate, device: .defaultWatch,
                           writtenAfter: offFrom, through: offTo)
        XCTAssertEqual(hr.count, 0, "watch rows written while the phone was off")
        let later = s.samples(participant: "eli", sensor: .heartRate, device: .defaultWatch,
                              writtenAfter: offTo, through: offTo + 2 * 3_600)
        XCTAssertGreaterThan(simRows(later, from: offFrom - 3_600, to: offTo).count, 0, "watch data from the gap never synced")
        let usage = s.samples(participant: "eli", sensor: .deviceUsageReport, device: .defaultPhone,
                              writtenAfter: offFrom + 900, through: offTo)
        XCTAssertEqual(usage.count, 0, "usage reports for windows with the phone off")
    }

    /// Pedometer steps add up to the diary's steps, and device-usage screen wakes to its screen wakes.
    func testReportsAgreeWithTheDiary() {
        for id in ["ana", "ben"] {
            let ped = source.samples(participant: id, sensor: .pedometerData, device: .defaultPhone,
                                     writtenAfter: simMonday, through: simMonday + 6 * simDay)
            let steps = simInts(ped, "numberOfSteps")
            let usage = source.samples(participant: id, sensor: .deviceUsageReport, device: .defaultPhone,
                                       writtenAfter: simMonday, through: simMonday + 6 * simDay)
            let wakes = simInts(usage, "totalScreenWakes"), unlocks = simInts(usage, "totalUnlocks")
            for d in source.diaries(participant: id, from: simMonday + simDay, to: simMonday + 5 * simDay) {
                let stepSum = simRows(ped, from: d.start, to: d.end).reduce(0) { $0 + Int(steps[$1]) }
                // Bins straddling the day boundary can move a handful of steps.
                XCTAssertEqual(Double(stepSum), Double(d.steps), accuracy: 300, "\(id) \(d.date) steps")
                // Reports are stamped at window end + up to 65 s.
                let inDay = usage.times.indices.filter { usage.times[$0] - 900 >= d.start && usage.times[$0] - 900 < d.end }
                let w = inDay.reduce(0) { $0 + Int(wakes[$1]) }, u = inDay.reduce(0) { $0 + Int(unlocks[$1]) }
                XCTAssertEqual(Double(w), Double(d.screenWakes), accuracy: 6, "\(id) \(d.date) screen wakes")
                XCTAssertEqual(Double(u), Double(d.unlocks), accuracy: 6, "\(id) \(d.date) unlocks")
            }
        }
    }

    /// Keyboard metrics join the device-usage text-input sessions by session identifier.
    func testKeyboardSessionsJoinUsageReports() {
        let a = simMonday + 2 * simDay, b = a + simDay
        let kb = source.samples(participant: "ana", sensor: .keyboardMetrics, device: .defaultPhone, writtenAfter: a, through: b)
        let usage = source.samples(participant: "ana", sensor: .deviceUsageReport, device: .defaultPhone, writtenAfter: a, through: b)
        XCTAssertGreaterThan(kb.count, 5)
        guard case .value(let ids) = kb.column("sessionIdentifiers")!.data,
              case .value(let apps) = usage.column("applicationUsageByCategory")!.data else { return XCTFail("columns") }
        var fromUsage = Set<String>()
        func collect(_ v: FieldValue) {
            switch v {
            case .object(let kv):
                for (k, x) in kv {
                    if k == "sessionIdentifier", case .string(let s) = x { fromUsage.insert(s) } else { collect(x) }
                }
            case .array(let xs): xs.forEach(collect)
            default: break
            }
        }
        apps.forEach(collect)
        var fromKeyboard = Set<String>()
        for v in ids { if case .array(let xs) = v { for x in xs { if case .string(let s) = x { fromKeyboard.insert(s) } } } }
        XCTAssertFalse(fromKeyboard.isEmpty)
        XCTAssertTrue(fromKeyboard.isSubset(of: fromUsage), "keyboard sessions missing from the usage reports")
        let words = simInts(kb, "totalWords"), typing = simDoubles(kb, "totalTypingDuration"), speed = simDoubles(kb, "typingSpeed")
        for i in 0..<kb.count {
            XCTAssertGreaterThan(words[i], 0)
            XCTAssertGreaterThan(typing[i], 0)
            // Palin et al. 2019: mobile typing 15–70 wpm for nearly everyone.
            if speed[i] > 0 { XCTAssertTrue((10...90).contains(speed[i]), "typing speed \(speed[i])") }
        }
    }
}
