import Foundation

/// The participant's time zone over the study: a home zone, changed by travel events.
struct ZoneTimeline: Sendable {
    /// zones[0] applies before changeTimes[0]; zones[i + 1] from changeTimes[i] on.
    let zones: [TimeZone]
    let changeTimes: [Double]

    init(home: TimeZone, changes: [(Double, TimeZone)]) {
        let sorted = changes.sorted { $0.0 < $1.0 }
        zones = [home] + sorted.map(\.1)
        changeTimes = sorted.map(\.0)
    }

    func zoneIndex(at t: Double) -> Int {
        var i = 0
        while i < changeTimes.count && changeTimes[i] <= t { i += 1 }
        return i
    }

    func offset(at t: Double) -> Double {
        Double(zones[zoneIndex(at: t)].secondsFromGMT(for: Date(timeIntervalSince1970: t)))
    }

    /// The local clock (wall time = instant + offset) as constant-offset pieces over [lo, hi].
    func clock(from lo: Double, to hi: Double) -> LocalClock {
        var starts: [Double] = [-.infinity]
        var offsets: [Double] = [offset(at: lo)]
        var t = lo
        while t < hi {
            let zi = zoneIndex(at: t)
            let nextChange = zi < changeTimes.count ? changeTimes[zi] : .infinity
            let dst = zones[zi].nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: t))?
                .timeIntervalSince1970 ?? .infinity
            let next = min(nextChange, dst)
            if next > hi { break }
            let o = offset(at: next)
            if o != offsets[offsets.count - 1] {
                starts.append(next)
                offsets.append(o)
            }
            t = next
        }
        return LocalClock(starts: starts, offsets: offsets)
    }
}

/// Wall-clock arithmetic over a window: pieces of constant UTC offset.
///
/// Wall time is "seconds since 1970 as the local clock reads them": local midnight of
/// civil day D is wall time D × 86 400. `instant(wall:)` returns the first instant whose
/// wall time reaches `wall` — so a time skipped by a DST change (or eastward travel)
/// maps to the moment of the change, and a repeated hour maps to its first occurrence.
/// The mapping is monotone, which keeps every schedule in order.
struct LocalClock: Sendable {
    let starts: [Double]
    let offsets: [Double]

    var isUniform: Bool { offsets.count == 1 }

    @inline(__always)
    func piece(_ t: Double) -> Int {
        var i = starts.count - 1
        while i > 0 && starts[i] > t { i -= 1 }
        return i
    }

    func offset(at t: Double) -> Double { offsets[piece(t)] }
    func wall(_ t: Double) -> Double { t + offsets[piece(t)] }

    func instant(wall w: Double) -> Double {
        if offsets.count == 1 { return w - offsets[0] }
        for i in 0..<starts.count {
            let s = starts[i]
            let e = i + 1 < starts.count ? starts[i + 1] : .infinity
            let t = max(s, w - offsets[i])
            if t < e { return t }
        }
        return w - offsets[offsets.count - 1]
    }

    /// The civil day (days since 1970-01-01, local) that contains instant `t`.
    func day(containing t: Double) -> Int {
        var d = Int((wall(t) / 86_400).rounded(.down))
        while instant(wall: Double(d + 1) * 86_400) <= t { d += 1 }
        while d > Int.min / 2 && instant(wall: Double(d) * 86_400) > t { d -= 1 }
        return d
    }

    /// Local midnight starting civil day `d`.
    func midnight(_ d: Int) -> Double { instant(wall: Double(d) * 86_400) }
}

/// ISO weekday (1 = Monday … 7 = Sunday) of a civil day number (1970-01-01 was a Thursday).
func isoWeekday(_ day: Int) -> Int {
    let r = ((day + 3) % 7 + 7) % 7
    return r + 1
}

/// (year, month, day) of a civil day number (Howard Hinnant's civil-from-days).
func civil(_ z0: Int) -> (Int, Int, Int) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let y = yoe + era * 400
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (m <= 2 ? y + 1 : y, m, d)
}

func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
}

/// Solar elevation in degrees at instant `t` (Unix s) for a latitude/longitude, from the
/// textbook declination and hour-angle formulas (accurate to ~1°, enough for daylight).
func solarElevation(_ t: Double, latitude: Double, longitude: Double) -> Double {
    let days = t / 86_400
    let doy = days - 365.2425 * (days / 365.2425).rounded(.down)
    let decl = -23.44 * cos(2 * Double.pi / 365.0 * (doy + 10)) * Double.pi / 180
    let utcHours = (t - 86_400 * (t / 86_400).rounded(.down)) / 3_600
    let solarHours = utcHours + longitude / 15
    let hourAngle = (solarHours - 12) * 15 * Double.pi / 180
    let lat = latitude * Double.pi / 180
    let s = sin(lat) * sin(decl) + cos(lat) * cos(decl) * cos(hourAngle)
    return asin(max(-1, min(1, s))) * 180 / Double.pi
}

/// Horizontal illuminance outdoors under a clear sky, lux, from solar elevation:
/// ~100 000 lx at high sun, ~400 lx at sunrise, a few lux at the end of civil twilight,
/// ~0.01 lx on a dark night (values after the IESNA Lighting Handbook daylight tables).
func clearSkyLux(elevation e: Double) -> Double {
    if e > 0 {
        let s = sin(e * Double.pi / 180)
        return 400 + 110_000 * pow(s, 1.15)
    }
    if e > -6 { return 3.4 * pow(10, (e + 6) / 6 * 2.07) }  // civil twilight: 3.4 … 400 lx
    if e > -18 { return max(0.01, 3.4 * pow(10, (e + 6) / 12 * 2.5)) }
    return 0.01
}
