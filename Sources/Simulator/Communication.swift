import Foundation
import SensorKitModel

private let messagingApps: Set<Int> = [AppID.messages, AppID.chat]

/// Phone usage (contract §3.3.10): one report per 15-min window: calls started in it (incoming /
/// outgoing), distinct contacts, time on the phone inside the window.
func phoneUsageBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.phoneUsageReport)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let size = p.settings.reportWindow(for: .phoneUsageReport)
    let view = RangeView(p, from: rl - reportMaxDelay - size - 3_600, to: rh + 1)
    let isOn: (Double) -> Bool = { containing(view.phoneOff, $0) == nil }
    for w in ctx.windows(view, stream: "phone-usage", size: size) {
        let started = view.calls.filter { $0.start >= w.start && $0.start < w.end && isOn($0.start) }
        let time = view.calls.reduce(0.0) { acc, c in
            acc + complement(view.phoneOff, from: max(c.start, w.start), to: min(c.end, w.end)).reduce(0) { $0 + $1.end - $1.start }
        }
        out.row(write: w.write)
        out.set("duration", size)
        out.set("totalOutgoingCalls", started.filter(\.outgoing).count)
        out.set("totalIncomingCalls", started.filter { !$0.outgoing }.count)
        out.set("totalUniqueContacts", Set(started.map(\.contact)).count)
        out.set("totalPhoneCallDuration", rounded(time))
    }
    return out.batch()
}

/// Messages usage (contract §3.3.10): one report per 15-min window. Each typing session in a
/// messaging app sends 1 + one per 20 s of typing messages; each notification from a
/// messaging app is an incoming message, and conversations bring replies.
func messagesUsageBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.messagesUsageReport)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let size = p.settings.reportWindow(for: .messagesUsageReport)
    let view = RangeView(p, from: rl - reportMaxDelay - size - 1, to: rh + 1)
    let isOn: (Double) -> Bool = { containing(view.phoneOff, $0) == nil }
    let k = p.key.with("messages")
    for w in ctx.windows(view, stream: "messages-usage", size: size) {
        let sent = view.texts.filter { messagingApps.contains($0.app) && $0.start >= w.start && $0.start < w.end && isOn($0.start) }
            .reduce(0) { $0 + 1 + Int(($1.end - $1.start) / 20) }
        let notified = view.notifications.filter {
            messagingApps.contains($0.app) && $0.time >= w.start && $0.time < w.end && isOn($0.time)
        }.count
        let replies = sent > 0 ? Int(Double(sent) * k.uniform(w.index, 0.3, 1.1)) : 0
        let received = notified + replies
        out.row(write: w.write)
        out.set("duration", size)
        out.set("totalOutgoingMessages", sent)
        out.set("totalIncomingMessages", received)
        out.set("totalUniqueContacts", sent + received == 0 ? 0 : min(sent + received, 1 + Int(k.bits(w.index &+ 1) % 3)))
    }
    return out.batch()
}

/// Media events (contract §3.3.14): images and videos coming on and off screen in messaging and
/// social apps, about one item per 90 s of use.
func mediaEventsBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.mediaEvents)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let delay = 0.5
    let view = RangeView(p, from: rl - delay - 30, to: rh + 1)
    var events: [(t: Double, id: String, type: Int64)] = []
    for a in view.apps where (a.app == AppID.messages || a.app == AppID.chat || a.app == AppID.feed)
        && a.end > rl - delay - 30 && a.start <= rh {
        let k = RandomKey(UInt64(bitPattern: Int64(a.start.bitPattern))).with(p.key.raw).with(a.app)
        let n = k.poisson(0, mean: (a.end - a.start) / 90)
        for i in 0..<n {
            let on = k.uniform(10 + i, a.start, a.end)
            let off = min(a.end, on + k.uniform(100 + i, 1, 20))
            let id = String(k.bits(1_000 + i) & 0xFFFF_FFFF_FFFF, radix: 16, uppercase: true)
            events.append((on, id, 1))
            events.append((off, id, 2))
        }
    }
    events.sort { ($0.t, $0.type) < ($1.t, $1.type) }
    for e in events {
        let ready = e.t + delay
        guard ready > rl && ready <= rh, containing(view.phoneOff, e.t) == nil else { continue }
        let w = ctx.write(ready: ready)
        guard ctx.accepts(w, ready: ready) else { continue }
        out.row(write: w)
        out.set("mediaIdentifier", e.id)
        out.set("eventType", e.type)
    }
    return out.batch()
}

/// ARKit blend shapes reported (a subset of ARFaceAnchor.BlendShapeLocation).
private let blendShapes = ["browDownLeft", "browDownRight", "browInnerUp", "cheekPuff", "eyeBlinkLeft", "eyeBlinkRight",
                           "eyeSquintLeft", "eyeSquintRight", "jawOpen", "mouthFrownLeft", "mouthFrownRight",
                           "mouthSmileLeft", "mouthSmileRight"]

/// Face metrics (contract §3.3.15): a short capture at a quarter of unlocks (context deviceUnlock) and
/// at 5 % of messaging-app uses (messagingAppUsage). `faceAnchor` is a plain map of
/// blend-shape coefficients (ARFaceAnchor does not exist on Linux).
func faceMetricsBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.faceMetrics)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let view = RangeView(p, from: rl - 10, to: rh + 1)
    var captures: [(t: Double, key: RandomKey, context: Int64)] = []
    for s in view.screens where s.unlocked && s.start > rl - 10 && s.start <= rh {
        let k = RandomKey(s.key).with("face")
        if k.chance(0, 0.25) { captures.append((s.start + 0.5, k, 1)) }
    }
    for a in view.apps where messagingApps.contains(a.app) && a.start > rl - 10 && a.start <= rh {
        let k = RandomKey(UInt64(bitPattern: Int64(a.start.bitPattern))).with(p.key.raw).with("face-msg")
        if k.chance(0, 0.05) { captures.append((a.start + 2, k, 2)) }
    }
    captures.sort { $0.t < $1.t }
    for c in captures {
        let ready = c.t + 1
        guard ready > rl && ready <= rh, containing(view.phoneOff, c.t) == nil else { continue }
        let w = ctx.write(ready: ready)
        guard ctx.accepts(w, ready: ready) else { continue }
        let smile = clamp(0.15 + 0.2 * c.key.normal(1), 0, 1), frown = clamp(0.05 + 0.05 * c.key.normal(2), 0, 1)
        let shapes: [(String, FieldValue)] = blendShapes.enumerated().map { i, name in
            let v: Double = name.hasPrefix("mouthSmile") ? smile : name.hasPrefix("mouthFrown") ? frown
                : clamp(0.1 + 0.08 * c.key.normal(10 + i), 0, 1)
            return (name, .double(rounded(v)))
        }
        out.row(write: w)
        out.set("version", "1.0")
        out.set("sessionIdentifier", uuidString(c.key, 3))
        out.set("context", c.context)
        out.set("faceAnchor", value: obj([("blendShapes", .object(shapes))]))
        out.set("wholeFaceExpressions", value: .array([
            obj([("identifier", .string("smile")), ("value", .double(rounded(smile)))]),
            obj([("identifier", .string("neutral")), ("value", .double(rounded(clamp(1 - smile - frown, 0, 1))))]),
        ]))
        out.set("partialFaceExpressions", value: .array([
            obj([("identifier", .string("browRaise")), ("value", .double(rounded(clamp(0.1 + 0.1 * c.key.normal(30), 0, 1))))]),
            obj([("identifier", .string("eyeSquint")), ("value", .double(rounded(clamp(0.1 + 0.1 * c.key.normal(31), 0, 1))))]),
        ]))
    }
    return out.batch()
}

/// A Siri request: start, end.
extension Participant {
    /// Siri requests of a day: Poisson(0.8), 2–7 s each, at awake times.
    func siriRequests(_ s: DayStory) -> [Interval] {
        var r = Draws(key.with("siri").with(s.day))
        let awake = WeightedTime(s.blocks) { b in (b.activity == .asleep || b.place == .bedroomDark) ? 0 : 1 }
        var out: [Interval] = []
        for _ in 0..<r.poisson(0.8) {
            guard let t = awake.pick(r.unit()) else { break }
            out.append(Interval(start: t, end: t + r.uniform(2, 7)))
        }
        return out.sorted { $0.start < $1.start }
    }
}

/// Speech metrics (contract §3.3.13): samples through a phone call (every 10 s) or a Siri request
/// (every 2 s), `timeSinceAudioStart` increasing, timestamps rounded down to the second.
/// Loudness of conversational speech ≈ 55–70 dB; expression scores on their −1…1 scales.
func speechBatch(_ p: Participant, sensor: Sensor, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(sensor)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let siri = sensor == .siriSpeechMetrics
    let step = siri ? 2.0 : 10.0
    let view = RangeView(p, from: rl - 3_600 * 3, to: rh + 1)
    var sessions: [Interval] = siri ? view.stories.flatMap { p.siriRequests($0) }
        : view.calls.map { Interval(start: $0.start, end: $0.end) }
    sessions.sort { $0.start < $1.start }
    let base = p.key.with(siri ? "siri-speech" : "call-speech")
    var rows: [(t: Double, since: Double, key: RandomKey, session: Interval)] = []
    for s in sessions where s.end + 2 > rl && s.start <= rh {
        let k = base.with(UInt64(bitPattern: Int64(s.start.bitPattern)))
        var since = min(step, s.end - s.start)
        while since <= s.end - s.start + 1e-9 {
            rows.append((s.start + since, since, k, s))
            if since >= s.end - s.start { break }
            since = min(since + step, s.end - s.start)
        }
    }
    rows.sort { $0.t < $1.t }
    for row in rows {
        let stamp = row.t.rounded(.down)
        let ready = row.t + 1
        guard ready > rl && ready <= rh, containing(view.phoneOff, row.t) == nil else { continue }
        let w = ctx.write(ready: ready)
        guard ctx.accepts(w, ready: ready) else { continue }
        let k = row.key, j = Int(row.since * 10)
        let window = min(step, row.since)
        let range: FieldValue = obj([("start", .double(rounded(row.since - window))), ("duration", .double(rounded(window)))])
        out.row(write: w, time: stamp)
        out.set("sessionIdentifier", uuidString(k, 0))
        out.set("sessionFlags", Int64(0))
        out.set("timeSinceAudioStart", rounded(row.since))
        out.set("audioLevelLoudness", rounded(62 + 4 * k.normal(j), 10))
        out.set("audioLevelStart", rounded(row.since - window))
        out.set("audioLevelDuration", rounded(window))
        // Siri transcription text is withheld (contract §3.3.13); calls carry no recognition result.
        out.set("speechRecognition", value: siri ? obj([("formattedString", .null), ("segments", .array([]))]) : nil)
        let speech = clamp(0.85 + 0.1 * k.normal(j + 1), 0, 1)
        out.set("soundClassification", value: obj([("timeRange", range), ("classifications", .array([
            obj([("identifier", .string("speech")), ("confidence", .double(rounded(speech)))]),
            obj([("identifier", .string("music")), ("confidence", .double(rounded(clamp(0.05 + 0.05 * k.normal(j + 2), 0, 1))))]),
        ]))]))
        let mood = clamp(0.1 + 0.25 * k.normal(9_999) + 0.1 * k.normal(j + 3), -1, 1)
        out.set("speechExpression", value: obj([
            ("version", .string("1.0")), ("timeRange", range),
            ("confidence", .double(rounded(clamp(0.7 + 0.1 * k.normal(j + 4), 0, 1)))),
            ("mood", .double(rounded(mood))), ("valence", .double(rounded(clamp(mood + 0.1 * k.normal(j + 5), -1, 1)))),
            ("activation", .double(rounded(clamp(0.1 * k.normal(j + 6), -1, 1)))),
            ("dominance", .double(rounded(clamp(0.05 + 0.1 * k.normal(j + 7), -1, 1)))),
        ]))
    }
    return out.batch()
}

/// Acoustic settings (contract §3.3.19, "one snapshot at start and on each change"): settings are
/// state, and a pure generator cannot know when recording started, so a snapshot is
/// written every day at ~03:30 local; a further one whenever the participant changes a
/// setting. Participant-level settings hold all study long; the headphone safety limit
/// and background sounds are redrawn weekly, and the new week's values take effect at a
/// seeded evening time on its first day (20:00–22:00), when a change record is written
/// if anything differs from the week before.
func acousticSettingsBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.acousticSettings)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let clock = p.zones.clock(from: rl - 10 * 86_400, to: rh + 3 * 86_400)
    let k = p.key.with("acoustic")
    /// Week number of local day `d`, and the instant its settings take effect.
    func week(_ d: Int) -> Int { Int((Double(d) / 7).rounded(.down)) }
    func changeInstant(_ w: Int) -> Double {
        clock.instant(wall: Double(w * 7) * 86_400 + 20 * 3_600 + k.with(w).uniform(20, 0, 7_200))
    }
    /// The weekly settings: (headphone safety level or nil, background sounds on).
    func weekly(_ w: Int) -> (Double?, Bool) {
        let wk = k.with(w)
        return (wk.chance(3, 0.3) ? [75.0, 80, 85, 90, 95, 100][Int(wk.bits(4) % 6)] : nil, wk.chance(10, 0.1))
    }
    var instants: [Double] = []
    var d = clock.day(containing: rl) - 1
    let last = clock.day(containing: rh) + 1
    while d <= last {
        defer { d += 1 }
        instants.append(clock.instant(wall: Double(d) * 86_400 + 3.5 * 3_600 + k.uniform(d, 0, 600)))
        // The first day of a week (day numbers divisible by 7) may bring a change.
        if d % 7 == 0, weekly(week(d)) != weekly(week(d) - 1) { instants.append(changeInstant(week(d))) }
    }
    for t in instants.sorted() {
        guard t > rl && t <= rh, containing(ctx.phoneOff, t) == nil else { continue }
        let w = ctx.write(ready: t)
        guard ctx.accepts(w, ready: t) else { continue }
        let today = week(clock.day(containing: t))
        let (safety, bg) = weekly(t >= changeInstant(today) ? today : today - 1)
        out.row(write: w)
        out.set("isEnvironmentalSoundMeasurementsEnabled", k.chance(1, 0.8))
        out.set("audioExposureSampleLifetime", Int64(k.chance(2, 0.85) ? 1 : 2))
        out.set("headphoneSafetyAudioLevel", safety)
        out.set("soundCheckEnabled", k.chance(5, 0.3))
        out.set("lateNightModeEnabled", k.chance(6, 0.1))
        out.set("leftRightBalance", k.chance(7, 0.95) ? 0 : rounded(k.uniform(8, -0.3, 0.3), 100))
        out.set("monoAudioEnabled", k.chance(9, 0.03))
        out.set("backgroundSoundsEnabled", bg)
        out.set("backgroundSoundName", Int64(1 + Int(k.bits(11) % 16)))
        out.set("backgroundSoundsRelativeVolume", rounded(k.uniform(12, 0.2, 0.8), 100))
        out.set("backgroundSoundsPlayWithMediaEnabled", k.chance(13, 0.3))
        out.set("backgroundSoundsRelativeVolumeWithMedia", rounded(k.uniform(14, 0.1, 0.5), 100))
        out.set("backgroundSoundsStopOnLockEnabled", k.chance(15, 0.5))
        let acc = k.chance(16, 0.05)
        out.set("headphoneAccommodationsEnabled", acc)
        out.set("mediaEnhanceTuning", Int64(acc ? 1 + Int(k.bits(17) % 3) : 0))
        out.set("mediaEnhanceBoosting", Int64(acc ? 1 + Int(k.bits(18) % 3) : 0))
        out.set("mediaEnhanceApplication", Int64(acc ? 2 + Int(k.bits(19) % 3) : 1))
    }
    return out.batch()
}
