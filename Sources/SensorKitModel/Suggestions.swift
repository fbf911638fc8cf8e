/// "Did you mean" support for names a protocol or scenario spells: sensors,
/// entitlement strings, usage-detail keys, switches.
///
/// Deterministic: candidates are ranked by edit distance (case-insensitive), then by
/// their order in the candidate list.
public enum Suggestions {
    /// Levenshtein distance between `a` and `b`, compared case-insensitively.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.lowercased().unicodeScalars), y = Array(b.lowercased().unicodeScalars)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    /// The candidates close to `name`, best first (at most `limit`).
    ///
    /// A candidate qualifies when its edit distance is at most `max(2, len/3)` of the
    /// longer string, or when one name contains the other (case-insensitively, at
    /// least 4 characters), so that `"light"` suggests `"ambientLightSensor"`.
    public static func closest(to name: String, among candidates: [String], limit: Int = 3) -> [String] {
        let lowered = name.lowercased()
        guard !lowered.isEmpty else { return [] }
        var scored: [(distance: Int, index: Int, value: String)] = []
        var seen = Set<String>()
        // Lengths once, not per candidate: a name can be a megabyte string from a script.
        let nameLength = lowered.unicodeScalars.count, nameCount = name.count, loweredCount = lowered.count
        for (index, candidate) in candidates.enumerated() where !seen.contains(candidate) {
            seen.insert(candidate)
            let threshold = max(2, max(nameCount, candidate.count) / 3)
            let lc = candidate.lowercased()
            // The distance is at least the difference in length: a name far longer than a
            // candidate (a megabyte string from a script) skips the quadratic distance.
            let gap = abs(nameLength - lc.unicodeScalars.count)
            let d = gap > threshold ? gap : editDistance(name, candidate)
            let contains = loweredCount >= 4 && (lc.contains(lowered) || lowered.contains(lc))
            // A name the candidate starts with ("pedometer" for pedometerData) is the closest
            // but for one typo: closer than a word a couple of edits away ("odometer").
            let prefix = loweredCount >= 4 && lc.hasPrefix(lowered)
            if d <= threshold || contains {
                scored.append((prefix ? min(d, 1) : contains && d > threshold ? threshold + 1 : d, index, candidate))
            }
        }
        scored.sort { ($0.distance, $0.index) < ($1.distance, $1.index) }
        // Keep only the candidates about as close as the best one.
        guard let best = scored.first?.distance else { return [] }
        return Array(scored.filter { $0.distance <= best + 1 }.prefix(limit).map(\.value))
    }

    /// The one hint for a misspelt `name`: `didYouMean` of the closest candidate, or `""`.
    public static func hint(for name: String, among candidates: [String]) -> String {
        didYouMean(closest(to: name, among: candidates, limit: 1))
    }

    /// The one "did you mean" format, appended to a message that names what was not
    /// found: `" — did you mean 'x'?"` / `" — did you mean 'x', 'y' or 'z'?"`, or `""`
    /// without suggestions. Every message with a suggestion ends this way.
    public static func didYouMean(_ suggestions: [String]) -> String {
        switch suggestions.count {
        case 0: return ""
        case 1: return " — did you mean '\(suggestions[0])'?"
        default:
            let quoted = suggestions.map { "'\($0)'" }
            return " — did you mean " + quoted.dropLast().joined(separator: ", ") + " or " + quoted.last! + "?"
        }
    }
}

/// A small, stable 64-bit hash (SplitMix64 finaliser over FNV-1a for strings).
///
/// Swift's `Hasher` is randomly seeded per process, so anything that must be the
/// same on every run (duplicate injection, jitter) uses this instead.
public struct StableHash: Sendable, Hashable {
    public private(set) var state: UInt64

    public init(seed: UInt64 = 0x9E37_79B9_7F4A_7C15) { state = seed }

    public static func mix(_ z0: UInt64) -> UInt64 {
        var z = z0 &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func combine(_ value: UInt64) { state = StableHash.mix(state ^ value) }
    public mutating func combine(_ value: Int) { combine(UInt64(bitPattern: Int64(value))) }
    public mutating func combine(_ value: Double) { combine(value.bitPattern) }
    public mutating func combine(_ value: String) {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in value.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        combine(h)
    }

    /// The hash as a number in [0, 1).
    public var unitValue: Double { Double(StableHash.mix(state) >> 11) * 0x1.0p-53 }
}
