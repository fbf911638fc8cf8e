import Foundation

/// An embedder's own data: the one protocol a Swift program implements so that a protocol
/// runs over samples it supplies (read from its own files, a database, a device), under
/// the same SensorKit rules as a simulated world or a recorded store: the protocol still
/// asks for authorization, starts recording, and sees only what the holding period,
/// recording, retention and its fetch ranges let through.
///
/// Implementations must be deterministic (the same answer to the same question) and
/// thread-safe: with `StudyConfiguration.jobs > 1` participants run on several threads.
public protocol StudyDataSource: Sendable {
    /// The participants whose data this source holds, in the order they run. Ids must be
    /// non-empty and distinct.
    func participants() throws -> [StudyParticipant]

    /// The samples of sensor `sensor` (SensorKit's name, `"heartRate"`) that `device` of
    /// participant `participant` wrote in (`after`, `through`] (seconds since 1970 on the
    /// write-time axis, `Sample.written`). Any order; each sample's fields are checked
    /// against the sensor's schema (`sensorium info SENSOR`). A throw ends that
    /// participant's run with the error's description, as a recorded store that cannot be
    /// read does; the protocol cannot catch it.
    func samples(of sensor: String, participant: String, device: StudyDevice,
                 writtenAfter after: Double, through: Double) throws -> [Sample]

    /// When participant `participant` authorized or denied which sensor, in any order (a
    /// sensor's status at a time is its latest change at or before it). The status as of the
    /// study's start answers the protocol's authorization request (a sensor not named is
    /// allowed); each later change happens at its time, as when a participant turns a
    /// sensor off or on in Settings: readers are told, and fetches follow SensorKit's rules
    /// (a denied sensor's fetch fails with `authorizationDenied`). Default: no changes
    /// (every sensor authorized when the protocol asks).
    func authorization(participant: String) throws -> [StudyAuthorizationChange]

    /// When participant `participant`'s devices recorded which sensor, in any order. A
    /// sensor named here was recorded in its spans only: samples written outside every
    /// span are never delivered (a fetch over a pause is empty), and samples inside a span
    /// are visible whether or not the protocol records (as in a recorded store). A sensor
    /// not named records as the protocol starts and stops it. Default: none named.
    func recording(participant: String) throws -> [StudyRecordingSpan]
}

extension StudyDataSource {
    /// No changes: every sensor is authorized when the protocol asks.
    public func authorization(participant: String) throws -> [StudyAuthorizationChange] { [] }
    /// No spans: every sensor records as the protocol starts and stops it.
    public func recording(participant: String) throws -> [StudyRecordingSpan] { [] }
}

/// A change of one sensor's authorization in a participant's timeline.
public struct StudyAuthorizationChange: Sendable, Equatable {
    /// The sensor, by SensorKit's name (`"heartRate"`).
    public var sensor: String
    /// When the status changed: seconds since 1970.
    public var time: Double
    /// Whether the sensor is authorized from `time` on (false: denied).
    public var authorized: Bool

    /// `sensor` becomes authorized (or denied) at `time`.
    public init(sensor: String, time: Double, authorized: Bool) {
        self.sensor = sensor
        self.time = time
        self.authorized = authorized
    }
}

/// A span of write times (`after`, `through`] in which a participant's devices recorded a sensor.
public struct StudyRecordingSpan: Sendable, Equatable {
    /// The sensor, by SensorKit's name (`"heartRate"`).
    public var sensor: String
    /// The span's start (exclusive): seconds since 1970 on the write-time axis.
    public var after: Double
    /// The span's end (inclusive): seconds since 1970 on the write-time axis.
    public var through: Double

    /// `sensor` was recorded for samples written in (`after`, `through`].
    public init(sensor: String, after: Double, through: Double) {
        self.sensor = sensor
        self.after = after
        self.through = through
    }
}

/// One participant of an embedder's data source.
public struct StudyParticipant: Sendable, Equatable {
    /// The participant's id, as reports and findings name them.
    public var id: String
    /// The participant's time zone (local days, `schedule.daily` times).
    public var timeZone: TimeZone
    /// Whether the participant wears an Apple Watch besides the phone.
    public var hasWatch: Bool

    /// A participant with a phone (and a watch when `hasWatch`).
    public init(id: String, timeZone: TimeZone = TimeZone(identifier: "UTC")!, hasWatch: Bool = false) {
        self.id = id
        self.timeZone = timeZone
        self.hasWatch = hasWatch
    }
}

/// The device a sample comes from.
public enum StudyDevice: String, Sendable, Equatable, CaseIterable {
    /// The participant's iPhone.
    case phone
    /// The participant's Apple Watch (`StudyParticipant.hasWatch`).
    case watch
}

/// One sample an embedder supplies: its write time, its own time, and its fields by the
/// names protocols use (`heartRate`, `confidence`, …).
public struct Sample: Sendable, Equatable {
    /// When the system wrote the sample: seconds since 1970 (fetch ranges, the holding
    /// period and retention are judged on this axis).
    public var written: Double
    /// The sample's own time (its date), seconds since 1970; summaries group by it.
    public var time: Double
    /// The sensor's fields (those of the sensor's schema other than its date).
    public var fields: [String: SampleValue]

    /// A sample written at `written` about time `time` with `fields`.
    public init(written: Double, time: Double, fields: [String: SampleValue]) {
        self.written = written
        self.time = time
        self.fields = fields
    }
}

/// A field's value: a number, an integer, a text (also an enumeration's case name, such
/// as `"high"`), or a flag.
public enum SampleValue: Sendable, Equatable, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    /// A number (a `double`, `date` or `duration` field; an integer field takes a whole one).
    case number(Double)
    /// An integer (an `int`, enumeration or option-set field's raw value).
    case integer(Int64)
    /// A text (a `string` field, or an enumeration's case name).
    case text(String)
    /// A boolean field.
    case flag(Bool)

    public init(floatLiteral value: Double) { self = .number(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .flag(value) }
}
