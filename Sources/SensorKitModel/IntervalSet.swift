/// A half-open time range `(after, through]` on one axis (seconds), the shape of
/// every SensorKit range (contract §7.1: exclusive `from`, inclusive `to`).
public struct TimeRange: Sendable, Hashable, CustomStringConvertible {
    public var after: Double
    public var through: Double

    public init(after: Double, through: Double) {
        self.after = after
        self.through = through
    }

    public var isEmpty: Bool { !(through > after) }
    public var duration: Double { isEmpty ? 0 : through - after }
    /// `after < t <= through`.
    public func contains(_ t: Double) -> Bool { t > after && t <= through }
    public func shifted(by delta: Double) -> TimeRange { TimeRange(after: after + delta, through: through + delta) }
    public var description: String { "(\(after), \(through)]" }
}

/// A normalised set of half-open ranges: sorted, disjoint, non-empty and not touching.
///
/// Recording intervals, deletions, retention and the holding period are all applied
/// as set algebra on write-time ranges, so that a fetch becomes a short list of
/// `(after, through]` questions to the `SampleSource` — no per-row filtering.
public struct IntervalSet: Sendable, Hashable, CustomStringConvertible {
    public private(set) var ranges: [TimeRange]

    public init() { ranges = [] }

    public init(_ ranges: [TimeRange]) {
        self.ranges = IntervalSet.normalise(ranges)
    }

    public init(after: Double, through: Double) { self.init([TimeRange(after: after, through: through)]) }

    /// The whole axis.
    public static let everything = IntervalSet([TimeRange(after: -.infinity, through: .infinity)])

    public var isEmpty: Bool { ranges.isEmpty }
    public var totalDuration: Double { ranges.reduce(0) { $0 + $1.duration } }
    public var lowerBound: Double? { ranges.first?.after }
    public var upperBound: Double? { ranges.last?.through }
    public var description: String { ranges.isEmpty ? "∅" : ranges.map(\.description).joined(separator: " ∪ ") }

    public func contains(_ t: Double) -> Bool {
        // Binary search for the last range whose `after` < t.
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].after < t { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 && ranges[lo - 1].contains(t)
    }

    public func union(_ other: IntervalSet) -> IntervalSet { IntervalSet(ranges + other.ranges) }

    public func intersection(_ other: IntervalSet) -> IntervalSet {
        var out: [TimeRange] = []
        var i = 0, j = 0
        while i < ranges.count && j < other.ranges.count {
            let a = ranges[i], b = other.ranges[j]
            let lo = max(a.after, b.after), hi = min(a.through, b.through)
            if hi > lo { out.append(TimeRange(after: lo, through: hi)) }
            if a.through < b.through { i += 1 } else { j += 1 }
        }
        var result = IntervalSet()
        result.ranges = out
        return result
    }

    public func intersection(_ range: TimeRange) -> IntervalSet { intersection(IntervalSet([range])) }

    public func subtracting(_ other: IntervalSet) -> IntervalSet {
        guard !other.isEmpty else { return self }
        var out: [TimeRange] = []
        var j = 0
        for r in ranges {
            var lo = r.after
            let hi = r.through
            while j < other.ranges.count && other.ranges[j].through <= lo { j += 1 }
            var k = j
            while k < other.ranges.count && other.ranges[k].after < hi {
                let cut = other.ranges[k]
                if cut.after > lo { out.append(TimeRange(after: lo, through: cut.after)) }
                lo = max(lo, cut.through)
                if lo >= hi { break }
                k += 1
            }
            if hi > lo { out.append(TimeRange(after: lo, through: hi)) }
        }
        var result = IntervalSet()
        result.ranges = out
        return result
    }

    public func shifted(by delta: Double) -> IntervalSet {
        guard delta != 0 else { return self }
        var result = IntervalSet()
        result.ranges = ranges.map { $0.shifted(by: delta) }
        return result
    }

    /// The ranges sorted, empty ones dropped, overlapping and touching ones merged:
    /// the one interval merge of the package (the simulator's stories use it too).
    public static func normalise(_ input: [TimeRange]) -> [TimeRange] {
        let sorted = input.filter { !$0.isEmpty }.sorted { ($0.after, $0.through) < ($1.after, $1.through) }
        var out: [TimeRange] = []
        for r in sorted {
            if let last = out.last, r.after <= last.through {
                out[out.count - 1].through = max(last.through, r.through)
            } else {
                out.append(r)
            }
        }
        return out
    }
}
