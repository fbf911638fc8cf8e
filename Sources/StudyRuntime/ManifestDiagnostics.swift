import Foundation
import SensorKitModel

/// `study{}` diagnostics as `sensorium check` prints them, and as `run` and `test` refuse
/// them: `protocol.lua:6: error[unknown-sensor] sensors.ambientLightSenor: unknown sensor
/// 'ambientLightSenor' — did you mean 'ambientLightSensor'?`.
public enum ManifestDiagnostics {
    /// The lines of the script at `path` (empty when it cannot be read).
    public static func sourceLines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// One diagnostic, as a line: the script, the line it is about (when found), the
    /// diagnostic, and the suggestion when the message does not already name it.
    public static func text(_ d: Diagnostic, script: String, source: [String]) -> String {
        let line = line(of: d, in: source).map { ":\($0)" } ?? ""
        return "\(script)\(line): \(d.descriptionWithHint)"
    }

    /// The source line (1-based) a diagnostic is about, found in the text: a quoted value the
    /// message names (`"ambient-light-sensr"`), the key or sensor it concerns inside the
    /// `study { … }` block, a `sensorkit.reader "x"` call for sensors used without being
    /// declared, else the line of `study`. Nil when the script has no `study` line.
    public static func line(of d: Diagnostic, in lines: [String]) -> Int? {
        guard let study = studyLine(in: lines) else { return nil }
        // The block ends at the first line after `study` whose braces balance.
        var depth = 0, end = study
        for (i, l) in lines.enumerated() where i >= study {
            depth += l.filter { $0 == "{" }.count - l.filter { $0 == "}" }.count
            end = i
            if depth <= 0 && i > study || (depth <= 0 && l.contains("}")) { break }
        }
        let block = study...end
        func find(_ needle: String, in range: ClosedRange<Int>) -> Int? {
            range.first { lines[$0].contains(needle) }
        }
        if d.code.hasPrefix("used-"), let sensor = d.sensor {
            let outside = Array(0..<lines.count).filter { !block.contains($0) }
            if let i = outside.first(where: { lines[$0].contains("\"\(sensor.rawValue)\"") || lines[$0].contains("'\(sensor.rawValue)'") }) { return i + 1 }
        }
        if let quoted = d.message.range(of: #""[^"]+""#, options: .regularExpression).map({ String(d.message[$0]) }), let i = find(quoted, in: block) {
            return i + 1
        }
        if let key = d.key {
            let last = key.split(separator: ".").last.map { String($0.split(separator: "[").first ?? $0) } ?? key
            if let i = block.first(where: { lines[$0].range(of: "\\b\(NSRegularExpression.escapedPattern(for: last))\\s*=", options: .regularExpression) != nil }) { return i + 1 }
            if let i = find(last, in: block) { return i + 1 }
        }
        return study + 1
    }

    /// The index (0-based) of the line where `study {` or `study(` begins, if any.
    static func studyLine(in lines: [String]) -> Int? {
        lines.firstIndex(where: { $0.range(of: #"^\s*study\s*[{(]"#, options: .regularExpression) != nil })
    }
}
