import Foundation
import SensorKitModel

/// What the participant is doing.
enum Activity: UInt8, Sendable {
    case asleep, inBed, sedentary, light, walk, run, vehicle
}

/// Where, as far as light is concerned.
enum Place: UInt8, Sendable {
    /// Bedroom with a bedside lamp on.
    case bedroom
    /// Bedroom, lights off.
    case bedroomDark
    case home
    /// Home in the last hour before bed: dimmed lights.
    case homeDim
    case office
    case outdoors
    /// Driving a car.
    case car
    /// On a bus or train.
    case transit
    /// Shops, cafés, classrooms.
    case indoorPublic
}

/// A stretch of constant activity and place.
struct Block: Sendable {
    var start: Double
    var end: Double
    var activity: Activity
    var place: Place
    /// Steps per second while walking or running, else 0.
    var cadence: Double = 0
    var floorsUp: Int32 = 0
    var floorsDown: Int32 = 0
    /// Per-block randomness (phone pose, …).
    var key: UInt64 = 0
    /// A walk the participant could cut short (leisure, exercise), used to keep the day
    /// within its step budget.
    var optional = false

    var duration: Double { end - start }
    var steps: Double { cadence * (end - start) }
}

struct Interval: Sendable, Equatable {
    var start: Double
    var end: Double
}

struct ScreenSession: Sendable {
    var start: Double
    var end: Double
    var unlocked: Bool
    var key: UInt64
}

struct AppUse: Sendable {
    var start: Double
    var end: Double
    var app: Int
    /// Index of the screen session.
    var session: Int
}

struct TextInput: Sendable {
    var start: Double
    var end: Double
    /// `SRTextInputSession.SessionType`: keyboard 1, dictation 4.
    var type: Int64
    var app: Int
    var key: UInt64
}

struct NotificationEvent: Sendable {
    var time: Double
    var app: Int
    /// `SRDeviceUsageReport.NotificationUsage.Event` raw value.
    var event: Int64
}

struct PhoneCall: Sendable {
    var start: Double
    var end: Double
    var outgoing: Bool
    var contact: Int
}

/// The night that opens a story: into bed, lights off, asleep, awake.
struct Night: Sendable {
    var bed: Double
    var lightsOff: Double
    var asleep: Double
    var wake: Double
    /// Getting out of bed.
    var getUp: Double
    var awakenings: [Interval]
    /// The watch was worn through the night.
    var watchWorn: Bool
}

/// One participant-day: from getting into bed the evening before (`spanStart`) to getting
/// into bed this evening (`spanEnd`). A pure function of (seed, participant, local date).
struct DayStory: Sendable {
    var day: Int
    var spanStart: Double
    var spanEnd: Double
    var workday: Bool
    var night: Night
    var blocks: [Block]
    var screens: [ScreenSession]
    var apps: [AppUse]
    var texts: [TextInput]
    var notifications: [NotificationEvent]
    var calls: [PhoneCall]
    /// Intervals with the watch off the wrist (from the daily routine; events come on top).
    var offWrist: [Interval]
    /// Daylight transmission of the day's sky (1 = clear, 0.1 = heavy overcast).
    var cloud: Double
}

/// A simulated app: App Store category, bundle id (Apple apps only), typing share.
struct SimApp: Sendable {
    var category: Int
    var bundle: String?
    var typing: Double
    var weight: Double
    var notifies: Double
    var name: String
}

/// Index into `SensorCatalogue.deviceUsageCategories` order (contract §3.3.9).
enum Cat {
    static let games = 0, business = 1, weather = 2, utilities = 3, travel = 4, sports = 5, social = 6,
               reference = 7, productivity = 8, photo = 9, news = 10, navigation = 11, music = 12,
               lifestyle = 13, health = 14, finance = 15, entertainment = 16, education = 17, books = 18,
               shopping = 27
    static let names: [String] = [
        "Games", "Business", "Weather", "Utilities", "Travel", "Sports", "SocialNetworking", "Reference",
        "Productivity", "PhotoAndVideo", "News", "Navigation", "Music", "Lifestyle", "HealthAndFitness",
        "Finance", "Entertainment", "Education", "Books", "Medical", "Newsstand", "Catalogs", "Kids",
        "Miscellaneous", "FoodAndDrink", "DeveloperTools", "GraphicsAndDesign", "Shopping", "Stickers",
    ].map { "SRDeviceUsageCategory" + $0 }
}

let simApps: [SimApp] = [
    SimApp(category: Cat.social, bundle: "com.apple.MobileSMS", typing: 0.35, weight: 14, notifies: 30, name: "messages"),
    SimApp(category: Cat.social, bundle: nil, typing: 0.30, weight: 10, notifies: 20, name: "chat"),
    SimApp(category: Cat.social, bundle: nil, typing: 0.04, weight: 14, notifies: 15, name: "feed"),
    SimApp(category: Cat.utilities, bundle: "com.apple.mobilesafari", typing: 0.06, weight: 10, notifies: 0, name: "safari"),
    SimApp(category: Cat.productivity, bundle: "com.apple.mobilemail", typing: 0.12, weight: 6, notifies: 12, name: "mail"),
    SimApp(category: Cat.business, bundle: nil, typing: 0.25, weight: 3, notifies: 8, name: "workchat"),
    SimApp(category: Cat.entertainment, bundle: nil, typing: 0.01, weight: 7, notifies: 2, name: "video"),
    SimApp(category: Cat.games, bundle: nil, typing: 0, weight: 4, notifies: 3, name: "game"),
    SimApp(category: Cat.news, bundle: "com.apple.news", typing: 0, weight: 5, notifies: 6, name: "news"),
    SimApp(category: Cat.navigation, bundle: "com.apple.Maps", typing: 0.02, weight: 1, notifies: 0, name: "maps"),
    SimApp(category: Cat.music, bundle: "com.apple.Music", typing: 0, weight: 2, notifies: 0, name: "music"),
    SimApp(category: Cat.photo, bundle: "com.apple.mobileslideshow", typing: 0, weight: 3, notifies: 0, name: "photos"),
    SimApp(category: Cat.health, bundle: "com.apple.Health", typing: 0, weight: 1, notifies: 1, name: "health"),
    SimApp(category: Cat.weather, bundle: "com.apple.weather", typing: 0, weight: 2, notifies: 1, name: "weather"),
    SimApp(category: Cat.shopping, bundle: nil, typing: 0.05, weight: 3, notifies: 3, name: "shopping"),
    SimApp(category: Cat.books, bundle: "com.apple.iBooks", typing: 0, weight: 1, notifies: 0, name: "books"),
    SimApp(category: Cat.finance, bundle: nil, typing: 0.02, weight: 1, notifies: 2, name: "bank"),
    SimApp(category: Cat.productivity, bundle: "com.apple.mobilenotes", typing: 0.5, weight: 2, notifies: 0, name: "notes"),
]
enum AppID {
    static let messages = 0, chat = 1, feed = 2, safari = 3, mail = 4, workchat = 5, video = 6, game = 7, news = 8,
               maps = 9, music = 10, photos = 11, health = 12, weather = 13, shopping = 14, books = 15, bank = 16,
               notes = 17
}

/// Sequential draws for building one story. The story is always built whole, so the
/// counter never leaks between calls.
struct Draws {
    let key: RandomKey
    var n = 0
    init(_ key: RandomKey) { self.key = key }
    mutating func unit() -> Double { n += 1; return key.unit(n) }
    mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * unit() }
    mutating func normal() -> Double { n += 1; return key.normal(n) }
    mutating func chance(_ p: Double) -> Bool { unit() < p }
    mutating func poisson(_ mean: Double) -> Int { n += 1; return key.poisson(n, mean: mean) }
    mutating func bits() -> UInt64 { n += 1; return key.bits(n) }
    mutating func pick(_ weights: [Double]) -> Int {
        let total = weights.reduce(0, +)
        var u = unit() * total
        for (i, w) in weights.enumerated() {
            u -= w
            if u < 0 { return i }
        }
        return weights.count - 1
    }
}

let hour = 3_600.0
let minute = 60.0

extension Participant {
    /// The night that ends on the morning of civil day `d`, in wall seconds.
    func nightPlan(_ d: Int) -> Night {
        var r = Draws(key.with("night").with(d))
        let m = Double(d) * 86_400
        let p = profile
        let workday = p.workdays.contains(LocalTime.isoWeekday(day: d))
        var bed: Double, wake: Double
        if workday {
            wake = p.workdayWakeHour + 0.1 * r.normal()
            let prefer = p.midSleepFreeDays - p.sleepNeedHours / 2
            bed = 0.5 * prefer + 0.5 * (wake - p.sleepNeedHours) - 0.1 + 0.3 * r.normal()
        } else {
            let mid = p.midSleepFreeDays + 0.3 * r.normal()
            let length = p.sleepNeedHours + 0.3 + 0.35 * r.normal()
            bed = mid - length / 2
            wake = mid + length / 2
        }
        bed = min(bed, wake - 4.5)
        let readInBed = r.uniform(0, 0.5)
        let latency = r.uniform(5, 25) / 60
        let bedW = m + bed * hour
        let offW = bedW + readInBed * hour
        let asleepW = offW + latency * hour
        let wakeW = max(m + wake * hour, asleepW + 3 * hour)
        var awakenings: [Interval] = []
        let count = r.poisson(1.2)
        for _ in 0..<count {
            let s = r.uniform(asleepW + 0.5 * hour, wakeW - 0.5 * hour)
            let e = s + r.uniform(2, 9) * minute
            if s > asleepW, e < wakeW, !awakenings.contains(where: { s < $0.end + 600 && e > $0.start - 600 }) {
                awakenings.append(Interval(start: s, end: e))
            }
        }
        awakenings.sort { $0.start < $1.start }
        let getUp = wakeW + r.uniform(workday ? 2 : 5, workday ? 12 : 35) * minute
        return Night(bed: bedW, lightsOff: offW, asleep: asleepW, wake: wakeW, getUp: getUp,
                     awakenings: awakenings, watchWorn: watch != nil && p.wearsWatchToSleep)
    }

    /// The whole story of civil day `d` (see `DayStory`), instants mapped through `clock`.
    func story(_ d: Int, clock: LocalClock) -> DayStory {
        var s = storyInWallTime(d)
        s.mapTimes { clock.instant(wall: $0) }
        s.blocks.removeAll { $0.end <= $0.start }
        s.screens.removeAll { $0.end <= $0.start }
        return s
    }

    func storyInWallTime(_ d: Int) -> DayStory {
        let p = profile
        let night = nightPlan(d)
        let next = nightPlan(d + 1)
        let dayKey = key.with("story").with(d)
        var r = Draws(dayKey.with(1))
        let m = Double(d) * 86_400
        let workday = p.workdays.contains(LocalTime.isoWeekday(day: d)) && p.workHours > 0
        let end = next.bed
        var b = BlockBuilder(start: night.bed, end: end)

        // The night.
        b.add(until: night.lightsOff, .inBed, .bedroom)
        b.add(until: night.asleep, .inBed, .bedroomDark)
        for a in night.awakenings {
            b.add(until: a.start, .asleep, .bedroomDark)
            b.add(until: a.end, .inBed, .bedroomDark)
        }
        b.add(until: night.wake, .asleep, .bedroomDark)
        b.add(until: night.getUp, .inBed, .bedroom)

        // Today's step budget: the participant's mean, varied day to day.
        let target = p.dailySteps * clamp(exp(0.18 * r.normal()), 0.72, 1.28) * (workday ? 1.0 : 0.95)
        let exerciseToday = r.chance(min(0.9, p.exerciseSessionsPerWeek / 7))
        let runner = p.preset == .athlete || p.activity == .active
        let walkCadence = clamp(1.85 + 0.08 * r.normal(), 1.65, 2.05)

        func commuteLeg(_ b: inout BlockBuilder, _ r: inout Draws, outbound: Bool) {
            let total = p.commuteMinutes * minute * clamp(exp(0.1 * r.normal()), 0.8, 1.3)
            switch p.commute {
            case .none: break
            case .walk:
                b.add(total, .walk, .outdoors, cadence: walkCadence)
            case .transit:
                let w1 = total * 0.2, wait = r.uniform(2, 6) * minute, w2 = total * 0.15
                b.add(w1, .walk, .outdoors, cadence: walkCadence)
                b.add(wait, .light, .outdoors)
                b.add(max(60, total - w1 - w2 - wait), .vehicle, .transit)
                b.add(w2, .walk, .outdoors, cadence: walkCadence)
            case .car:
                b.add(r.uniform(1, 3) * minute, .walk, .outdoors, cadence: walkCadence * 0.9)
                b.add(max(120, total - 4 * minute), .vehicle, .car)
                b.add(r.uniform(1, 3) * minute, .walk, .outdoors, cadence: walkCadence * 0.9)
            }
            if p.workFloor > 0 && r.chance(outbound ? 0.3 : 0.5) {
                let up = Int32(p.workFloor)
                b.add(Double(p.workFloor) * 14, .walk, .indoorPublic, cadence: 1.6,
                      floorsUp: outbound ? up : 0, floorsDown: outbound ? 0 : up)
            }
        }

        func homeChunk(_ b: inout BlockBuilder, _ r: inout Draws, until t: Double) {
            while b.cursor < min(t, b.end) - 60 {
                let len = r.uniform(15, 55) * minute
                b.add(until: min(t, b.cursor + len), r.chance(0.35) ? .light : .sedentary, .home)
            }
            b.add(until: t, .sedentary, .home)
        }

        func outing(_ b: inout BlockBuilder, _ r: inout Draws) {
            let byCar = p.commute == .car || p.activity == .sedentary
            let travel = r.uniform(8, 20) * minute
            if byCar { b.add(travel, .vehicle, .car) } else { b.add(travel, .walk, .outdoors, cadence: walkCadence * 0.95, optional: true) }
            let stay = r.uniform(40, 130) * minute
            switch r.pick([0.5, 0.3, 0.2]) {
            case 0: // shopping or café: on the feet, slow
                var left = stay
                while left > 60 {
                    let len = min(left, r.uniform(5, 20) * minute)
                    b.add(len, r.chance(0.5) ? .light : .sedentary, .indoorPublic)
                    left -= len
                }
            case 1: // park
                b.add(stay * 0.6, .walk, .outdoors, cadence: walkCadence * 0.85, optional: true)
                b.add(stay * 0.4, .sedentary, .outdoors)
            default: // friends' place
                b.add(stay, .sedentary, .indoorPublic)
            }
            if byCar { b.add(travel, .vehicle, .car) } else { b.add(travel, .walk, .outdoors, cadence: walkCadence * 0.95, optional: true) }
        }

        func exercise(_ b: inout BlockBuilder, _ r: inout Draws) {
            if runner {
                b.add(r.uniform(3, 6) * minute, .walk, .outdoors, cadence: walkCadence, optional: true)
                b.add(r.uniform(25, 45) * minute, .run, .outdoors, cadence: clamp(2.7 + 0.1 * r.normal(), 2.45, 3.0), optional: true)
                b.add(r.uniform(3, 8) * minute, .walk, .outdoors, cadence: walkCadence * 0.95, optional: true)
            } else {
                b.add(r.uniform(30, 45) * minute, .walk, .outdoors, cadence: clamp(walkCadence + 0.1, 1.8, 2.1), optional: true)
            }
        }

        // Morning at home.
        if workday && p.commute != .none {
            let leave = max(b.cursor + 20 * minute, m + p.workStartHour * hour - p.commuteMinutes * minute)
            homeChunk(&b, &r, until: leave)
            commuteLeg(&b, &r, outbound: true)
            let workEnd = m + (p.workStartHour + p.workHours) * hour
            let lunch = max(b.cursor + 30 * minute, m + (12.1 + 0.3 * r.normal()) * hour)
            workPeriod(&b, &r, until: lunch, place: p.preset == .student ? .indoorPublic : .office)
            if r.chance(p.activity == .sedentary ? 0.15 : 0.45) {
                let w = r.uniform(4, 10) * minute
                b.add(w, .walk, .outdoors, cadence: walkCadence, optional: true)
                b.add(r.uniform(20, 35) * minute, .sedentary, .indoorPublic)
                b.add(w, .walk, .outdoors, cadence: walkCadence, optional: true)
            } else {
                b.add(r.uniform(30, 45) * minute, .light, .office)
            }
            workPeriod(&b, &r, until: max(workEnd, b.cursor + 2 * hour), place: p.preset == .student ? .indoorPublic : .office)
            commuteLeg(&b, &r, outbound: false)
            if r.chance(0.25) {
                b.add(r.uniform(4, 9) * minute, .walk, .outdoors, cadence: walkCadence, optional: true)
                b.add(r.uniform(12, 30) * minute, .light, .indoorPublic)
                b.add(r.uniform(4, 9) * minute, .walk, .outdoors, cadence: walkCadence, optional: true)
            }
        } else if workday {
            // Working from home.
            homeChunk(&b, &r, until: b.cursor + r.uniform(40, 70) * minute)
            let start = max(b.cursor, m + p.workStartHour * hour)
            homeChunk(&b, &r, until: start)
            let lunch = max(b.cursor + hour, m + (12.3 + 0.3 * r.normal()) * hour)
            workPeriod(&b, &r, until: lunch, place: .home)
            if r.chance(0.4) {
                b.add(r.uniform(10, 25) * minute, .walk, .outdoors, cadence: walkCadence, optional: true)
            }
            b.add(r.uniform(25, 40) * minute, .light, .home)
            workPeriod(&b, &r, until: m + (p.workStartHour + p.workHours) * hour, place: .home)
        } else {
            homeChunk(&b, &r, until: b.cursor + r.uniform(50, 140) * minute)
            if exerciseToday && p.preset == .retiree { exercise(&b, &r) }
            let outings = 1 + (p.activity == .sedentary ? 0 : r.poisson(0.6))
            for i in 0..<min(outings, 3) {
                if i > 0 { homeChunk(&b, &r, until: b.cursor + r.uniform(30, 90) * minute) }
                outing(&b, &r)
            }
        }
        // Evening.
        if exerciseToday && !(p.preset == .retiree && !workday) {
            let at = max(b.cursor + 20 * minute, m + r.uniform(17.5, 19.5) * hour)
            if at < end - 2 * hour {
                homeChunk(&b, &r, until: at)
                exercise(&b, &r)
            }
        }
        homeChunk(&b, &r, until: end)
        var blocks = b.finish()

        // Pre-bed dim light.
        let dim = end - r.uniform(30, 70) * minute
        blocks = splitAt(blocks, dim)
        for i in blocks.indices where blocks[i].start >= dim && blocks[i].place == .home {
            blocks[i].place = .homeDim
        }

        // Keep planned walking within the day's budget: cut leisure walks short (the rest of
        // the time is spent standing about at the same place).
        blocks = trimOptionalWalks(blocks, budget: target * 1.05)

        // Incidental steps: short bouts indoors until the day's budget is met.
        let structured = blocks.reduce(0) { $0 + $1.steps }
        var rm = Draws(dayKey.with(2))
        blocks = insertMicroBouts(blocks, steps: max(target - structured, 400), night: night, draws: &rm)
        for i in blocks.indices { blocks[i].key = dayKey.with(3).bits(i) }

        // Phone use, notifications, calls.
        var rs = Draws(dayKey.with(4))
        let phone = phoneUse(blocks: blocks, night: night, span: (night.bed, end), draws: &rs, workday: workday)

        // Watch wear.
        var rw = Draws(dayKey.with(5))
        var off: [Interval] = []
        if watch != nil {
            if night.watchWorn {
                let s = night.getUp + rw.uniform(3, 20) * minute
                off.append(Interval(start: s, end: s + rw.uniform(35, 75) * minute))
            } else {
                off.append(Interval(start: night.bed - 1, end: night.getUp + rw.uniform(3, 25) * minute))
            }
            if rw.chance(0.08) {
                let s = rw.uniform(m + 13 * hour, m + 20 * hour)
                off.append(Interval(start: s, end: s + rw.uniform(15, 90) * minute))
            }
            if !next.watchWorn {
                off.append(Interval(start: end - rw.uniform(5, 20) * minute, end: end + 1))
            }
            off = mergeIntervals(off.map { Interval(start: max($0.start, night.bed), end: min($0.end, end)) })
        }
        var rc = Draws(dayKey.with(6))
        let cloud = clamp(0.12 + 0.95 * pow(rc.unit(), 0.6), 0.12, 1)

        return DayStory(day: d, spanStart: night.bed, spanEnd: end, workday: workday, night: night, blocks: blocks,
                        screens: phone.screens, apps: phone.apps, texts: phone.texts,
                        notifications: phone.notifications, calls: phone.calls, offWrist: off, cloud: cloud)
    }

    private func workPeriod(_ b: inout BlockBuilder, _ r: inout Draws, until t: Double, place: Place) {
        while b.cursor < min(t, b.end) - 60 {
            let len = r.uniform(25, 80) * minute
            b.add(until: min(t, b.cursor + len), .sedentary, place)
            if b.cursor < t - 600 { b.add(r.uniform(3, 10) * minute, .light, place) }
        }
        b.add(until: t, .sedentary, place)
    }

    /// Short indoor walking bouts (10–80 s) spread over the awake indoor time, weighted to
    /// times on the feet, until the day's incidental-step budget is spent.
    private func insertMicroBouts(_ blocks: [Block], steps: Double, night: Night, draws r: inout Draws) -> [Block] {
        struct Bout { var start: Double; var end: Double; var cadence: Double; var up: Int32; var down: Int32 }
        let eligible: [(Int, Double)] = blocks.enumerated().compactMap { i, b in
            guard b.start >= night.getUp, b.duration > 120 else { return nil }
            switch (b.activity, b.place) {
            case (.light, .home), (.light, .office), (.light, .indoorPublic), (.light, .homeDim): return (i, 3 * b.duration)
            case (.sedentary, .home), (.sedentary, .office), (.sedentary, .indoorPublic), (.sedentary, .homeDim):
                return (i, b.duration)
            default: return nil
            }
        }
        let total = eligible.reduce(0) { $0 + $1.1 }
        guard total > 0 else { return blocks }
        var bouts: [[Bout]] = Array(repeating: [], count: blocks.count)
        var left = steps
        var tries = 0
        while left > 0 && tries < 600 {
            tries += 1
            var u = r.unit() * total
            var pick = eligible[eligible.count - 1].0
            for (i, w) in eligible {
                u -= w
                if u < 0 { pick = i; break }
            }
            let blk = blocks[pick]
            let len = r.uniform(10, 80)
            let cadence = r.uniform(1.2, 1.75)
            let stairs = r.chance(0.1)
            let s = r.uniform(blk.start + 5, blk.end - len - 5)
            let e = s + len
            if bouts[pick].contains(where: { s < $0.end + 20 && e > $0.start - 20 }) { continue }
            bouts[pick].append(Bout(start: s, end: e, cadence: cadence,
                                    up: stairs && r.chance(0.5) ? 1 : 0, down: 0))
            if stairs && bouts[pick][bouts[pick].count - 1].up == 0 { bouts[pick][bouts[pick].count - 1].down = 1 }
            left -= len * cadence
        }
        var out: [Block] = []
        out.reserveCapacity(blocks.count + 2 * tries)
        for (i, blk) in blocks.enumerated() {
            if bouts[i].isEmpty { out.append(blk); continue }
            var c = blk.start
            for bout in bouts[i].sorted(by: { $0.start < $1.start }) {
                var rest = blk
                rest.start = c
                rest.end = bout.start
                out.append(rest)
                out.append(Block(start: bout.start, end: bout.end, activity: .walk, place: blk.place == .homeDim ? .homeDim : blk.place,
                                 cadence: bout.cadence, floorsUp: bout.up, floorsDown: bout.down))
                c = bout.end
            }
            var rest = blk
            rest.start = c
            out.append(rest)
        }
        return out
    }
}

/// Appends contiguous blocks from a cursor, never past `end`.
struct BlockBuilder {
    var cursor: Double
    let end: Double
    var blocks: [Block] = []

    init(start: Double, end: Double) {
        cursor = start
        self.end = end
        blocks.reserveCapacity(96)
    }

    mutating func add(until t: Double, _ a: Activity, _ p: Place, cadence: Double = 0, floorsUp: Int32 = 0,
                      floorsDown: Int32 = 0, optional: Bool = false) {
        let e = min(t, end)
        guard e > cursor else { return }
        blocks.append(Block(start: cursor, end: e, activity: a, place: p, cadence: cadence,
                            floorsUp: floorsUp, floorsDown: floorsDown, optional: optional))
        cursor = e
    }

    mutating func add(_ duration: Double, _ a: Activity, _ p: Place, cadence: Double = 0, floorsUp: Int32 = 0,
                      floorsDown: Int32 = 0, optional: Bool = false) {
        add(until: cursor + duration, a, p, cadence: cadence, floorsUp: floorsUp, floorsDown: floorsDown, optional: optional)
    }

    mutating func finish() -> [Block] {
        if cursor < end { add(until: end, .sedentary, .home) }
        return blocks
    }
}

func trimOptionalWalks(_ blocks: [Block], budget: Double) -> [Block] {
    let total = blocks.reduce(0) { $0 + $1.steps }
    let optional = blocks.reduce(0) { $0 + ($1.optional ? $1.steps : 0) }
    guard total > budget, optional > 0 else { return blocks }
    let keep = clamp(1 - (total - budget) / optional, 0.1, 1)
    var out: [Block] = []
    out.reserveCapacity(blocks.count * 2)
    for b in blocks {
        guard b.optional, b.cadence > 0 else { out.append(b); continue }
        var walk = b, rest = b
        walk.end = b.start + keep * b.duration
        rest.start = walk.end
        rest.activity = .light
        rest.cadence = 0
        rest.floorsUp = 0
        rest.floorsDown = 0
        out.append(walk)
        if rest.end > rest.start { out.append(rest) }
    }
    return out
}

func splitAt(_ blocks: [Block], _ t: Double) -> [Block] {
    var out: [Block] = []
    out.reserveCapacity(blocks.count + 1)
    for b in blocks {
        if b.start < t && t < b.end && b.cadence == 0 {
            var a = b, c = b
            a.end = t
            c.start = t
            out.append(a)
            out.append(c)
        } else {
            out.append(b)
        }
    }
    return out
}

/// Sorted, non-overlapping union; touching intervals merge (`IntervalSet.normalise`).
func mergeIntervals(_ xs: [Interval]) -> [Interval] {
    IntervalSet.normalise(xs.map { TimeRange(after: $0.start, through: $0.end) }).map { Interval(start: $0.after, end: $0.through) }
}

extension DayStory {
    mutating func mapTimes(_ f: (Double) -> Double) {
        spanStart = f(spanStart)
        spanEnd = f(spanEnd)
        night.bed = f(night.bed)
        night.lightsOff = f(night.lightsOff)
        night.asleep = f(night.asleep)
        night.wake = f(night.wake)
        night.getUp = f(night.getUp)
        for i in night.awakenings.indices {
            night.awakenings[i].start = f(night.awakenings[i].start)
            night.awakenings[i].end = f(night.awakenings[i].end)
        }
        for i in blocks.indices { blocks[i].start = f(blocks[i].start); blocks[i].end = f(blocks[i].end) }
        for i in screens.indices { screens[i].start = f(screens[i].start); screens[i].end = f(screens[i].end) }
        for i in apps.indices { apps[i].start = f(apps[i].start); apps[i].end = f(apps[i].end) }
        for i in texts.indices { texts[i].start = f(texts[i].start); texts[i].end = f(texts[i].end) }
        for i in notifications.indices { notifications[i].time = f(notifications[i].time) }
        for i in calls.indices { calls[i].start = f(calls[i].start); calls[i].end = f(calls[i].end) }
        for i in offWrist.indices { offWrist[i].start = f(offWrist[i].start); offWrist[i].end = f(offWrist[i].end) }
    }
}
