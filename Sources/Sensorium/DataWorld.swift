import Foundation
import LuaHost
import SensorKitModel
import StudyRuntime

/// An embedder's `StudyDataSource` as a cohort plan: its participants, each with a phone
/// (and a watch), over the configuration's span; samples through `DataSampleSource`. Each
/// participant consents as their authorization timeline says at the start (everything when
/// it is empty), later changes are scheduled; sensors with recording spans are recorded in
/// them only, others (like a simulated world) from when the protocol starts recording.
struct DataPlanner: CohortPlanner {
    let data: any StudyDataSource

    func plan(_ options: StudyOptions) throws -> CohortPlan {
        let people = try data.participants()
        var seen = Set<String>()
        for p in people {
            guard !p.id.isEmpty else { throw StudyError("data source: a participant has an empty id") }
            guard seen.insert(p.id).inserted else { throw StudyError("data source: participant '\(p.id)' is listed twice") }
        }
        guard let first = people.first else { throw StudyError("data source: no participants") }
        let zone = try options.timeZone.map { name in
            guard let z = TimeZone(identifier: name) else { throw StudyError("timeZone: unknown time zone '\(name)' (use an IANA name like Europe/Berlin)") }
            return z
        } ?? first.timeZone
        let startText = options.start ?? StudyRunner.defaultStart
        guard let start = LocalTime.parse(startText, zone) else { throw StudyError("start: expected a date like 2026-03-02, got '\(startText)'") }
        let days = options.days ?? StudyRunner.defaultDays
        guard InputLimits.days.contains(Double(days)) else { throw StudyError("days: " + InputLimits.days.refusal(Double(days))) }
        let settings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                   start: start, days: days, seed: options.seed ?? 1, limits: options.limits,
                                   failFast: options.failFast, stdlibFolder: options.stdlibFolder)
        var timelines: [String: DataTimeline] = [:]
        for p in people { timelines[p.id] = try DataTimeline(data, participant: p.id) }
        let world = DataWorld(source: DataSampleSource(data: data, participants: people, timelines: timelines), timelines: timelines)
        let facts = ["Protocol: \(URL(fileURLWithPath: options.protocolPath).lastPathComponent)", "Source: the embedder's data source",
                     "Seed: \(settings.seed)", "Study days: \(days) from \(LocalTime.minuteLabel(start, zone))"]
        let setups = people.map { p in
            ParticipantSetup(id: p.id, timeZone: p.timeZone, consent: timelines[p.id]?.consent(at: start) ?? .allowAll)
        }
        return CohortPlan(settings: settings, setups: setups, world: world, facts: facts, warnings: [])
    }
}

/// The data source's world: stateless, so every worker shares it.
struct DataWorld: CohortWorld, WorkerWorld {
    let source: any SampleSource
    let timelines: [String: DataTimeline]
    func open(fresh: Bool) -> any WorkerWorld { self }
    /// The participant's recording spans enter the ledger (under `DataTimeline.stakeholder`);
    /// the authorization changes after the start come back to be scheduled.
    func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange] {
        guard let timeline = timelines[id] else { return [] }
        for (sensor, spans) in timeline.recording.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            for span in spans { model.recording.addInterval(sensor, by: DataTimeline.stakeholder, after: span.after, through: span.through) }
        }
        let now = model.now
        return timeline.authorization.filter { $0.at > now }
    }
}

/// One participant's authorization and recording timelines from a data source, checked.
struct DataTimeline: Sendable {
    /// Who keeps a sensor recording in the data source's recording spans.
    static let stakeholder = Stakeholder.other("recording")
    /// The changes in time order (a stable sort: equal times keep the source's order).
    var authorization: [AuthorizationChange] = []
    /// Each named sensor's spans, (after, through].
    var recording: [Sensor: [(after: Double, through: Double)]] = [:]

    /// Reads and checks participant `id`'s timelines; throws `StudyError` naming the
    /// participant, the entry and what was expected.
    init(_ data: any StudyDataSource, participant id: String) throws {
        let changes = try data.authorization(participant: id)
        for (n, c) in changes.enumerated() {
            let sensor = try DataTimeline.sensor(c.sensor, "authorization", n, id)
            guard c.time.isFinite else { throw StudyError("data source: participant \(id), authorization #\(n + 1) (\(c.sensor)): expected a finite time, got \(c.time)") }
            authorization.append(AuthorizationChange(sensor: sensor, at: c.time, status: c.authorized ? .authorized : .denied))
        }
        authorization = authorization.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        for (n, span) in try data.recording(participant: id).enumerated() {
            let sensor = try DataTimeline.sensor(span.sensor, "recording", n, id)
            guard span.after.isFinite, span.through.isFinite, span.after < span.through else {
                throw StudyError("data source: participant \(id), recording #\(n + 1) (\(span.sensor)): expected finite times with after < through, got (\(span.after), \(span.through)]")
            }
            recording[sensor, default: []].append((span.after, span.through))
        }
    }

    /// Whether a sample of `sensor` written at `written` was recorded: always for a sensor
    /// without spans, else when a span holds it.
    func recorded(_ sensor: Sensor, written: Double) -> Bool {
        guard let spans = recording[sensor] else { return true }
        return spans.contains { written > $0.after && written <= $0.through }
    }

    /// How the participant answers the consent sheet: each sensor's status as of `time`
    /// (authorized → allow, denied → deny); sensors without a change by then are allowed.
    func consent(at time: Double) -> ConsentPolicy {
        var policy = ConsentPolicy(default: .allow)
        for change in authorization where change.at <= time {
            policy.answers[change.sensor] = change.status == .denied ? .deny : .allow
        }
        return policy
    }

    /// The sensor named `name` in entry `n` of a timeline, or the error naming it.
    static func sensor(_ name: String, _ timeline: String, _ n: Int, _ id: String) throws -> Sensor {
        guard let sensor = Sensor(rawValue: name) else {
            throw StudyError("data source: participant \(id), \(timeline) #\(n + 1): unknown sensor '\(name)'\(SensorCatalogue.sensorHint(for: name))")
        }
        return sensor
    }
}

/// A `StudyDataSource` as the model's `SampleSource`: devices from the participants, rows
/// checked against the sensor's schema and put into columns.
struct DataSampleSource: SampleSource {
    let data: any StudyDataSource
    let watches: [String: Bool]
    /// Samples written outside a sensor's recording spans are left out.
    let timelines: [String: DataTimeline]

    init(data: any StudyDataSource, participants: [StudyParticipant], timelines: [String: DataTimeline] = [:]) {
        self.data = data
        watches = Dictionary(participants.map { ($0.id, $0.hasWatch) }, uniquingKeysWith: { a, _ in a })
        self.timelines = timelines
    }

    func devices(participant: String) -> [SRDevice] {
        watches[participant] == true ? [.defaultPhone, .defaultWatch] : [.defaultPhone]
    }

    func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double) throws -> SampleBatch {
        let kind: StudyDevice = device.kind == .watch ? .watch : .phone
        let supplied: [Sample]
        do {
            supplied = try data.samples(of: sensor.rawValue, participant: participant, device: kind, writtenAfter: after, through: through)
        } catch {
            throw DataSourceError(message: "participant \(participant), \(sensor.rawValue) on the \(kind.rawValue): the data source failed: \(error)")
        }
        let timeline = timelines[participant]
        let rows = supplied
            .filter { $0.written > after && $0.written <= through && timeline?.recorded(sensor, written: $0.written) != false }
            .enumerated().sorted { ($0.element.written, $0.element.time, $0.offset) < ($1.element.written, $1.element.time, $1.offset) }
            .map(\.element)
        return try SampleColumns.batch(rows, sensor: sensor, participant: participant)
    }
}

/// Embedder rows into a `SampleBatch` in the sensor's schema order.
enum SampleColumns {
    /// Throws `DataSourceError` naming participant, sensor, field and what was expected.
    static func batch(_ rows: [Sample], sensor: Sensor, participant: String) throws -> SampleBatch {
        let fields = sensor.info.columnFields
        let known = Set(fields.map(\.name))
        for row in rows {
            if let extra = row.fields.keys.sorted().first(where: { !known.contains($0) }) {
                throw DataSourceError(message: "participant \(participant), \(sensor.rawValue): unknown field '\(extra)'"
                                      + Suggestions.didYouMean(Suggestions.closest(to: extra, among: Array(known)))
                                      + " (fields: \(fields.map(\.name).joined(separator: ", ")))")
            }
        }
        var columns: [Column] = []
        for field in fields {
            columns.append(try column(field, rows: rows, sensor: sensor, participant: participant))
        }
        return SampleBatch(sensor: sensor, writeTimes: rows.map(\.written), times: rows.map(\.time), columns: columns)
    }

    static func column(_ field: FieldSchema, rows: [Sample], sensor: Sensor, participant: String) throws -> Column {
        var present = [Bool](repeating: true, count: rows.count)
        func problem(_ what: String) -> DataSourceError {
            DataSourceError(message: "participant \(participant), \(sensor.rawValue).\(field.name): \(what)")
        }
        func values<T>(_ zero: T, _ convert: (SampleValue) -> T?) throws -> [T] {
            try rows.enumerated().map { i, row in
                guard let v = row.fields[field.name] else {
                    guard field.isOptional else { throw problem("missing in the sample written at \(NumberText.plain(row.written)) (a \(field.type.kindName) is required)") }
                    present[i] = false
                    return zero
                }
                guard let t = convert(v) else { throw problem("expected a \(field.type.kindName)\(allowed(field.type)), got \(v)") }
                return t
            }
        }
        let data: ColumnData
        switch field.type.columnKind {
        case .double:
            data = .double(try values(0.0) { v in
                switch v { case .number(let d): d; case .integer(let i): Double(i); default: nil }
            })
        case .int:
            data = .int(try values(Int64(0)) { v in
                switch v {
                case .integer(let i): field.type.namedValues.isEmpty || field.type.accepts(raw: i) ? i : nil
                case .number(let d): Int64(exactly: d)
                case .text(let name): field.type.rawValue(forName: name)
                case .flag: nil
                }
            })
        case .bool:
            data = .bool(try values(false) { if case .flag(let b) = $0 { b } else { nil } })
        case .string:
            data = .string(try values("") { if case .text(let s) = $0 { s } else { nil } })
        case .value:
            throw problem("a structured field, which a StudyDataSource cannot supply yet")
        }
        return Column(name: field.name, data: data, present: present.allSatisfy { $0 } ? nil : present)
    }

    /// " (one of low, medium, …)" for an enumeration; "" otherwise.
    static func allowed(_ type: FieldType) -> String {
        if case .enumeration = type { return " (one of \(type.namedValues.map(\.name).joined(separator: ", ")))" }
        return ""
    }
}

/// A data source's sample that does not fit its sensor's schema: the participant's run stops
/// with this message (the protocol cannot catch it, as for a store that cannot be read).
struct DataSourceError: Error, LuaUncatchableError, CustomStringConvertible {
    var message: String
    var description: String { message }
}
