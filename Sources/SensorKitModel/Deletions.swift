/// `SRDeletionReason` (contract §3.3.21, §8.3).
public enum SRDeletionReason: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The user deleted data in Settings (during the hold or later).
    case userInitiated = 0
    case lowDiskSpace = 1
    /// Retention expiry (contract §8.2).
    case ageLimit = 2
    /// No stakeholder left (contract §5.4, §6.2 item 6).
    case noInterestedClients = 3
    case systemInitiated = 4

    public var name: String {
        switch self {
        case .userInitiated: "userInitiated"
        case .lowDiskSpace: "lowDiskSpace"
        case .ageLimit: "ageLimit"
        case .noInterestedClients: "noInterestedClients"
        case .systemInitiated: "systemInitiated"
        }
    }

    public init?(name: String) {
        guard let r = SRDeletionReason.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = r
    }

    public var description: String { name }
}

/// A deletion that happens in the world: at true time `at`, the samples of `sensor`
/// written (true time, phone axis) in `range` are removed from `device` (nil = every
/// device). Scenario-driven (user deletes in Settings, low disk space…); age-limit
/// and no-interested-clients deletions are derived by the model, not logged here.
public struct DeletionEvent: Sendable, Hashable {
    public var sensor: Sensor
    public var device: SRDevice?
    public var range: TimeRange
    public var at: Double
    public var reason: SRDeletionReason

    public init(sensor: Sensor, device: SRDevice? = nil, range: TimeRange, at: Double, reason: SRDeletionReason = .userInitiated) {
        self.sensor = sensor
        self.device = device
        // Only what already exists can be deleted.
        self.range = TimeRange(after: range.after, through: min(range.through, at))
        self.at = at
        self.reason = reason
    }
}

/// The world's scenario-driven deletions, in the order they were logged.
public struct DeletionLog: Sendable, Hashable {
    public private(set) var events: [DeletionEvent] = []

    public init(_ events: [DeletionEvent] = []) { self.events = events }

    public mutating func add(_ event: DeletionEvent) { events.append(event) }

    /// Events for `sensor` on `device` that have happened by true time `now`.
    public func events(for sensor: Sensor, device: SRDevice, asOf now: Double) -> [DeletionEvent] {
        events.filter { $0.sensor == sensor && $0.at <= now && ($0.device == nil || $0.device == device) }
    }
}

/// One row of a tombstone stream (contract §3.3.21): what was removed, why, and when the
/// record itself was written (true time; the fetch filters tombstones on it).
public struct SRDeletionRecord: Sendable, Hashable {
    public var startTime: SRAbsoluteTime
    public var endTime: SRAbsoluteTime
    public var reason: SRDeletionReason
    /// True time the record was written (its `SRFetchResult.timestamp`, before SR conversion).
    public var writeTime: Double

    public init(startTime: SRAbsoluteTime, endTime: SRAbsoluteTime, reason: SRDeletionReason, writeTime: Double) {
        self.startTime = startTime
        self.endTime = endTime
        self.reason = reason
        self.writeTime = writeTime
    }
}

extension SampleBatch {
    /// Deletion records as a batch with the `SensorCatalogue.deletionRecordFields`
    /// columns (`startTime`, `endTime` as SR seconds, `reason` raw value); `writeTimes`
    /// and `times` are the records' write times. `sensor` is the parent sensor.
    public static func deletionRecords(_ records: [SRDeletionRecord], sensor: Sensor) -> SampleBatch {
        SampleBatch(sensor: sensor, writeTimes: records.map(\.writeTime), times: records.map(\.writeTime), columns: [
            Column(name: "startTime", data: .double(records.map(\.startTime.rawValue))),
            Column(name: "endTime", data: .double(records.map(\.endTime.rawValue))),
            Column(name: "reason", data: .int(records.map { Int64($0.reason.rawValue) })),
        ])
    }
}
