import SensorKitModel

/// Accumulates object-shaped rows column by column, then lays them out in the schema's
/// column order. A value set to nil is stored as 0 / "" / .null and masked as missing.
struct RowBuilder {
    let sensor: Sensor
    var writes: [Double] = []
    var times: [Double] = []
    private var doubles: [String: [Double]] = [:]
    private var ints: [String: [Int64]] = [:]
    private var bools: [String: [Bool]] = [:]
    private var strings: [String: [String]] = [:]
    private var values: [String: [FieldValue]] = [:]
    private var missing: [String: [Int]] = [:]

    init(_ sensor: Sensor) { self.sensor = sensor }

    var count: Int { writes.count }

    /// Starts a row; `time` nil means "no date of its own": the write time is used.
    mutating func row(write: Double, time: Double? = nil) {
        writes.append(write)
        times.append(time ?? write)
    }

    mutating func set(_ name: String, _ v: Double?) {
        doubles[name, default: []].append(v ?? 0)
        if v == nil { missing[name, default: []].append(count - 1) }
    }
    mutating func set(_ name: String, _ v: Int64) { ints[name, default: []].append(v) }
    mutating func set(_ name: String, _ v: Int) { ints[name, default: []].append(Int64(v)) }
    mutating func set(_ name: String, _ v: Bool) { bools[name, default: []].append(v) }
    mutating func set(_ name: String, _ v: String) { strings[name, default: []].append(v) }
    mutating func set(_ name: String, value v: FieldValue?) {
        values[name, default: []].append(v ?? .null)
        if v == nil { missing[name, default: []].append(count - 1) }
    }

    func batch() -> SampleBatch {
        let n = count
        let columns = Schema.columns(sensor).map { name, kind -> Column in
            var present: [Bool]? = nil
            if let m = missing[name], !m.isEmpty {
                var p = Array(repeating: true, count: n)
                for i in m { p[i] = false }
                present = p
            }
            let data: ColumnData = switch kind {
            case .double: .double(doubles[name] ?? [])
            case .int: .int(ints[name] ?? [])
            case .bool: .bool(bools[name] ?? [])
            case .string: .string(strings[name] ?? [])
            case .value: .value(values[name] ?? [])
            }
            precondition(data.count == n, "\(sensor).\(name): \(data.count) values for \(n) rows")
            return Column(name: name, data: data, present: present)
        }
        return SampleBatch(sensor: sensor, writeTimes: writes, times: times, columns: columns)
    }
}

func rounded(_ x: Double, _ digits: Double = 1000) -> Double { (x * digits).rounded() / digits }

/// An object field value from pairs.
func obj(_ pairs: [(String, FieldValue)]) -> FieldValue { .object(pairs) }
