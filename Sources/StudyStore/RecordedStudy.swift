import Foundation
import SensorKitModel

/// Everything a run needs to replay a recorded study under the same rules as a simulation:
/// the `SampleSource`, the participants with their time zones and devices, the span the
/// virtual clock should cover, and per participant the recorded recording intervals,
/// authorization timeline and deletion records (applied to a `ParticipantModel` by
/// `prepare(_:participant:)`).
public struct RecordedStudy: Sendable {
    /// A participant as the replay sees them.
    public struct Participant: Sendable {
        public var id: String
        public var timeZone: TimeZone
        /// False when the input did not say (UTC was assumed).
        public var timeZoneKnown: Bool
        /// Devices from the data, phone first.
        public var devices: [SRDevice]
        public var recording: [RecordingInterval]
        public var authorization: [AuthorizationChange]
        public var deletions: [DeletionEvent]
        /// Sensors with stored samples (on any device).
        public var sensors: [Sensor]
    }

    public let source: RecordedSource
    public let participants: [Participant]
    /// Write-time span of the samples (Unix seconds); nil for a store without samples.
    public let dataSpan: TimeRange?
    /// Things the user should be told before the run (unknown authorization, unknown time zone…).
    public let warnings: [String]
    /// True when the input declared the span it covers (a native export); the clock then
    /// covers exactly that span, like the simulation it came from.
    public let spanDeclared: Bool

    /// The stakeholder under which recorded intervals enter the recording ledger.
    public static let recordedStakeholder = Stakeholder.other("recording")

    /// Opens the store at `path`; `participant` keeps only that participant.
    public init(path: String, participant: String? = nil) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ImportError(file: path, "no such recorded study (make one with `sensorium import … --into \(path)`)")
        }
        try self.init(store: try RecordedStore(path: path, readOnly: true), participant: participant)
    }

    public init(store: RecordedStore, participant: String? = nil) throws {
        let source = try store.source()
        self.source = source
        var people: [Participant] = []
        var warnings: [String] = []
        for p in source.participants {
            if let only = participant, only != p.id { continue }
            let devices = source.devices(participant: p.id)
            var sensors = Set<Sensor>()
            for d in devices { sensors.formUnion(source.sensors(participant: p.id, device: d)) }
            let zone = TimeZone(identifier: p.timeZone) ?? TimeZone(identifier: "UTC")!
            if !p.timeZoneKnown { warnings.append("participant '\(p.id)': time zone unknown, UTC assumed") }
            let auth = source.authorizationTimeline(participant: p.id)
            if auth.isEmpty && !sensors.isEmpty {
                warnings.append("participant '\(p.id)': authorization unknown (the recording has no timeline): treated as authorized for \(sensors.sorted().map(\.rawValue).joined(separator: ", "))")
            }
            people.append(Participant(id: p.id, timeZone: zone, timeZoneKnown: p.timeZoneKnown, devices: devices,
                                      recording: source.recordingIntervals(participant: p.id), authorization: auth,
                                      deletions: source.deletions(participant: p.id), sensors: sensors.sorted()))
        }
        if let only = participant, people.isEmpty {
            throw ImportError(file: store.path, "no participant '\(only)' (participants: \(source.participants.map(\.id).joined(separator: ", ")))")
        }
        participants = people
        self.warnings = warnings
        if let s = source.meta("spanStart").flatMap(Double.init), let e = source.meta("spanEnd").flatMap(Double.init) {
            dataSpan = TimeRange(after: s, through: max(e, source.dataSpan?.through ?? e))
            spanDeclared = true
        } else {
            dataSpan = source.dataSpan
            spanDeclared = false
        }
    }

    public func participant(_ id: String) -> Participant? { participants.first { $0.id == id } }

    /// The virtual clock's start: a declared span's start (an export starts at its
    /// simulation's start), else local midnight (in `zone`) of the day the recording starts.
    public func start(in zone: TimeZone) -> Double? {
        guard let span = dataSpan else { return nil }
        if spanDeclared { return span.after }
        return LocalTime.startOfDay(span.after.isFinite ? span.after : 0, zone)
    }

    /// Whole days from `start(in:)`: a declared span exactly (as its simulation ran);
    /// otherwise the days the recording touches, then `hold` seconds (rounded up to whole
    /// days) for its last day to pass the holding period, then one day more, so that a daily
    /// schedule (the morning after the day is released) sees the last day complete.
    public func days(in zone: TimeZone, hold: Double = 86_400) -> Int? {
        guard let span = dataSpan, let s = start(in: zone) else { return nil }
        if spanDeclared { return max(1, Int(((span.through - s) / 86_400 - 1e-9).rounded(.up))) }
        let recorded = max(1, Int(((span.through - s) / 86_400 - 1e-9).rounded(.up)))
        let held = Int((max(0, hold) / 86_400 - 1e-9).rounded(.up))
        return recorded + held + 1
    }

    /// How the participant answers the consent sheet when the protocol asks: the recorded
    /// status of each sensor as of `time` (authorized → allow, denied → deny); sensors the
    /// timeline does not name (or no timeline at all: warned) are allowed. The replay then
    /// goes through the same `requestAuthorization` path as a simulation.
    public func consentPolicy(participant id: String, at time: Double) -> ConsentPolicy {
        var policy = ConsentPolicy(default: .allow)
        guard let p = participant(id) else { return policy }
        for s in Set(p.authorization.map(\.sensor)) {
            switch RecordedStudy.status(s, at: time, timeline: p.authorization) {
            case .denied?: policy.answers[s] = .deny
            case .authorized?: policy.answers[s] = .allow
            default: break
            }
        }
        return policy
    }

    /// Authorization at `time` from the recorded timeline (nil: nothing recorded for the sensor by then).
    public static func status(_ sensor: Sensor, at time: Double, timeline: [AuthorizationChange]) -> SRAuthorizationStatus? {
        timeline.last { $0.sensor == sensor && $0.at <= time }?.status
    }

    /// Puts the recorded world into `model` (whose clock is at the run's start):
    /// - recording intervals enter the ledger under `recordedStakeholder` (a sensor with data
    ///   but no recorded interval is taken as recorded over its data span);
    /// - deletion records enter the deletion log (each applies from its own time on).
    /// Authorization as of the start is the consent policy (`consentPolicy(participant:at:)`):
    /// the protocol's own `requestAuthorization` gets it. Returns the recorded authorization
    /// changes after the start, for the runtime to schedule (`model.authorization.setStatus`
    /// at `at`, then notify the readers), as it does a scenario's revocations.
    public func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange] {
        guard let p = participant(id) else { return [] }
        let lag = model.switches.watchSyncLag
        var covered = Set<Sensor>()
        for r in p.recording {
            model.recording.addInterval(r.sensor, by: RecordedStudy.recordedStakeholder, after: r.after, through: r.through)
            covered.insert(r.sensor)
        }
        if let span = dataSpan {
            for s in p.sensors where !covered.contains(s) {
                model.recording.addInterval(s, by: RecordedStudy.recordedStakeholder, after: span.after - lag - 1, through: span.through)
            }
        }
        for d in p.deletions { model.deletions.add(d) }
        let now = model.now
        return p.authorization.filter { $0.at > now }
    }
}
