import Foundation
import SensorKitModel

extension ReportBook {
    /// Adds a chart, or its series to the chart of the same name already drawn (points of a
    /// series whose label the chart already has join that series).
    /// Throws `ReportError` when the name is unusable, names a chart of another kind,
    /// or bars name other categories than the chart already has.
    public func addChart(_ chart: Chart) throws {
        guard !chart.name.isEmpty, chart.name.utf8.count <= ReportBook.maxNameBytes else {
            throw ReportError(message: "chart names must be 1 to \(ReportBook.maxNameBytes) bytes long, got \(chart.name.utf8.count)")
        }
        let file = ReportBook.fileName(chart.name).lowercased()
        guard let i = charts.firstIndex(where: { ReportBook.fileName($0.name).lowercased() == file }) else {
            charts.append(chart)
            return
        }
        let old = charts[i]
        guard old.name == chart.name else {
            throw ReportError(message: "charts '\(old.name)' and '\(chart.name)' would both be written to \(ReportBook.fileName(chart.name)).svg; rename one")
        }
        guard old.kind == chart.kind else {
            throw ReportError(message: "chart '\(chart.name)' is a \(old.kind.rawValue) chart; a \(chart.kind.rawValue) chart needs another name")
        }
        guard chart.collectsSeries else {
            throw ReportError(message: "chart '\(chart.name)' was already drawn; a \(chart.kind.rawValue) is drawn once (per participant)")
        }
        guard old.kind != .bars || old.categories == chart.categories else {
            throw ReportError(message: "bar chart '\(chart.name)' has categories \(old.categories.joined(separator: ", ")); every series needs the same")
        }
        for series in chart.series {
            guard let k = charts[i].series.firstIndex(where: { $0.label == series.label }) else {
                charts[i].series.append(series)
                continue
            }
            // The same series again (a participant adding a day at a time): its points join the series.
            guard old.kind != .bars else {
                throw ReportError(message: "bar chart '\(chart.name)' already has a series '\(series.label)'; give each call its own label")
            }
            charts[i].series[k].x += series.x
            charts[i].series[k].y += series.y
        }
    }
}

extension ReportBook {
    /// The charts in the order the page shows them: cohort charts (one picture for every
    /// participant) first, in the order drawn, then the per-participant panels grouped by
    /// the name the protocol gave them (names in the order first drawn, each name's panels
    /// in the order drawn).
    public var chartsInPageOrder: [Chart] {
        let cohort = charts.filter { $0.panel == nil }
        var names: [String] = []
        var panels: [String: [Chart]] = [:]
        for chart in charts {
            guard let panel = chart.panel else { continue }
            if panels[panel.name] == nil { names.append(panel.name) }
            panels[panel.name, default: []].append(chart)
        }
        return cohort + names.flatMap { panels[$0]! }
    }

    /// The colour (or bar) scale each per-participant chart name shares across its panels.
    public func sharedScales() -> [String: ChartSVG.ColourScale] {
        var panels: [String: [Chart]] = [:]
        for chart in charts { if let panel = chart.panel { panels[panel.name, default: []].append(chart) } }
        return panels.mapValues { ChartSVG.colourScale(of: $0) }
    }

    /// `chart` as SVG, a panel drawn on its name's shared scale (`sharedScales()`).
    public func svg(_ chart: Chart, scales: [String: ChartSVG.ColourScale]) -> String {
        ChartSVG.render(chart, scale: chart.panel.flatMap { scales[$0.name] })
    }
}

/// Who took part in a run and which hours hold data the protocol received, per
/// participant and sensor (by the samples' own time, as fetched). The HTML run
/// report draws it as the data-completeness grid.
public struct DataCoverage: Sendable, Codable {
    public struct Participant: Sendable, Codable {
        public var id: String
        public var timeZone: TimeZone
        public var watch: Bool
    }
    public private(set) var participants: [Participant] = []
    /// participant → sensor → hours since 1970 (UTC) holding at least one received sample.
    public private(set) var hours: [String: [Sensor: Set<Int64>]] = [:]
    /// Study start (true time) and length in days, for the grid's columns.
    public var start: Double = 0
    public var days: Int = 0

    public init() {}

    enum CodingKeys: String, CodingKey { case participants, hours, start, days }

    /// Hours are written as sorted lists per participant and sensor name (same bytes every run).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(participants, forKey: .participants)
        try c.encode(start, forKey: .start)
        try c.encode(days, forKey: .days)
        try c.encode(hours.mapValues { sensors in
            Dictionary(uniqueKeysWithValues: sensors.map { ($0.key.rawValue, $0.value.sorted()) })
        }, forKey: .hours)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        participants = try c.decode([Participant].self, forKey: .participants)
        start = try c.decode(Double.self, forKey: .start)
        days = try c.decode(Int.self, forKey: .days)
        for (id, sensors) in try c.decode([String: [String: [Int64]]].self, forKey: .hours) {
            for (name, list) in sensors {
                guard let sensor = Sensor(rawValue: name) else {
                    throw DecodingError.dataCorruptedError(forKey: .hours, in: c, debugDescription: "unknown sensor '\(name)'")
                }
                hours[id, default: [:]][sensor] = Set(list)
            }
        }
    }

    package mutating func addParticipant(_ id: String, timeZone: TimeZone, watch: Bool) {
        guard !participants.contains(where: { $0.id == id }) else { return }
        participants.append(Participant(id: id, timeZone: timeZone, watch: watch))
    }

    /// Adds another run's participants and hours (a worker's report joining the run's).
    mutating func merge(_ other: DataCoverage) {
        if participants.isEmpty { start = other.start; days = other.days }
        for p in other.participants { addParticipant(p.id, timeZone: p.timeZone, watch: p.watch) }
        for (id, sensors) in other.hours {
            for (sensor, set) in sensors { hours[id, default: [:]][sensor, default: []].formUnion(set) }
        }
    }

    /// Notes the hours of `batch`'s sample times for `participant` (idempotent): the set gets
    /// ⌊t / 3600⌋ of every finite time t (times beyond Int64 hours are left out). Runs of times inside the hour last inserted are
    /// skipped with two comparisons (the hour's last second still goes the long way, so the
    /// skip never depends on how t / 3600 rounds there).
    package mutating func note(_ batch: SampleBatch, participant: String) {
        guard batch.count > 0 else { return }
        var byParticipant = hours.removeValue(forKey: participant) ?? [:]
        var set = byParticipant.removeValue(forKey: batch.sensor) ?? []
        var lo = Double.infinity, hi = -Double.infinity
        batch.times.withUnsafeBufferPointer { times in
            for t in times where !(t >= lo && t < hi) {
                let h = (t / 3600).rounded(.down)
                guard let hour = Int64(exactly: h) else { continue }    // not finite, or beyond any clock
                set.insert(hour)
                lo = h * 3600
                hi = lo + 3599
            }
        }
        byParticipant[batch.sensor] = set
        hours[participant] = byParticipant
    }

    /// Hours of each local day of the study holding data, for every sensor of `sensors` (zeros
    /// where `p` has none) and every other sensor `p` has data of, in catalogue order.
    public func grid(for p: Participant, sensors: [Sensor]) -> [(sensor: Sensor, perDay: [Int])] {
        let calendar = LocalTime.calendar(p.timeZone)
        let first = calendar.startOfDay(for: Date(timeIntervalSince1970: start))
        let starts = (0...days).map { calendar.date(byAdding: .day, value: $0, to: first)!.timeIntervalSince1970 }
        let mine = hours[p.id] ?? [:]
        return Sensor.allCases.compactMap { sensor in
            guard sensors.contains(sensor) || mine[sensor] != nil else { return nil }
            var counts = Array(repeating: 0, count: days)
            for h in mine[sensor] ?? [] {
                let t = Double(h) * 3600
                guard t >= starts[0], t < starts[days] else { continue }
                var lo = 0, hi = days               // the day whose [start, next start) holds t
                while hi - lo > 1 { let mid = (lo + hi) / 2; if starts[mid] <= t { lo = mid } else { hi = mid } }
                counts[lo] += 1
            }
            return (sensor, counts)
        }
    }

    /// The study's local days for `p` ("2026-03-02", …).
    public func dayLabels(for p: Participant) -> [String] {
        let calendar = LocalTime.calendar(p.timeZone)
        let first = calendar.startOfDay(for: Date(timeIntervalSince1970: start))
        return (0..<days).map {
            LocalTime.dayLabel(calendar.date(byAdding: .day, value: $0, to: first)!.timeIntervalSince1970, p.timeZone)
        }
    }
}
