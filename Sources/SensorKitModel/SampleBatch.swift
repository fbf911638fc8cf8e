/// Samples in columns: the one representation every layer passes on.
///
/// One row is one sample as a protocol sees it: for object-shaped sensors one
/// `SRFetchResult`; for array-shaped sensors (accelerometer, rotation rate,
/// ambient pressure, ECG, PPG) one element of the batch, with the batch's
/// shared `identifier` in a column. Each row carries two times:
/// - `writeTimes`: when the system wrote the sample (wall seconds since the Unix
///   epoch), stored once per run of rows written together (`RunArray`). Fetch
///   ranges, the holding period and retention are judged on this axis.
/// - `times`: the sample's own time (its `startDate`/`date`/`timestamp`), wall
///   seconds since the Unix epoch; summaries group by it.
/// Columns follow the sensor's schema order. A missing optional value is marked in
/// the column's `present` mask (nil means every value is present).
///
/// A batch may also carry one fact its maker knew without looking at each row:
/// `timesWithin`, a closed range every sample time lies in. It is not part of equality.
public struct SampleBatch: Sendable, Equatable {
    public var sensor: Sensor
    public var writeTimes: WriteTimes
    /// Setting or changing the sample times forgets `timesWithin`.
    public var times: [Double] { didSet { timesWithin = nil } }
    public var columns: [Column]
    /// A closed range every row's `times` value lies in (so none is NaN), stated by the
    /// batch's maker when it comes free — a store's decoder reads it off the encoding
    /// (`ColumnCodec.decodeTimes`); nil: not known. It may be wider than the times.
    /// Dropping, reordering or repeating rows (`slice`, `gather`, `keeping`,
    /// `removingColumns`) keeps it; changing `times` forgets it; `append` keeps the union
    /// when both batches state one. `FetchPlan.measured` keeps a batch whole when the range
    /// lies inside one recorded range, without a look at its rows.
    public var timesWithin: ClosedRange<Double>?

    public init(sensor: Sensor, writeTimes: WriteTimes = WriteTimes(), times: [Double] = [], columns: [Column] = [],
                timesWithin: ClosedRange<Double>? = nil) {
        self.sensor = sensor
        self.writeTimes = writeTimes
        self.times = times
        self.columns = columns
        self.timesWithin = timesWithin
    }

    /// Equal sensor, write times, times and columns (`timesWithin` aside: a fact about the
    /// rows, not a part of them).
    public static func == (a: SampleBatch, b: SampleBatch) -> Bool {
        a.sensor == b.sensor && a.writeTimes == b.writeTimes && a.times == b.times && a.columns == b.columns
    }

    /// A batch from one write time per row (merged into runs).
    public init(sensor: Sensor, writeTimes: [Double], times: [Double], columns: [Column] = []) {
        self.init(sensor: sensor, writeTimes: WriteTimes(writeTimes), times: times, columns: columns)
    }

    public var count: Int { times.count }

    /// The column named `name`, or nil.
    public func column(_ name: String) -> Column? { columns.first { $0.name == name } }

    /// The `x`, `y`, `z` columns of a motion sensor's batch as doubles (what `magnitude` is
    /// made of), nil unless the batch holds all three.
    public var xyz: (x: [Double], y: [Double], z: [Double])? {
        guard case .double(let x)? = column("x")?.data, case .double(let y)? = column("y")?.data,
              case .double(let z)? = column("z")?.data else { return nil }
        return (x, y, z)
    }

    /// The batch without the columns named in `names`.
    public func removingColumns(_ names: Set<String>) -> SampleBatch {
        var copy = self
        copy.columns.removeAll { names.contains($0.name) }
        return copy
    }

    /// The batch with only the columns `columns` asks for (all of them for `.all`).
    public func keeping(_ columns: ColumnProjection) -> SampleBatch {
        guard !columns.isAll else { return self }
        var copy = self
        copy.columns.removeAll { !columns.contains($0.name) }
        return copy
    }
}

/// One named column of a `SampleBatch`.
public struct Column: Sendable, Equatable {
    public var name: String
    public var data: ColumnData
    /// `present[i] == false` marks a missing optional value; nil means all present.
    public var present: [Bool]?

    public init(name: String, data: ColumnData, present: [Bool]? = nil) {
        self.name = name
        self.data = data
        self.present = present
    }

    public var count: Int { data.count }
}

/// The storage of one column. Numbers stay unboxed so aggregates run at memory speed.
public enum ColumnData: Sendable, Equatable {
    case double([Double])
    case int([Int64])
    /// Integers stored once per run of equal neighbours: a value SensorKit gives once per
    /// result (the accelerometer's batch `identifier`, shared by a batch's 3,000 rows).
    /// The same column as `.int` of its elements: `==` and `ints` do not tell them apart.
    case intRuns(RunArray<Int64>)
    case bool([Bool])
    case string([String])
    /// Nested values (usage reports by category, keyboard distributions, PPG optical samples…).
    case value([FieldValue])

    public var count: Int {
        switch self {
        case .double(let v): v.count
        case .int(let v): v.count
        case .intRuns(let v): v.count
        case .bool(let v): v.count
        case .string(let v): v.count
        case .value(let v): v.count
        }
    }

    /// The kind of values the column holds (`.intRuns` holds `.int`).
    public var kind: ColumnKind {
        switch self {
        case .double: .double
        case .int, .intRuns: .int
        case .bool: .bool
        case .string: .string
        case .value: .value
        }
    }

    /// The integers of an `.int` or `.intRuns` column, one per row; nil for other kinds.
    public var ints: [Int64]? {
        switch self {
        case .int(let v): v
        case .intRuns(let v): v.array
        default: nil
        }
    }

    /// Row `i` of an `.int` or `.intRuns` column; nil for other kinds.
    public func integer(at i: Int) -> Int64? {
        switch self {
        case .int(let v): v[i]
        case .intRuns(let v): v[i]
        default: nil
        }
    }

    /// The column with runs spelled out (`.intRuns` as `.int`); others as they are.
    public var dense: ColumnData {
        if case .intRuns(let v) = self { return .int(v.array) }
        return self
    }

    /// Equal elements, whichever form holds the integers.
    public static func == (a: ColumnData, b: ColumnData) -> Bool {
        switch (a, b) {
        case let (.double(x), .double(y)): x == y
        case let (.int(x), .int(y)): x == y
        case let (.intRuns(x), .intRuns(y)): x == y
        case let (.int(x), .intRuns(y)), let (.intRuns(y), .int(x)): x.count == y.count && x.elementsEqual(y)
        case let (.bool(x), .bool(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.value(x), .value(y)): x == y
        default: false
        }
    }
}

/// A structured field value, for the nested parts of SensorKit's sample types.
public indirect enum FieldValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([FieldValue])
    /// Keys in a fixed order (the schema's), so output is deterministic.
    case object([(String, FieldValue)])

    public static func == (a: FieldValue, b: FieldValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.int(x), .int(y)): x == y
        case let (.double(x), .double(y)): x == y || (x.isNaN && y.isNaN)
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func hash(into h: inout Hasher) {
        switch self {
        case .null: h.combine(0)
        case .bool(let v): h.combine(v)
        case .int(let v): h.combine(v)
        case .double(let v): h.combine(v.isNaN ? .nan : v)
        case .string(let v): h.combine(v)
        case .array(let v): h.combine(v)
        case .object(let v): for (k, x) in v { h.combine(k); h.combine(x) }
        }
    }
}
