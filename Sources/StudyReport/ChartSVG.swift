import Foundation
import JSONText
import SensorKitModel

/// Renders a `Chart` as a standalone SVG document.
///
/// Output is deterministic: coordinates print with one decimal (`ChartNumber.coord`),
/// labels with the decimals their tick step needs, colours come from a fixed palette
/// in series order, and time axes tick at the chart's local midnights (or clock hours
/// for spans of two days or less). Text is XML-escaped. No scripts, fonts or links:
/// the picture draws the same in a browser, an image viewer or inline in HTML.
public enum ChartSVG {
    public static let width = 720.0
    static let font = "font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\""
    /// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
    static let palette = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999933"]
    /// Viridis stops for heatmaps (perceptually uniform, dark = low).
    static let ramp: [(Double, Double, Double)] = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]
    static let missing = "#e6e6e6"

    /// The chart as an SVG document (UTF-8 text, ending in a newline). `scale` is the
    /// colour scale (heatmap) or bar scale (actogram) shared by the panels of one name
    /// (`colourScale(of:)` over all of them); nil: the chart's own values set it.
    public static func render(_ chart: Chart, scale: ColourScale? = nil) -> String {
        var svg = Canvas()
        switch chart.kind {
        case .line, .step, .scatter: drawXY(chart, &svg)
        case .bars: drawBars(chart, &svg)
        case .heatmap: drawHeatmap(chart, scale: scale ?? colourScale(of: [chart]), &svg)
        case .actogram: drawActogram(chart, scale: scale ?? colourScale(of: [chart]), &svg)
        }
        return svg.document(title: chart.title)
    }

    /// The range of values a heatmap's colours or an actogram's bar heights span: [lo, hi]
    /// in the values' unit, or of their log10 where `log`. One per quantity: panels of one
    /// name share it, so that a colour means the same value in every participant's panel.
    public struct ColourScale: Sendable, Equatable {
        public var lo: Double
        public var hi: Double
        public var log: Bool
    }

    /// The scale covering every value of `charts` (heatmaps: finite values, positive ones
    /// under a log scale; actograms: from 0 to the largest value). A heatmap of values that
    /// are all ≥ 0 on a linear scale starts at 0, so that colour reads as an amount.
    public static func colourScale(of charts: [Chart]) -> ColourScale {
        let log = charts.first?.logScale ?? false
        let values = charts.flatMap { $0.cells.flatMap { $0.compactMap { $0 } } }.filter { $0.isFinite && (!log || $0 > 0) }
        let kind = charts.first?.kind ?? .heatmap
        if kind == .actogram { return ColourScale(lo: 0, hi: max(values.max() ?? 0, 0), log: false) }
        let t = values.map { log ? log10($0) : $0 }
        var lo = t.min() ?? 0
        let hi = t.max() ?? 1
        if !log, lo >= 0 { lo = 0 }
        return ColourScale(lo: lo, hi: hi, log: log)
    }

    // MARK: canvas

    /// SVG elements collected in drawing order, with the picture's height.
    struct Canvas {
        var body = ""
        var height = 320.0

        mutating func text(_ s: String, x: Double, y: Double, anchor: String = "start", size: Double = 11,
                           weight: String? = nil, rotate: Bool = false, fill: String = "#222") {
            let transform = rotate ? " transform=\"rotate(-90 \(c(x)) \(c(y)))\"" : ""
            let bold = weight.map { " font-weight=\"\($0)\"" } ?? ""
            body += "<text x=\"\(c(x))\" y=\"\(c(y))\" font-size=\"\(c(size))\" text-anchor=\"\(anchor)\" fill=\"\(fill)\"\(bold)\(transform)>\(MarkupText.escape(s))</text>\n"
        }

        mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, width: Double = 1, dash: Bool = false) {
            body += "<line x1=\"\(c(x1))\" y1=\"\(c(y1))\" x2=\"\(c(x2))\" y2=\"\(c(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(c(width))\"\(dash ? " stroke-dasharray=\"4 3\"" : "")/>\n"
        }

        mutating func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double, fill: String, title: String? = nil) {
            let open = "<rect x=\"\(c(x))\" y=\"\(c(y))\" width=\"\(c(max(w, 0)))\" height=\"\(c(max(h, 0)))\" fill=\"\(fill)\""
            if let title { body += open + "><title>\(MarkupText.escape(title))</title></rect>\n" } else { body += open + "/>\n" }
        }

        mutating func path(_ points: [(Double, Double)], stroke: String) {
            guard let first = points.first else { return }
            var d = "M\(c(first.0)) \(c(first.1))"
            for p in points.dropFirst() { d += " L\(c(p.0)) \(c(p.1))" }
            body += "<path d=\"\(d)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"1.6\" stroke-linejoin=\"round\"/>\n"
        }

        mutating func circle(_ x: Double, _ y: Double, fill: String) {
            body += "<circle cx=\"\(c(x))\" cy=\"\(c(y))\" r=\"3\" fill=\"\(fill)\" fill-opacity=\"0.75\"/>\n"
        }

        func document(title: String) -> String {
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(c(ChartSVG.width))\" height=\"\(c(height))\" viewBox=\"0 0 \(c(ChartSVG.width)) \(c(height))\" \(ChartSVG.font) role=\"img\">\n"
                + "<title>\(MarkupText.escape(title))</title>\n"
                + "<rect x=\"0\" y=\"0\" width=\"\(c(ChartSVG.width))\" height=\"\(c(height))\" fill=\"#ffffff\"/>\n"
                + body + "</svg>\n"
        }

        private func c(_ v: Double) -> String { ChartNumber.coord(v) }
    }

    static func color(_ i: Int) -> String { palette[i % palette.count] }

    /// Approximate width of `s` at `size` px (DejaVu Sans averages ~0.6 em).
    static func textWidth(_ s: String, size: Double = 11) -> Double { Double(s.count) * size * 0.6 }

    /// The title, then the legend (swatch + label per series, wrapping); returns the y below them.
    static func header(_ chart: Chart, legend: [String], _ svg: inout Canvas) -> Double {
        svg.text(chart.title, x: 16, y: 22, size: 14, weight: "bold")
        var y = 30.0
        guard legend.filter({ !$0.isEmpty }).count > 1 else { return y + 10 }
        var x = 16.0
        y += 6
        for (i, label) in legend.enumerated() where !label.isEmpty {
            let w = 16 + textWidth(label) + 14
            if x + w > width - 16, x > 16 { x = 16; y += 16 }
            svg.rect(x, y, 10, 10, fill: color(i))
            svg.text(label, x: x + 14, y: y + 9)
            x += w
        }
        return y + 22
    }

    /// A y axis label with its unit: "Steps [count]".
    static func axisTitle(_ label: String?, unit: String?) -> String? {
        switch (label, unit) {
        case (let l?, let u?): return "\(l) [\(u)]"
        case (let l?, nil): return l
        case (nil, let u?): return "[\(u)]"
        default: return nil
        }
    }

    // MARK: x–y charts

    struct Frame {
        var left = 72.0, top = 48.0, right = ChartSVG.width - 20, bottom = 270.0
        var x0 = 0.0, x1 = 1.0, y0 = 0.0, y1 = 1.0
        func px(_ x: Double) -> Double { left + Frame.fraction(x, x0, x1) * (right - left) }
        func py(_ y: Double) -> Double { bottom - Frame.fraction(y, y0, y1) * (bottom - top) }

        /// (v − a) / (b − a), computed on halves where a difference overflows (a range
        /// spanning ±1e308), so every finite value of a finite range has a finite place.
        static func fraction(_ v: Double, _ a: Double, _ b: Double) -> Double {
            let d = v - a, w = b - a
            return d.isFinite && w.isFinite ? d / w : (v / 2 - a / 2) / (b / 2 - a / 2)
        }
    }

    /// `lo` and `hi` clamped to the finite Doubles (a padded range may overflow).
    static func finite(_ lo: Double, _ hi: Double) -> (Double, Double) {
        let big = Double.greatestFiniteMagnitude
        return (Swift.min(Swift.max(lo, -big), big), Swift.min(Swift.max(hi, -big), big))
    }

    /// Data range padded so nothing sits on the frame; a constant gets a unit-wide range.
    static func range(_ values: [Double], includeZero: Bool = false) -> (Double, Double) {
        var lo = values.min() ?? 0, hi = values.max() ?? 1
        if includeZero { lo = min(lo, 0); hi = max(hi, 0) }
        if hi == lo { return includeZero && lo == 0 ? (0, 1) : (lo - 1, hi + 1) }   // all zero: a count of 0, not −1…1
        let pad = (hi - lo).isFinite ? (hi - lo) * 0.05 : (hi / 2 - lo / 2) * 0.1
        return finite(includeZero && lo == 0 ? 0 : lo - pad, hi + pad)
    }

    static func drawYAxis(_ f: Frame, label: String?, clock: Bool = false, _ svg: inout Canvas) -> Frame {
        for (t, text) in numberTicks(f.y0, f.y1, clock: clock) {
            svg.line(f.left, f.py(t), f.right, f.py(t), stroke: "#e3e3e3")
            svg.text(text, x: f.left - 6, y: f.py(t) + 4, anchor: "end", size: 10)
        }
        if let label { svg.text(label, x: 16, y: (f.top + f.bottom) / 2, anchor: "middle", rotate: true) }
        return f
    }

    /// Ticks of a value axis over [lo, hi] with their labels: nice numbers, or clock times
    /// where `clock` (values are hours of the local clock; 26 reads "02:00").
    static func numberTicks(_ lo: Double, _ hi: Double, clock: Bool) -> [(Double, String)] {
        if clock, lo.isFinite, hi.isFinite, hi > lo {
            let step = [0.25, 0.5, 1, 2, 3, 6, 12, 24].first { (hi - lo) / $0 <= 6 } ?? 24
            var out: [(Double, String)] = []
            var t = (lo / step).rounded(.up) * step
            while t <= hi + 1e-9, out.count < 50 {
                let minutes = Int((t * 60).rounded())
                let ofDay = ((minutes % 1440) + 1440) % 1440
                out.append((t, String(format: "%02d:%02d", ofDay / 60, ofDay % 60)))
                t += step
            }
            return out
        }
        let (ticks, decimals) = ChartNumber.ticks(lo, hi)
        let scale = ChartNumber.scale(for: ticks, decimals: decimals)
        return ticks.map { ($0, ChartNumber.label($0, decimals: decimals, scale: scale)) }
    }

    static func frameBox(_ f: Frame, _ svg: inout Canvas) {
        svg.line(f.left, f.bottom, f.right, f.bottom, stroke: "#444")
        svg.line(f.left, f.top, f.left, f.bottom, stroke: "#444")
    }

    /// A time axis: tick positions, their labels, and a second line of dates.
    struct TimeAxis {
        var marks: [Double] = []
        var labels: [(Double, String)] = []
        /// Under an axis of clock hours: the date at the first labelled hour and at each midnight.
        var dates: [(Double, String)] = []
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func dateLabel(_ day: Date, _ calendar: Calendar) -> String {
        let p = calendar.dateComponents([.month, .day], from: day)
        return "\(months[(p.month ?? 1) - 1]) \(p.day ?? 1)"
    }

    /// Local-time ticks over [x0, x1]. Up to 36 hours (unless `days`): clock hours, marked
    /// and labelled alike, with the date under the first and under each midnight. Longer, or
    /// `days` (a series of one value per day): marks at local midnights, each day labelled at
    /// its middle ("Mar 29" centred on a 23-hour day too); every k-th day, so that at most ~14
    /// are labelled. No ticks where the span leaves the calendar (`LocalTime.supportedInstants`):
    /// the axis then has its title only.
    static func timeTicks(_ x0: Double, _ x1: Double, _ zone: TimeZone, days: Bool = false) -> TimeAxis {
        guard LocalTime.supportedInstants.contains(x0), LocalTime.supportedInstants.contains(x1), x0 <= x1 else { return TimeAxis() }
        let calendar = LocalTime.calendar(zone)
        let span = x1 - x0
        var axis = TimeAxis()
        if span <= 36 * 3600 && !days {
            let step = span <= 12 * 3600 ? 1 : 3
            var t = calendar.dateInterval(of: .hour, for: Date(timeIntervalSince1970: x0))?.start.timeIntervalSince1970 ?? x0
            while t <= x1 && axis.labels.count < 100 {
                let date = Date(timeIntervalSince1970: t)
                let hour = calendar.dateComponents([.hour], from: date).hour ?? 0
                if t >= x0, hour % step == 0 {
                    axis.labels.append((t, String(format: "%02d:00", hour)))
                    if axis.dates.isEmpty || hour == 0 { axis.dates.append((t, dateLabel(date, calendar))) }
                }
                t += 3600
            }
            axis.marks = axis.labels.map(\.0)
            return axis
        }
        let every = max(1, Int((span / 86_400 / 14).rounded(.up)))
        var day = calendar.startOfDay(for: Date(timeIntervalSince1970: x0))
        var n = 0
        while day.timeIntervalSince1970 <= x1 && n < 1000 {
            guard let next = calendar.date(byAdding: .day, value: 1, to: day) else { break }
            let start = day.timeIntervalSince1970, middle = (start + next.timeIntervalSince1970) / 2
            if start >= x0 { axis.marks.append(start) }
            if middle >= x0, middle <= x1, n % every == 0 { axis.labels.append((middle, dateLabel(day, calendar))) }
            n += 1
            day = next
        }
        return axis
    }

    /// Whether every time in `xs` is a local noon: a series of one value per day (the plot
    /// module draws a day "YYYY-MM-DD" at its noon), drawn on an axis of days however short.
    static func isDaily(_ xs: [Double], _ zone: TimeZone) -> Bool {
        let calendar = LocalTime.calendar(zone)
        return !xs.isEmpty && xs.allSatisfy { x in
            guard LocalTime.supportedInstants.contains(x) else { return false }
            let p = calendar.dateComponents([.hour, .minute, .second, .nanosecond], from: Date(timeIntervalSince1970: x))
            return p.hour == 12 && p.minute == 0 && p.second == 0
        }
    }

    /// Legend labels: a series without any value gets none (its colour stays reserved).
    static func legend(_ chart: Chart) -> [String] {
        chart.series.map { s in s.y.contains { $0?.isFinite == true } ? s.label : "" }
    }

    static func drawXY(_ chart: Chart, _ svg: inout Canvas) {
        let top = header(chart, legend: legend(chart), &svg)
        var f = Frame()
        f.top = top
        let xs = chart.series.flatMap(\.x).filter(\.isFinite)
        let ys = chart.series.flatMap { $0.y.compactMap { $0 } }.filter(\.isFinite)
        guard !ys.isEmpty else { noData(f, &svg); return }
        let time = chart.kind != .scatter
        let daily = time && isDaily(xs, chart.timeZone)
        if daily {
            // Whole local days around the points, each labelled with its date.
            let calendar = LocalTime.calendar(chart.timeZone)
            let first = calendar.startOfDay(for: Date(timeIntervalSince1970: xs.min()!))
            let last = calendar.startOfDay(for: Date(timeIntervalSince1970: xs.max()!))
            f.x0 = first.timeIntervalSince1970
            f.x1 = (calendar.date(byAdding: .day, value: 1, to: last) ?? last).timeIntervalSince1970
        } else if time {
            let lo = xs.min() ?? 0, hi = max(xs.max() ?? 1, lo + 3600)
            let pad = (hi - lo).isFinite ? (hi - lo) * 0.03 : (hi / 2 - lo / 2) * 0.06
            (f.x0, f.x1) = finite(lo - pad, hi + pad)   // points clear of the frame
        } else {
            (f.x0, f.x1) = range(xs)
        }
        (f.y0, f.y1) = range(ys, includeZero: chart.kind != .scatter && (ys.min() ?? 0) >= 0)
        f = drawYAxis(f, label: axisTitle(chart.yLabel, unit: chart.unit), clock: chart.yClock, &svg)
        if time {
            let axis = timeTicks(f.x0, f.x1, chart.timeZone, days: daily)
            for t in axis.marks { svg.line(f.px(t), f.bottom, f.px(t), f.bottom + 4, stroke: "#444") }
            for (t, label) in axis.labels { svg.text(label, x: f.px(t), y: f.bottom + 16, anchor: "middle", size: 10) }
            for (t, date) in axis.dates { svg.text(date, x: f.px(t), y: f.bottom + 28, anchor: "middle", size: 10, fill: "#555") }
            let below = axis.dates.isEmpty ? 34.0 : 44
            svg.text(chart.xLabel ?? (daily ? "local day (\(chart.timeZone.identifier))" : "local time (\(chart.timeZone.identifier))"),
                     x: (f.left + f.right) / 2, y: f.bottom + below, anchor: "middle")
        } else {
            for (t, label) in numberTicks(f.x0, f.x1, clock: chart.xClock) {
                svg.line(f.px(t), f.top, f.px(t), f.bottom, stroke: "#f0f0f0")
                svg.text(label, x: f.px(t), y: f.bottom + 16, anchor: "middle", size: 10)
            }
            if let xl = chart.xLabel { svg.text(xl, x: (f.left + f.right) / 2, y: f.bottom + 34, anchor: "middle") }
        }
        frameBox(f, &svg)
        var fits: [String] = []
        for (i, s) in chart.series.enumerated() {
            // Points in time order (a series may have been added to out of order); the sort is stable.
            // NaN x (never drawn) sorts last, keeping the order a strict one.
            let order = chart.kind == .scatter ? Array(s.x.indices) : s.x.indices.sorted { a, b in
                let (xa, xb) = (s.x[a], s.x[b])
                if xa.isNaN || xb.isNaN { return xa.isNaN == xb.isNaN ? a < b : xb.isNaN }
                return (xa, a) < (xb, b)
            }
            let xs = order.map { s.x[$0] }, ys = order.map { s.y[$0] }
            let points = zip(xs, ys).compactMap { x, y in y.flatMap { $0.isFinite && x.isFinite ? (x, $0) : nil } }
            switch chart.kind {
            case .scatter:
                for (x, y) in points { svg.circle(f.px(x), f.py(y), fill: color(i)) }
                if chart.fit, let (a, b, r) = leastSquares(points) {
                    let lo = points.map(\.0).min()!, hi = points.map(\.0).max()!
                    svg.line(f.px(lo), f.py(a + b * lo), f.px(hi), f.py(a + b * hi), stroke: color(i), width: 1.6, dash: true)
                    let sign = b < 0 ? "−" : "+"
                    fits.append("\(s.label.isEmpty ? "fit" : s.label): y = \(ChartNumber.value(a)) \(sign) \(ChartNumber.value(abs(b)))·x, r = \(ChartNumber.label(r, decimals: 2)), n = \(points.count)")
                }
            default:
                // A missing value (nil) breaks the line; so does a gap in time for steps.
                var run: [(Double, Double)] = []
                func flush() {
                    if run.count == 1 { svg.circle(run[0].0, run[0].1, fill: color(i)) } else { svg.path(run, stroke: color(i)) }
                    run = []
                }
                for (k, x) in xs.enumerated() {
                    guard let y = ys[k], y.isFinite, x.isFinite else { flush(); continue }
                    if chart.kind == .step, let last = run.last { run.append((f.px(x), last.1)) }
                    run.append((f.px(x), f.py(y)))
                }
                flush()
            }
        }
        for (k, text) in fits.enumerated() {
            svg.text(text, x: f.right - 4, y: f.top + 14 + Double(k) * 14, anchor: "end", size: 10, fill: color(k))
        }
    }

    /// Intercept, slope and Pearson r of y on x; nil below 3 points or for constant x.
    static func leastSquares(_ p: [(Double, Double)]) -> (Double, Double, Double)? {
        guard p.count >= 3 else { return nil }
        let n = Double(p.count)
        let mx = p.reduce(0) { $0 + $1.0 } / n, my = p.reduce(0) { $0 + $1.1 } / n
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (x, y) in p { sxy += (x - mx) * (y - my); sxx += (x - mx) * (x - mx); syy += (y - my) * (y - my) }
        guard sxx > 0 else { return nil }
        let b = sxy / sxx
        return (my - b * mx, b, syy > 0 ? sxy / (sxx * syy).squareRoot() : 0)
    }

    static func noData(_ f: Frame, _ svg: inout Canvas) {
        frameBox(f, &svg)
        svg.text("no data", x: (f.left + f.right) / 2, y: (f.top + f.bottom) / 2, anchor: "middle", size: 13, fill: "#888")
    }

    // MARK: bars

    static func drawBars(_ chart: Chart, _ svg: inout Canvas) {
        let top = header(chart, legend: legend(chart), &svg)
        var f = Frame()
        f.top = top
        let values = chart.series.flatMap { $0.y.compactMap { $0 } }.filter(\.isFinite)
        guard !values.isEmpty, !chart.categories.isEmpty else { noData(f, &svg); return }
        (f.y0, f.y1) = range(values, includeZero: true)
        f = drawYAxis(f, label: axisTitle(chart.yLabel, unit: chart.unit), &svg)
        let n = chart.categories.count, s = max(chart.series.count, 1)
        let group = (f.right - f.left) / Double(n)
        let bar = group * 0.8 / Double(s)
        let labelEvery = max(1, Int((Double(n) * textWidth(chart.categories.max { $0.count < $1.count } ?? "", size: 10) / (f.right - f.left) + 0.999)))
        for (j, name) in chart.categories.enumerated() {
            let gx = f.left + Double(j) * group
            for (i, series) in chart.series.enumerated() {
                guard j < series.y.count, let v = series.y[j], v.isFinite else { continue }
                let y = f.py(max(v, 0)), zero = f.py(min(max(0, f.y0), f.y1))
                svg.rect(gx + group * 0.1 + Double(i) * bar, min(y, f.py(min(v, 0))), bar, abs(zero - f.py(v)), fill: color(i),
                         title: "\(series.label.isEmpty ? "" : series.label + ", ")\(name): \(ChartNumber.value(v))\(chart.unit.map { " " + $0 } ?? "")")
            }
            if j % labelEvery == 0 { svg.text(name, x: gx + group / 2, y: f.bottom + 16, anchor: "middle", size: 10) }
        }
        if let xl = chart.xLabel { svg.text(xl, x: (f.left + f.right) / 2, y: f.bottom + 34, anchor: "middle") }
        frameBox(f, &svg)
    }

    // MARK: heatmap

    /// A viridis colour for t in [0, 1].
    static func ramp(_ t: Double) -> String {
        let x = min(max(t.isFinite ? t : 0, 0), 1) * Double(ramp.count - 1)
        let i = min(Int(x), ramp.count - 2), u = x - Double(i)
        let a = ramp[i], b = ramp[i + 1]
        func ch(_ p: Double, _ q: Double) -> Int { Int((p + (q - p) * u).rounded()) }
        return String(format: "#%02x%02x%02x", ch(a.0, b.0), ch(a.1, b.1), ch(a.2, b.2))
    }

    static func drawHeatmap(_ chart: Chart, scale: ColourScale, _ svg: inout Canvas) {
        let top = header(chart, legend: [], &svg)
        let left = 96.0, right = width - 20
        let cellH = 16.0
        let transform: (Double) -> Double = chart.logScale ? { log10($0) } : { $0 }
        let (lo, hi) = (scale.lo, scale.hi)
        let cols = max(chart.columns.count, chart.cells.map(\.count).max() ?? 0, 1)
        let cellW = (right - left) / Double(cols)
        for (r, label) in chart.rows.enumerated() {
            let y = top + Double(r) * cellH
            svg.text(label, x: left - 6, y: y + cellH - 4, anchor: "end", size: 10)
            let row = r < chart.cells.count ? chart.cells[r] : []
            for c in 0..<cols {
                let v = c < row.count ? row[c] : nil
                let column = c < chart.columns.count ? chart.columns[c] : String(c)
                if let v, v.isFinite, !(chart.logScale && v <= 0) {
                    let t = hi > lo ? (transform(v) - lo) / (hi - lo) : 0.5
                    svg.rect(left + Double(c) * cellW, y, cellW + 0.3, cellH + 0.3, fill: ramp(t),
                             title: "\(label) \(column): \(ChartNumber.value(v))\(chart.unit.map { " " + $0 } ?? "")")
                } else {
                    svg.rect(left + Double(c) * cellW, y, cellW + 0.3, cellH + 0.3, fill: missing, title: "\(label) \(column): no data")
                }
            }
        }
        let bottom = top + Double(chart.rows.count) * cellH
        let every = max(1, Int((Double(cols) * textWidth(chart.columns.max { $0.count < $1.count } ?? "00", size: 10) * 1.4 / (right - left)).rounded(.up)))
        for c in stride(from: 0, to: cols, by: every) where c < chart.columns.count {
            svg.text(chart.columns[c], x: left + (Double(c) + 0.5) * cellW, y: bottom + 14, anchor: "middle", size: 10)
        }
        if let xl = chart.xLabel { svg.text(xl, x: (left + right) / 2, y: bottom + 30, anchor: "middle") }
        if let yl = chart.yLabel { svg.text(yl, x: 14, y: (top + bottom) / 2, anchor: "middle", rotate: true) }
        // Colour scale: 48 steps from the scale's low end to its high end, labelled ticks
        // under it, then the missing swatch.
        let ly = bottom + 42
        let scaleTitle = (chart.logScale ? "log scale " : "") + (chart.unit.map { "[\($0)]" } ?? "value")
        svg.text(scaleTitle, x: left, y: ly + 10, size: 10)
        let bx = left + textWidth(scaleTitle, size: 10) + 14, barW = 288.0
        for k in 0..<48 { svg.rect(bx + Double(k) * barW / 48, ly, barW / 48 + 0.3, 12, fill: ramp(Double(k) / 47)) }
        for (position, label) in scaleTicks(scale) {
            let x = bx + position * barW
            svg.line(x, ly + 12, x, ly + 16, stroke: "#444")
            svg.text(label, x: x, y: ly + 27, anchor: "middle", size: 10)
        }
        svg.rect(bx + barW + 28, ly, 12, 12, fill: missing)
        svg.text("no data", x: bx + barW + 44, y: ly + 10, size: 10)
        svg.height = ly + 38
    }

    /// Labelled ticks of a colour scale: (position 0…1 along it, label). Linear: nice
    /// numbers. Log: powers of ten, with 2 and 5 times them where the scale spans under two
    /// decades; a scale narrower than its steps gets its two ends.
    static func scaleTicks(_ scale: ColourScale) -> [(Double, String)] {
        let (lo, hi) = (scale.lo, scale.hi)
        guard lo.isFinite, hi.isFinite, hi > lo else { return [(0.5, ChartNumber.value(scale.log ? pow(10, lo) : lo))] }
        func at(_ v: Double) -> Double { (v - lo) / (hi - lo) }
        var out: [(Double, String)] = []
        if scale.log {
            let multiples: [Double] = hi - lo < 2 ? [1, 2, 5] : [1]
            var k = floor(lo)
            while k <= ceil(hi), out.count < 40 {
                for m in multiples {
                    let v = m * pow(10, k), t = log10(v)
                    if t >= lo - 1e-9, t <= hi + 1e-9 { out.append((at(t), ChartNumber.value(v))) }
                }
                k += 1
            }
        } else {
            let (ticks, decimals) = ChartNumber.ticks(lo, hi)
            let unit = ChartNumber.scale(for: ticks, decimals: decimals)
            out = ticks.map { (at($0), ChartNumber.label($0, decimals: decimals, scale: unit)) }
        }
        if out.count < 2 {
            out = [(0, ChartNumber.value(scale.log ? pow(10, lo) : lo)), (1, ChartNumber.value(scale.log ? pow(10, hi) : hi))]
        }
        return out
    }

    // MARK: actogram

    /// Double-plotted: row d shows day d then day d + 1, each as `bins` bars whose height
    /// is the bin's value over the scale's top (the largest value of every panel of the
    /// chart's name); bins without data are shaded.
    static func drawActogram(_ chart: Chart, scale: ColourScale, _ svg: inout Canvas) {
        let top = header(chart, legend: [], &svg) + 4
        let left = 96.0, right = width - 20
        let rowH = 22.0
        let bins = max(chart.cells.map(\.count).max() ?? 0, 1)
        let peak = scale.hi
        let binW = (right - left) / Double(2 * bins)
        for (r, label) in chart.rows.enumerated() {
            let base = top + Double(r + 1) * rowH
            svg.text(label, x: left - 6, y: base - 6, anchor: "end", size: 10)
            for half in 0..<2 {
                let d = r + half
                let row = d < chart.cells.count ? chart.cells[d] : []
                var missingRun: Int? = nil
                func closeMissing(_ end: Int) {
                    if let s = missingRun { svg.rect(left + Double(half * bins + s) * binW, base - rowH + 2, Double(end - s) * binW, rowH - 2, fill: "#f2f2f2") }
                    missingRun = nil
                }
                for b in 0..<bins {
                    let v = b < row.count ? row[b] : nil
                    guard let v, v.isFinite else { if missingRun == nil { missingRun = b }; continue }
                    closeMissing(b)
                    guard v > 0, peak > 0 else { continue }
                    let h = (rowH - 3) * min(v / peak, 1)
                    svg.rect(left + Double(half * bins + b) * binW, base - h, binW + 0.2, h, fill: "#1f3f77")
                }
                closeMissing(bins)
            }
            svg.line(left, base, right, base, stroke: "#bbbbbb", width: 0.6)
        }
        let bottom = top + Double(chart.rows.count) * rowH
        svg.line(left + (right - left) / 2, top, left + (right - left) / 2, bottom, stroke: "#888", width: 0.8, dash: true)
        for h in stride(from: 0, through: 48, by: 6) {
            let x = left + Double(h) / 48 * (right - left)
            svg.line(x, bottom, x, bottom + 4, stroke: "#444")
            svg.text(String(format: "%02d", h % 24 == 0 && h > 0 ? 24 : h % 24), x: x, y: bottom + 16, anchor: "middle", size: 10)
        }
        svg.text(chart.xLabel ?? "local clock time (h), two days per row", x: (left + right) / 2, y: bottom + 32, anchor: "middle")
        let note = "bar height: \(chart.yLabel ?? "value") per bin, full height = \(ChartNumber.value(peak))\(chart.unit.map { " " + $0 } ?? ""); shaded: no data"
        svg.text(note, x: left, y: bottom + 48, size: 10, fill: "#555")
        svg.height = bottom + 60
    }
}
