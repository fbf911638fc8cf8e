import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel
import StudyReport

extension Bindings {
    /// How a SampleSet shows itself: `#set` counts it, and the REPL's pretty-printer
    /// (`inspect`, `=set`) shows a one-line summary plus its first rows.
    func defineSampleSetDisplay() {
        sampleSetClass.metamethod("__len") { set, call in
            call.push(try set.count())
            return 1
        }
        sampleSetClass.metamethod("__inspect") { set, call in
            call.push(try SampleSetDisplay.summary(set, rows: 3))
            return 1
        }
    }
}

enum SampleSetDisplay {
    /// `SampleSet(heartRate, 86400 samples, 2026-03-02 00:00 – 2026-03-03 00:00)` and the first rows.
    static func summary(_ set: SampleSet, rows: Int) throws -> String {
        let count = try set.count()
        let head = try set.materialize(limit: rows)
        var span = ""
        if count > 0, let first = head.times.first {
            let last = try set.stats("time").max
            span = ", " + LocalTime.minuteLabel(first, set.timeZone) + " – " + LocalTime.minuteLabel(last, set.timeZone)
        }
        var text = "SampleSet(\(set.sensor.rawValue), \(count) sample\(count == 1 ? "" : "s")\(span)\(set.filters.isEmpty ? "" : ", filtered"))"
        for i in 0..<head.count {
            var parts = ["time=" + LocalTime.minuteLabel(head.times[i], set.timeZone)]
            if set.stream == .samples, let window = FieldReader.window(in: head, row: i) {
                parts.append("window=" + windowLabel(window, set.timeZone))
            }
            for column in head.columns.prefix(6) {
                if let present = column.present, !present[i] { continue }
                let value: String = switch column.data {
                case .double(let v): ReportBook.format(.double(v[i]))
                case .int(let v): String(v[i])
                case .intRuns(let v): String(v[i])
                case .bool(let v): v[i] ? "true" : "false"
                case .string(let v): "\"" + v[i] + "\""
                case .value: "{…}"
                }
                parts.append("\(column.name)=\(value)")
            }
            if head.columns.count > 6 { parts.append("…") }
            text += "\n  " + parts.joined(separator: " ")
        }
        if count > head.count { text += "\n  … \(count - head.count) more" }
        return text
    }

    /// `2026-03-02 09:45–10:00` (the end's date only when it differs; `…` for a missing end).
    static func windowLabel(_ window: (start: Double, end: Double), _ zone: TimeZone) -> String {
        let start = LocalTime.minuteLabel(window.start, zone)
        guard !window.end.isNaN else { return start + "–…" }
        let end = LocalTime.minuteLabel(window.end, zone)
        return start + "–" + (end.prefix(11) == start.prefix(11) ? String(end.dropFirst(11)) : end)
    }
}
