import XCTest
import SensorKitModel
import Simulator

/// The streams beyond the first eight: each agrees with the story and stays in range.
final class OtherSensorsTests: XCTestCase {
    let source = makeSimSource(seed: 17, simTrio)
    let weekEnd = simMonday + 7 * simDay

    func testSleepSessionsAndWristTemperatureFollowTheNights() {
        // ana wears her watch at night.
        let sessions = source.samples(participant: "ana", sensor: .sleepSessions, device: .defaultWatch,
                                      writtenAfter: simMonday, through: weekEnd)
        let temps = source.samples(participant: "ana", sensor: .wristTemperature, device: .defaultWatch,
                                   writtenAfter: simMonday, through: weekEnd)
        XCTAssertGreaterThanOrEqual(sessions.count, 5)
        XCTAssertEqual(sessions.count, temps.count)
        let durations = simDoubles(sessions, "duration")
        let diaries = source.diaries(participant: "ana", from: simMonday - simDay, to: weekEnd)
        for i in 0..<sessions.count {
            guard let d = diaries.first(where: { $0.sleepOnset == sessions.times[i] }) else {
                XCTFail("session at \(sessions.times[i]) matches no night"); continue
            }
            XCTAssertEqual(durations[i], d.wake - d.sleepOnset, accuracy: 1e-6)
            XCTAssertGreaterThanOrEqual(sessions.writeTimes[i], d.wake + 3_600, "written before wake + sync lag")
        }
        guard case .value(let readings) = temps.column("temperatures")!.data else { return XCTFail() }
        for (i, r) in readings.enumerated() {
            guard case .array(let xs) = r else { return XCTFail() }
            XCTAssertEqual(Double(xs.count), simDoubles(temps, "duration")[i] / 300, accuracy: 1.5, "one reading per 5 min")
            for x in xs {
                guard case .object(let kv) = x, case .double(let v) = kv[1].1, case .int(let cond) = kv[2].1 else { return XCTFail() }
                if cond & 1 == 0 { XCTAssertTrue((32...38).contains(v), "wrist temperature \(v) °C") }
            }
        }
        // ben does not wear his watch at night (seeded profile): no sessions.
        if source.profile(participant: "ben")!.wearsWatchToSleep == false {
            XCTAssertEqual(source.samples(participant: "ben", sensor: .sleepSessions, device: .defaultWatch,
                                          writtenAfter: simMonday, through: weekEnd).count, 0)
        }
    }

    func testCallsAndMessages() {
        for id in ["ana", "ben"] {
            let phone = source.samples(participant: id, sensor: .phoneUsageReport, device: .defaultPhone,
                                       writtenAfter: simMonday, through: weekEnd + simDay)
            let calls = simInts(phone, "totalOutgoingCalls").reduce(0, +) + simInts(phone, "totalIncomingCalls").reduce(0, +)
            let diaryCalls = source.diaries(participant: id, from: simMonday, to: weekEnd).reduce(0) { $0 + $1.phoneCalls }
            XCTAssertEqual(Double(calls), Double(diaryCalls), accuracy: 3, "\(id) calls")
            XCTAssertTrue(simDoubles(phone, "totalPhoneCallDuration").allSatisfy { (0...900.001).contains($0) })
            let speech = source.samples(participant: id, sensor: .telephonySpeechMetrics, device: .defaultPhone,
                                        writtenAfter: simMonday, through: weekEnd)
            XCTAssertGreaterThan(speech.count, 0)
            // Samples of one call share a session id and move forward in the audio.
            guard case .string(let ids) = speech.column("sessionIdentifier")!.data else { return XCTFail() }
            let since = simDoubles(speech, "timeSinceAudioStart")
            for i in 1..<speech.count where ids[i] == ids[i - 1] { XCTAssertGreaterThan(since[i], since[i - 1]) }
            let messages = source.samples(participant: id, sensor: .messagesUsageReport, device: .defaultPhone,
                                          writtenAfter: simMonday, through: weekEnd)
            let sent = simInts(messages, "totalOutgoingMessages").reduce(0, +)
            XCTAssertTrue((50...3_000).contains(sent), "\(id): \(sent) messages sent in a week")
        }
    }

    func testPressureAndOdometer() {
        let a = simMonday + simDay, b = a + simDay
        let pressure = source.samples(participant: "ana", sensor: .ambientPressure, device: .defaultPhone, writtenAfter: a, through: b)
        XCTAssertEqual(Double(pressure.count), 86_400, accuracy: 200, "1 Hz")
        let kPa = simDoubles(pressure, "pressure"), celsius = simDoubles(pressure, "temperature")
        // Sea level 101.3 kPa; weather ±3 kPa; −1.2 kPa per 100 m up to the profile's ≤ 430 m.
        XCTAssertTrue(kPa.allSatisfy { (90...106).contains($0) })
        XCTAssertTrue(celsius.allSatisfy { (15...40).contains($0) })
        let ids = simInts(pressure, "identifier")
        XCTAssertEqual(Set(ids).count, 1_440, accuracy: 5, "one batch a minute")
        let odo = source.samples(participant: "ana", sensor: .odometer, device: .defaultPhone, writtenAfter: a, through: b)
        XCTAssertGreaterThan(odo.count, 50)
        let ends = simDoubles(odo, "endDate"), dist = simDoubles(odo, "deltaDistance"), speed = simDoubles(odo, "speed")
        for i in 0..<odo.count {
            XCTAssertTrue((0...25).contains(speed[i]))
            XCTAssertEqual(dist[i], speed[i] * (ends[i] - odo.times[i]), accuracy: 0.02)
            XCTAssertLessThanOrEqual(ends[i] - odo.times[i], 10)
        }
    }

    func testVisitsStartAndEndAtHome() {
        let v = source.samples(participant: "ana", sensor: .visits, device: .defaultPhone, writtenAfter: simMonday, through: weekEnd)
        let cat = simInts(v, "locationCategory"), dist = simDoubles(v, "distanceFromHome")
        let arrivalEnd = simDoubles(v, "arrivalEnd"), depStart = simDoubles(v, "departureStart"), depEnd = simDoubles(v, "departureEnd")
        guard case .string(let ids) = v.column("identifier")!.data else { return XCTFail() }
        XCTAssertGreaterThanOrEqual(cat.filter { $0 == 1 }.count, 6, "a home visit every night")
        XCTAssertGreaterThanOrEqual(cat.filter { $0 == 2 }.count, 4, "work visits on work days")
        for i in 0..<v.count {
            XCTAssertLessThanOrEqual(v.times[i], arrivalEnd[i])
            XCTAssertLessThanOrEqual(arrivalEnd[i], depStart[i])
            XCTAssertLessThanOrEqual(depStart[i], depEnd[i])
            XCTAssertGreaterThanOrEqual(v.writeTimes[i], depEnd[i] - 600)
            if cat[i] == 1 { XCTAssertEqual(dist[i], 0) } else { XCTAssertGreaterThan(dist[i], 0) }
        }
        XCTAssertEqual(Set(zip(cat, ids).filter { $0.0 == 1 }.map(\.1)).count, 1, "home has one identifier")
    }

    func testECGRecordings() {
        guard let ecg = simFirstNonEmpty(source, .electrocardiogram) else { return XCTFail("no ECG in a week") }
        let states = simInts(ecg, "sessionState")
        XCTAssertEqual(ecg.count % 30, 0, "30 one-second samples per recording")
        XCTAssertEqual(states.first, 1)
        XCTAssertEqual(states.last, 3)
        guard case .value(let data) = ecg.column("data")!.data, case .array(let first) = data[0] else { return XCTFail() }
        XCTAssertEqual(first.count, 512)
        let values = first.compactMap { v -> Double? in
            if case .object(let kv) = v, case .double(let x) = kv[1].1 { return x } else { return nil }
        }
        XCTAssertTrue((800...1_400).contains(values.map(abs).max()!), "R peak ≈ 1 mV")
    }

    /// PPG windows (contract §3.2: "short windows (e.g. 2–60 s) several times per hour"; contract §3.3.18 usages):
    /// background windows of 2–60 s about three times an hour while worn, foreground
    /// heart-rate windows only inside walks and runs (with the arm swinging in the window's
    /// accelerometer), all at 32 Hz.
    func testPPGWindows() {
        let a = simMonday + simDay, b = a + 7 * simDay
        let ppg = source.samples(participant: "ana", sensor: .photoplethysmogram, device: .defaultWatch,
                                 writtenAfter: a, through: b)
        guard case .value(let usages) = ppg.column("usage")!.data,
              case .value(let accels) = ppg.column("accelerometerSamples")!.data else { return XCTFail("columns") }
        let offsets = simInts(ppg, "nanosecondsSinceStart")
        /// The x acceleration of the watch in each row of a window.
        func armX(_ rows: Range<Int>) -> [Double] {
            rows.compactMap { r -> Double? in
                if case .array(let e) = accels[r], case .object(let kv)? = e.first, case .double(let x)? = kv.first(where: { $0.0 == "x" })?.1 { return x }
                return nil
            }
        }
        // Windows: consecutive rows with the same start date.
        var windows: [(start: Double, rows: Range<Int>, usage: String)] = []
        var i = 0
        while i < ppg.count {
            var j = i + 1
            while j < ppg.count && ppg.times[j] == ppg.times[i] && offsets[j] > offsets[j - 1] { j += 1 }
            guard case .array(let u) = usages[i], case .string(let name)? = u.first else { return XCTFail("usage") }
            windows.append((ppg.times[i], i..<j, name))
            i = j
        }
        let background = windows.filter { $0.usage == "backgroundSystem" }
        for w in windows {
            let seconds = Double(w.rows.count) / 32
            XCTAssertTrue((2...60).contains(seconds), "a \(seconds)-s \(w.usage) window")
            XCTAssertEqual(offsets[w.rows.lowerBound], 0)
        }
        // ana wears her watch day and night except when charging: ~3 windows an hour.
        let perDay = Double(background.count) / 7
        XCTAssertTrue((50...75).contains(perDay), "\(perDay) background windows a day")
        let lengths = background.map { Double($0.rows.count) / 32 }.sorted()
        XCTAssertLessThan(lengths[lengths.count / 2], 25, "most background windows are short")
        XCTAssertGreaterThan(lengths.last!, 45)
        // Foreground heart rate only during walks and runs, with arm swing.
        let walks = source.diaries(participant: "ana", from: a, to: b).flatMap(\.walks)
        let workout = windows.filter { $0.usage == "foregroundHeartRate" }
        XCTAssertFalse(workout.isEmpty, "no workout windows in a week")
        for w in workout {
            XCTAssertTrue(walks.contains { $0.start <= w.start && w.start + 60 <= $0.end + 1 }, "workout window outside a walk")
            let xs = armX(w.rows)
            XCTAssertGreaterThan(simVariance(xs), 0.01, "no arm swing in a workout window")
        }
        for w in background.prefix(50) where !walks.contains(where: { $0.start <= w.start && w.start < $0.end }) {
            let xs = armX(w.rows)
            XCTAssertLessThan(simVariance(xs), 0.01, "arm swing while still")
        }
    }

    /// Acoustic settings (contract §3.2: "one snapshot at start and on each change"): a daily snapshot
    /// at ~03:30 local, and a change record in the evening of a week's first day whenever the
    /// weekly settings change; a snapshot always repeats the settings in effect.
    func testAcousticSettingsSnapshotsAndChanges() {
        let a = simMonday, b = a + 56 * simDay
        let rows = source.samples(participant: "ana", sensor: .acousticSettings, device: .defaultPhone,
                                  writtenAfter: a, through: b)
        let bg = simBools(rows, "backgroundSoundsEnabled"), level = simDoubles(rows, "headphoneSafetyAudioLevel")
        let present = rows.column("headphoneSafetyAudioLevel")!.present ?? Array(repeating: true, count: rows.count)
        func settings(_ i: Int) -> String { "\(bg[i]) \(present[i] ? String(level[i]) : "none")" }
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "Europe/Berlin")!
        var snapshots = 0, changes = 0
        for i in 0..<rows.count {
            let hour = cal.component(.hour, from: Date(timeIntervalSince1970: rows.times[i]))
            switch hour {
            case 3:
                snapshots += 1
                if i > 0 { XCTAssertEqual(settings(i), settings(i - 1), "a snapshot changed the settings") }
            case 20, 21:
                changes += 1
                if i > 0 { XCTAssertNotEqual(settings(i), settings(i - 1), "a change record without a change") }
            default:
                XCTFail("acoustic settings written at \(hour):00")
            }
        }
        XCTAssertTrue((54...57).contains(snapshots), "\(snapshots) daily snapshots in 56 days")
        XCTAssertGreaterThan(changes, 0, "no settings change in eight weeks")
        XCTAssertLessThanOrEqual(changes, 8)
    }
}
