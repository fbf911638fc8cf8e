/// SensorKit's `SRAbsoluteTime` (contract §4.1): seconds on a device's monotonic SR clock.
///
/// Not wall time and not CF/Unix time (contract trap T10): convert with an `SRClock`.
/// Unlike Apple's type this one is `Comparable` (Spezi adds the same conformance).
public struct SRAbsoluteTime: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: Double
    public init(rawValue: Double) { self.rawValue = rawValue }
    public init(_ rawValue: Double) { self.rawValue = rawValue }

    public static func < (a: SRAbsoluteTime, b: SRAbsoluteTime) -> Bool { a.rawValue < b.rawValue }
    public static func + (a: SRAbsoluteTime, seconds: Double) -> SRAbsoluteTime { SRAbsoluteTime(a.rawValue + seconds) }
    public static func - (a: SRAbsoluteTime, seconds: Double) -> SRAbsoluteTime { SRAbsoluteTime(a.rawValue - seconds) }
    public var description: String { "SR \(rawValue)" }
}

/// Seconds from the Unix epoch to the CF epoch (2001-01-01T00:00:00Z).
public let cfAbsoluteTimeIntervalSince1970: Double = 978_307_200

/// Where SR time 0 lies (contract §4.4, switch `epochMode`).
public enum EpochMode: Sendable, Hashable {
    /// SR = seconds since the simulated device's activation (default: scripts that
    /// confuse SR with CF/Unix time fail visibly).
    case deviceEpoch
    /// SR = CF absolute time + `offset` (compatibility tests).
    case cfAligned(offset: Double)
}

/// A wall-clock change: from true time `at` on, the device's clock reads `offset`
/// seconds ahead of true time (contract §14.5 #12: manual change, NTP correction).
public struct WallClockChange: Sendable, Hashable {
    public var at: Double
    public var offset: Double
}

/// One device's SR clock on the simulation's timeline (contract §4).
///
/// Three axes meet here:
/// - **true time** — the simulation's physical time in Unix seconds. `SampleSource`,
///   `SampleBatch.writeTimes`/`times`, recording intervals and deletions all use it.
/// - **SR time** — `true − srEpoch`; monotonic, keeps counting across sleep and
///   reboots, never jumps (contract §4.1).
/// - **wall time** — what the device's clock shows: `true + wallOffset`; it jumps
///   when the user or NTP changes the clock.
///
/// Conversions to and from CF time sample the wall-clock offset *at conversion
/// time* (contract §4.2): after a wall-clock jump, stored SR values are unchanged but the
/// converted `Date`s of old samples shift by the jump.
///
/// Watch data is expressed on the phone's axis (contract §4.1), so a participant needs only
/// the phone's clock; the watch's lag is the `watchSyncLag` switch.
public struct SRClock: Sendable, Hashable {
    /// True time the device was activated (first boot).
    public let activation: Double
    public let epochMode: EpochMode
    /// The current true time (Unix seconds). Advance it with `advance(to:)`.
    public private(set) var now: Double
    /// Wall-clock changes, in time order.
    public private(set) var wallClockChanges: [WallClockChange] = []
    /// True times of boots, ascending; the first is `activation`.
    public private(set) var boots: [Double]

    /// A clock activated at true time `activation`, reading `now` (default: `activation`).
    public init(activation: Double, epochMode: EpochMode = .deviceEpoch, now: Double? = nil) {
        self.activation = activation
        self.epochMode = epochMode
        self.now = max(now ?? activation, activation)
        self.boots = [activation]
    }

    /// True time at which SR time is 0.
    public var srEpoch: Double {
        switch epochMode {
        case .deviceEpoch: activation
        case .cfAligned(let offset): cfAbsoluteTimeIntervalSince1970 - offset
        }
    }

    // MARK: SR ↔ true time (exact; the SR clock never jumps)

    public func srTime(atTrue t: Double) -> SRAbsoluteTime { SRAbsoluteTime(t - srEpoch) }
    public func trueTime(of sr: SRAbsoluteTime) -> Double { sr.rawValue + srEpoch }

    /// `SRAbsoluteTime.current()` / `SRAbsoluteTimeGetCurrent()`.
    public func current() -> SRAbsoluteTime { srTime(atTrue: now) }

    // MARK: Wall clock

    /// Seconds the device's wall clock is ahead of true time at true time `t`.
    public func wallOffset(atTrue t: Double) -> Double {
        var offset = 0.0
        for c in wallClockChanges where c.at <= t { offset = c.offset }
        return offset
    }

    /// What the device's clock showed at true time `t` (Unix seconds) — the value a
    /// device would stamp into a sample's `Date` fields.
    public func wallTime(atTrue t: Double) -> Double { t + wallOffset(atTrue: t) }

    /// What the device's clock shows now (Unix seconds).
    public var wallNow: Double { wallTime(atTrue: now) }

    /// `SRAbsoluteTime.toCFAbsoluteTime()`: `sr + (CFAbsoluteTimeGetCurrent() − SRAbsoluteTimeGetCurrent())` (contract §4.2).
    public func toCFAbsoluteTime(_ sr: SRAbsoluteTime) -> Double {
        sr.rawValue + ((wallNow - cfAbsoluteTimeIntervalSince1970) - current().rawValue)
    }

    /// `SRAbsoluteTime.fromCFAbsoluteTime(_cf:)` (contract §4.1, note the label): `cf − (CF now − SR now)`.
    public func fromCFAbsoluteTime(_cf cf: Double) -> SRAbsoluteTime {
        SRAbsoluteTime(cf - ((wallNow - cfAbsoluteTimeIntervalSince1970) - current().rawValue))
    }

    /// `toCFAbsoluteTime` then `+ kCFAbsoluteTimeIntervalSince1970`: the Unix `Date` a real app would show.
    public func toUnixTime(_ sr: SRAbsoluteTime) -> Double { toCFAbsoluteTime(sr) + cfAbsoluteTimeIntervalSince1970 }

    /// The SR time a real app gets from a Unix `Date` (`NSDate.srAbsoluteTime`).
    public func fromUnixTime(_ unix: Double) -> SRAbsoluteTime {
        fromCFAbsoluteTime(_cf: unix - cfAbsoluteTimeIntervalSince1970)
    }

    // MARK: Boots and continuous time

    /// Continuous-time ticks per second (`mach_continuous_time` on arm64 iOS: 24 MHz).
    public static let ticksPerSecond: Double = 24_000_000

    /// True time of the boot in force at true time `t`.
    public func bootTime(atTrue t: Double) -> Double { boots.last { $0 <= t } ?? activation }

    /// Seconds since boot at true time `t` (`CMLogItem.timestamp`, `ProcessInfo.systemUptime`).
    public func uptime(atTrue t: Double) -> Double { t - bootTime(atTrue: t) }

    /// `mach_continuous_time()` now: ticks since the current boot.
    public func continuousTime() -> UInt64 { UInt64((uptime(atTrue: now) * SRClock.ticksPerSecond).rounded()) }

    /// `SRAbsoluteTime.fromContinuousTime(_:)`: only meaningful for ticks of the current boot (contract §4.1).
    public func fromContinuousTime(_ ticks: UInt64) -> SRAbsoluteTime {
        srTime(atTrue: bootTime(atTrue: now) + Double(ticks) / SRClock.ticksPerSecond)
    }

    // MARK: Events

    /// Moves the clock forward to true time `t`. Time never runs backwards.
    public mutating func advance(to t: Double) {
        precondition(t >= now, "SRClock.advance(to:) cannot move back from \(now) to \(t)")
        now = t
    }

    public mutating func advance(by seconds: Double) { advance(to: now + seconds) }

    /// The user (or NTP) moves the wall clock by `delta` seconds now; SR time is unaffected.
    public mutating func jumpWallClock(by delta: Double) {
        let offset = wallOffset(atTrue: now) + delta
        wallClockChanges.removeAll { $0.at == now }
        wallClockChanges.append(WallClockChange(at: now, offset: offset))
    }

    /// The device reboots now: SR keeps counting, uptime and continuous ticks restart at 0.
    public mutating func reboot() {
        if boots.last != now { boots.append(now) }
    }
}
