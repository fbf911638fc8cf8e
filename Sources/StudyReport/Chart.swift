import Foundation
import SensorKitModel

/// A chart a protocol drew with the stdlib `plot` module, rendered as SVG by `ChartSVG`.
///
/// Charts of the same name from several participants share one picture: line, step,
/// bar and scatter charts gain one series per call (labelled with the participant by
/// default); heatmaps and actograms, one panel per participant, are kept as separate
/// charts whose name ends in `_<participant>` (the binding names them).
public struct Chart: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, CaseIterable, Codable {
        /// Values over time (x: seconds since 1970), joined by straight segments.
        case line
        /// Values over time held until the next value (a staircase).
        case step
        /// One bar per category, grouped by series.
        case bars
        /// A grid of `rows` × `columns` coloured by value (e.g. day × clock hour).
        case heatmap
        /// A double-plotted actogram: row d shows day d and day d + 1 side by side.
        case actogram
        /// Points (x, y) with an optional least-squares line per series.
        case scatter
    }

    /// One labelled set of values. `x` is empty for bars (values follow `categories`).
    public struct Series: Sendable, Equatable, Codable {
        public var label: String
        public var x: [Double]
        public var y: [Double?]
        public init(label: String, x: [Double], y: [Double?]) {
            self.label = label
            self.x = x
            self.y = y
        }
    }

    public var name: String
    public var kind: Kind
    public var title: String
    public var xLabel: String?
    public var yLabel: String?
    /// Unit of the values (y axis, heatmap colour scale), shown in brackets.
    public var unit: String?
    /// The participant's time zone: time axes tick at local midnights / clock hours.
    public var timeZone: TimeZone
    public var series: [Series] = []
    /// Bars: the category names along x.
    public var categories: [String] = []
    /// Heatmap and actogram: row labels (days), column labels (heatmap only) and
    /// values, `nil` where nothing is known (drawn as missing, not as zero).
    public var rows: [String] = []
    public var columns: [String] = []
    public var cells: [[Double?]] = []
    /// Scatter: draw each series' least-squares line.
    public var fit = false
    /// Heatmap: colour by log10 of the value (light spans decades).
    public var logScale = false
    /// x / y values are hours of the local clock (24 = midnight, 26 = 02:00 the next
    /// morning): that axis ticks at clock times ("02:00"), not at plain numbers.
    public var xClock = false
    public var yClock = false
    /// A chart drawn once per participant (heatmap, actogram): the name the protocol gave
    /// it and whose panel this is. Panels of one name share one colour scale on the page
    /// and in their files. Nil for charts that collect a series per call (cohort charts).
    public var panel: Panel? = nil

    public struct Panel: Sendable, Equatable, Codable {
        public var name: String
        public var participant: String

        public init(name: String, participant: String) {
            self.name = name
            self.participant = participant
        }
    }

    public init(name: String, kind: Kind, title: String, timeZone: TimeZone) {
        self.name = name
        self.kind = kind
        self.title = title
        self.timeZone = timeZone
    }

    /// Whether calls with the same name add series to one chart (else each call is its own chart).
    public var collectsSeries: Bool { kind != .heatmap && kind != .actogram }
}

/// Fixed-format numbers for SVG and labels: the same value always prints the same text.
enum ChartNumber {
    /// A coordinate with one decimal (`12.5`, `-3`), never `-0`. Total, and always a valid
    /// SVG number: coordinates are clamped to ±10^6 (far off any canvas) and NaN draws at 0.
    static func coord(_ v: Double) -> String {
        let v = v.isNaN ? 0 : Swift.min(Swift.max(v, -1e6), 1e6)
        let r = (v * 10).rounded() / 10
        if r == r.rounded() { return String(Int64(r == 0 ? 0 : r)) }
        return String(format: "%.1f", r)
    }

    /// A tick label with `decimals` decimals. With `scale` 1e3 or 1e6 (see `scale(for:)`)
    /// the value is written in thousands or millions: `12k`, `3.5M`.
    static func label(_ v: Double, decimals: Int, scale: Double = 1) -> String {
        if v == 0 { return "0" }
        if scale == 1e6 { return trim(String(format: "%.2f", v / 1e6)) + "M" }
        if scale == 1e3 { return trim(String(format: "%.2f", v / 1e3)) + "k" }
        let s = String(format: "%.\(max(0, min(decimals, 6)))f", v)
        return s.hasPrefix("-") && Double(s) == 0 ? String(s.dropFirst()) : s
    }

    /// The scale of an axis's labels: thousands or millions when whole-number ticks reach 10 000.
    static func scale(for ticks: [Double], decimals: Int) -> Double {
        let top = ticks.map { abs($0) }.max() ?? 0
        guard decimals == 0 else { return 1 }
        return top >= 1e7 ? 1e6 : (top >= 1e4 ? 1e3 : 1)
    }

    /// A value in a legend or fit text: 3 significant digits (`nan`, `inf`, `-inf` by name).
    static func value(_ v: Double) -> String {
        if v == 0 { return "0" }
        if !v.isFinite { return NumberText.plain(v) }
        let digits = max(0, 2 - Int(floor(log10(abs(v)))))
        return trim(label(v, decimals: min(digits, 4)))
    }

    static func trim(_ s: String) -> String {
        var s = s
        if s.contains(".") { while s.hasSuffix("0") { s.removeLast() }; if s.hasSuffix(".") { s.removeLast() } }
        return s
    }

    /// "Nice" ticks covering [lo, hi]: steps of 1, 2 or 5 × 10^k, about `target` of them
    /// and never fewer than `minimum` where a smaller such step gives them (an axis with two
    /// labels cannot be read). Returns the ticks and the decimals their labels need. Total: a
    /// range without such steps (not finite, or too wide or too narrow for a Double step)
    /// gets its two ends.
    static func ticks(_ lo: Double, _ hi: Double, target: Int = 5, minimum: Int = 4) -> (values: [Double], decimals: Int) {
        guard lo.isFinite, hi.isFinite, hi > lo else { return ([lo.isFinite ? lo : 0], 0) }
        let raw = (hi - lo) / Double(max(target, 1))
        let magnitude = pow(10, floor(log10(raw)))
        let steps = [0.2, 0.5, 1.0, 2, 5, 10].map { $0 * magnitude }
        var k = steps.firstIndex { $0 >= raw } ?? steps.count - 1
        func count(_ step: Double) -> Double { floor(hi / step) - ceil(lo / step) + 1 }
        while k > 0, count(steps[k]) < Double(minimum) { k -= 1 }
        let step = steps[k]
        guard raw.isNormal, magnitude.isNormal, step.isNormal, lo + step > lo else { return ([lo, hi], 0) }
        let first = (lo / step).rounded(.up) * step
        var values: [Double] = []
        var i = 0.0
        while first + i * step <= hi + step * 1e-9, values.count < 50 {
            values.append(first + i * step)
            i += 1
        }
        return (values, max(0, -Int(floor(log10(step) + 1e-9))))
    }
}
