import Foundation

/// The participant's time zone over the study: a home zone, changed by travel events.
public struct ZoneTimeline: Sendable {
    /// zones[0] applies before changeTimes[0]; zones[i + 1] from changeTimes[i] on.
    public let zones: [TimeZone]
    public let changeTimes: [Double]

    public init(home: TimeZone, changes: [(Double, TimeZone)]) {
        let sorted = changes.sorted { $0.0 < $1.0 }
        zones = [home] + sorted.map(\.1)
        changeTimes = sorted.map(\.0)
    }

    /// Which of `zones` applies at `t`.
    public func zoneIndex(at t: Double) -> Int {
        var i = 0
        while i < changeTimes.count && changeTimes[i] <= t { i += 1 }
        return i
    }

    /// The UTC offset (seconds) in force at `t`.
    public func offset(at t: Double) -> Double { LocalTime.offset(at: t, zones[zoneIndex(at: t)]) }

    /// The local clock (wall time = instant + offset) as constant-offset pieces over [lo, hi].
    public func clock(from lo: Double, to hi: Double) -> LocalClock {
        var starts: [Double] = [-.infinity]
        var offsets: [Double] = [offset(at: lo)]
        var t = lo
        while t < hi {
            let zi = zoneIndex(at: t)
            let nextChange = zi < changeTimes.count ? changeTimes[zi] : .infinity
            let dst = LocalTime.nextTransition(after: t, zones[zi])
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
public struct LocalClock: Sendable {
    /// Piece i starts at starts[i] (starts[0] = −∞) and has UTC offset offsets[i].
    public let starts: [Double]
    public let offsets: [Double]

    public init(starts: [Double], offsets: [Double]) {
        self.starts = starts
        self.offsets = offsets
    }

    /// One offset throughout.
    public var isUniform: Bool { offsets.count == 1 }

    @inline(__always)
    public func piece(_ t: Double) -> Int {
        var i = starts.count - 1
        while i > 0 && starts[i] > t { i -= 1 }
        return i
    }

    /// The UTC offset at instant `t`.
    public func offset(at t: Double) -> Double { offsets[piece(t)] }
    /// The wall time of instant `t`.
    public func wall(_ t: Double) -> Double { t + offsets[piece(t)] }

    /// The first instant whose wall time reaches `w` (see the type's contract).
    public func instant(wall w: Double) -> Double {
        if offsets.count == 1 { return w - offsets[0] }
        for i in 0..<starts.count {
            let s = starts[i]
            let e = i + 1 < starts.count ? starts[i + 1] : .infinity
            let t = max(s, w - offsets[i])
            if t < e { return t }
        }
        return w - offsets[offsets.count - 1]
    }

    /// The civil day (days since 1970-01-01, local) that contains instant `t`. Total: a `t`
    /// outside `LocalTime.supportedInstants` (NaN included, taken as its lower end) is first
    /// clamped into it.
    public func day(containing t: Double) -> Int {
        let range = LocalTime.supportedInstants
        let t = t.isNaN ? range.lowerBound : Swift.min(Swift.max(t, range.lowerBound), range.upperBound.nextDown)
        var d = Int((wall(t) / 86_400).rounded(.down))
        while instant(wall: Double(d + 1) * 86_400) <= t { d += 1 }
        while d > Int.min / 2 && instant(wall: Double(d) * 86_400) > t { d -= 1 }
        return d
    }

    /// Local midnight starting civil day `d`.
    public func midnight(_ d: Int) -> Double { instant(wall: Double(d) * 86_400) }
}
