import Foundation

/// A participant's habits with every number filled in: the preset's nominal values,
/// varied per participant from the seed, overridden by whatever the scenario gave.
public struct ResolvedProfile: Sendable, Hashable {
    public var preset: ProfilePreset
    public var chronotype: Chronotype
    public var activity: ActivityLevel
    public var screenTime: ScreenTimeLevel
    public var commute: CommuteMode
    public var midSleepFreeDays: Double
    public var sleepNeedHours: Double
    public var workdayWakeHour: Double
    public var dailySteps: Double
    public var screenHoursPerDay: Double
    public var pickupsPerDay: Double
    public var restingHeartRate: Double
    public var age: Double
    /// Tanaka et al. 2001: 208 − 0.7 × age.
    public var maxHeartRate: Double
    public var heightCm: Double
    /// Metres per step while walking (0.413 × height; Hatano 1993 rule of thumb).
    public var stepLength: Double
    public var workdays: Set<Int>
    public var workStartHour: Double
    public var workHours: Double
    public var commuteMinutes: Double
    public var exerciseSessionsPerWeek: Double
    public var wearsWatchToSleep: Bool
    public var wristLocation: Int
    public var crownOrientation: Int
    public var latitude: Double
    public var longitude: Double
    public var typingWordsPerMinute: Double
    public var swipeTypingShare: Double
    /// Altitude of home above sea level, metres (ambient pressure).
    public var homeAltitude: Double
    /// Floor of the workplace (0 = ground).
    public var workFloor: Int
    /// Distance from home to work, metres (visits, odometer).
    public var workDistance: Double
}

struct PresetNominal {
    var chronotype: Chronotype
    var activity: ActivityLevel
    var screen: ScreenTimeLevel
    var commute: CommuteMode
    var workdays: Set<Int>
    var workStart: Double
    var workHours: Double
    var commuteMinutes: Double
    var exercise: Double
    var age: (Double, Double)
    var rhr: (Double, Double)
}

extension ProfilePreset {
    var nominal: PresetNominal {
        let week: Set<Int> = [1, 2, 3, 4, 5]
        switch self {
        case .officeWorker:
            return PresetNominal(chronotype: .intermediate, activity: .somewhatActive, screen: .average, commute: .transit,
                                 workdays: week, workStart: 9, workHours: 8.5, commuteMinutes: 30, exercise: 1.5,
                                 age: (38, 9), rhr: (65, 6))
        case .student:
            return PresetNominal(chronotype: .owl, activity: .somewhatActive, screen: .heavy, commute: .walk,
                                 workdays: week, workStart: 10, workHours: 6, commuteMinutes: 20, exercise: 1.5,
                                 age: (21, 2), rhr: (64, 6))
        case .remoteWorker:
            return PresetNominal(chronotype: .intermediate, activity: .lowActive, screen: .average, commute: .none,
                                 workdays: week, workStart: 9, workHours: 8.5, commuteMinutes: 0, exercise: 1,
                                 age: (36, 8), rhr: (67, 6))
        case .retiree:
            return PresetNominal(chronotype: .lark, activity: .somewhatActive, screen: .light, commute: .none,
                                 workdays: [], workStart: 9, workHours: 0, commuteMinutes: 0, exercise: 4,
                                 age: (70, 4), rhr: (66, 6))
        case .sedentaryCommuter:
            return PresetNominal(chronotype: .intermediate, activity: .sedentary, screen: .average, commute: .car,
                                 workdays: week, workStart: 8.5, workHours: 8.5, commuteMinutes: 25, exercise: 0.5,
                                 age: (45, 9), rhr: (71, 5))
        case .athlete:
            return PresetNominal(chronotype: .lark, activity: .active, screen: .average, commute: .walk,
                                 workdays: week, workStart: 8.5, workHours: 8.5, commuteMinutes: 20, exercise: 4,
                                 age: (32, 7), rhr: (55, 4))
        }
    }
}

extension ActivityLevel {
    var steps: Double {
        switch self {
        case .sedentary: 4_500
        case .lowActive: 6_500
        case .somewhatActive: 8_500
        case .active: 11_000
        }
    }
}

extension ScreenTimeLevel {
    var hours: Double {
        switch self {
        case .light: 2.5
        case .average: 4.0
        case .heavy: 6.5
        }
    }
    var pickups: Double {
        switch self {
        case .light: 50
        case .average: 80
        case .heavy: 120
        }
    }
}

extension Chronotype {
    /// Mid-sleep on free days, hours (MCTQ population: ~4 h; early ~3 h, late ~5.5 h).
    var msf: Double {
        switch self {
        case .lark: 3.0
        case .intermediate: 4.2
        case .owl: 5.3
        }
    }
}

func clamp(_ x: Double, _ lo: Double, _ hi: Double) -> Double { min(max(x, lo), hi) }

extension ParticipantProfile {
    /// Fills every number: preset (or seed-chosen), then per-participant variation, then overrides.
    func resolved(key: RandomKey, zone: TimeZone) -> ResolvedProfile {
        let k = key.with("profile")
        let preset = self.preset ?? {
            let u = k.unit(0)
            let table: [(ProfilePreset, Double)] = [(.officeWorker, 0.35), (.student, 0.15), (.remoteWorker, 0.15),
                                                     (.retiree, 0.10), (.sedentaryCommuter, 0.15), (.athlete, 0.10)]
            var acc = 0.0
            for (p, w) in table { acc += w; if u < acc { return p } }
            return .officeWorker
        }()
        let n = preset.nominal
        let chronotype = self.chronotype ?? n.chronotype
        let activity = self.activity ?? n.activity
        let screen = self.screenTime ?? n.screen
        let commute = self.commute ?? n.commute
        let workdays = Set(self.workdays ?? Array(n.workdays))
        let workStart = workStartHour ?? clamp(n.workStart + 0.25 * k.normal(1), 6, 12)
        let workHours = self.workHours ?? (n.workHours == 0 ? 0 : clamp(n.workHours + 0.3 * k.normal(2), 4, 11))
        let commuteMinutes = self.commuteMinutes ?? (commute == .none ? 0 : clamp(n.commuteMinutes * exp(0.25 * k.normal(3)), 8, 75))
        let msf = midSleepFreeDays ?? clamp(chronotype.msf + 0.3 * k.normal(4), 1.5, 8)
        let need = sleepNeedHours ?? clamp(8.0 + 0.35 * k.normal(5), 6.5, 9.0)
        let wake = workdayWakeHour ?? {
            // As late as the body clock would like (a little before its free-day wake), but
            // early enough to get ready and commute.
            let prep = 0.9 + 0.15 * k.normal(6)
            let leave = commute == .none ? workStart - 0.4 : workStart - commuteMinutes / 60 - prep
            let natural = msf + need / 2 - 1.0 + 0.2 * k.normal(7)
            return clamp(min(natural, leave), 4.5, 10.5)
        }()
        let steps = dailySteps ?? activity.steps * exp(0.08 * k.normal(8))
        let screenHours = screenHoursPerDay ?? screen.hours * exp(0.15 * k.normal(9))
        let pickups = pickupsPerDay ?? screen.pickups * exp(0.15 * k.normal(10))
        let age = self.age ?? clamp(n.age.0 + n.age.1 * k.normal(11), 18, 90)
        let rhr = restingHeartRate ?? clamp(n.rhr.0 + n.rhr.1 * k.normal(12), 52, 78)
        let height = heightCm ?? clamp(171 + 9 * k.normal(13), 150, 200)
        let exercise = exerciseSessionsPerWeek ?? max(0, n.exercise * exp(0.2 * k.normal(14)))
        let sleeps = wearsWatchToSleep ?? k.chance(15, 0.5)
        let wrist = wristLocation ?? (k.chance(16, 0.9) ? 0 : 1)
        let crown = crownOrientation ?? (k.chance(17, 0.85) ? 1 - wrist : wrist)
        let now = Date(timeIntervalSince1970: 1_735_689_600) // 2025-01-01: standard time in the north
        let standard = Double(zone.secondsFromGMT(for: now)) - zone.daylightSavingTimeOffset(for: now)
        let lon = longitude ?? standard / 240
        let lat = latitude ?? 45
        let wpm = typingWordsPerMinute ?? clamp(36 + 8 * k.normal(18), 15, 70)
        let swipe = swipeTypingShare ?? (k.chance(19, 0.7) ? 0 : k.uniform(20, 0.1, 0.6))
        let distance: Double = switch commute {
        case .none: 0
        case .walk: commuteMinutes * 60 * 1.3
        case .transit: commuteMinutes * 60 * 5
        case .car: commuteMinutes * 60 * 10
        }
        return ResolvedProfile(
            preset: preset, chronotype: chronotype, activity: activity, screenTime: screen, commute: commute,
            midSleepFreeDays: msf, sleepNeedHours: need, workdayWakeHour: wake, dailySteps: steps,
            screenHoursPerDay: screenHours, pickupsPerDay: pickups, restingHeartRate: rhr, age: age,
            maxHeartRate: 208 - 0.7 * age, heightCm: height, stepLength: 0.413 * height / 100,
            workdays: workdays, workStartHour: workStart, workHours: workHours, commuteMinutes: commuteMinutes,
            exerciseSessionsPerWeek: exercise, wearsWatchToSleep: sleeps, wristLocation: wrist,
            crownOrientation: crown, latitude: lat, longitude: lon, typingWordsPerMinute: wpm,
            swipeTypingShare: swipe, homeAltitude: k.uniform(21, 0, 400), workFloor: k.int(22, 0, 8),
            workDistance: max(distance, k.uniform(23, 1_500, 12_000)))
    }
}
