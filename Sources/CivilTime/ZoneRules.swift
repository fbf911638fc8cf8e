import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A time zone's rules as an immutable table — its UTC offset, daylight-saving flag and
/// abbreviation between one transition and the next, from 1900 to 2200 — that any number of
/// threads read at once without a lock.
///
/// Why it exists: Foundation answers every query of a zone (`secondsFromGMT(for:)`,
/// `abbreviation(for:)`, a Gregorian calendar's date components in that zone) under the zone
/// object's own lock, and `TimeZone(identifier:)` hands every caller the same object. The
/// jobs of a cohort all ask their zone's offsets (os.date, grouping by local hour and day,
/// the simulator's local clocks), so they waited for each other on that lock: at 16 jobs
/// a third of the threads' time was spent asleep there. The table is made once per zone
/// and process from Foundation's own answers (the transitions it reports, each piece's
/// values), so every answer is Foundation's.
///
/// Outside `covered` (before 1900, from 2200, NaN and infinities) the answers are
/// Foundation's, asked directly.
public final class ZoneRules: Sendable {
    /// The zone's identifier ("Europe/Berlin", "UTC", "GMT+0100").
    public let identifier: String
    /// Instants the table answers for: 1900-01-01 00:00 UTC up to 2200-01-01 00:00 UTC.
    public static let covered: Range<Double> = -2_208_988_800 ..< 7_258_118_400

    private let zone: TimeZone
    /// Piece i holds from `starts[i]` up to `starts[i + 1]` (the last up to the end of
    /// `covered`); starts[0] is the start of `covered`; ascending.
    private let starts: [Double]
    private let offsets: [Int]
    private let daylight: [Bool]
    private let abbreviations: [String?]

    /// The rules of `zone`, from the table every thread shares once one thread has made it
    /// (made here when no thread has yet). Lock-free after a thread's first call for a zone:
    /// each thread remembers the rules it has asked for.
    public static func of(_ zone: TimeZone) -> ZoneRules {
        let memo = ThreadMemo.current
        let id = zone.identifier
        if let last = memo.last, last.identifier == id { return last }
        let rules = memo.rules[id] ?? registry.rules(for: zone)
        memo.rules[id] = rules
        memo.last = rules
        return rules
    }

    /// Makes the table from Foundation's transitions and values (about 600 pieces for a
    /// zone with daylight-saving time).
    init(_ zone: TimeZone) {
        self.zone = zone
        identifier = zone.identifier
        var starts: [Double] = [], offsets: [Int] = [], daylight: [Bool] = [], abbreviations: [String?] = []
        var t = ZoneRules.covered.lowerBound
        while true {
            let date = Date(timeIntervalSince1970: t)
            starts.append(t)
            offsets.append(zone.secondsFromGMT(for: date))
            daylight.append(zone.isDaylightSavingTime(for: date))
            abbreviations.append(zone.abbreviation(for: date))
            guard let next = zone.nextDaylightSavingTimeTransition(after: date)?.timeIntervalSince1970,
                  next > t, next < ZoneRules.covered.upperBound else { break }
            t = next
        }
        self.starts = starts
        self.offsets = offsets
        self.daylight = daylight
        self.abbreviations = abbreviations
    }

    /// The piece holding `t`, or nil outside `covered` (NaN included).
    @inline(__always)
    private func piece(_ t: Double) -> Int? {
        guard t >= starts[0], t < ZoneRules.covered.upperBound else { return nil }
        var lo = 0, hi = starts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if starts[mid] <= t { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The UTC offset in seconds in force at `t` (seconds since 1970), as
    /// `TimeZone.secondsFromGMT(for:)` answers.
    public func offset(at t: Double) -> Int {
        if let i = piece(t) { return offsets[i] }
        return zone.secondsFromGMT(for: Date(timeIntervalSince1970: t))
    }

    /// Whether daylight-saving time is in force at `t`, as `TimeZone.isDaylightSavingTime(for:)` answers.
    public func isDaylightSavingTime(at t: Double) -> Bool {
        if let i = piece(t) { return daylight[i] }
        return zone.isDaylightSavingTime(for: Date(timeIntervalSince1970: t))
    }

    /// The zone's abbreviation at `t` ("CET", "GMT+1"), as `TimeZone.abbreviation(for:)` answers.
    public func abbreviation(at t: Double) -> String? {
        if let i = piece(t) { return abbreviations[i] }
        return zone.abbreviation(for: Date(timeIntervalSince1970: t))
    }

    /// The first transition after `t` (seconds since 1970), as
    /// `TimeZone.nextDaylightSavingTimeTransition(after:)` answers; nil when there is none.
    public func nextTransition(after t: Double) -> Double? {
        if let i = piece(t), i + 1 < starts.count { return starts[i + 1] }
        return zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: t))?.timeIntervalSince1970
    }

    /// The one UTC offset in force throughout [`from`, `to`], or nil when a transition falls
    /// between them or either end is outside the table. (Where it is not nil, local-day
    /// arithmetic over the span is plain addition.)
    public func uniformOffset(from: Double, to: Double) -> Int? {
        guard let i = piece(from), let j = piece(to), i == j else { return nil }
        return offsets[i]
    }

    /// The tables made so far, one per zone identifier, shared by every thread.
    private static let registry = Registry()

    private final class Registry: @unchecked Sendable {
        private let lock = NSLock()
        private var tables: [String: ZoneRules] = [:]

        /// The table of `zone`'s identifier, made under the lock when it is the first asked for.
        func rules(for zone: TimeZone) -> ZoneRules {
            lock.lock()
            defer { lock.unlock() }
            if let rules = tables[zone.identifier] { return rules }
            let rules = ZoneRules(zone)
            tables[zone.identifier] = rules
            return rules
        }
    }

    /// The rules one thread has asked for (a thread-specific value, freed with the thread).
    private final class ThreadMemo {
        /// By identifier (at most the zones there are), and the one asked for last.
        var rules: [String: ZoneRules] = [:]
        var last: ZoneRules?

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            pthread_key_create(&key) { memo in
                if let memo { Unmanaged<ThreadMemo>.fromOpaque(memo).release() }
            }
            return key
        }()

        static var current: ThreadMemo {
            if let memo = pthread_getspecific(key) { return Unmanaged<ThreadMemo>.fromOpaque(memo).takeUnretainedValue() }
            let memo = ThreadMemo()
            pthread_setspecific(key, Unmanaged.passRetained(memo).toOpaque())
            return memo
        }
    }
}
