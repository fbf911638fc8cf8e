import Foundation
import SensorKitModel

/// The ground truth of one simulated participant-day: what the participant actually did,
/// before any sensor, gating or sync. Useful to check what a protocol infers.
///
/// A day runs from getting into bed the evening before to getting into bed this evening;
/// its night is the one that ends on this date's morning. Times are Unix seconds.
public struct DayDiary: Sendable, Hashable {
    /// Local date, "YYYY-MM-DD".
    public var date: String
    /// Days since 1970-01-01 (local civil day).
    public var dayNumber: Int
    public var workday: Bool
    public var start: Double
    public var end: Double
    /// Into bed, lights off, asleep, awake, out of bed.
    public var bedtime: Double
    public var lightsOff: Double
    public var sleepOnset: Double
    public var wake: Double
    public var getUp: Double
    /// Time asleep (onset to wake, minus night awakenings), seconds.
    public var sleepSeconds: Double
    public var nightAwakenings: Int
    /// Steps taken in the day (whole steps per walking stretch), before the phone is consulted.
    public var steps: Int
    /// Walking and running stretches: start, end, cadence (steps/s).
    public var walks: [Walk]
    /// Screen-on time and counts of screen wakes / unlocks (phone on or off).
    public var screenSeconds: Double
    public var screenWakes: Int
    public var unlocks: Int
    /// Keyboard time, seconds.
    public var typingSeconds: Double
    public var phoneCalls: Int
    /// Watch off the wrist by routine (charging, night) — scenario events come on top.
    public var watchOffWrist: [ClosedRange<Double>]

    public struct Walk: Sendable, Hashable {
        public var start: Double
        public var end: Double
        public var cadence: Double
        public var running: Bool
    }
}

extension SimulatedSource {
    /// The diary of the participant's day containing instant `t` (nil for an unknown id).
    public func diary(participant: String, containing t: Double) -> DayDiary? {
        guard let p = participants[participant] else { return nil }
        let clock = p.zones.clock(from: t - 3 * 86_400, to: t + 3 * 86_400)
        var d = clock.day(containing: t)
        var s = p.cachedStory(d, clock: clock)
        if t < s.spanStart { d -= 1; s = p.cachedStory(d, clock: clock) }
        if t >= s.spanEnd { d += 1; s = p.cachedStory(d, clock: clock) }
        return diary(s)
    }

    /// Diaries of the days overlapping [from, to).
    public func diaries(participant: String, from: Double, to: Double) -> [DayDiary] {
        guard let p = participants[participant], to > from else { return [] }
        let view = RangeView(p, from: from, to: to)
        return view.stories.map(diary)
    }

    func diary(_ s: DayStory) -> DayDiary {
        let (y, m, dd) = LocalTime.civilDate(day: s.day)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let awake = s.night.awakenings.reduce(0) { $0 + $1.end - $1.start }
        let walks = s.blocks.filter { $0.cadence > 0 }
        return DayDiary(
            date: "\(y)-\(two(m))-\(two(dd))", dayNumber: s.day, workday: s.workday, start: s.spanStart, end: s.spanEnd,
            bedtime: s.night.bed, lightsOff: s.night.lightsOff, sleepOnset: s.night.asleep, wake: s.night.wake,
            getUp: s.night.getUp, sleepSeconds: s.night.wake - s.night.asleep - awake,
            nightAwakenings: s.night.awakenings.count,
            steps: walks.reduce(0) { $0 + Int(($1.cadence * ($1.end - $1.start)).rounded(.down)) },
            walks: walks.map { DayDiary.Walk(start: $0.start, end: $0.end, cadence: $0.cadence, running: $0.activity == .run) },
            screenSeconds: s.screens.reduce(0) { $0 + $1.end - $1.start }, screenWakes: s.screens.count,
            unlocks: s.screens.filter(\.unlocked).count,
            typingSeconds: s.texts.reduce(0) { $0 + $1.end - $1.start }, phoneCalls: s.calls.count,
            watchOffWrist: s.offWrist.map { $0.start...$0.end })
    }
}
