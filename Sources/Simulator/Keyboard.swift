import Foundation
import SensorKitModel

/// Mean of each duration distribution at 36 words/min, seconds; and whether it scales with
/// typing speed (inter-key intervals do, key-hold times do not). Key holds ≈ 0.08–0.1 s and
/// inter-key intervals ≈ 0.2–0.35 s are typical of touchscreen typing (Palin et al. 2019).
let keyboardDurationMeans: [String: (Double, Bool)] = [
    "touchDownUp": (0.095, false), "touchUpDown": (0.20, true), "spaceTouchDownUp": (0.09, false),
    "deleteTouchDownUp": (0.10, false), "shortWordCharKeyTouchDownUp": (0.09, false), "touchDownDown": (0.29, true),
    "charKeyToPrediction": (0.9, true), "shortWordCharKeyToCharKey": (0.27, true), "charKeyToAnyTapKey": (0.30, true),
    "anyTapToCharKey": (0.30, true), "spaceToCharKey": (0.35, true), "charKeyToSpaceKey": (0.30, true),
    "spaceToDeleteKey": (0.50, true), "deleteToSpaceKey": (0.45, true), "spaceToSpaceKey": (0.60, true),
    "spaceToShiftKey": (0.45, true), "spaceToPlaneChangeKey": (0.55, true), "spaceToPredictionKey": (0.70, true),
    "deleteToCharKey": (0.40, true), "charKeyToDelete": (0.45, true), "deleteToDelete": (0.16, true),
    "deleteToShiftKey": (0.50, true), "deleteToPlaneChangeKey": (0.60, true), "anyTapToPlaneChangeKey": (0.50, true),
    "planeChangeToAnyTap": (0.45, true), "charKeyToPlaneChangeKey": (0.50, true), "planeChangeKeyToCharKey": (0.45, true),
    "deleteToPath": (0.70, true), "pathToDelete": (0.60, true), "spaceToPath": (0.60, true), "pathToSpace": (0.40, true),
    "pathToPath": (0.50, true),
]

/// Share of words in each sentiment category (LIWC-style dictionaries put ~3 % of words in
/// positive emotion and well under 1 % in each negative category).
let sentimentWordRates: [Double] = [0.012, 0.004, 0.001, 0.004, 0.003, 0.005, 0.03, 0.004, 0.003, 0.002]
let sentimentEmojiShares: [Double] = [0.02, 0.05, 0.01, 0.04, 0.04, 0.03, 0.55, 0.1, 0.06, 0.1]

/// Keyboard metrics: one record per 15-min window in which the keyboard was used
/// (contract §3.2, §3.3.11). Totals follow from the typing time in the window and the
/// participant's speed; distributions are samples around typical touch-typing timings.
func keyboardBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    let sensor = Sensor.keyboardMetrics
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return Schema.empty(sensor) }
    let size = p.settings.reportWindow(for: sensor)
    let view = RangeView(p, from: rl - reportMaxDelay - size - 1, to: rh + 1)
    let windows = ctx.windows(view, stream: "keyboard", size: size)
    var doubles: [String: [Double]] = [:], ints: [String: [Int64]] = [:], values: [String: [FieldValue]] = [:]
    var strings: [String: [String]] = [:]
    var writes: [Double] = []
    func put(_ n: String, _ v: Double) { doubles[n, default: []].append(v) }
    func put(_ n: String, _ v: Int) { ints[n, default: []].append(Int64(v)) }
    func put(_ n: String, _ v: FieldValue) { values[n, default: []].append(v) }
    let prof = p.profile
    for w in windows {
        let sessions = view.texts.filter {
            $0.type == 1 && $0.start >= w.start && $0.start < w.end && containing(view.phoneOff, $0.start) == nil
        }
        guard !sessions.isEmpty else { continue }
        var r = Draws(p.key.with("keyboard").with(w.index))
        let seconds = sessions.reduce(0) { $0 + ($1.end - $1.start) }
        let wpm = prof.typingWordsPerMinute * exp(0.1 * r.normal())
        let typing = seconds * r.uniform(0.55, 0.8)
        let words = max(1, Int((typing / 60 * wpm).rounded()))
        let paths = Int((Double(words) * prof.swipeTypingShare * r.uniform(0.7, 1.3)).rounded())
        let tapWords = max(0, words - paths)
        let emojis = Int((Double(words) * r.uniform(0, 0.08)).rounded())
        let charTaps = Int((Double(tapWords) * 5.7 * r.uniform(0.95, 1.05)).rounded())
        let deletes = Int((Double(charTaps + paths) * r.uniform(0.05, 0.11)).rounded())
        func dither(_ x: Double) -> Int { Int((x + r.unit()).rounded(.down)) }

        put("duration", size)
        strings["keyboardIdentifier", default: []].append("en_US@sw=QWERTY;hw=Automatic")
        strings["version", default: []].append("1.0")
        put("width", 64.0)
        put("height", 41.6)
        put("inputModes", .array([.string("en_US")]))
        put("sessionIdentifiers", .array(sessions.map { .string(uuidString(RandomKey($0.key), 0)) }))
        put("totalWords", words)
        put("totalAlteredWords", dither(Double(words) * r.uniform(0.02, 0.07)))
        put("totalTaps", charTaps + deletes + emojis)
        put("totalDrags", paths + dither(Double(words) * 0.005))
        put("totalDeletes", deletes)
        put("totalEmojis", emojis)
        put("totalPaths", paths)
        put("totalPathTime", (Double(paths) * r.uniform(0.6, 1.0) * 1000).rounded() / 1000)
        put("totalPathLength", (Double(paths) * r.uniform(30, 60) * 10).rounded() / 10)
        let correctionRates = [0.03, 0.006, 0.004, 0.002, 0.004, 0.003, 0.012, 0.006, 0.02]
        for (name, rate) in zip(Schema.keyboardCorrections, correctionRates) {
            put(name, dither(Double(words) * rate * r.uniform(0.5, 1.5)))
        }
        put("totalTypingDuration", (typing * 1000).rounded() / 1000)
        let pauses = dither(typing / 25)
        put("totalPauses", pauses)
        put("totalPathPauses", dither(Double(paths) / 8))
        put("typingSpeed", tapWords > 0 ? (wpm * 100).rounded() / 100 : 0)
        put("pathTypingSpeed", paths > 0 ? (wpm * 1.25 * 100).rounded() / 100 : 0)
        put("totalTypingEpisodes", sessions.count + pauses / 3)

        let n = max(3, min(25, (charTaps + deletes) / 10))
        func samples(_ count: Int, mean: Double, sigma: Double) -> FieldValue {
            .array((0..<count).map { _ in .double((mean * exp(sigma * r.normal()) * 10_000).rounded() / 10_000) })
        }
        func errors(_ count: Int, _ scale: Double) -> FieldValue {
            .array((0..<count).map { _ in .double(((0.2 + scale * abs(r.normal())) * 1000).rounded() / 1000) })
        }
        for name in Schema.keyboardLength { put(name, errors(n, name.hasPrefix("space") ? 1.9 : 1.5)) }
        let speed = 36 / wpm
        for name in Schema.keyboardDuration {
            let (mean, scales) = keyboardDurationMeans[name]!
            let count = name.lowercased().contains("path") ? (paths > 0 ? max(1, n / 3) : 0) : n
            put(name, samples(count, mean: scales ? mean * speed : mean, sigma: 0.3))
        }
        put("pathErrorDistanceRatio", .array((0..<(paths > 0 ? max(1, n / 3) : 0)).map { _ in
            .double((r.uniform(0.1, 0.5) * 1000).rounded() / 1000)
        }))
        for name in Schema.keyboardPositional {
            let per = max(1, n / 3)
            let v: [FieldValue] = (0..<6).map { _ in
                name.contains("Distance") ? errors(per, 1.6)
                    : name == "deleteToDeletes" ? samples(per, mean: 0.16 * speed, sigma: 0.3)
                    : samples(per, mean: name.hasSuffix("DownUp") ? 0.095 : 0.3 * speed, sigma: 0.3)
            }
            put(name, .array(v))
        }
        for (i, s) in Schema.sentiments.enumerated() {
            put("wordCount" + s.prefix(1).uppercased() + s.dropFirst(), dither(Double(words) * sentimentWordRates[i]))
        }
        for (i, s) in Schema.sentiments.enumerated() {
            put("emojiCount" + s.prefix(1).uppercased() + s.dropFirst(), dither(Double(emojis) * sentimentEmojiShares[i]))
        }
        writes.append(w.write)
    }
    let columns = Schema.keyboardColumns.map { name, kind -> Column in
        switch kind {
        case .double: Column(name: name, data: .double(doubles[name] ?? []))
        case .int: Column(name: name, data: .int(ints[name] ?? []))
        case .string: Column(name: name, data: .string(strings[name] ?? []))
        case .value: Column(name: name, data: .value(values[name] ?? []))
        case .bool: Column(name: name, data: .bool([]))
        }
    }
    return SampleBatch(sensor: sensor, writeTimes: writes, times: writes, columns: columns)
}
