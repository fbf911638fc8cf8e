import Foundation
import JSONText
import SensorKitModel

/// The HTML run report (`run --out DIR` writes it as DIR/index.html): one self-contained
/// page — inline CSS and SVG, no scripts, no links to fetch — with the study's manifest,
/// a findings banner (how many checks failed, the first few, or "No findings"), the run's
/// settings, the participants, a data-completeness grid (participant × day × sensor, from
/// the data the protocol received), every chart (cohort charts first, per-participant panels
/// on shared colour scales) and every report table.
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
            sensors = r.sensorsInUse.compactMap { s in
                r.usageDetails[s].map { SensorLine(sensor: s.rawValue, entitled: r.isEntitled(s), required: $0.required, detail: $0.detail) }
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
    .banner{padding:8px 12px;margin:12px 0;font-size:14px;border-radius:3px}.banner ul{margin:6px 0 2px;padding-left:20px;font-size:13px}
    .banner.ok{background:#e8f5e9;border:1px solid #8bc34a}.banner.bad{background:#fdecea;border:1px solid #e57373}.banner p{margin:4px 0 0;font-size:13px}
    """

    /// The page as UTF-8 text.
    public func render() -> String {
        let title = study?.title ?? study?.id ?? "Study"
        var html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        html += "<title>\(Self.h(title)) — Sensorium run report</title>\n<style>\n\(Self.style)\n</style>\n</head>\n<body>\n"
        html += "<h1>\(Self.h(title))</h1>\n<p class=\"muted\">Sensorium run report</p>\n"
        html += findingsBanner()
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

    /// How the grid reads a sensor's day: hours with data out of 24 for sensors that write
    /// continuously or in windows of an hour or less; for sensors that write a session a
    /// night or a record per event (sleep, visits, wrist state, …), whether the day holds any.
    enum DayReading { case hoursOf24, presence }

    static func reading(_ sensor: Sensor) -> DayReading {
        guard let period = SensorCatalogue.info(sensor).cadence.nominalPeriod, period <= 3600 else { return .presence }
        return .hoursOf24
    }

    /// Per participant, a table of sensors × study days: every sensor the study declares
    /// (zeros where none arrived) and any other that sent data. A cell reads the day against
    /// the sensor's cadence (`reading(_:)`); a watch sensor of a participant without a watch
    /// is marked as such, not as missing.
    func completenessSection() -> String {
        var html = "<h2 id=\"completeness\">Data completeness</h2>\n"
        html += "<p class=\"muted\">From the samples the protocol received, by the samples' own time, per local study day. "
            + "Sensors that write continuously or in windows (accelerometer, light, usage reports, …): the hours of the day holding data, of 24. "
            + "Sensors that write a session a night or a record per event (sleep, visits, wrist state, …): ✓ when the day holds any, 0 when it holds none. "
            + "Data never fetched, still inside SensorKit's 24-hour hold or past its 7-day retention when fetched counts as missing.</p>\n"
        let declared = study?.sensors.compactMap { Sensor(rawValue: $0.sensor) } ?? []
        for p in book.coverage.participants {
            let grid = book.coverage.grid(for: p, sensors: declared)
            let days = book.coverage.dayLabels(for: p)
            html += "<h3>\(Self.h(p.id))</h3>\n"
            guard !grid.isEmpty else { html += "<p class=\"muted\">no sensors declared, no samples received</p>\n"; continue }
            html += "<table class=\"grid\">\n<tr><th>sensor</th>" + days.map { "<th title=\"\($0)\">\($0.suffix(5))</th>" }.joined() + "</tr>\n"
            for row in grid {
                let info = SensorCatalogue.info(row.sensor)
                let noWatch = !p.watch && info.deviceKinds == [.watch]
                html += "<tr><th title=\"\(Self.h(info.cadence.summary))\">\(row.sensor.rawValue)\(noWatch ? " <span class=\"muted\">(no watch)</span>" : "")</th>"
                for (i, n) in row.perDay.enumerated() {
                    html += Self.gridCell(row.sensor, day: days[i], hours: n, noWatch: noWatch)
                }
                html += "</tr>\n"
            }
            html += "</table>\n"
        }
        return html
    }

    /// One cell of the completeness grid: `hours` of the day holding data.
    static func gridCell(_ sensor: Sensor, day: String, hours n: Int, noWatch: Bool) -> String {
        let name = sensor.rawValue
        if noWatch && n == 0 { return "<td style=\"background:#fafafa;color:#aaa\" title=\"\(name) \(day): no Apple Watch\">·</td>" }
        switch reading(sensor) {
        case .hoursOf24:
            let fill = n == 0 ? "#f6f6f6" : ChartSVG.ramp(0.25 + 0.75 * Double(min(n, 24)) / 24)
            let ink = n == 0 ? "#999" : (n >= 16 ? "#222" : "#fff")
            return "<td style=\"background:\(fill);color:\(ink)\" title=\"\(name) \(day): \(n) of 24 h with data\">\(n)</td>"
        case .presence:
            guard n > 0 else { return "<td style=\"background:#f6f6f6;color:#999\" title=\"\(name) \(day): no records\">0</td>" }
            return "<td style=\"background:\(ChartSVG.ramp(1));color:#222\" title=\"\(name) \(day): records in \(n) h\">✓</td>"
        }
    }

    /// Cohort charts first, then each per-participant chart's panels under one heading,
    /// drawn on one shared colour scale.
    func chartsSection() -> String {
        guard !book.charts.isEmpty else { return "" }
        var html = "<h2 id=\"charts\">Charts</h2>\n"
        let scales = book.sharedScales()
        var heading: String? = nil
        for chart in book.chartsInPageOrder {
            if let panel = chart.panel, panel.name != heading {
                heading = panel.name
                html += "<h3>\(Self.h(panel.name)) <span class=\"muted\">(one panel per participant, one colour scale)</span></h3>\n"
            }
            let file = ReportBook.fileName(chart.name) + ".svg"
            html += "<figure id=\"chart-\(Self.h(ReportBook.fileName(chart.name)))\">\n" + book.svg(chart, scales: scales)
            html += "<figcaption>\(Self.h(file))</figcaption>\n</figure>\n"
        }
        return html
    }

    /// The findings banner: how many checks failed or runs stopped, the first few, and a
    /// link to the findings table; "No findings" when every check held.
    func findingsBanner() -> String {
        guard let table = book.table(ReportBook.findingsTable), !table.rows.isEmpty else {
            return "<div class=\"banner ok\" id=\"findings-banner\"><strong>No findings</strong>: no check failed and no participant's run stopped.</div>\n"
        }
        let rows = table.rows
        let people = Set(rows.map { book.cell(table, $0, "participant") }).count
        let stopped = rows.filter { book.cell(table, $0, "message").hasPrefix(Finding.stoppedRunPrefix) }.count
        var html = "<div class=\"banner bad\" id=\"findings-banner\"><strong>\(rows.count) finding\(rows.count == 1 ? "" : "s")</strong>"
        html += " for \(people) participant\(people == 1 ? "" : "s")"
        if stopped > 0 { html += ", \(stopped) of them a run stopped by an error" }
        html += " — <a href=\"#table-\(Self.h(ReportBook.fileName(ReportBook.findingsTable)))\">the findings table</a>\n<ul>\n"
        for row in rows.prefix(Self.bannerFindings) {
            let location = book.cell(table, row, "location")
            html += "<li><b>\(Self.h(book.cell(table, row, "participant")))</b> \(Self.h(book.cell(table, row, "time")))"
            html += "\(location.isEmpty ? "" : " " + Self.h(location)): \(Self.h(book.cell(table, row, "message")))</li>\n"
        }
        html += "</ul>\n"
        if rows.count > Self.bannerFindings { html += "<p>… and \(rows.count - Self.bannerFindings) more in the table.</p>\n" }
        return html + "</div>\n"
    }

    /// How many findings the banner lists before pointing at the table.
    static let bannerFindings = 5

    func tablesSection() -> String {
        guard !book.tables.isEmpty else { return "" }
        var html = "<h2 id=\"tables\">Report tables</h2>\n"
        for table in book.tables {
            let columns = table.columns
            let file = ReportBook.fileName(table.name)
            html += "<h3 id=\"table-\(Self.h(file))\">\(Self.h(table.name)) <span class=\"muted\">(\(table.rows.count) rows; \(Self.h(file)).csv, \(Self.h(file)).json)</span></h3>\n<table>\n<tr>"
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
