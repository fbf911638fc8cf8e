/// The one duration grammar of the package, used by scenario switches, `schedule`,
/// `time.duration`, scenario event offsets and the REPL's `:advance`.
///
/// A duration is a plain number of seconds (`"90"`, `"-5"`, `"1e3"`), or one or more
/// terms of a number (decimal, exponent allowed) and a unit — `ms`, `s`, `m`, `h`, `d`, `w` — added together
/// (`"30s"`, `"7.5d"`, `"1h30m"`, `"500ms"`), optionally after one leading `-` that
/// negates the whole. Letters may be upper or lower case; white space anywhere is ignored.
public enum DurationText {
    /// Seconds in `text`, or nil when it is not a duration or not finite.
    public static func seconds(_ text: String) -> Double? {
        let s = String(text.lowercased().filter { $0 != " " && $0 != "\t" && $0 != "\n" })
        if let d = Double(s) { return d.isFinite ? d : nil }
        var rest = Substring(s)
        var sign = 1.0
        if rest.first == "-" { sign = -1; rest = rest.dropFirst() }
        var total = 0.0
        var terms = 0
        while !rest.isEmpty {
            let numberEnd = rest.firstIndex { !($0.isASCII && ($0.isNumber || ".e+-".contains($0))) } ?? rest.endIndex
            let digits = rest[..<numberEnd]
            guard digits.first?.isNumber == true || digits.first == ".", let n = Double(digits) else { return nil }
            rest = rest[numberEnd...]
            guard let (factor, length) = unit(rest) else { return nil }
            rest = rest.dropFirst(length)
            total += n * factor
            terms += 1
        }
        guard terms > 0, total.isFinite else { return nil }
        return sign * total
    }

    /// The unit at the start of `text`: its length in seconds and in characters.
    static func unit(_ text: Substring) -> (Double, Int)? {
        if text.hasPrefix("ms") { return (0.001, 2) }
        switch text.first {
        case "s": return (1, 1)
        case "m": return (60, 1)
        case "h": return (3_600, 1)
        case "d": return (86_400, 1)
        case "w": return (604_800, 1)
        default: return nil
        }
    }
}
