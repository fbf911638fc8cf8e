import Foundation
import JSONText
import SensorKitModel

/// The HTML run report (`run --out DIR` writes it as DIR/index.html): one self-contained
/// page — inline CSS and SVG, no scripts, no links to fetch — with the study's manifest,
/// the run's settings, the participants, a data-completeness grid (participant × day ×
/// sensor, from the data the protocol received), every chart and every report table.
///
/// The page holds nothing that changes between runs of the same protocol, scenario and
/// seed (no clock time, no paths outside the run), so goldens can hold it.
public struct RunReportPage {
    /// What the page says about the study and the run besides the report book (kept in
    /// shard files, so that `sensorium merge` writes the page one process would have).
    public struct Facts: Sendable, Codable, Equatable {
        public var study: StudySummary?
        /// One line per run setting ("Source: simulated world", "Seed: 1", …).
        public var settings: [String]
        public var warnings: [String]
        public init(study: StudySummary?, settings: [String], warnings: [String]) {
            self.study = study
            self.settings = settings
            self.warnings = warnings
        }
    }

    /// The study's manifest as the page shows it.
    public struct StudySummary: Sendable, Codable, Equatable {
        public struct SensorLine: Sendable, Codable, Equatable {
            public var sensor: String
            public var entitled: Bool
            public var required: Bool
            public var detail: String
        }
        public var id, title, purpose, privacyPolicy: String?
        public var sensors: [SensorLine]

        public init(_ r: ResolvedStudy) {
            id = r.id
            title = r.title
            purpose = r.usageDescription
            privacyPolicy = r.privacyPolicyURL
            sensors = r.usageDetails.keys.sorted { $0.rawValue < $1.rawValue }.map {
                SensorLine(sensor: $0.rawValue, entitled: r.isEntitled($0), required: r.usageDetails[$0]!.required, detail: r.usageDetails[$0]!.detail)
            }
        }
    }

    public var book: ReportBook
    public var facts: Facts
    var study: StudySummary? { facts.study }
    var settings: [String] { facts.settings }
    var warnings: [String] { facts.warnings }

    public init(book: ReportBook, facts: Facts) {
        self.book = book
        self.facts = facts
    }

    static func h(_ s: String) -> String { MarkupText.escape(s) }

    static let style = """
    body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
    h1{font-size:24px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
    h3{font-size:15px;margin:18px 0 6px}
    table{border-collapse:collapse;font-size:12px;margin:6px 0 12px}th,td{border:1px solid #ddd;padding:3px 7px}
    th{background:#f3f3f3;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
    table.grid td{min-width:30px;text-align:center;padding:3px 2px;font-size:11px}table.grid th{font-size:11px;padding:3px 4px;white-space:nowrap}
    figure{margin:12px 0 24px}figcaption{font-size:12px;color:#555}
    .warn{background:#fff4e0;border:1px solid #f0c070;padding:6px 10px;font-size:13px}
    .muted{color:#666;font-size:13px}dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:14px}
    dt{font-weight:bold}dd{margin:0}
    """

    /// The page as UTF-8 text.
    public func render() -> String {
        let title = study?.title ?? study?.id ?? "Study"
        var html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        html += "<title>\(Self.h(title)) — Sensorium run report</title>\n<style>\n\(Self.style)\n</style>\n</head>\n<body>\n"
        html += "<h1>\(Self.h(title))</h1>\n<p class=\"muted\">Sensorium run report</p>\n"
        for w in warnings { html += "<p class=\"warn\">warning: \(Self.h(w))</p>\n" }
        html += manifestSection() + participantsSection() + completenessSection() + chartsSection() + tablesSection()
        return html + "</body>\n</html>\n"
    }

    func manifestSection() -> String {
        var html = "<h2 id=\"study\">Study</h2>\n<dl>\n"
        func item(_ k: String, _ v: String?) { if let v { html += "<dt>\(Self.h(k))</dt><dd>\(Self.h(v))</dd>\n" } }
        item("Identifier", study?.id)
        item("Purpose", study?.purpose)
        item("Privacy policy", study?.privacyPolicy)
        for s in settings { if let i = s.firstIndex(of: ":") { item(String(s[..<i]), String(s[s.index(after: i)...]).trimmingCharacters(in: .whitespaces)) } }
        html += "</dl>\n"
        guard let study, !study.sensors.isEmpty else { return html }
        html += "<h3>Sensors</h3>\n<table>\n<tr><th>sensor</th><th>entitled</th><th>required</th><th>why the study reads it</th></tr>\n"
        for line in study.sensors {
            html += "<tr><td>\(Self.h(line.sensor))</td><td>\(line.entitled ? "yes" : "no")</td><td>\(line.required ? "yes" : "no")</td><td>\(Self.h(line.detail))</td></tr>\n"
        }
        return html + "</table>\n"
    }

    func participantsSection() -> String {
        let people = book.coverage.participants
        var html = "<h2 id=\"participants\">Participants (\(people.count))</h2>\n<table>\n<tr><th>participant</th><th>time zone</th><th>Apple Watch</th></tr>\n"
        for p in people { html += "<tr><td>\(Self.h(p.id))</td><td>\(Self.h(p.timeZone.identifier))</td><td>\(p.watch ? "yes" : "no")</td></tr>\n" }
        return html + "</table>\n"
    }

    /// Per participant, a table of sensors × study days; each cell the hours of that local
    /// day holding data the protocol received, shaded by the share of the day's hours.
    func completenessSection() -> String {
        var html = "<h2 id=\"completeness\">Data completeness</h2>\n"
        html += "<p class=\"muted\">Hours of each local study day holding samples the protocol received (by the samples' own time). Data never fetched, still inside SensorKit's 24-hour hold or past its 7-day retention when fetched counts as missing.</p>\n"
        for p in book.coverage.participants {
            let grid = book.coverage.grid(for: p)
            let days = book.coverage.dayLabels(for: p)
            html += "<h3>\(Self.h(p.id))</h3>\n"
            guard !grid.isEmpty else { html += "<p class=\"muted\">no samples received</p>\n"; continue }
            html += "<table class=\"grid\">\n<tr><th>sensor</th>" + days.map { "<th title=\"\($0)\">\($0.suffix(5))</th>" }.joined() + "</tr>\n"
            for row in grid {
                html += "<tr><th>\(row.sensor.rawValue)</th>"
                for (i, n) in row.perDay.enumerated() {
                    let fill = n == 0 ? "#f6f6f6" : ChartSVG.ramp(0.25 + 0.75 * Double(min(n, 24)) / 24)
                    let ink = n == 0 ? "#999" : (n >= 16 ? "#222" : "#fff")
                    html += "<td style=\"background:\(fill);color:\(ink)\" title=\"\(row.sensor.rawValue) \(days[i]): \(n) h\">\(n)</td>"
                }
                html += "</tr>\n"
            }
            html += "</table>\n"
        }
        return html
    }

    func chartsSection() -> String {
        guard !book.charts.isEmpty else { return "" }
        var html = "<h2 id=\"charts\">Charts</h2>\n"
        for chart in book.charts {
            let file = ReportBook.fileName(chart.name) + ".svg"
            html += "<figure id=\"chart-\(Self.h(ReportBook.fileName(chart.name)))\">\n" + ChartSVG.render(chart)
            html += "<figcaption>\(Self.h(file))</figcaption>\n</figure>\n"
        }
        return html
    }

    func tablesSection() -> String {
        guard !book.tables.isEmpty else { return "" }
        var html = "<h2 id=\"tables\">Report tables</h2>\n"
        for table in book.tables {
            let columns = table.columns
            let file = ReportBook.fileName(table.name)
            html += "<h3>\(Self.h(table.name)) <span class=\"muted\">(\(table.rows.count) rows; \(Self.h(file)).csv, \(Self.h(file)).json)</span></h3>\n<table>\n<tr>"
            html += columns.map { "<th>\(Self.h($0))</th>" }.joined() + "</tr>\n"
            for row in table.rows {
                html += "<tr>"
                for c in columns {
                    let v = row[c] ?? .null
                    let numeric: Bool
                    switch v { case .int, .double: numeric = true; default: numeric = false }
                    html += "<td\(numeric ? " class=\"n\"" : "")>\(Self.h(book.cell(table, row, c)))</td>"
                }
                html += "</tr>\n"
            }
            html += "</table>\n"
        }
        return html
    }
}
