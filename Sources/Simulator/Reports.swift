import Foundation
import SensorKitModel

/// A report window on the fixed `reportWindow` grid whose write time is in range.
struct ReportWindow {
    var index: Int
    var start: Double
    var end: Double
    var write: Double
}

/// Latest delay, in seconds, between a report window's end and its write.
let reportMaxDelay = 65.0

extension WriteContext {
    /// Report windows for a view: those with the phone on at some time in the window,
    /// written up to `reportMaxDelay` after they end.
    func windows(_ view: RangeView, stream: String, size: Double) -> [ReportWindow] {
        reportWindows(stream: stream, size: size, maxDelay: reportMaxDelay,
                      phoneOn: complement(view.phoneOff, from: view.lo, to: view.hi))
    }

    /// Report windows written in (after, through]: ready `delay(k)` seconds after the
    /// window ends, and only if the phone was on at some time in the window.
    func reportWindows(stream: String, size: Double, maxDelay: Double, phoneOn: [Interval]) -> [ReportWindow] {
        let (rl, rh) = readyRange
        guard rh > rl else { return [] }
        let dk = p.key.with(stream).with("delay")
        let first = Int(((rl - maxDelay) / size).rounded(.down)) - 1
        let last = Int((rh / size).rounded(.up))
        var out: [ReportWindow] = []
        for k in first...last {
            let s = Double(k) * size, e = s + size
            let ready = e + 5 + (maxDelay - 5) * dk.unit(k)
            guard ready > rl && ready <= rh else { continue }
            guard phoneOn.contains(where: { $0.start < e && $0.end > s }) else { continue }
            let w = write(ready: ready)
            if accepts(w, ready: ready) { out.append(ReportWindow(index: k, start: s, end: e, write: w)) }
        }
        return out
    }
}

@inline(__always)
func overlap(_ a0: Double, _ a1: Double, _ b0: Double, _ b1: Double) -> Double { max(0, min(a1, b1) - max(a0, b0)) }

/// Web categories Safari time is split into (Screen Time domain categories).
let webCategories = [Cat.news, Cat.reference, Cat.shopping, Cat.entertainment, Cat.social, Cat.productivity]

/// Device usage: one report per 15-min window (contract §3.3.9, §14.3): screen wakes (every
/// screen-on period that starts in the window), unlocks (unlocked sessions), time
/// unlocked, app usage by App Store category with text-input sessions, notifications by
/// category, and Safari time by web category.
func deviceUsageBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    let sensor = Sensor.deviceUsageReport
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return Schema.empty(sensor) }
    let size = p.settings.reportWindow(for: sensor)
    let view = RangeView(p, from: rl - reportMaxDelay - size - 1, to: rh + 1)
    let windows = ctx.windows(view, stream: "device-usage", size: size)
    var duration: [Double] = [], wakes: [Int64] = [], unlocks: [Int64] = [], unlockTime: [Double] = []
    var apps: [FieldValue] = [], notes: [FieldValue] = [], web: [FieldValue] = [], writes: [Double] = []
    let isOn: (Double) -> Bool = { containing(view.phoneOff, $0) == nil }
    for w in windows {
        var nw = 0, nu = 0, ut = 0.0
        for s in view.screens where s.end > w.start && s.start < w.end {
            if s.start >= w.start && isOn(s.start) {
                nw += 1
                if s.unlocked { nu += 1 }
            }
            if s.unlocked {
                for piece in complement(view.phoneOff, from: max(s.start, w.start), to: min(s.end, w.end)) {
                    ut += piece.end - piece.start
                }
            }
        }
        // Applications, grouped by category, one entry per app.
        struct Acc { var usage = 0.0; var first = Double.infinity; var texts: [FieldValue] = [] }
        var byApp: [Int: Acc] = [:]
        for a in view.apps where a.end > w.start && a.start < w.end {
            let u = overlap(a.start, a.end, w.start, w.end)
            guard u > 0, isOn(max(a.start, w.start)) else { continue }
            byApp[a.app, default: Acc()].usage += u
            byApp[a.app]!.first = min(byApp[a.app]!.first, max(a.start, w.start))
        }
        for t in view.texts where t.start >= w.start && t.start < w.end && isOn(t.start) {
            byApp[t.app, default: Acc()].texts.append(.object([
                ("duration", .double(t.end - t.start)),
                ("sessionType", .int(t.type)),
                ("sessionIdentifier", .string(uuidString(RandomKey(t.key), 0))),
            ]))
            if byApp[t.app]!.first == .infinity { byApp[t.app]!.first = t.start }
        }
        let rk = p.key.with("report-app").with(w.index)
        var cats: [(String, FieldValue)] = []
        for c in 0..<Cat.names.count {
            var entries: [FieldValue] = []
            for (i, app) in simApps.enumerated() where app.category == c {
                guard let acc = byApp[i] else { continue }
                entries.append(.object([
                    ("bundleIdentifier", app.bundle.map { .string($0) } ?? .null),
                    ("usageTime", .double((acc.usage * 1000).rounded() / 1000)),
                    ("reportApplicationIdentifier", .string(uuidString(rk, i))),
                    ("textInputSessions", .array(acc.texts)),
                    ("supplementalCategories", .array([])),
                    ("relativeStartTime", .double(((acc.first - w.start) * 1000).rounded() / 1000)),
                ]))
            }
            if !entries.isEmpty { cats.append((Cat.names[c], .array(entries))) }
        }
        // Notifications.
        var noteCats: [Int: [FieldValue]] = [:]
        for n in view.notifications where n.time >= w.start && n.time < w.end && isOn(n.time) {
            let app = simApps[n.app]
            noteCats[app.category, default: []].append(.object([
                ("bundleIdentifier", app.bundle.map { .string($0) } ?? .null),
                ("event", .int(n.event)),
            ]))
        }
        // Web: Safari time split over one or two web categories.
        var webCats: [Int: Double] = [:]
        if let safari = byApp[AppID.safari] {
            let wk = p.key.with("web").with(w.index)
            let c1 = webCategories[Int(wk.bits(0) % UInt64(webCategories.count))]
            let c2 = webCategories[Int(wk.bits(1) % UInt64(webCategories.count))]
            let share = wk.uniform(2, 0.5, 1)
            webCats[c1, default: 0] += safari.usage * share
            webCats[c2, default: 0] += safari.usage * (1 - share)
        }
        duration.append(size)
        wakes.append(Int64(nw))
        unlocks.append(Int64(nu))
        unlockTime.append((ut * 1000).rounded() / 1000)
        apps.append(.object(cats))
        notes.append(.object(noteCats.keys.sorted().map { (Cat.names[$0], .array(noteCats[$0]!)) }))
        web.append(.object(webCats.keys.sorted().filter { webCats[$0]! > 0.0005 }.map {
            (Cat.names[$0], .array([.object([("totalUsageTime", .double((webCats[$0]! * 1000).rounded() / 1000))])]))
        }))
        writes.append(w.write)
    }
    return SampleBatch(sensor: sensor, writeTimes: writes, times: writes, columns: [
        Column(name: "duration", data: .double(duration)),
        Column(name: "totalScreenWakes", data: .int(wakes)),
        Column(name: "totalUnlocks", data: .int(unlocks)),
        Column(name: "totalUnlockDuration", data: .double(unlockTime)),
        Column(name: "version", data: .string(Array(repeating: "1.0", count: writes.count))),
        Column(name: "applicationUsageByCategory", data: .value(apps)),
        Column(name: "notificationUsageByCategory", data: .value(notes)),
        Column(name: "webUsageByCategory", data: .value(web)),
    ])
}
