import CivilTime
import Foundation

/// The calendar service: local-time arithmetic in a time zone (Gregorian, DST-correct) —
/// UTC offsets and their transitions, day starts, the next local day, "HH:MM" of a given
/// local day, wall times (local clock readings as seconds) and their labels, civil days,
/// and the parsing of local dates and times. The runtime's clock, schedules, sample-set
/// groups, scenario times, the simulator (with `ZoneTimeline`/`LocalClock` for travel) and
/// the command line all use it; its civil-day arithmetic is `CivilTime.CivilDays`, which
/// `LuaHost`'s `os.date` shares.
///
/// The calendar covers `supportedInstants` (the years 1 to 9999, UTC). Every function here is
/// total: none traps on NaN, an infinity or a huge number. Outside the range the labels are
/// the number itself (`"nan"`, `"1e+300"`) and day arithmetic returns its argument; callers
/// that take times from scripts, stores or scenarios check `rangeProblem` first and raise it.
public enum LocalTime {
    /// The instants the calendar service covers: 0001-01-01 00:00:00 UTC up to (not
    /// including) 10000-01-01 00:00:00 UTC. Times before 1970 are negative and supported.
    public static let supportedInstants: Range<Double> = -62_135_596_800 ..< 253_402_300_800

    /// What the calendar covers, for messages.
    public static let supportedText = "the years 1 to 9999: -62135596800 to 253402300799 seconds since 1970"

    /// Why `t` cannot be placed on the calendar, or nil when it can:
    /// "nan is not a time (expected a finite number of seconds since 1970)" or
    /// "1e+300 is outside the calendar (the years 1 to 9999: …)".
    public static func rangeProblem(_ t: Double) -> String? {
        if !t.isFinite { return "\(NumberText.plain(t)) is not a time (expected a finite number of seconds since 1970)" }
        if !supportedInstants.contains(t) { return "\(NumberText.plain(t)) is outside the calendar (\(supportedText))" }
        return nil
    }

    /// A Gregorian calendar in `tz`.
    public static func calendar(_ tz: TimeZone) -> Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = tz
        return c
    }

    /// The UTC offset (seconds) in force at `t` in `tz` (from the zone's lock-free table, `ZoneRules`).
    public static func offset(at t: Double, _ tz: TimeZone) -> Double {
        Double(ZoneRules.of(tz).offset(at: t))
    }

    /// The next instant after `t` at which `tz`'s offset changes (a DST transition); +∞ when none.
    public static func nextTransition(after t: Double, _ tz: TimeZone) -> Double {
        ZoneRules.of(tz).nextTransition(after: t) ?? .infinity
    }

    /// The instant of a wall time (seconds since 1970-01-01 00:00 as `tz`'s clock reads them):
    /// the offset at the wall time read as UTC, corrected once by the offset found there.
    /// (For the first instant a wall time is reached, DST gaps and travel included, see `LocalClock`.)
    public static func instant(wall: Double, _ tz: TimeZone) -> Double {
        let guess = wall - offset(at: wall, tz)
        return wall - offset(at: guess, tz)
    }

    /// A wall time formatted by C's `strftime` as its UTC reading (`"%Y-%m-%d %H:00"`):
    /// labels of local hours and days, already shifted to local time. A wall time beyond
    /// `supportedInstants` widened by a day either way (any UTC offset) is labelled with
    /// the number itself (`"nan"`, `"1e+300"`), never a trap.
    public static func wallLabel(_ wall: Double, _ format: String) -> String {
        guard wall.isFinite, wall >= supportedInstants.lowerBound - 86_400, wall < supportedInstants.upperBound + 86_400 else {
            return NumberText.plain(wall)
        }
        var time = time_t(wall.rounded(.down))
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return NumberText.plain(wall) }
        var buf = [CChar](repeating: 0, count: 64)
        let n = strftime(&buf, buf.count, format, &parts)
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// (year, month, day) of civil day `day` (days since 1970-01-01).
    public static func civilDate(day: Int) -> (year: Int, month: Int, day: Int) {
        let d = CivilDays.date(Int64(day))
        return (Int(d.year), Int(d.month), Int(d.day))
    }

    /// ISO weekday (1 = Monday … 7 = Sunday) of civil day `day` (days since 1970-01-01).
    public static func isoWeekday(day: Int) -> Int { Int(CivilDays.isoWeekday(Int64(day))) }

    /// Start (UTC seconds) of the local day containing `t`; `t` itself outside `supportedInstants`.
    public static func startOfDay(_ t: Double, _ tz: TimeZone) -> Double {
        guard supportedInstants.contains(t) else { return t }
        if let o = steadyOffset(around: t, tz) { return midnight(t, offset: o) }
        return calendar(tz).startOfDay(for: Date(timeIntervalSince1970: t)).timeIntervalSince1970
    }

    /// The instant of local time `hour:minute` on the local day containing `day`.
    /// A time that does not exist (DST gap) moves forward by the gap. `day` itself outside
    /// `supportedInstants`.
    public static func time(onDayOf day: Double, hour: Int, minute: Int, _ tz: TimeZone) -> Double {
        guard supportedInstants.contains(day) else { return day }
        if (0..<24).contains(hour), (0..<60).contains(minute), let o = steadyOffset(around: day, tz) {
            return midnight(day, offset: o) + Double(hour * 3600 + minute * 60)
        }
        let cal = calendar(tz)
        var comps = cal.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: day))
        comps.hour = hour
        comps.minute = minute
        comps.second = 0
        return cal.date(from: comps)?.timeIntervalSince1970 ?? (startOfDay(day, tz) + Double(hour * 3600 + minute * 60))
    }

    /// The local day after the one containing `t` (its start); `t` itself outside `supportedInstants`.
    public static func nextDay(_ t: Double, _ tz: TimeZone) -> Double {
        guard supportedInstants.contains(t) else { return t }
        if let o = steadyOffset(around: t, tz) { return midnight(t, offset: o) + 86_400 }
        let cal = calendar(tz)
        let start = cal.startOfDay(for: Date(timeIntervalSince1970: t))
        return cal.date(byAdding: .day, value: 1, to: start)?.timeIntervalSince1970 ?? start.timeIntervalSince1970 + 86_400
    }

    /// "YYYY-MM-DD" of the local day containing `t`; the number itself (`"nan"`) outside `supportedInstants`.
    public static func dayLabel(_ t: Double, _ tz: TimeZone) -> String {
        guard supportedInstants.contains(t) else { return NumberText.plain(t) }
        if let (days, _) = localDay(t, tz) {
            let (y, m, d) = CivilDays.date(days)
            return String(format: "%04d-%02d-%02d", y, m, d)
        }
        let c = calendar(tz).dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: t))
        guard let y = c.year, let m = c.month, let d = c.day else { return NumberText.plain(t) }
        return String(format: "%04d-%02d-%02d", y, m, d)
    }

    /// "YYYY-MM-DD HH:MM" local; the number itself (`"nan"`) outside `supportedInstants`.
    public static func minuteLabel(_ t: Double, _ tz: TimeZone) -> String {
        guard supportedInstants.contains(t) else { return NumberText.plain(t) }
        if let (days, second) = localDay(t, tz) {
            let (y, m, d) = CivilDays.date(days)
            return String(format: "%04d-%02d-%02d %02d:%02d", y, m, d, second / 3600, second % 3600 / 60)
        }
        let c = calendar(tz).dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: t))
        guard let y = c.year, let m = c.month, let d = c.day, let h = c.hour, let mi = c.minute else { return NumberText.plain(t) }
        return String(format: "%04d-%02d-%02d %02d:%02d", y, m, d, h, mi)
    }

    /// The UTC offset of `tz` when it holds from two days before `t` to three days after
    /// (no transition near: day starts, the next day and times of day are then plain
    /// arithmetic, and equal to the calendar's); nil near a transition or outside the zone's
    /// table, where Foundation's calendar answers (it serialises callers, so it is asked only there).
    private static func steadyOffset(around t: Double, _ tz: TimeZone) -> Double? {
        ZoneRules.of(tz).uniformOffset(from: t - 2 * 86_400, to: t + 3 * 86_400).map(Double.init)
    }

    /// Local midnight starting the day that contains `t`, where the offset `o` holds throughout.
    private static func midnight(_ t: Double, offset o: Double) -> Double {
        ((t + o) / 86_400).rounded(.down) * 86_400 - o
    }

    /// The local civil day (days since 1970) and second of that day at `t`, from the zone's
    /// lock-free table, where it covers `t` (`ZoneRules.covered`: 1900 to 2200); nil elsewhere,
    /// where the labels ask Foundation's calendar (Julian dates before 1582, as it has them).
    private static func localDay(_ t: Double, _ tz: TimeZone) -> (days: Int64, second: Int64)? {
        guard ZoneRules.covered.contains(t) else { return nil }
        let wall = Int64(t.rounded(.down)) + Int64(ZoneRules.of(tz).offset(at: t))
        let days = CivilDays.floorDiv(wall, 86_400)
        return (days, wall - days * 86_400)
    }

    /// Parses "YYYY-MM-DD" (local midnight in `tz`) or "YYYY-MM-DD HH:MM" / "YYYY-MM-DDTHH:MM[:SS]".
    public static func parse(_ text: String, _ tz: TimeZone) -> Double? {
        let parts = text.replacingOccurrences(of: "T", with: " ").split(separator: " ")
        // Strict: every part a number, nothing after the time, and a day that exists
        // ("2026-02-30" is an error, not March 2nd).
        guard let datePart = parts.first, parts.count <= 2 else { return nil }
        let ymdText = datePart.split(separator: "-", omittingEmptySubsequences: false)
        let ymd = ymdText.compactMap { Int($0) }
        guard ymdText.count == 3, ymd.count == 3, (1...9999).contains(ymd[0]), (1...12).contains(ymd[1]), (1...31).contains(ymd[2]) else { return nil }
        var comps = DateComponents(year: ymd[0], month: ymd[1], day: ymd[2], hour: 0, minute: 0, second: 0)
        if parts.count > 1 {
            let hmsText = parts[1].split(separator: ":", omittingEmptySubsequences: false)
            let hms = hmsText.compactMap { Int($0) }
            guard (2...3).contains(hmsText.count), hms.count == hmsText.count, (0..<24).contains(hms[0]), (0..<60).contains(hms[1]),
                  hms.count == 2 || (0..<60).contains(hms[2]) else { return nil }
            comps.hour = hms[0]
            comps.minute = hms[1]
            comps.second = hms.count > 2 ? hms[2] : 0
        }
        let cal = calendar(tz)
        guard let date = cal.date(from: comps) else { return nil }
        let back = cal.dateComponents([.year, .month, .day], from: date)
        // A local time in a DST gap moves forward (possibly past midnight): compare the day before that.
        let midnight = cal.date(from: DateComponents(year: ymd[0], month: ymd[1], day: ymd[2]))
        let dayBack = midnight.map { cal.dateComponents([.year, .month, .day], from: $0) } ?? back
        guard dayBack.year == ymd[0], dayBack.month == ymd[1], dayBack.day == ymd[2] else { return nil }
        return date.timeIntervalSince1970
    }

    /// Parses a time as `parse` does, or study-relative as "day N HH:MM" (N counts local
    /// days from 1, the first study day).
    public static func parse(_ text: String, _ tz: TimeZone, studyStart: Double) -> Double? {
        guard text.hasPrefix("day ") else { return parse(text, tz) }
        let parts = text.dropFirst(4).split(separator: " ")
        // A study lasts at most 366 days: day numbers beyond 367 are refused, not looped to.
        guard let n = parts.first.flatMap({ Int($0) }), n >= 1, n <= 367, parts.count <= 2 else { return nil }
        var day = studyStart
        for _ in 1..<n { day = nextDay(day, tz) }
        var (h, m) = (0, 0)
        if parts.count == 2 {
            let hm = parts[1].split(separator: ":").compactMap { Int($0) }
            guard hm.count == 2, (0..<24).contains(hm[0]), (0..<60).contains(hm[1]) else { return nil }
            (h, m) = (hm[0], hm[1])
        }
        return time(onDayOf: day, hour: h, minute: m, tz)
    }

    /// Parses durations (`DurationText`): a number of seconds, or "90s", "15m", "26h", "2d", "1w", "1h30m".
    public static func parseDuration(_ text: String) -> Double? { DurationText.seconds(text) }
}
