import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel

/// What the `time` module's Swift primitives read. A protocol's run gives its
/// participant's clock and the study's span; a plain script, its state's host clock
/// and no study.
struct TimeContext {
    /// Now, in wall seconds: what `time.day()` and `time.startOfDay()` default to.
    var now: () -> Double
    /// The local time zone (in a run it follows the participant's travel).
    var timeZone: () -> TimeZone
    /// The study's first and last instant; nil outside a study (a plain script).
    var study: (() -> (start: Double, end: Double))?
}

/// The `time` module's Swift primitives — `day`, `startOfDay`, `timezone`, `duration`,
/// `parse`, `studyStart`, `studyEnd` — registered as the global `time`, which the
/// stdlib's `time.lua` then completes in place: the global and `require "time"` are one
/// table, in a protocol, a plain script and the REPL (`runtime.lua`, `plain.lua`).
enum TimeBindings {
    static func functions(_ context: TimeContext) -> [(String, LuaFunction)] {
        [
            ("timezone", { call in
                call.push(context.timeZone().identifier)
                return 1
            }),
            ("day", { call in
                call.push(LocalTime.dayLabel(try calendarTime(call, 1, context), context.timeZone()))
                return 1
            }),
            ("startOfDay", { call in
                call.push(LocalTime.startOfDay(try calendarTime(call, 1, context), context.timeZone()))
                return 1
            }),
            ("duration", { call in
                call.push(try duration(call, 1))
                return 1
            }),
            ("parse", { call in
                call.push(try time(call, 1, timeZone: context.timeZone(), studyStart: context.study?().start))
                return 1
            }),
            ("studyStart", { call in
                call.push(try span(context, "studyStart").start)
                return 1
            }),
            ("studyEnd", { call in
                call.push(try span(context, "studyEnd").end)
                return 1
            }),
        ]
    }

    /// The study's span, or an error saying a plain script has none.
    static func span(_ context: TimeContext, _ function: String) throws -> (start: Double, end: Double) {
        guard let study = context.study else {
            throw LuaScriptError("time.\(function): this file declares no study{}, so it runs as a plain Lua script and has no study span; "
                                 + "declare study{ id = …, usage = …, entitlements = { … }, sensors = { … } } first (see docs/lua-api.md)")
        }
        return study()
    }

    /// The time argument at `index` of `time.day`/`time.startOfDay` (now when absent); a time
    /// the calendar cannot place (NaN, ±inf, beyond the years 1 to 9999:
    /// `LocalTime.rangeProblem`) is an argument error naming the value.
    static func calendarTime(_ call: LuaCall, _ index: Int32, _ context: TimeContext) throws -> Double {
        guard let t = try call.optionalDouble(index) else { return context.now() }
        if let problem = LocalTime.rangeProblem(t) { throw LuaArgumentError(index: index, message: "expected a time: \(problem)") }
        return t
    }

    /// A time argument: seconds, or local text such as "2026-03-02 09:00" or, in a study,
    /// "day 3 09:00" (day 1 is the study's first day).
    static func time(_ call: LuaCall, _ index: Int32, timeZone: TimeZone, studyStart: Double?) throws -> Double {
        if call.typeName(index) == "string" {
            let text = try call.string(index)
            let parsed = studyStart.map { LocalTime.parse(text, timeZone, studyStart: $0) } ?? LocalTime.parse(text, timeZone)
            guard let t = parsed else {
                throw LuaArgumentError(index: index, message: studyStart == nil
                    ? "expected a time like \"2026-03-02 09:00\" or seconds, got \"\(text)\""
                    : "expected a time like \"2026-03-02 09:00\", \"day 3 09:00\" or seconds, got \"\(text)\"")
            }
            return t
        }
        guard call.typeName(index) == "number" else {
            throw LuaArgumentError(index: index, message: "time expected (seconds, or text like \"day 3 09:00\"), got \(call.typeName(index))")
        }
        let t = try call.double(index)
        guard t.isFinite else { throw LuaArgumentError(index: index, message: "expected a time, got \(InputRange.text(t))") }
        return t
    }

    /// A duration argument: seconds, or text such as "26h", "15m", "1h30m" (`DurationText`).
    static func duration(_ call: LuaCall, _ index: Int32) throws -> Double {
        if call.typeName(index) == "string" {
            let text = try call.string(index)
            guard let d = LocalTime.parseDuration(text) else {
                throw LuaArgumentError(index: index, message: "expected a duration like \"26h\", \"15m\" or seconds, got \"\(text)\"")
            }
            return d
        }
        guard call.typeName(index) == "number" else {
            throw LuaArgumentError(index: index, message: "duration expected (seconds, or text like \"15m\"), got \(call.typeName(index))")
        }
        let d = try call.double(index)
        guard d.isFinite else { throw LuaArgumentError(index: index, message: "expected a duration, got \(InputRange.text(d))") }
        return d
    }
}
