import XCTest
import SensorKitModel
import Simulator

/// A simulated week against published norms. Each bound names its source.
final class PlausibilityTests: XCTestCase {
    /// Six participants, one per preset, in three zones.
    static let people: [ParticipantDescription] = ProfilePreset.allCases.enumerated().map { i, preset in
        ParticipantDescription(id: "q\(i)", timeZone: ["Europe/Madrid", "America/Los_Angeles", "Australia/Sydney"][i % 3],
                               watch: .defaultWatch, profile: ParticipantProfile(preset: preset))
    }
    let source = makeSimSource(seed: 1_234, PlausibilityTests.people)
    let weekStart = simMonday + simDay, weekEnd = simMonday + 8 * simDay

    /// Daily steps 3 000–15 000. Tudor-Locke & Bassett (2004, Sports Med 34:1) place healthy
    /// adults between < 5 000 ("sedentary") and > 12 500 ("highly active") steps/day;
    /// Tudor-Locke et al. (2011, IJBNPA 8:79) give 4 000–18 000 for free-living adults.
    func testDailySteps() {
        for p in PlausibilityTests.people {
            let ped = source.samples(participant: p.id, sensor: .pedometerData, device: .defaultPhone,
                                     writtenAfter: weekStart - simDay, through: weekEnd + simDay)
            let steps = simInts(ped, "numberOfSteps")
            var byDay: [String: Int] = [:]
            for i in 0..<ped.count { byDay[simLocalDate(ped.times[i], p.timeZone), default: 0] += Int(steps[i]) }
            let days = source.diaries(participant: p.id, from: weekStart, to: weekEnd).map(\.date).dropFirst().dropLast()
            XCTAssertGreaterThanOrEqual(days.count, 5)
            let perDay = days.map { byDay[$0] ?? 0 }
            for (d, n) in zip(days, perDay) {
                XCTAssertTrue((3_000...15_000).contains(n), "\(p.id) \(p.profile.preset!) \(d): \(n) steps")
            }
            // Distance follows steps: 0.6–0.9 m a step at walking pace.
            let dist = simDoubles(ped, "distance").reduce(0, +), total = steps.reduce(0, +)
            XCTAssertTrue((0.55...1.0).contains(dist / Double(total)), "\(p.id): \(dist / Double(total)) m/step")
        }
    }

    /// Resting heart rate 50–80 bpm: Quer et al. (2020, PLOS ONE 15:e0227709), 92 457 wearable
    /// users: mean daily RHR 65.5 bpm, most individuals between 50 and 80. Estimated here as the
    /// 5th percentile of awake heart rate. Walking must be clearly higher (brisk walking is
    /// moderate intensity, ≥ 40 % of heart-rate reserve: ACSM guidelines).
    func testRestingAndWalkingHeartRate() {
        for p in PlausibilityTests.people {
            let hr = source.samples(participant: p.id, sensor: .heartRate, device: .defaultWatch,
                                    writtenAfter: weekStart, through: weekEnd + 2 * 3_600)
            let bpm = simDoubles(hr, "heartRate")
            XCTAssertTrue(bpm.allSatisfy { (35...210).contains($0) }, "\(p.id): heart rate out of physiological range")
            var walking: [Double] = []
            for d in source.diaries(participant: p.id, from: weekStart + simDay, to: weekEnd - simDay) {
                let awake = simRows(hr, from: d.getUp, to: d.end).map { bpm[$0] }
                guard awake.count > 3_600 else { continue }
                let resting = simPercentile(awake, 0.05)
                XCTAssertTrue((50...80).contains(resting), "\(p.id) \(d.date): resting HR \(resting)")
                for w in d.walks where w.end - w.start > 300 && !w.running {
                    walking += simRows(hr, from: w.start + 120, to: w.end).map { bpm[$0] }
                }
                let asleep = simRows(hr, from: d.sleepOnset, to: d.wake).map { bpm[$0] }
                if asleep.count > 3_600 { XCTAssertLessThan(simMean(asleep), resting + 2, "\(p.id) \(d.date): sleeping HR") }
            }
            let rest = profileResting(p.id)
            if !walking.isEmpty {
                XCTAssertGreaterThan(simMean(walking), rest + 20, "\(p.id): walking HR \(simMean(walking)) vs resting \(rest)")
                XCTAssertLessThan(simMean(walking), 140, "\(p.id): walking HR \(simMean(walking))")
            }
        }
    }

    func profileResting(_ id: String) -> Double { source.profile(participant: id)!.restingHeartRate }

    /// Sleep 6–9 h a night on average: Hirshkowitz et al. (2015, Sleep Health 1:40), National
    /// Sleep Foundation: 7–9 h recommended, 6–10 h "may be appropriate" for adults; single
    /// nights may stray further (4.5–10.5 h here).
    func testSleepHours() {
        for p in PlausibilityTests.people {
            let nights = source.diaries(participant: p.id, from: weekStart, to: weekEnd).map { $0.sleepSeconds / 3_600 }
            XCTAssertTrue((6...9).contains(simMean(nights)), "\(p.id): mean sleep \(simMean(nights)) h")
            for h in nights { XCTAssertTrue((4.5...10.5).contains(h), "\(p.id): a night of \(h) h") }
        }
    }

    /// Screen wakes 40–250 a day and 1.5–8 h unlocked: dscout (2016, "Mobile touches") counted
    /// 76 phone sessions a day on average (heavy users 132); screen wakes add notification
    /// glances. Average screen time ≈ 3–5 h/simDay (data.ai State of Mobile 2022: 4.8 h).
    func testPhoneUsePerDay() {
        for p in PlausibilityTests.people {
            let usage = source.samples(participant: p.id, sensor: .deviceUsageReport, device: .defaultPhone,
                                       writtenAfter: weekStart, through: weekEnd)
            let wakes = simInts(usage, "totalScreenWakes"), unlocks = simInts(usage, "totalUnlocks"),
                unlocked = simDoubles(usage, "totalUnlockDuration"), duration = simDoubles(usage, "duration")
            XCTAssertTrue(duration.allSatisfy { $0 == 900 })
            var wakesBy: [String: Int] = [:], unlocksBy: [String: Int] = [:], hoursBy: [String: Double] = [:]
            for i in 0..<usage.count {
                let d = simLocalDate(usage.times[i] - 900, p.timeZone)   // report written after its window
                wakesBy[d, default: 0] += Int(wakes[i])
                unlocksBy[d, default: 0] += Int(unlocks[i])
                hoursBy[d, default: 0] += unlocked[i] / 3_600
                XCTAssertLessThanOrEqual(unlocks[i], wakes[i])
                XCTAssertLessThanOrEqual(unlocked[i], 900.001)
            }
            let days = wakesBy.keys.sorted().dropFirst().dropLast()
            XCTAssertGreaterThanOrEqual(days.count, 5)
            for d in days {
                XCTAssertTrue((40...250).contains(wakesBy[d]!), "\(p.id) \(d): \(wakesBy[d]!) screen wakes")
                XCTAssertTrue((25...200).contains(unlocksBy[d]!), "\(p.id) \(d): \(unlocksBy[d]!) unlocks")
                XCTAssertTrue((1.0...9.0).contains(hoursBy[d]!), "\(p.id) \(d): \(hoursBy[d]!) h unlocked")
            }
        }
    }

    /// Illuminance: outdoors in daylight the phone sees thousands of lux, indoors hundreds
    /// (EN 12464-1: 500 lx at office desks), and never more than direct sunlight (~100 000 lx).
    func testLightLevels() {
        let p = PlausibilityTests.people[0]
        let als = source.samples(participant: p.id, sensor: .ambientLightSensor, device: .defaultPhone,
                                 writtenAfter: weekStart, through: weekEnd)
        let lux = simDoubles(als, "lux"), x = simDoubles(als, "chromaticityX"), y = simDoubles(als, "chromaticityY")
        XCTAssertTrue(lux.allSatisfy { $0 >= 0 && $0 <= 100_000 })
        XCTAssertGreaterThan(simPercentile(lux, 0.99), 1_000, "no daylight seen all week")
        XCTAssertTrue((20...1_000).contains(simPercentile(lux, 0.5)), "median lux \(simPercentile(lux, 0.5))")
        for i in 0..<als.count where lux[i] >= 1 {
            XCTAssertTrue((0.25...0.55).contains(x[i]) && (0.25...0.45).contains(y[i]), "chromaticity (\(x[i]), \(y[i]))")
        }
        XCTAssertEqual(Set(simInts(als, "placement")), [1])
    }
}
