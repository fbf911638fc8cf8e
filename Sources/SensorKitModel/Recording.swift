/// Who keeps a sensor recording (contract §6.2 item 3): the study app, or another app / the
/// system process named by the scenario.
public enum Stakeholder: Sendable, Hashable, Comparable, CustomStringConvertible {
    case studyApp
    /// `"system"` or another app's bundle identifier.
    case other(String)

    public static let system = Stakeholder.other("system")

    public static func < (a: Stakeholder, b: Stakeholder) -> Bool { a.sortKey < b.sortKey }
    private var sortKey: String {
        switch self {
        case .studyApp: "0"
        case .other(let n): "1" + n
        }
    }

    public var description: String {
        switch self {
        case .studyApp: "studyApp"
        case .other(let n): n
        }
    }
}

/// What `startRecording()` / `stopRecording()` report (contract §6.1, §6.3).
public enum RecordingOutcome: Sendable, Hashable {
    /// `sensorReaderWillStartRecording(_:)`.
    case willStart
    /// `sensorReaderDidStopRecording(_:)`.
    case didStop
    /// `startRecordingFailedWithError` / `stopRecordingFailedWithError`.
    case failed(SensorKitError)
    /// No callback at all (catalyst / visionOS, or a tombstone-stream reader).
    case ignored
}

/// Recording stakeholders per sensor over time (contract §6).
///
/// A sensor records while at least one stakeholder is in RECORDING; data exist only
/// for write times inside those intervals (on the source device's write axis, before
/// watch sync lag). Recording covers the phone and the paired watch (contract §6.2 item 2).
/// Times are true time (Unix seconds); intervals are half-open `(start, stop]`.
public struct RecordingLedger: Sendable, Hashable {
    private struct Span: Sendable, Hashable {
        var start: Double
        var stop: Double?
    }

    private var spans: [Sensor: [Stakeholder: [Span]]] = [:]

    public init() {}

    /// Makes `stakeholder` record `sensor` from `time` on. Idempotent: returns false
    /// (and changes nothing) when it already records.
    @discardableResult
    public mutating func begin(_ sensor: Sensor, by stakeholder: Stakeholder, at time: Double) -> Bool {
        if isRecording(sensor, by: stakeholder, at: time) { return false }
        spans[sensor, default: [:]][stakeholder, default: []].append(Span(start: time, stop: nil))
        return true
    }

    /// Ends `stakeholder`'s recording of `sensor` at `time`. Idempotent: false when it was not recording.
    @discardableResult
    public mutating func end(_ sensor: Sensor, by stakeholder: Stakeholder, at time: Double) -> Bool {
        guard var list = spans[sensor]?[stakeholder] else { return false }
        var changed = false
        for i in list.indices where list[i].start <= time && (list[i].stop ?? .infinity) > time {
            list[i].stop = time
            changed = true
        }
        spans[sensor, default: [:]][stakeholder] = list
        return changed
    }

    /// Schedules a whole recording interval `(after, through]` for `stakeholder` (scenario set-up,
    /// e.g. "the system records accelerometer for days 0–14").
    public mutating func addInterval(_ sensor: Sensor, by stakeholder: Stakeholder, after: Double, through: Double) {
        guard through > after else { return }
        var list = spans[sensor, default: [:]][stakeholder, default: []]
        list.append(Span(start: after, stop: through))
        list.sort { $0.start < $1.start }
        spans[sensor, default: [:]][stakeholder] = list
    }

    /// True when `stakeholder` records `sensor` at `time` (from its `begin` up to, not including, its `end`).
    public func isRecording(_ sensor: Sensor, by stakeholder: Stakeholder, at time: Double) -> Bool {
        (spans[sensor]?[stakeholder] ?? []).contains { $0.start <= time && (($0.stop ?? .infinity) > time) }
    }

    /// The stakeholders recording `sensor` at `time`, sorted (study app first).
    public func stakeholders(_ sensor: Sensor, at time: Double) -> [Stakeholder] {
        (spans[sensor] ?? [:]).keys.filter { isRecording(sensor, by: $0, at: time) }.sorted()
    }

    /// True when anyone records `sensor` at `time` (the sensor is ACTIVE, contract §6.3).
    public func isActive(_ sensor: Sensor, at time: Double) -> Bool { !stakeholders(sensor, at: time).isEmpty }

    /// Write-time ranges during which `stakeholder` (nil: anyone) recorded `sensor`, up to `now`
    /// (open intervals end at `now`).
    public func intervals(_ sensor: Sensor, by stakeholder: Stakeholder? = nil, until now: Double) -> IntervalSet {
        let byHolder = spans[sensor] ?? [:]
        let holders = stakeholder.map { [$0] } ?? Array(byHolder.keys)
        var ranges: [TimeRange] = []
        for h in holders {
            for span in byHolder[h] ?? [] where span.start < now {
                ranges.append(TimeRange(after: span.start, through: min(span.stop ?? now, now)))
            }
        }
        return IntervalSet(ranges)
    }

    /// Start of the study app's first recording of `sensor`, if any.
    public func firstStart(_ sensor: Sensor, by stakeholder: Stakeholder = .studyApp) -> Double? {
        spans[sensor]?[stakeholder]?.map(\.start).min()
    }

    /// The times at or before `now` when `sensor` lost its last stakeholder
    /// (ends of the "anyone records" intervals), ascending.
    public func lastStakeholderStops(_ sensor: Sensor, until now: Double) -> [Double] {
        intervals(sensor, until: .infinity).ranges.map(\.through).filter { $0 <= now && $0.isFinite }
    }

    // MARK: The app's operations (contract §6.3)

    /// `startRecording()` by the study app: entitlement (0), authorization (1), then
    /// idempotently becomes a stakeholder.
    public mutating func startRecording(_ sensor: Sensor, at time: Double, entitled: Bool,
                                        status: SRAuthorizationStatus) -> RecordingOutcome {
        guard entitled else { return .failed(.invalidEntitlement(sensor)) }
        guard status == .authorized else { return .failed(.noAuthorization(sensor, status)) }
        begin(sensor, by: .studyApp, at: time)
        return .willStart
    }

    /// `stopRecording()` by the study app: entitlement (0), authorization (1), then
    /// idempotently stops being a stakeholder (stopping while idle still reports didStop).
    public mutating func stopRecording(_ sensor: Sensor, at time: Double, entitled: Bool,
                                       status: SRAuthorizationStatus) -> RecordingOutcome {
        guard entitled else { return .failed(.invalidEntitlement(sensor)) }
        guard status == .authorized else { return .failed(.noAuthorization(sensor, status)) }
        end(sensor, by: .studyApp, at: time)
        return .didStop
    }
}
