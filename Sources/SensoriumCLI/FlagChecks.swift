import ArgumentParser
import Foundation
import Importers
import SensorKitModel
import StudyRuntime

/// Checks of flag values that `validate()` runs before any work, so a bad flag fails
/// with argument-parser's usage message and nothing is read, simulated or written.
/// Each throws `ValidationError` naming the flag and what was expected.
enum FlagCheck {
    /// A count or length that must be at least 1 when given.
    static func positive(_ value: Int?, _ flag: String) throws {
        if let value, value < 1 { throw ValidationError("\(flag) must be at least 1, got \(value)") }
    }

    /// An IANA time zone name, when given.
    static func timeZone(_ name: String?) throws {
        if let name, TimeZone(identifier: name) == nil {
            throw ValidationError("--timezone: unknown time zone '\(name)' (use an IANA name like Europe/Berlin)")
        }
    }

    /// A first study day in the grammar the runner reads (`LocalTime.parse`), when given.
    static func startDay(_ text: String?) throws {
        if let text, LocalTime.parse(text, TimeZone(identifier: "UTC")!) == nil {
            throw ValidationError("--start: expected a date like 2026-03-02, got '\(text)'")
        }
    }

    /// A whole number within one of the ranges of values from outside (`InputLimits`), when given.
    static func within(_ value: Int?, _ range: InputRange, _ flag: String) throws {
        if let value, !range.contains(Double(value)) { throw ValidationError("\(flag): \(range.refusal(Double(value)))") }
    }

    /// The world flags `run`, `repl` and `export` share (the ranges scenarios are held to).
    static func world(days: Int?, participants: Int?, start: String?, timezone: String?) throws {
        try within(days, InputLimits.days, "--days")
        try within(participants, InputLimits.participants, "--participants")
        try startDay(start)
        try timeZone(timezone)
    }
}

extension ImportFormat: ExpressibleByArgument {}
