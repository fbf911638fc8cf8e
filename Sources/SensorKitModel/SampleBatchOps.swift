// Column operations on SampleBatch: slicing, gathering and appending whole columns,
// so that the model never builds per-row objects.

extension ColumnData {
    /// The values at `rows`.
    public func slice(_ rows: Range<Int>) -> ColumnData {
        switch self {
        case .double(let v): .double(Array(v[rows]))
        case .int(let v): .int(Array(v[rows]))
        case .intRuns(let v): .intRuns(v.slice(rows))
        case .bool(let v): .bool(Array(v[rows]))
        case .string(let v): .string(Array(v[rows]))
        case .value(let v): .value(Array(v[rows]))
        }
    }

    /// The values at `indices`, in that order (indices may repeat).
    public func gather(_ indices: [Int]) -> ColumnData {
        switch self {
        case .double(let v): .double(indices.map { v[$0] })
        case .int(let v): .int(indices.map { v[$0] })
        case .intRuns(let v): .intRuns(v.gather(indices))
        case .bool(let v): .bool(indices.map { v[$0] })
        case .string(let v): .string(indices.map { v[$0] })
        case .value(let v): .value(indices.map { v[$0] })
        }
    }

    /// `self` followed by `other`; nil when the kinds differ.
    public func appending(_ other: ColumnData) -> ColumnData? {
        switch (self, other) {
        case let (.double(a), .double(b)): .double(a + b)
        case let (.int(a), .int(b)): .int(a + b)
        case let (.intRuns(a), .intRuns(b)): .intRuns({ var j = a; j += b; return j }())
        case let (.int(a), .intRuns(b)): .int(a + b.array)
        case let (.intRuns(a), .int(b)): .int(a.array + b)
        case let (.bool(a), .bool(b)): .bool(a + b)
        case let (.string(a), .string(b)): .string(a + b)
        case let (.value(a), .value(b)): .value(a + b)
        default: nil
        }
    }

    /// An empty column of the given kind.
    public static func empty(_ kind: ColumnKind) -> ColumnData {
        switch kind {
        case .double: .double([])
        case .int: .int([])
        case .bool: .bool([])
        case .string: .string([])
        case .value: .value([])
        }
    }
}

extension Column {
    public func slice(_ rows: Range<Int>) -> Column {
        Column(name: name, data: data.slice(rows), present: present.map { Array($0[rows]) })
    }

    public func gather(_ indices: [Int]) -> Column {
        Column(name: name, data: data.gather(indices), present: present.map { p in indices.map { p[$0] } })
    }
}

extension SampleBatch {
    /// An empty batch with the sensor's schema columns (`SensorInfo.columnFields`).
    public static func empty(for sensor: Sensor) -> SampleBatch {
        SampleBatch(sensor: sensor, columns: sensor.info.columnFields.map {
            Column(name: $0.name, data: .empty($0.type.columnKind))
        })
    }

    /// The rows in `rows`.
    public func slice(_ rows: Range<Int>) -> SampleBatch {
        SampleBatch(sensor: sensor, writeTimes: writeTimes.slice(rows), times: Array(times[rows]),
                    columns: columns.map { $0.slice(rows) }, timesWithin: timesWithin)
    }

    /// The rows at `indices`, in that order (indices may repeat).
    public func gather(_ indices: [Int]) -> SampleBatch {
        SampleBatch(sensor: sensor, writeTimes: writeTimes.gather(indices), times: indices.map { times[$0] },
                    columns: columns.map { $0.gather(indices) }, timesWithin: timesWithin)
    }

    /// Appends `other`'s rows. Columns are matched by name; a batch without rows takes
    /// `other`'s columns. Precondition: both batches have the same column names and kinds.
    public mutating func append(_ other: SampleBatch) {
        if other.count == 0 && other.columns.isEmpty { return }
        if count == 0 && (columns.isEmpty || columns.allSatisfy { $0.count == 0 }) {
            let keepSensor = sensor
            self = other
            sensor = keepSensor
            return
        }
        if other.count == 0 { return }
        precondition(columns.map(\.name) == other.columns.map(\.name),
                     "SampleBatch.append: column names differ (\(columns.map(\.name)) vs \(other.columns.map(\.name)))")
        let oldCount = count
        let within = timesWithin.flatMap { a in other.timesWithin.map { b in
            Swift.min(a.lowerBound, b.lowerBound)...Swift.max(a.upperBound, b.upperBound)
        } }
        writeTimes += other.writeTimes
        times += other.times
        timesWithin = within
        for i in columns.indices {
            guard let joined = columns[i].data.appending(other.columns[i].data) else {
                preconditionFailure("SampleBatch.append: column \(columns[i].name) changes kind")
            }
            let a = columns[i].present, b = other.columns[i].present
            if a != nil || b != nil {
                columns[i].present = (a ?? [Bool](repeating: true, count: oldCount)) + (b ?? [Bool](repeating: true, count: other.count))
            }
            columns[i].data = joined
        }
    }
}
