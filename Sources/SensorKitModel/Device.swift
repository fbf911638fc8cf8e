/// SensorKit's `SRDevice` (contract §9.2): value-equal when all fields are equal.
public struct SRDevice: Sendable, Hashable, Comparable {
    public var name: String
    public var model: String
    public var systemName: String
    public var systemVersion: String
    public var productType: String
    public var kind: DeviceKind

    public init(name: String, model: String, systemName: String, systemVersion: String,
                productType: String, kind: DeviceKind) {
        self.name = name
        self.model = model
        self.systemName = systemName
        self.systemVersion = systemVersion
        self.productType = productType
        self.kind = kind
    }

    /// A stable key for storage and maps: kind + productType + systemVersion.
    public var key: String { "\(kind.rawValue):\(productType):\(systemVersion)" }

    public static func < (a: SRDevice, b: SRDevice) -> Bool { a.key < b.key }

    public static let defaultPhone = SRDevice(name: "iPhone", model: "iPhone", systemName: "iOS",
                                              systemVersion: "26.1", productType: "iPhone17,1", kind: .phone)
    public static let defaultWatch = SRDevice(name: "Apple Watch", model: "Watch", systemName: "watchOS",
                                              systemVersion: "26.1", productType: "Watch7,5", kind: .watch)
}

/// Where samples come from: the backend side of the one-way flow.
///
/// A source answers one question — which samples of sensor S on device D were
/// *written* in the half-open range (after, through] (wall seconds since the Unix
/// epoch) — as if recording had been on all the time. The model (authorization,
/// recording intervals, holding period, retention, deletions) decides what of that
/// a protocol may see. Implementations must be pure: the same question gives the
/// same answer, and the cost is proportional to the range asked for.
///
/// Reads throw when a source cannot read data it holds (a recorded store's corrupt chunk:
/// `SampleReadError`); broken data is an error, never an empty answer. A source that
/// generates its data (the simulator) implements them without `throws`.
public protocol SampleSource: Sendable {
    /// The devices this participant owns, phone first.
    func devices(participant: String) -> [SRDevice]
    /// Samples written in (after, through], ordered by write time, then by sample time.
    func samples(participant: String, sensor: Sensor, device: SRDevice,
                 writtenAfter after: Double, through: Double) throws -> SampleBatch
    /// Like `samples(…writtenAfter:through:)`, keeping only the rows that `device`
    /// *produced* — wrote to its own store, before any sync to the phone — at a time in
    /// `produced` (true time). A paired device records only while the sensor records
    /// (contract §6.2), so this is how the model asks for exactly the data recorded then when
    /// the phone-store write time (a sync) says too little. Sources that do not model
    /// syncing keep the default, which ignores `produced` (the rows' write ranges,
    /// `storeWriteBound`, already say it all).
    func samples(participant: String, sensor: Sensor, device: SRDevice,
                 writtenAfter after: Double, through: Double, producedIn produced: IntervalSet) throws -> SampleBatch
    /// The latest phone-store write time of a record that `device` produced at or before
    /// true time `t` (contract §4.3: watch records reach the phone at a sync at least `syncLag`
    /// later). Default: `t + syncLag` (records arrive exactly one lag later).
    func storeWriteBound(participant: String, device: SRDevice, producedThrough t: Double, syncLag: Double) -> Double
    /// The first piece of what `samples(…)` answers for (after, through] (with `produced`,
    /// the `producedIn` variant's): the rows written in (after, `reached`], where `reached`
    /// is in (after, through]; the caller asks again from `reached`. A source that keeps its
    /// rows in chunks answers up to the end of the chunk holding the first row, handing over
    /// whole chunks instead of joining them. Every row of one write time is in one piece.
    /// Default: everything, `reached == through`.
    func samplePiece(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double,
                     producedIn produced: IntervalSet?) throws -> (batch: SampleBatch, reached: Double)
    /// `samplePiece(…producedIn:)` for a reader that needs only the columns in `columns`: the
    /// batch holds at least those of them the sensor has (times and write times always), and
    /// may hold more. A source that stores columns apart (a recorded store) leaves the others
    /// unread. Default: the whole piece (`columns` ignored).
    func samplePiece(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double,
                     producedIn produced: IntervalSet?, columns: ColumnProjection) throws -> (batch: SampleBatch, reached: Double)
    /// Whether the source holds any data of `sensor` for `participant` (on any device), for a
    /// recording: false when the sensor was not recorded or not exported at all, so that a
    /// fetch of it (empty) can say why. Nil (the default) for a source that generates data.
    func holdsAnyData(participant: String, sensor: Sensor) -> Bool?
    /// What the source holds for `participant`, one summary per stored sensor and device
    /// (devices in `devices(participant:)` order), for a recording: what a prompt's `:sensors`
    /// shows of it. Nil (the default) for a source that generates data. Throws when the
    /// source cannot read its own index.
    func streamSummaries(participant: String) throws -> [StreamSummary]?
}

extension SampleSource {
    public func holdsAnyData(participant: String, sensor: Sensor) -> Bool? { nil }
    public func streamSummaries(participant: String) throws -> [StreamSummary]? { nil }

    public func samples(participant: String, sensor: Sensor, device: SRDevice,
                        writtenAfter after: Double, through: Double, producedIn produced: IntervalSet) throws -> SampleBatch {
        try samples(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through)
    }

    public func storeWriteBound(participant: String, device: SRDevice, producedThrough t: Double, syncLag: Double) -> Double {
        t + syncLag
    }

    public func samplePiece(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double,
                            producedIn produced: IntervalSet?) throws -> (batch: SampleBatch, reached: Double) {
        let batch = if let produced {
            try samples(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through, producedIn: produced)
        } else {
            try samples(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through)
        }
        return (batch, through)
    }

    public func samplePiece(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double,
                            producedIn produced: IntervalSet?, columns: ColumnProjection) throws -> (batch: SampleBatch, reached: Double) {
        try samplePiece(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through, producedIn: produced)
    }
}

/// One stored stream: the samples of one sensor on one device of one participant.
public struct StreamSummary: Sendable, Hashable {
    public var participant: String
    public var device: SRDevice
    public var sensor: Sensor
    public var rows: Int
    public var chunks: Int
    /// Write-time span (Unix seconds); nil without rows.
    public var firstWrite: Double?
    public var lastWrite: Double?

    public init(participant: String, device: SRDevice, sensor: Sensor, rows: Int, chunks: Int, firstWrite: Double?, lastWrite: Double?) {
        self.participant = participant
        self.device = device
        self.sensor = sensor
        self.rows = rows
        self.chunks = chunks
        self.firstWrite = firstWrite
        self.lastWrite = lastWrite
    }
}
