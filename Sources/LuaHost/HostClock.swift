import CivilTime
import Foundation

/// The clock scripts read through `os.time`, `os.clock` and `os.date`.
///
/// The host never shows scripts the machine's clock: runs must be repeatable.
/// The study runtime drives a virtual clock through this protocol.
public protocol HostClock: AnyObject {
    /// Wall time, seconds since the Unix epoch.
    var now: Double { get }
    /// Seconds of (virtual) processor time since the run began: `os.clock()`.
    var elapsed: Double { get }
    /// The time zone `os.date` and `os.time{...}` use for local time.
    var timeZone: TimeZone { get }
}

/// A clock that stands still unless moved: the default for plain script runs.
public final class FixedClock: HostClock {
    public var now: Double
    /// The fixed time the clock shows (seconds since 1970).
    public var start: Double
    public var timeZone: TimeZone
    public var elapsed: Double { now - start }

    /// Starts at 2026-01-01 00:00:00 UTC unless told otherwise.
    public init(now: Double = 1_767_225_600, timeZone: TimeZone = TimeZone(identifier: "UTC")!) {
        self.now = now
        self.start = now
        self.timeZone = timeZone
    }
}

/// `os.date` and `os.time` over a `HostClock`, as Lua 5.4.4's loslib behaves
/// (C locale, errors worded alike), on the civil-day arithmetic of `CivilTime` (shared with the
/// calendar service, `SensorKitModel.LocalTime`):
/// every conversion is range-checked, so no argument can trap.
enum ClockFunctions {
    /// Broken-down time (struct tm's fields, tm_year as the full year).
    struct Civil {
        var year, month, day, hour, min, sec, wday, yday: Int64
        var isdst: Bool
        var gmtoff: Int64
        var zone: String
    }

    /// UTC broken-down time of t (seconds since the epoch).
    static func civilUTC(_ t: Int64) -> Civil {
        let days = CivilDays.floorDiv(t, 86_400)
        let secs = t - days * 86_400
        let (year, month, day) = CivilDays.date(days)
        let wday = CivilDays.weekdayFromSunday(days)
        let yday = days - CivilDays.days(year: year, month: 1, day: 1)
        return Civil(year: year, month: month, day: day, hour: secs / 3600, min: secs % 3600 / 60, sec: secs % 60,
                     wday: wday, yday: yday, isdst: false, gmtoff: 0, zone: "UTC")
    }

    /// Foundation's dates cover this range; beyond it the zone's current rules are used.
    static let zoneRange: ClosedRange<Int64> = -(1 << 40)...(1 << 40)

    static func offset(_ tz: TimeZone, at t: Int64) -> Int64 {
        Int64(ZoneRules.of(tz).offset(at: Double(zoneRange.contains(t) ? t : 0)))
    }

    /// Local (or UTC) broken-down time; throws when the year does not fit C's struct tm.
    static func civil(_ t: Int64, utc: Bool, timeZone tz: TimeZone) throws -> Civil {
        guard t > Int64.min / 2, t < Int64.max / 2 else { throw LuaScriptError("date result cannot be represented in this installation") }
        if utc { return try checked(civilUTC(t)) }
        let rules = ZoneRules.of(tz)
        let at = Double(zoneRange.contains(t) ? t : 0)
        let off = Int64(rules.offset(at: at))
        var c = civilUTC(t + off)
        c.isdst = rules.isDaylightSavingTime(at: at)
        c.gmtoff = off
        c.zone = rules.identifier == "UTC" ? "UTC" : (rules.abbreviation(at: at) ?? "")
        return try checked(c)
    }

    static func checked(_ c: Civil) throws -> Civil {
        guard c.year - 1900 >= Int64(Int32.min), c.year - 1900 <= Int64(Int32.max) else {
            throw LuaScriptError("date result cannot be represented in this installation")
        }
        return c
    }

    /// Broken-down time, as `os.date("*t")` returns it.
    static func dateTable(_ c: Civil) -> LuaValue {
        .dictionary([
            "year": .integer(c.year), "month": .integer(c.month), "day": .integer(c.day),
            "hour": .integer(c.hour), "min": .integer(c.min), "sec": .integer(c.sec),
            "wday": .integer(c.wday + 1), "yday": .integer(c.yday + 1), "isdst": .boolean(c.isdst),
        ])
    }

    /// The conversions C99's strftime knows, as loslib's LUA_STRFTIMEOPTIONS lists them
    /// ("||" separates the lengths: one character, then E and O modifiers).
    static let singles = Set("aAbBcCdDeFgGhHIjmMnprRStTuUVwWxXyYzZ%".utf8)
    static let withE = Set("cCxXyY".utf8)
    static let withO = Set("deHImMSuUVwWy".utf8)

    /// `os.date(format)` text: checks each conversion as Lua does, formats each with strftime.
    static func format(_ format: [UInt8], _ c: Civil) throws -> [UInt8] {
        var tmv = tm()
        tmv.tm_year = Int32(c.year - 1900)
        tmv.tm_mon = Int32(c.month - 1)
        tmv.tm_mday = Int32(c.day)
        tmv.tm_hour = Int32(c.hour)
        tmv.tm_min = Int32(c.min)
        tmv.tm_sec = Int32(c.sec)
        tmv.tm_wday = Int32(c.wday)
        tmv.tm_yday = Int32(c.yday)
        tmv.tm_isdst = c.isdst ? 1 : 0
        tmv.tm_gmtoff = Int(c.gmtoff)
        var out: [UInt8] = []
        var i = 0
        let percent = UInt8(ascii: "%")
        return try c.zone.withCString { zone -> [UInt8] in
            tmv.tm_zone = zone
            while i < format.count {
                guard format[i] == percent else { out.append(format[i]); i += 1; continue }
                var spec: [UInt8] = [percent]
                let rest = format[(i + 1)...]
                if let a = rest.first, singles.contains(a) {
                    spec.append(a)
                } else if let a = rest.first, a == UInt8(ascii: "E") || a == UInt8(ascii: "O"),
                          rest.count > 1, (a == UInt8(ascii: "E") ? withE : withO).contains(rest[rest.startIndex + 1]) {
                    spec += [a, rest[rest.startIndex + 1]]
                } else {
                    let shown = String(decoding: rest, as: UTF8.self)   // loslib shows the rest of the format
                    throw LuaArgumentError(index: 1, message: "invalid conversion specifier '%\(shown)'")
                }
                i += spec.count
                var buffer = [CChar](repeating: 0, count: 256)
                let n = (spec.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
                    strftime(&buffer, buffer.count, $0.baseAddress!, &tmv)
                }
                out += buffer[0..<n].map { UInt8(bitPattern: $0) }
            }
            return out
        }
    }

    /// `os.time{...}`: loslib's field rules ("field 'x' is out-of-bound", "missing in
    /// date table", "is not an integer"), mktime's normalisation; returns the time and
    /// the normalised broken-down time to write back.
    static func time(from table: LuaTable, timeZone tz: TimeZone) throws -> (Int64, Civil) {
        func field(_ key: String, _ fallback: Int64?, _ delta: Int64) throws -> Int64 {
            guard let v = table[key], !v.isNil else {
                guard let fallback else { throw LuaScriptError("field '\(key)' missing in date table") }
                return fallback
            }
            guard let i = v.integerValue else { throw LuaScriptError("field '\(key)' is not an integer") }
            guard i >= 0 ? i - delta <= Int64(Int32.max) : Int64(Int32.min) + delta <= i else {
                throw LuaScriptError("field '\(key)' is out-of-bound")
            }
            return i
        }
        let year = try field("year", nil, 1900), month = try field("month", nil, 1), day = try field("day", nil, 0)
        let hour = try field("hour", 12, 0), min = try field("min", 0, 0), sec = try field("sec", 0, 0)
        let local = CivilDays.days(year: year, month: month, day: 1) &* 86_400 + (day - 1) * 86_400 + hour * 3600 + min * 60 + sec
        var t = local - offset(tz, at: local)
        t = local - offset(tz, at: t)                  // the offset in force at the result
        guard let c = try? civil(t, utc: false, timeZone: tz) else {
            throw LuaScriptError("time result cannot be represented in this installation")
        }
        return (t, c)
    }
}
