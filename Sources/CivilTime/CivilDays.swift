/// Proleptic Gregorian civil-day arithmetic, the one copy of it in the package: days since
/// 1970-01-01 ↔ (year, month, day), and weekdays (Howard Hinnant's `days_from_civil` and
/// `civil_from_days`). No time zones: the calendar service (`SensorKitModel.LocalTime`)
/// adds them; `LuaHost`'s `os.date`/`os.time`, which may not import the model, use this directly.
///
/// Every function is total: any `Int64` gives a result without trapping (the arithmetic wraps
/// where it would overflow). Results are the proleptic Gregorian calendar's for days within
/// ±2^40 of 1970 and years within ±2^31; beyond that they are meaningless, so callers range-check.
public enum CivilDays {
    /// ⌊a / b⌋ for b > 0 (any a, `Int64.min` included).
    @inline(__always)
    public static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return a % b < 0 ? q - 1 : q
    }

    /// Days since 1970-01-01 of a date; `month` may be any integer (13 is January of the
    /// next year, 0 December of the one before), `day` counts from 1 and may overflow the month.
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let m0 = month &- 1
        var y = year &+ floorDiv(m0, 12)
        let m = m0 &- floorDiv(m0, 12) &* 12 &+ 1
        if m <= 2 { y = y &- 1 }
        let era = floorDiv(y, 400)
        let yoe = y &- era &* 400
        let doy = (153 * ((m + 9) % 12) + 2) / 5 &+ day &- 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 &+ doy
        return era &* 146_097 &+ doe &- 719_468
    }

    /// (year, month 1…12, day 1…31) of a day counted from 1970-01-01.
    public static func date(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days &+ 719_468
        let era = floorDiv(z, 146_097)
        let doe = z &- era &* 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe &+ era &* 400 &+ (month <= 2 ? 1 : 0), month, day)
    }

    /// Day of the week counted from Sunday = 0 (C's `tm_wday`); 1970-01-01 was a Thursday.
    public static func weekdayFromSunday(_ days: Int64) -> Int64 { (days % 7 + 11) % 7 }

    /// ISO weekday, Monday = 1 … Sunday = 7.
    public static func isoWeekday(_ days: Int64) -> Int64 {
        let w = weekdayFromSunday(days)
        return w == 0 ? 7 : w
    }
}
