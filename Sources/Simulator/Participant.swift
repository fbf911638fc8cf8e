import Foundation
import SensorKitModel

/// One simulated participant, as a scenario describes them.
///
/// Everything not given is drawn from the study seed, so a scenario can be as short as
/// `ParticipantDescription(id: "p01")`. All times are wall seconds since the Unix epoch.
public struct ParticipantDescription: Sendable, Hashable {
    /// Stable identifier; also seeds the participant's randomness.
    public var id: String
    /// IANA time-zone name of the participant's home (e.g. `"Europe/Berlin"`).
    public var timeZone: String
    /// The participant's iPhone (always present).
    public var phone: SRDevice
    /// The paired Apple Watch, if any.
    public var watch: SRDevice?
    /// Habits (sleep, activity, screen use…): a named preset plus tunable numbers.
    public var profile: ParticipantProfile
    /// Things that happen to this participant during the study.
    public var events: [TimelineEvent]

    public init(id: String, timeZone: String = "UTC", phone: SRDevice = .defaultPhone, watch: SRDevice? = nil,
                profile: ParticipantProfile = ParticipantProfile(), events: [TimelineEvent] = []) {
        self.id = id
        self.timeZone = timeZone
        self.phone = phone
        self.watch = watch
        self.profile = profile
        self.events = events
    }
}

/// Something that changes a participant's data during the study.
public enum TimelineEvent: Sendable, Hashable {
    /// The watch is not worn in [from, to): no heart rate, an off-wrist record at `from`
    /// and an on-wrist record at `to` (unless the daily routine has it off anyway).
    case watchOffWrist(from: Double, to: Double)
    /// The device is switched off (or out of battery) in [from, to): it records nothing,
    /// and boots at `to` (its uptime clock restarts).
    case deviceOff(DeviceKind, from: Double, to: Double)
    /// The device restarts at `at`: off for `SimulationSettings.rebootSeconds`, then boots.
    case reboot(DeviceKind, at: Double)
    /// The participant travels: from `at` on, local time follows `timeZone` (IANA name).
    case travel(at: Double, timeZone: String)
}

/// Named participant profiles. Each fixes a chronotype, an activity level, a screen-time
/// level, a work pattern and a commute; any number in `ParticipantProfile` overrides it.
public enum ProfilePreset: String, Sendable, Hashable, CaseIterable {
    /// Weekday office job, 30-min transit commute, intermediate chronotype, moderately active.
    case officeWorker
    /// Classes on weekdays, walks to campus, late chronotype, heavy phone use.
    case student
    /// Works from home on weekdays, no commute, low activity, average phone use.
    case remoteWorker
    /// No work schedule, early chronotype, a daily morning walk, light phone use.
    case retiree
    /// Office job by car, low activity, light exercise.
    case sedentaryCommuter
    /// Office job, cycles or walks, runs several times a week.
    case athlete
}

/// Chronotype: when the participant sleeps on free days (mid-sleep on free days, MSF,
/// from the Munich ChronoType Questionnaire; Roenneberg et al. 2007).
public enum Chronotype: String, Sendable, Hashable, CaseIterable {
    case lark, intermediate, owl
}

/// Daily step levels (Tudor-Locke & Bassett 2004, "How many steps/day are enough?").
public enum ActivityLevel: String, Sendable, Hashable, CaseIterable {
    /// ~4 500 steps/day (< 5 000: "sedentary").
    case sedentary
    /// ~6 500 steps/day ("low active").
    case lowActive
    /// ~8 500 steps/day ("somewhat active").
    case somewhatActive
    /// ~11 000 steps/day ("active").
    case active
}

/// Phone-use levels.
public enum ScreenTimeLevel: String, Sendable, Hashable, CaseIterable {
    /// ~2.5 h screen time, ~50 pickups a day.
    case light
    /// ~4 h, ~80 pickups.
    case average
    /// ~6.5 h, ~120 pickups.
    case heavy
}

/// How the participant gets to work or class.
public enum CommuteMode: String, Sendable, Hashable, CaseIterable {
    case none, walk, transit, car
}

/// A participant's habits. Every field is optional: nil means "from the preset, with a
/// per-participant variation drawn from the seed"; a number given is used as is.
public struct ParticipantProfile: Sendable, Hashable {
    /// Named profile; nil = chosen from the seed.
    public var preset: ProfilePreset?
    public var chronotype: Chronotype?
    public var activity: ActivityLevel?
    public var screenTime: ScreenTimeLevel?
    public var commute: CommuteMode?

    /// Mid-sleep on free days, hours after local midnight (MCTQ MSF; 4.0 ≈ 23:45–08:15 sleep).
    public var midSleepFreeDays: Double?
    /// Sleep length on free days, hours.
    public var sleepNeedHours: Double?
    /// Alarm time on workdays, hours after local midnight.
    public var workdayWakeHour: Double?
    /// Mean steps a day.
    public var dailySteps: Double?
    /// Mean screen-on time a day, hours.
    public var screenHoursPerDay: Double?
    /// Mean unlocked phone sessions ("pickups") a day.
    public var pickupsPerDay: Double?
    /// Resting heart rate, bpm.
    public var restingHeartRate: Double?
    /// Age in years (sets maximum heart rate, Tanaka et al. 2001: 208 − 0.7 × age).
    public var age: Double?
    /// Body height in cm (sets step length ≈ 0.413 × height).
    public var heightCm: Double?
    /// ISO weekdays with work or classes (1 = Monday … 7 = Sunday).
    public var workdays: [Int]?
    /// Start of the working day, hours after local midnight (arrival at work).
    public var workStartHour: Double?
    /// Hours at work or class, lunch included.
    public var workHours: Double?
    /// One-way commute, minutes.
    public var commuteMinutes: Double?
    /// Exercise sessions (runs or brisk walks) a week.
    public var exerciseSessionsPerWeek: Double?
    /// True if the watch is worn at night (sleep tracking) and charged in the morning.
    public var wearsWatchToSleep: Bool?
    /// 0 = left wrist, 1 = right wrist (`SRWristDetection.WristLocation`).
    public var wristLocation: Int?
    /// 0 = crown left, 1 = crown right (`SRWristDetection.CrownOrientation`).
    public var crownOrientation: Int?
    /// Latitude and longitude of home, degrees (daylight model); default 45° N and the
    /// longitude of the time zone's standard meridian.
    public var latitude: Double?
    public var longitude: Double?
    /// Tap-typing speed, words a minute (Palin et al. 2019: mean 36 wpm on phones).
    public var typingWordsPerMinute: Double?
    /// Share of words entered by swiping (QuickPath), 0…1.
    public var swipeTypingShare: Double?

    public init(preset: ProfilePreset? = nil, chronotype: Chronotype? = nil, activity: ActivityLevel? = nil,
                screenTime: ScreenTimeLevel? = nil, commute: CommuteMode? = nil) {
        self.preset = preset
        self.chronotype = chronotype
        self.activity = activity
        self.screenTime = screenTime
        self.commute = commute
    }
}

/// Knobs of the simulated world that are not about a participant (contract §14.2).
public struct SimulationSettings: SwitchSet, Hashable {
    /// Seconds from a watch sample to the earliest sync that can carry it to the phone.
    public var watchSyncLag: Double = 3_600
    /// Seconds between watch sync opportunities (a sync needs phone and watch on).
    public var watchSyncInterval: Double = 900
    /// Seconds of data in one array write batch (accelerometer, rotation rate, pressure).
    public var writeBatchSeconds: Double = 60
    /// Seconds covered by one usage / keyboard report.
    public var reportWindow: Double = 900
    /// Per-sensor report windows (the `reportWindow` switch), overriding `reportWindow`.
    public var reportWindowBySensor: [Sensor: Double] = [:]
    /// Per-sensor write-batch lengths (the `writeBatch` switch), overriding `writeBatchSeconds`.
    public var writeBatchBySensor: [Sensor: Double] = [:]

    /// Seconds covered by one report of `sensor`.
    public func reportWindow(for sensor: Sensor) -> Double { max(1, reportWindowBySensor[sensor] ?? reportWindow) }
    /// Seconds of data in one write batch of `sensor`.
    public func writeBatch(for sensor: Sensor) -> Double { max(0.02, writeBatchBySensor[sensor] ?? writeBatchSeconds) }
    /// Ambient light sampling period while the screen is on, seconds.
    public var ambientLightPeriod: Double = 10
    /// Automatic (software update) restarts every this many days at night; 0 = never.
    public var autoRebootDays: Int = 14
    /// Seconds a restart keeps a device off.
    public var rebootSeconds: Double = 90
    /// Pedometer bin length, seconds.
    public var pedometerBin: Double = 150
    /// Speech-metrics timestamps are rounded down to this many seconds (contract §3.3.13; the
    /// `speechTimestampRounding` switch).
    public var speechTimestampRounding: Double = 1

    public init() {}

    // MARK: The simulator's scenario switches

    /// Scenario `switches` that shape only the generated data, not SensorKit's rules: they
    /// belong to the simulator (the model's switches are `WorldSwitches.switchTable`). One
    /// entry each (`SwitchSet`): `set(name:value:)`, `isSwitch`, `knobs` come from here.
    public static let switchTable: [SwitchEntry<SimulationSettings>] = [
        .secondsPerSensor("reportWindow", \.reportWindowBySensor, range: 60...86_400, fallback: \SimulationSettings.reportWindow, section: "contract §3.2",
                          summary: "window of usage and keyboard reports, per sensor (device, messages and phone usage, keyboard metrics), from a minute to a day. Where set, it overrides `simulation.reportWindow` for that sensor."),
        .secondsPerSensor("writeBatch", \.writeBatchBySensor, range: 1...86_400, fallback: \SimulationSettings.writeBatchSeconds, section: "contract §3.2",
                          summary: "length of accelerometer, rotation and pressure batches, per sensor, from 1 s to a day. Where set, it overrides `simulation.writeBatchSeconds` for that sensor."),
        .seconds("speechTimestampRounding", \.speechTimestampRounding, range: 0...86_400, section: "contract §3.3.13",
                 summary: "rounding of speech-metrics timestamps, in seconds, up to a day (speech metrics are not simulated yet)."),
    ]
}

/// A scenario problem found when building a `SimulatedSource`.
public struct SimulationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var participant: String
    public var message: String
    public init(participant: String, message: String) {
        self.participant = participant
        self.message = message
    }
    public var description: String { "participant '\(participant)': \(message)" }
}
