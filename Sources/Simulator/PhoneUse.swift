import Foundation

struct PhoneDay {
    var screens: [ScreenSession] = []
    var apps: [AppUse] = []
    var texts: [TextInput] = []
    var notifications: [NotificationEvent] = []
    var calls: [PhoneCall] = []
}

/// Where phone use is likely: relative weight per second of each kind of block.
func screenWeight(_ b: Block, _ night: Night) -> Double {
    switch (b.activity, b.place) {
    case (.asleep, _), (_, .bedroomDark), (.run, _): return 0
    case (.inBed, _): return b.start < night.asleep ? 3.0 : 2.5
    case (.vehicle, .car): return 0.03
    case (.vehicle, _): return 2.5
    case (.walk, _): return b.duration < 120 ? 0.1 : 0.25
    case (_, .homeDim): return 1.8
    case (.sedentary, .home): return 1.4
    case (.light, .outdoors), (.sedentary, .outdoors): return 1.5
    case (_, .office): return b.activity == .light ? 0.6 : 0.7
    case (_, .indoorPublic): return 0.8
    default: return 0.6
    }
}

/// Picks instants with probability proportional to weight × time over the blocks.
struct WeightedTime {
    var starts: [Double] = []
    var ends: [Double] = []
    var cum: [Double] = []
    var total = 0.0

    init(_ blocks: [Block], weight: (Block) -> Double) {
        for b in blocks {
            let w = weight(b) * b.duration
            guard w > 0 else { continue }
            total += w
            starts.append(b.start)
            ends.append(b.end)
            cum.append(total)
        }
    }

    func pick(_ u: Double) -> Double? {
        guard total > 0 else { return nil }
        let x = u * total
        var lo = 0, hi = cum.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if cum[mid] > x { hi = mid } else { lo = mid + 1 }
        }
        let before = lo == 0 ? 0 : cum[lo - 1]
        let f = (x - before) / (cum[lo] - before)
        return starts[lo] + f * (ends[lo] - starts[lo])
    }
}

func blockIndex(_ blocks: [Block], at t: Double) -> Int? {
    var lo = 0, hi = blocks.count - 1
    while lo <= hi {
        let mid = (lo + hi) / 2
        if blocks[mid].end <= t { lo = mid + 1 } else if blocks[mid].start > t { hi = mid - 1 } else { return mid }
    }
    return nil
}

extension Participant {
    func phoneUse(blocks: [Block], night: Night, span: (Double, Double), draws r: inout Draws, workday: Bool) -> PhoneDay {
        let p = profile
        var out = PhoneDay()
        let day = (night.wake / 86_400).rounded(.down) * 86_400
        let pickups = max(5, p.pickupsPerDay * exp(0.15 * r.normal()))
        let seconds = p.screenHoursPerDay * hour * exp(0.15 * r.normal())
        let places = WeightedTime(blocks) { screenWeight($0, night) }

        // Unlocked sessions: heavy-tailed lengths (many short checks, a few long sessions),
        // scaled to the day's screen time.
        let n = Int(pickups.rounded())
        var lengths = (0..<n).map { _ in clamp(exp(log(40) + 1.25 * r.normal()), 6, 3_600) }
        let scale = seconds * 0.95 / max(1, lengths.reduce(0, +))
        lengths = lengths.map { clamp($0 * scale, 5, 2_700) }
        var sessions: [ScreenSession] = []
        for len in lengths {
            guard let t = places.pick(r.unit()) else { break }
            sessions.append(ScreenSession(start: t, end: t + len, unlocked: true, key: r.bits()))
        }
        // Night-time checks during awakenings.
        for a in night.awakenings where r.chance(0.3) {
            let s = a.start + r.uniform(10, 60)
            sessions.append(ScreenSession(start: s, end: min(a.end - 5, s + r.uniform(20, 120)), unlocked: true, key: r.bits()))
        }
        // Notifications, some of which light the screen for a glance.
        let awake = WeightedTime(blocks) { b in (b.activity == .asleep || b.place == .bedroomDark) ? 0 : 1 }
        let notifWeights = simApps.enumerated().map { i, a in i == AppID.workchat && !workday ? 0 : a.notifies }
        let notifCount = Int((pickups * r.uniform(0.9, 1.3)).rounded())
        var glances: [ScreenSession] = []
        for _ in 0..<notifCount {
            guard let t = awake.pick(r.unit()) else { break }
            let app = r.pick(notifWeights)
            // received 1, defaultAction 2, clear 4, hide 7, longLook 8, silence 9
            let event: Int64 = [1, 2, 4, 7, 8, 9][r.pick([0.55, 0.15, 0.1, 0.1, 0.05, 0.05])]
            out.notifications.append(NotificationEvent(time: t, app: app, event: event))
            if r.chance(0.35) {
                glances.append(ScreenSession(start: t + 0.5, end: t + 0.5 + r.uniform(4, 10), unlocked: false, key: r.bits()))
            }
        }
        out.notifications.sort { $0.time < $1.time }
        // Calls: the screen is off at the ear.
        let callCount = r.poisson(1.2)
        for _ in 0..<callCount {
            guard let t = awake.pick(r.unit()) else { break }
            let len = clamp(exp(log(150) + 0.9 * r.normal()), 15, 2_400)
            let contact = r.pick([8, 5, 3, 2, 1.5, 1, 1, 1])
            out.calls.append(PhoneCall(start: t, end: t + len, outgoing: r.chance(0.5), contact: contact))
        }
        out.calls.sort { $0.start < $1.start }
        var calls: [PhoneCall] = []
        for c in out.calls where calls.last.map({ c.start > $0.end + 60 }) ?? true { calls.append(c) }
        out.calls = calls

        // One screen at a time: later sessions wait for earlier ones; nothing while asleep.
        sessions.append(contentsOf: glances)
        sessions.sort { $0.start < $1.start }
        var placed: [ScreenSession] = []
        var prevEnd = -Double.infinity
        for var s in sessions {
            let len = s.end - s.start
            if s.start < prevEnd + 3 {
                if !s.unlocked { continue }
                s.start = prevEnd + 3 + Double(s.key % 30)
                s.end = s.start + len
            }
            guard let bi = blockIndex(blocks, at: s.start), blocks[bi].activity != .asleep else { continue }
            if s.unlocked == false || blocks[bi].place != .bedroomDark || night.awakenings.contains(where: { s.start >= $0.start && s.start < $0.end }) {
                // end before the next sleep block starts
                var j = bi
                while j < blocks.count && blocks[j].activity != .asleep && blocks[j].start < s.end { j += 1 }
                if j < blocks.count && blocks[j].activity == .asleep { s.end = min(s.end, blocks[j].start) }
                s.end = min(s.end, span.1)
                if calls.contains(where: { s.start < $0.end && s.end > $0.start }) { continue }
                if s.end - s.start < 1 { continue }
                placed.append(s)
                prevEnd = s.end
            }
        }
        out.screens = placed

        // Apps within unlocked sessions, chosen by context.
        for (si, s) in placed.enumerated() where s.unlocked {
            let len = s.end - s.start
            let k = 1 + min(3, r.poisson(len / 400))
            var parts = (0..<k).map { _ in r.uniform(0.3, 1) }
            let sum = parts.reduce(0, +)
            parts = parts.map { $0 / sum }
            var c = s.start
            let hourOfDay = (s.start - day) / hour
            let blk = blockIndex(blocks, at: s.start).map { blocks[$0] }
            let weights = simApps.enumerated().map { i, a -> Double in
                var w = a.weight
                switch i {
                case AppID.workchat: w *= blk?.place == .office || (workday && blk?.place == .home && hourOfDay > 9 && hourOfDay < 17.5) ? 5 : 0.3
                case AppID.video, AppID.game: w *= hourOfDay > 19 ? 2.2 : 0.8
                case AppID.news, AppID.weather: w *= hourOfDay < 10 ? 2.5 : 0.8
                case AppID.maps, AppID.music: w *= (blk?.activity == .walk || blk?.activity == .vehicle) ? 6 : 0.5
                case AppID.photos: w *= blk?.place == .outdoors ? 3 : 0.7
                case AppID.books: w *= blk?.activity == .inBed ? 4 : 0.5
                default: break
                }
                return w
            }
            for part in parts {
                let e = part == parts.last ? s.end : c + part * len
                let app = r.pick(weights)
                out.apps.append(AppUse(start: c, end: e, app: app, session: si))
                // Typing inside the app: sessions of ~45 s of keyboard time.
                let typing = (e - c) * simApps[app].typing * r.uniform(0.5, 1.5)
                if typing >= 3 {
                    let count = max(1, Int(typing / 45))
                    let each = typing / Double(count)
                    let gap = ((e - c) - typing) / Double(count + 1)
                    var t = c + gap
                    for _ in 0..<count {
                        let type: Int64 = r.chance(0.04) ? 4 : 1
                        out.texts.append(TextInput(start: t, end: t + each, type: type, app: app, key: r.bits()))
                        t += each + gap
                    }
                }
                c = e
            }
        }
        return out
    }
}
