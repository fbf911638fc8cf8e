import Foundation
import SensorKitModel

/// The allowed range of a number that enters from outside (a scenario field, a flag,
/// a script argument), with the unit it is counted in. One place for the domain's
/// limits, so that every value the simulator, the clock or the report sees is finite
/// and small enough to keep loops and allocations bounded.
public struct InputRange: Sendable {
    public var low: Double
    public var high: Double
    /// What the number counts ("hours", "pickups per day"), for messages.
    public var unit: String
    /// Whether only whole numbers are allowed.
    public var whole: Bool

    public init(_ low: Double, _ high: Double, _ unit: String, whole: Bool = false) {
        self.low = low
        self.high = high
        self.unit = unit
        self.whole = whole
    }

    public func contains(_ value: Double) -> Bool {
        value.isFinite && value >= low && value <= high && (!whole || value.rounded() == value)
    }

    /// "from 1 to 366 days" (or "whole numbers from …").
    public var allowed: String {
        "\(whole ? "a whole number " : "")from \(InputRange.text(low)) to \(InputRange.text(high)) \(unit)"
    }

    /// Why `value` is refused: "1e+12 is outside the allowed range (from 0 to 1000 pickups per day)".
    public func refusal(_ value: Double) -> String {
        "\(InputRange.text(value)) is outside the allowed range (\(allowed))"
    }

    /// A number as a user would write it: whole numbers without `.0`, NaN and infinities by name.
    public static func text(_ d: Double) -> String { NumberText.plain(d) }
}

/// The limits of the domain, named once.
public enum InputLimits {
    /// A study runs 1 to 366 days.
    public static let days = InputRange(1, 366, "days", whole: true)
    /// A simulated cohort has 1 to 100,000 participants (a Slurm array of shards runs
    /// 10,000 as README shows; one process runs them one after another).
    public static let participants = InputRange(1, 100_000, "participants", whole: true)
    /// A wall-clock jump of at most a year either way.
    public static let clockJump = InputRange(-366 * 86_400, 366 * 86_400, "seconds")
    /// The shortest `schedule.every` interval: one virtual second (a 366-day study then
    /// makes at most 31.6 million calls, and the clock always advances).
    public static let scheduleInterval = InputRange(1, 366 * 86_400, "seconds")
    /// The first study day lies in these years (SensorKit's clock and the calendar stay exact).
    public static let startYears = InputRange(2000, 2100, "(year)", whole: true)
    /// `--time-limit`: up to a day per call into Lua (0 = none).
    public static let timeLimitSeconds = InputRange(0, 86_400, "seconds")
    /// `--memory-limit`: up to 64 GiB (0 = none).
    public static let memoryLimitMiB = InputRange(0, 65_536, "MiB", whole: true)

    /// `SampleSet:byWindow` lengths: a millisecond to a year.
    public static let window = InputRange(0.001, 366 * 86_400, "seconds")
    /// A point in time given as seconds since 1970 (a window origin): years 1653 to 2286.
    public static let instant = InputRange(-1e10, 1e10, "seconds since 1970")
    /// `--instruction-budget`: up to 10^15 instructions per call (0 = none).
    public static let instructionBudget = InputRange(0, 1e15, "instructions", whole: true)

    /// `simulation = { … }` settings of a scenario.
    public static let simulation: [String: InputRange] = [
        "writeBatchSeconds": InputRange(1, 86_400, "seconds"),
        "reportWindow": InputRange(60, 86_400, "seconds"),
        "ambientLightPeriod": InputRange(1, 86_400, "seconds"),
    ]

    /// Numeric fields of a participant's `profile`, within human physiology and habits.
    public static let profile: [String: InputRange] = [
        "dailySteps": InputRange(0, 60_000, "steps per day"),
        "sleepNeedHours": InputRange(3, 14, "hours"),
        "midSleepFreeDays": InputRange(0, 12, "o'clock (hours after midnight)"),
        "screenHoursPerDay": InputRange(0, 20, "hours per day"),
        "pickupsPerDay": InputRange(0, 1_000, "pickups per day"),
        "restingHeartRate": InputRange(30, 120, "beats per minute"),
        "age": InputRange(13, 110, "years"),
        "typingWordsPerMinute": InputRange(1, 200, "words per minute"),
    ]

    /// Longest participant id (bytes).
    public static let participantIdBytes = 64

    /// Why `id` cannot name a participant, or nil when it can. Ids become folder and file
    /// names (export) and report cells: 1 to 64 bytes of letters, digits, `_`, `-`, `.` and
    /// spaces, not starting with `.` or a space and not ending with a space.
    public static func participantIdProblem(_ id: String) -> String? {
        if id.isEmpty { return "a participant id cannot be empty" }
        if id.utf8.count > participantIdBytes { return "a participant id has at most \(participantIdBytes) bytes, got \(id.utf8.count)" }
        if id.first == "." || id.first == " " || id.last == " " {
            return "a participant id cannot start with '.' or a space or end with a space, got \(quoted(id))"
        }
        if let bad = id.first(where: { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." || $0 == " ") }) {
            return "a participant id holds letters, digits, '_', '-', '.' and spaces only; \(quoted(id)) has \(quoted(String(bad)))"
        }
        return nil
    }

    /// Text in quotes, cut to 60 characters (messages stay short for long input).
    public static func quoted(_ s: String) -> String {
        s.count > 60 ? "\"\(s.prefix(57))…\" (\(s.count) characters)" : "\"\(s)\""
    }
}

extension LocalTime {
    /// Why `start` cannot begin a study (outside the years 2000–2100), or nil.
    public static func startProblem(_ start: Double) -> String? {
        let utc = TimeZone(identifier: "UTC")!
        let year = calendar(utc).component(.year, from: Date(timeIntervalSince1970: start))
        return InputLimits.startYears.contains(Double(year)) ? nil
            : "the study must start in the years 2000 to 2100, got \(dayLabel(start, utc))"
    }
}
