import Foundation
import SensorKitModel

/// A participant with everything resolved: profile numbers, time zones, event intervals.
struct Participant: Sendable {
    let id: String
    let seed: UInt64
    let key: RandomKey
    let profile: ResolvedProfile
    let phone: SRDevice
    let watch: SRDevice?
    let zones: ZoneTimeline
    let settings: SimulationSettings
    /// Scenario intervals (merged), before the daily routine is added.
    let offWristEvents: [Interval]
    let phoneOffEvents: [Interval]
    let watchOffEvents: [Interval]
    /// This participant's place in its source (the key of its days in `stories`).
    let index: Int
    /// Memo of built day stories (a pure function of the day, so caching changes nothing
    /// but speed: a day fetched in 24 hourly calls is built once, not 24 times). Shared by
    /// the participants of one source (see `SimulatedSource.withPrivateStoryCache`).
    var stories: StoryCache

    /// `stories` is the memo this participant shares with the others of its source.
    init(_ d: ParticipantDescription, index: Int, seed: UInt64, settings: SimulationSettings, stories: StoryCache) throws {
        guard !d.id.isEmpty else { throw SimulationError(participant: d.id, message: "empty participant id") }
        guard let home = TimeZone(identifier: d.timeZone) else {
            throw SimulationError(participant: d.id, message: "unknown time zone '\(d.timeZone)' (use an IANA name such as 'Europe/Paris')")
        }
        guard d.phone.kind == .phone else {
            throw SimulationError(participant: d.id, message: "the phone device has kind '\(d.watch?.kind.rawValue ?? "watch")'")
        }
        if let w = d.watch, w.kind != .watch {
            throw SimulationError(participant: d.id, message: "the watch device has kind '\(w.kind.rawValue)'")
        }
        id = d.id
        self.index = index
        self.stories = stories
        self.seed = seed
        key = RandomKey(mix64(seed ^ 0x5EED_5E45_0000_0001)).with(d.id)
        phone = d.phone
        watch = d.watch
        self.settings = settings
        var changes: [(Double, TimeZone)] = []
        var offWrist: [Interval] = [], phoneOff: [Interval] = [], watchOff: [Interval] = []
        for e in d.events {
            switch e {
            case let .watchOffWrist(from, to):
                guard to > from else { throw SimulationError(participant: d.id, message: "watchOffWrist ends before it starts") }
                offWrist.append(Interval(start: from, end: to))
            case let .deviceOff(kind, from, to):
                guard to > from else { throw SimulationError(participant: d.id, message: "deviceOff ends before it starts") }
                if kind == .phone { phoneOff.append(Interval(start: from, end: to)) } else { watchOff.append(Interval(start: from, end: to)) }
            case let .reboot(kind, at):
                let i = Interval(start: at, end: at + settings.rebootSeconds)
                if kind == .phone { phoneOff.append(i) } else { watchOff.append(i) }
            case let .travel(at, name):
                guard let z = TimeZone(identifier: name) else {
                    throw SimulationError(participant: d.id, message: "unknown time zone '\(name)' in a travel event")
                }
                changes.append((at, z))
            }
        }
        zones = ZoneTimeline(home: home, changes: changes)
        offWristEvents = mergeIntervals(offWrist)
        phoneOffEvents = mergeIntervals(phoneOff)
        watchOffEvents = mergeIntervals(watchOff)
        profile = d.profile.resolved(key: key, zone: home)
    }

    func device(for d: SRDevice) -> DeviceKind? {
        if d == phone { return .phone }
        if let w = watch, d == w { return .watch }
        return nil
    }

    /// Intervals with the device switched off in [lo, hi): scenario events plus the
    /// automatic night-time restarts for software updates.
    func offIntervals(_ kind: DeviceKind, from lo: Double, to hi: Double, clock: LocalClock) -> [Interval] {
        var xs = (kind == .phone ? phoneOffEvents : watchOffEvents).filter { $0.end > lo && $0.start < hi }
        let every = settings.autoRebootDays
        if every > 0 {
            let k = key.with(kind == .phone ? "reboot-phone" : "reboot-watch")
            let phase = Int(k.bits(0) % UInt64(every))
            var d = clock.day(containing: lo) - 1
            let last = clock.day(containing: hi) + 1
            while d <= last {
                if ((d + phase) % every + every) % every == 0 {
                    let at = clock.instant(wall: Double(d) * 86_400 + 3 * hour + k.uniform(d, 0, 2_400))
                    xs.append(Interval(start: at, end: at + settings.rebootSeconds))
                }
                d += 1
            }
        }
        return mergeIntervals(xs)
    }
}

/// A small thread-safe FIFO memo of day stories, keyed by participant and local day, holding
/// at most `capacity` stories whoever asks: its memory is bounded by the capacity, not by
/// the number of participants that went through it.
final class StoryCache: @unchecked Sendable {
    private struct Key: Hashable {
        var participant: Int
        var day: Int
    }
    private let lock = NSLock()
    private var map: [Key: DayStory] = [:]
    private var order: [Key] = []
    private var head = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Participant `p`'s story of day `d`: the memo's, else `build()`'s (then remembered,
    /// dropping the oldest story when full). `build` runs outside the lock.
    func story(_ p: Participant, _ d: Int, build: () -> DayStory) -> DayStory {
        let key = Key(participant: p.index, day: d)
        lock.lock()
        if let s = map[key] { lock.unlock(); return s }
        lock.unlock()
        let s = build()
        lock.lock()
        defer { lock.unlock() }
        if map[key] == nil {
            if order.count < capacity {
                order.append(key)
            } else {
                map[order[head]] = nil
                order[head] = key
                head = (head + 1) % capacity
            }
            map[key] = s
        }
        return s
    }

    /// Stories held now (for tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return map.count
    }
}

extension Participant {
    /// Day `d`'s story, from the memo when it holds it.
    func cachedStory(_ d: Int, clock: LocalClock) -> DayStory {
        stories.story(self, d) { story(d, clock: clock) }
    }
}

/// Everything the generators need over one range of sample time: the day stories that
/// cover it, concatenated, with the devices' off intervals and the wear intervals.
struct RangeView {
    let p: Participant
    let lo: Double
    let hi: Double
    let clock: LocalClock
    var stories: [DayStory] = []
    var blocks: [Block] = []
    var screens: [ScreenSession] = []
    var apps: [AppUse] = []
    var texts: [TextInput] = []
    var notifications: [NotificationEvent] = []
    var calls: [PhoneCall] = []
    /// Watch off the wrist (daily routine ∪ scenario events), merged.
    var offWrist: [Interval] = []
    /// Devices off (events and restarts), merged, over a wider window (boot look-back).
    var phoneOff: [Interval] = []
    var watchOff: [Interval] = []

    /// How far back device restarts are looked up (to know the boot time).
    static let bootLookBack = 16 * 86_400.0

    init(_ p: Participant, from lo: Double, to hi: Double) {
        self.p = p
        self.lo = lo
        self.hi = hi
        clock = p.zones.clock(from: lo - RangeView.bootLookBack - 2 * 86_400, to: hi + 3 * 86_400)
        phoneOff = p.offIntervals(.phone, from: lo - RangeView.bootLookBack, to: hi + 86_400, clock: clock)
        if p.watch != nil {
            watchOff = p.offIntervals(.watch, from: lo - RangeView.bootLookBack, to: hi + 86_400, clock: clock)
        }
        guard hi > lo else { return }
        let first = clock.day(containing: lo) - 1
        let last = clock.day(containing: hi) + 1
        var d = first
        var offs: [Interval] = []
        while d <= last {
            let s = p.cachedStory(d, clock: clock)
            d += 1
            guard s.spanEnd > lo && s.spanStart < hi else { continue }
            stories.append(s)
            blocks.append(contentsOf: s.blocks)
            screens.append(contentsOf: s.screens)
            apps.append(contentsOf: s.apps)
            texts.append(contentsOf: s.texts)
            notifications.append(contentsOf: s.notifications)
            calls.append(contentsOf: s.calls)
            offs.append(contentsOf: s.offWrist)
        }
        if p.watch != nil {
            offs.append(contentsOf: p.offWristEvents.filter { $0.end > lo - 86_400 && $0.start < hi + 86_400 })
            offWrist = mergeIntervals(offs)
        }
    }
}

/// Complement of sorted merged intervals within [lo, hi).
func complement(_ offs: [Interval], from lo: Double, to hi: Double) -> [Interval] {
    var out: [Interval] = []
    var c = lo
    for o in offs where o.end > lo && o.start < hi {
        if o.start > c { out.append(Interval(start: c, end: o.start)) }
        c = max(c, o.end)
    }
    if c < hi { out.append(Interval(start: c, end: hi)) }
    return out
}

/// Intersection of two sorted merged interval lists.
func intersect(_ a: [Interval], _ b: [Interval]) -> [Interval] {
    var out: [Interval] = []
    var i = 0, j = 0
    while i < a.count && j < b.count {
        let s = max(a[i].start, b[j].start), e = min(a[i].end, b[j].end)
        if s < e { out.append(Interval(start: s, end: e)) }
        if a[i].end < b[j].end { i += 1 } else { j += 1 }
    }
    return out
}

/// The interval of `xs` containing `t` (half-open), if any.
func containing(_ xs: [Interval], _ t: Double) -> Interval? {
    var lo = 0, hi = xs.count - 1
    while lo <= hi {
        let mid = (lo + hi) / 2
        if xs[mid].end <= t { lo = mid + 1 } else if xs[mid].start > t { hi = mid - 1 } else { return xs[mid] }
    }
    return nil
}
