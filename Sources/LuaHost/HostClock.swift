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

/// `os.date` and `os.time` over a `HostClock`, with C's strftime in the C locale.
enum ClockFunctions {
    static func calendar(_ tz: TimeZone) -> Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = tz
        return c
    }

    /// Broken-down time, as `os.date("*t")` returns it.
    static func dateTable(_ t: Double, utc: Bool, timeZone: TimeZone) -> LuaValue {
        let tz = utc ? TimeZone(identifier: "UTC")! : timeZone
        let date = Date(timeIntervalSince1970: t.rounded(.down))
        let c = calendar(tz).dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let yday = calendar(tz).ordinality(of: .day, in: .year, for: date) ?? 1
        return .dictionary([
            "year": .integer(Int64(c.year!)), "month": .integer(Int64(c.month!)), "day": .integer(Int64(c.day!)),
            "hour": .integer(Int64(c.hour!)), "min": .integer(Int64(c.minute!)), "sec": .integer(Int64(c.second!)),
            "wday": .integer(Int64(c.weekday!)), "yday": .integer(Int64(yday)),
            "isdst": .boolean(tz.isDaylightSavingTime(for: date)),
        ])
    }

    /// Formats with strftime directives (the C locale's names), `!` prefix for UTC.
    static func format(_ format: String, _ t: Double, timeZone: TimeZone) -> String {
        var fmt = format
        var tz = timeZone
        if fmt.hasPrefix("!") {
            fmt.removeFirst()
            tz = TimeZone(identifier: "UTC")!
        }
        let date = Date(timeIntervalSince1970: t.rounded(.down))
        let cal = calendar(tz)
        let c = cal.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        var tmv = tm()
        tmv.tm_year = Int32(c.year! - 1900)
        tmv.tm_mon = Int32(c.month! - 1)
        tmv.tm_mday = Int32(c.day!)
        tmv.tm_hour = Int32(c.hour!)
        tmv.tm_min = Int32(c.minute!)
        tmv.tm_sec = Int32(c.second!)
        tmv.tm_wday = Int32(c.weekday! - 1)
        tmv.tm_yday = Int32((cal.ordinality(of: .day, in: .year, for: date) ?? 1) - 1)
        tmv.tm_isdst = tz.isDaylightSavingTime(for: date) ? 1 : 0
        tmv.tm_gmtoff = tz.secondsFromGMT(for: date)
        let abbreviation = tz.identifier == "UTC" ? "UTC" : (tz.abbreviation(for: date) ?? "")
        var out = [CChar](repeating: 0, count: 512)
        let n = abbreviation.withCString { zone -> Int in
            tmv.tm_zone = zone
            return fmt.withCString { strftime(&out, out.count, $0, &tmv) }
        }
        return String(decoding: out[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `os.time{year=…, month=…, day=…, hour=12, min=0, sec=0}` in local time (fields may overflow, as in mktime).
    static func time(from table: LuaTable, timeZone: TimeZone) throws -> Double {
        func field(_ k: String, _ d: Int?) throws -> Int {
            if let v = table[k], !v.isNil {
                guard let i = v.integerValue else { throw LuaScriptError("field '\(k)' is not an integer") }
                return Int(i)
            }
            guard let d else { throw LuaScriptError("field '\(k)' missing in date table") }
            return d
        }
        var comps = DateComponents()
        comps.year = try field("year", nil)
        comps.month = 1
        comps.day = 1
        comps.hour = 0
        var base = calendar(timeZone).date(from: comps)!
        let months = try field("month", nil) - 1
        let days = try field("day", nil) - 1
        base = calendar(timeZone).date(byAdding: .month, value: months, to: base)!
        base = calendar(timeZone).date(byAdding: .day, value: days, to: base)!
        let (h, mi, s) = (try field("hour", 12), try field("min", 0), try field("sec", 0))
        let cal = calendar(timeZone)
        if (0..<24).contains(h), (0..<60).contains(mi), (0..<60).contains(s) {
            var dc = cal.dateComponents([.year, .month, .day], from: base)
            dc.hour = h
            dc.minute = mi
            dc.second = s
            return cal.date(from: dc)!.timeIntervalSince1970
        }
        return base.timeIntervalSince1970 + Double(h * 3600 + mi * 60 + s)
    }
}
