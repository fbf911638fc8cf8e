import Foundation
import SensorKitModel

/// The batches of one pass over a `SampleSet`, read as they are asked for. A step throws
/// what the read throws (a recorded store's `SampleReadError`); the pass then ends there.
public struct BatchIterator {
    private let step: () throws -> SampleBatch?
    /// The columns every batch holds at least (`ColumnProjection`): `.all` unless the
    /// maker read fewer (a projected read of a store).
    public let columns: ColumnProjection

    public init(columns: ColumnProjection = .all, _ step: @escaping () throws -> SampleBatch?) {
        self.step = step
        self.columns = columns
    }

    /// The batches of an array, in order (nothing is read), holding at least `columns`.
    public init(columns: ColumnProjection = .all, _ batches: [SampleBatch]) {
        var it = batches.makeIterator()
        step = { it.next() }
        self.columns = columns
    }

    /// The next batch, nil at the end.
    public func next() throws -> SampleBatch? { try step() }
}

/// A lazy, columnar set of samples: a producer of chunks plus row filters.
///
/// Nothing is materialised up front: every aggregate streams the chunks the
/// producer yields (typically an hour of data each), so memory stays bounded by
/// the chunk size whatever the range. Filters are evaluated per chunk into a
/// selection of row indices; aggregates loop over unboxed `[Double]` columns.
public final class SampleSet: @unchecked Sendable {
    /// Every field a protocol reads of `info`'s samples: the sensor's columns, then the
    /// virtual fields (`time`, `writeTime`, `magnitude`, `windowStart`/`windowEnd`).
    public static func readableFields(of info: SensorInfo) -> [String] {
        info.fields.map(\.name) + FieldReader.virtualFields(of: info)
    }

    /// Starts one pass over the set's chunks (each aggregate makes its own).
    public typealias ChunkProducer = () -> BatchIterator
    /// Starts one pass over the set's chunks holding at least the columns asked for (the
    /// iterator's `columns` says which it holds; it may hold more).
    public typealias ProjectedChunkProducer = (ColumnProjection) -> BatchIterator

    public let sensor: Sensor
    /// The sensor's samples, or its deletion records (a `.tombstones` reader).
    public let stream: FetchStream
    public let timeZone: TimeZone
    public let filters: [RowFilter]
    let read: ProjectedChunkProducer
    /// The chunks the set reads: shared by the sets `filtered` makes of it (they read the
    /// same chunks and keep fewer rows), so that summaries of them can be answered by one
    /// pass (`SampleSet.summarize(_:)` of requests).
    public let lineage: Lineage

    /// The identity of a producer of chunks (see `lineage`).
    public final class Lineage: @unchecked Sendable {
        public init() {}
    }

    public init(sensor: Sensor, stream: FetchStream = .samples, timeZone: TimeZone, filters: [RowFilter] = [],
                produce: @escaping ChunkProducer) {
        self.sensor = sensor
        self.stream = stream
        self.timeZone = timeZone
        self.filters = filters
        self.read = { _ in produce() }
        self.lineage = Lineage()
    }

    /// A set whose passes read only the columns they need: each pass calls `read` with its
    /// projection (`ColumnProjection`).
    public convenience init(sensor: Sensor, stream: FetchStream = .samples, timeZone: TimeZone, filters: [RowFilter] = [],
                            read: @escaping ProjectedChunkProducer) {
        self.init(sensor: sensor, stream: stream, timeZone: timeZone, filters: filters, read: read, lineage: Lineage())
    }

    private init(sensor: Sensor, stream: FetchStream, timeZone: TimeZone, filters: [RowFilter],
                 read: @escaping ProjectedChunkProducer, lineage: Lineage) {
        self.sensor = sensor
        self.stream = stream
        self.timeZone = timeZone
        self.filters = filters
        self.read = read
        self.lineage = lineage
    }

    /// Starts a pass over every column.
    var produce: ChunkProducer {
        let read = self.read
        return { read(.all) }
    }

    /// A set built from batches already in memory.
    public convenience init(sensor: Sensor, stream: FetchStream = .samples, timeZone: TimeZone, batches: [SampleBatch]) {
        self.init(sensor: sensor, stream: stream, timeZone: timeZone) { BatchIterator(batches) }
    }

    /// The same samples read from the source once while they fit `budget`: later passes
    /// replay the chunks kept in memory (`ChunkCache`).
    public func cached(in budget: ChunkBudget) -> SampleSet {
        let upstream = read
        let cache = ChunkCache(budget: budget)
        return SampleSet(sensor: sensor, stream: stream, timeZone: timeZone, filters: filters) { (columns: ColumnProjection) in
            cache.iterator(columns, upstream)
        }
    }

    /// The same samples, keeping only rows where `filter` holds.
    public func filtered(_ filter: RowFilter) -> SampleSet {
        SampleSet(sensor: sensor, stream: stream, timeZone: timeZone, filters: filters + [filter], read: read, lineage: lineage)
    }

    /// The fields a sample of this set has, in schema order (without `time`/`writeTime`):
    /// the sensor's (its own date first, when it has one), or `SRDeletionRecord`'s for a
    /// tombstone stream.
    public var fieldSchemas: [FieldSchema] {
        stream == .deletionRecords ? SensorCatalogue.deletionRecordFields : sensor.info.fields
    }

    /// `["windowStart", "windowEnd"]` when the samples span a window (`SampleWindow`), else empty.
    public var windowFields: [String] {
        stream == .samples && sensor.info.window != nil ? ["windowStart", "windowEnd"] : []
    }

    /// The sample's own date field (`startDate`, `date`, …), which holds the row's `time`;
    /// nil for deletion records and for sensors whose samples have no date of their own.
    public var rowTimeField: FieldSchema? {
        stream == .deletionRecords ? nil : sensor.info.rowTimeField
    }

    /// The same samples without exact duplicates (SensorKit delivers about 1 % of records
    /// twice, contract §7.4): a row equal to an earlier row of the set in `writeTime`, `time` and
    /// every field (value and presence; numbers bit for bit) is dropped. A duplicate is
    /// the same record delivered again, so it shares its original's write time: rows are
    /// compared only within a run of equal write times, and only rows whose time does not
    /// exceed the run's latest are looked up (by time), so a set without duplicates costs
    /// one comparison a row. Streams chunk by chunk like every set.
    public func distinct() -> SampleSet {
        // Rows are compared in every column: each pass reads them all.
        let upstream = produce
        return SampleSet(sensor: sensor, stream: stream, timeZone: timeZone, filters: filters) {
            let chunks = upstream()
            var dedup = DistinctRows()
            return BatchIterator { try chunks.next().map { dedup.filter($0) } }
        }
    }

    /// Calls `body` with each non-empty chunk and the rows selected in it (nil: all rows).
    /// Rethrows what reading a chunk throws (`SampleReadError`) and what `body` throws.
    /// `fields`: the fields `body` reads (virtual ones included, `FieldReader`); the chunks
    /// hold at least their columns and those of the set's filters, nil: every column.
    public func forEachChunk(reading fields: [String]? = nil, _ body: (SampleBatch, [Int]?) throws -> Void) throws {
        let chunks = read(projection(reading: fields))
        while let batch = try chunks.next() {
            guard batch.count > 0 else { continue }
            var selection: [Int]?
            for filter in filters {
                selection = try filter.select(in: batch, among: selection)
                if selection?.isEmpty == true { break }
            }
            if let selection, selection.isEmpty { continue }
            try body(batch, selection)
        }
    }

    /// The columns a pass reading `fields` needs (`FieldReader.columns`), with those the
    /// set's filters read; every column for `fields` nil, for a field the sensor does not
    /// have (so that the pass's error lists every field), and for deletion records.
    func projection(reading fields: [String]?) -> ColumnProjection {
        guard let fields, stream == .samples else { return .all }
        var names: [String] = []
        for field in fields + filters.map(\.field) {
            guard let columns = FieldReader.columns(for: field, of: sensor.info) else { return .all }
            names += columns
        }
        return ColumnProjection(names)
    }

    // MARK: aggregates

    public func count() throws -> Int {
        var n = 0
        try forEachChunk(reading: []) { batch, sel in n += sel?.count ?? batch.count }
        return n
    }

    /// Count, sum, mean, min, max and standard deviation of a numeric field in one pass.
    public func stats(_ field: String) throws -> RunningStats {
        var total = RunningStats()
        try forEachChunk(reading: [field]) { batch, sel in
            let values = try FieldReader.numbers(field, in: batch)
            total.merge(RunningStats(values, selection: sel))
        }
        return total
    }

    /// The q-quantile (0…1) of a field, linear interpolation between order statistics (R type 7),
    /// by selection (`Quantiles`); NaN when no value is present.
    public func quantile(_ field: String, _ q: Double) throws -> Double {
        try summarize([SummaryColumn(name: field, aggregate: .quantile(q), field: field)], by: nil)[0].values[0]
    }

    /// Σ value × weight / Σ weight (weights default to each sample's `duration`).
    public func weightedMean(_ field: String, weight: String = "duration") throws -> Double {
        var num = 0.0, den = 0.0
        try forEachChunk(reading: [field, weight]) { batch, sel in
            let v = try FieldReader.numbers(field, in: batch)
            let w = try FieldReader.numbers(weight, in: batch)
            func add(_ i: Int) { if !v[i].isNaN, !w[i].isNaN { num += v[i] * w[i]; den += w[i] } }
            if let sel { for i in sel { add(i) } } else { for i in 0..<batch.count { add(i) } }
        }
        return den > 0 ? num / den : .nan
    }

    /// The values of one field, materialised (for custom logic over modest sets).
    public func column(_ field: String) throws -> ColumnData {
        var doubles: [Double] = [], ints: [Int64] = [], bools: [Bool] = [], strings: [String] = [], values: [FieldValue] = []
        var kind: ColumnKind?
        try forEachChunk(reading: [field]) { batch, sel in
            let col = try FieldReader.column(field, in: batch)
            let picked = sel.map { col.gather($0) } ?? col
            switch picked {
            case .double(let v): kind = .double; doubles.append(contentsOf: v)
            case .int(let v): kind = .int; ints.append(contentsOf: v)
            case .intRuns(let v): kind = .int; ints.append(contentsOf: v)
            case .bool(let v): kind = .bool; bools.append(contentsOf: v)
            case .string(let v): kind = .string; strings.append(contentsOf: v)
            case .value(let v): kind = .value; values.append(contentsOf: v)
            }
        }
        switch kind {
        case .int: return .int(ints)
        case .bool: return .bool(bools)
        case .string: return .string(strings)
        case .value: return .value(values)
        default: return .double(doubles)
        }
    }

    /// The selected rows as one batch (for `rows()` and printing; keep sets modest).
    public func materialize(limit: Int = .max) throws -> SampleBatch {
        var out = stream == .deletionRecords ? SampleBatch.deletionRecords([], sensor: sensor) : SampleBatch.empty(for: sensor)
        var taken = 0
        try forEachChunk { batch, sel in
            guard taken < limit else { return }
            var part = sel.map { batch.gather($0) } ?? batch
            if part.count > limit - taken { part = part.slice(0..<(limit - taken)) }
            taken += part.count
            out.append(part)
        }
        return out
    }

    // MARK: grouping

    /// Groups rows by a key of their sample time (local time, DST-correct) and aggregates each
    /// group over `field` (nil only for `count` of rows), in one `summarize` pass; `count` of
    /// each result: the values that went into it.
    public func grouped(by grouping: Grouping, _ aggregate: Aggregate, of field: String?) throws -> [GroupResult] {
        GroupResult.of(try summarize(GroupResult.columns(aggregate, of: field), by: grouping))
    }

    /// Several quantiles of `field` per group, from one pass and one selection per group:
    /// `values` of each result, in the order of `qs`; `value` is the first.
    public func grouped(by grouping: Grouping, quantiles qs: [Double], of field: String) throws -> [GroupResult] {
        GroupResult.of(try summarize(GroupResult.columns(quantiles: qs, of: field), by: grouping), keepingValues: true)
    }
}

/// How rows are grouped: by their local clock hour, local day, hour of the day (0–23), or fixed windows.
///
/// Every grouping keys a sample by its time on the calendar: a sample whose time is not
/// finite or lies outside `LocalTime.supportedInstants` (the years 1 to 9999) belongs to no
/// group, and grouping a set holding one throws `GroupingError` (a Lua error naming the
/// sensor and the time). Times before 1970 group as any other.
public enum Grouping: Sendable, Equatable {
    case localHour
    case localDay
    case hourOfDay
    case window(seconds: Double, origin: Double)

    /// "by day", "by hour", "by hour of day", "by 900 s windows": for messages.
    public var phrase: String {
        switch self {
        case .localHour: "by hour"
        case .localDay: "by day"
        case .hourOfDay: "by hour of day"
        case .window(let seconds, _): "by \(NumberText.plain(seconds)) s windows"
        }
    }
}

public struct GroupResult: Sendable, Equatable {
    /// The summary column `grouped(by:_:of:)` asks for.
    public static func columns(_ aggregate: Aggregate, of field: String?) -> [SummaryColumn] {
        [SummaryColumn(name: "value", aggregate: aggregate, field: field)]
    }

    /// The summary columns `grouped(by:quantiles:of:)` asks for: one per quantile.
    public static func columns(quantiles qs: [Double], of field: String) -> [SummaryColumn] {
        qs.indices.map { SummaryColumn(name: "q\($0)", aggregate: .quantile(qs[$0]), field: field) }
    }

    /// The groups of a summary of those columns: `count` the values that went into the
    /// first column, `value` its value (`values` every column's, when `keepingValues`).
    public static func of(_ rows: [SummaryRow], keepingValues: Bool = false) -> [GroupResult] {
        rows.map { row in
            GroupResult(label: row.label, start: row.start, count: row.counts.first ?? row.rows,
                        value: row.values.first ?? .nan, values: keepingValues ? row.values : [])
        }
    }

    public var label: String
    public var start: Double
    public var count: Int
    public var value: Double
    /// For `grouped(by:quantiles:of:)`: one value per requested quantile.
    public var values: [Double] = []
}

/// A row filter `field op value` on a numeric or text field.
public struct RowFilter: Sendable, Equatable {
    public enum Op: String, Sendable, CaseIterable { case lt = "<", le = "<=", gt = ">", ge = ">=", eq = "==", ne = "~=" }
    public enum Operand: Sendable, Equatable { case number(Double), text(String) }

    public var field: String
    public var op: Op
    public var operand: Operand

    public init(field: String, op: Op, operand: Operand) {
        self.field = field
        self.op = op
        self.operand = operand
    }

    /// Clears `mask[i]` for each row `i` of `batch` where the filter does not hold;
    /// `numbers`: the field's values when already read.
    func narrow(_ mask: inout [Bool], in batch: SampleBatch, numbers: [Double]? = nil) throws {
        switch operand {
        case .number(let x):
            let v = try numbers ?? FieldReader.numbers(field, in: batch)
            mask.withUnsafeMutableBufferPointer { m in
                v.withUnsafeBufferPointer { v in
                    switch op {
                    case .lt: for i in 0..<m.count where !(v[i] < x) { m[i] = false }
                    case .le: for i in 0..<m.count where !(v[i] <= x) { m[i] = false }
                    case .gt: for i in 0..<m.count where !(v[i] > x) { m[i] = false }
                    case .ge: for i in 0..<m.count where !(v[i] >= x) { m[i] = false }
                    case .eq: for i in 0..<m.count where !(v[i] == x) { m[i] = false }
                    case .ne: for i in 0..<m.count where !(v[i] != x) { m[i] = false }
                    }
                }
            }
        case .text(let s):
            let (v, want) = try textColumn(in: batch)
            for i in 0..<v.count where (v[i] == s) != want { mask[i] = false }
        }
    }

    /// Appends to `out` the rows (among `candidates`, or all of `v`'s) whose value passes
    /// `test`. Written into storage sized for every row, then trimmed: no check per row.
    /// Over all rows, four values are compared at once by `any4` (true when `test` holds
    /// for any of them, as `test` judges them: NaN too); four rows that all fail are passed
    /// over without a write, the others judged one by one by `test`.
    @inline(__always)
    private static func select(_ v: [Double], _ candidates: [Int]?, into out: inout [Int], _ test: (Double) -> Bool,
                               any4: (SIMD4<Double>) -> Bool) {
        let n = candidates?.count ?? v.count
        out = [Int](unsafeUninitializedCapacity: n) { buf, done in
            var k = 0
            v.withUnsafeBufferPointer { v in
                if let candidates {
                    candidates.withUnsafeBufferPointer { c in
                        for i in c { buf[k] = i; k &+= test(v[i]) ? 1 : 0 }
                    }
                } else {
                    let raw = UnsafeRawPointer(v.baseAddress)
                    var i = 0
                    while i &+ 4 <= v.count {
                        if any4(raw!.loadUnaligned(fromByteOffset: i &* 8, as: SIMD4<Double>.self)) {
                            for j in i..<(i &+ 4) { buf[k] = j; k &+= test(v[j]) ? 1 : 0 }
                        }
                        i &+= 4
                    }
                    while i < v.count { buf[k] = i; k &+= test(v[i]) ? 1 : 0; i &+= 1 }
                }
            }
            done = k
        }
    }

    /// A text filter's column, and whether rows equal to the operand are kept.
    private func textColumn(in batch: SampleBatch) throws -> ([String], Bool) {
        guard case .string(let v) = try FieldReader.column(field, in: batch) else {
            throw FieldError("field '\(field)' is not text: compare it with a number")
        }
        guard op == .eq || op == .ne else { throw FieldError("text fields compare only with == and ~=") }
        return (v, op == .eq)
    }

    /// The rows of `batch` (among `candidates`, or all) where the filter holds. `columns`:
    /// the chunk's fields read already, shared with other passes over it.
    func select(in batch: SampleBatch, among candidates: [Int]?, columns: ChunkColumns? = nil) throws -> [Int] {
        var out: [Int] = []
        switch operand {
        case .number(let x):
            let v = try columns?.numbers(field) ?? FieldReader.numbers(field, in: batch)
            // One loop per operator, so the comparison is inlined (no call per row).
            let xs = SIMD4<Double>(repeating: x)
            switch op {
            case .lt: RowFilter.select(v, candidates, into: &out, { $0 < x }, any4: { any($0 .< xs) })
            case .le: RowFilter.select(v, candidates, into: &out, { $0 <= x }, any4: { any($0 .<= xs) })
            case .gt: RowFilter.select(v, candidates, into: &out, { $0 > x }, any4: { any($0 .> xs) })
            case .ge: RowFilter.select(v, candidates, into: &out, { $0 >= x }, any4: { any($0 .>= xs) })
            case .eq: RowFilter.select(v, candidates, into: &out, { $0 == x }, any4: { any($0 .== xs) })
            case .ne: RowFilter.select(v, candidates, into: &out, { $0 != x }, any4: { any($0 .!= xs) })
            }
        case .text(let s):
            let (v, want) = try textColumn(in: batch)
            if let candidates { for i in candidates where (v[i] == s) == want { out.append(i) } }
            else { for i in 0..<v.count where (v[i] == s) == want { out.append(i) } }
        }
        return out
    }
}

public struct FieldError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A sample whose time cannot be grouped: not finite, or outside the calendar
/// (`LocalTime.supportedInstants`). Broken data is an error, never silently missing data:
/// "cannot group heartRate samples by day: sample time nan is not a time (expected a finite
/// number of seconds since 1970)".
public struct GroupingError: Error, Sendable, CustomStringConvertible {
    public var sensor: Sensor
    public var grouping: Grouping
    public var time: Double
    public init(sensor: Sensor, grouping: Grouping, time: Double) {
        self.sensor = sensor
        self.grouping = grouping
        self.time = time
    }
    public var description: String {
        "cannot group \(sensor.rawValue) samples \(grouping.phrase): sample time "
            + (LocalTime.rangeProblem(time) ?? "\(NumberText.plain(time)) has no group")
    }
}

/// Reads fields of a batch as numbers, including the virtual ones:
/// `time` (sample time, also readable under the sensor's own name for it: `startDate`,
/// `date`, `timestamp`, `arrivalStart`), `writeTime`, `magnitude` (√(x²+y²+z²) for x/y/z
/// sensors), `windowStart`/`windowEnd` (the span a sample covers, `SampleWindow`), and
/// `duration` for interval samples that have an `endDate` (endDate − time).
enum FieldReader {
    /// The virtual fields a sample set of `info`'s sensor reads besides its columns:
    /// `time`, `writeTime`, `magnitude` (x/y/z sensors), `windowStart`/`windowEnd` (sensors
    /// whose samples span a window). For the API description; `numbers` reads them.
    static func virtualFields(of info: SensorInfo) -> [String] {
        let names = Set(info.fields.map(\.name))
        var out = ["time", "writeTime"].filter { !names.contains($0) }
        if names.isSuperset(of: ["x", "y", "z"]) { out.append("magnitude") }
        if info.window != nil { out += ["windowStart", "windowEnd"] }
        return out
    }

    /// The columns `numbers(field, …)` (and `column`) read in a batch of `info`'s sensor: none
    /// for the times, `x`, `y`, `z` for `magnitude`, the window's field for `windowStart` and
    /// `windowEnd`, `endDate` for a computed `duration`, else the column of that name; nil
    /// when the sensor has no such column (the read then fails, naming every field).
    static func columns(for field: String, of info: SensorInfo) -> [String]? {
        let names = Set(info.columnFields.map(\.name))
        func have(_ needed: [String]) -> [String]? { names.isSuperset(of: needed) ? needed : nil }
        switch field {
        case "time", "writeTime", info.rowTimeField?.name: return []
        case "magnitude": return have(["x", "y", "z"])
        case "windowStart", "windowEnd":
            switch info.window {
            case .toField(let name)?, .forDuration(let name)?, .durationBeforeWrite(let name)?: return have([name])
            case nil: return nil
            }
        case "duration" where !names.contains("duration"): return have(["endDate"])
        default: return have([field])
        }
    }

    static func numbers(_ field: String, in batch: SampleBatch) throws -> [Double] {
        switch field {
        case "time": return batch.times
        case batch.sensor.info.rowTimeField?.name: return batch.times
        case "writeTime": return batch.writeTimes.array
        case "magnitude":
            let (x, y, z) = try xyz(in: batch)
            return [Double](unsafeUninitializedCapacity: x.count) { o, done in
                magnitude(x, y, z, into: o)
                done = x.count
            }
        case "windowStart", "windowEnd":
            guard let window = try window(in: batch) else { throw unknown(field, in: batch) }
            return field == "windowStart" ? window.start : window.end
        case "duration" where batch.column("duration") == nil:
            guard case .double(let ends)? = batch.column("endDate")?.data else { throw unknown(field, in: batch) }
            return zip(ends, batch.times).map { $0 - $1 }
        default:
            guard let column = batch.column(field) else { throw unknown(field, in: batch) }
            var values: [Double]
            switch column.data {
            case .double(let v): values = v
            case .int(let v): values = v.map { Double($0) }
            case .intRuns(let v): values = v.map { Double($0) }
            case .bool(let v): values = v.map { $0 ? 1 : 0 }
            case .string, .value: throw FieldError("field '\(field)' of \(batch.sensor.rawValue) is not numeric")
            }
            if let present = column.present {
                for i in 0..<values.count where !present[i] { values[i] = .nan }
            }
            return values
        }
    }

    /// √(x² + y² + z²) of each row, written into `out` (its storage reused when large enough).
    static func magnitude(in batch: SampleBatch, into out: inout [Double]) throws {
        let (x, y, z) = try xyz(in: batch)
        let n = x.count
        if out.count != n {
            if out.capacity >= n {
                out.removeAll(keepingCapacity: true)
                out.append(contentsOf: repeatElement(0, count: n))
            } else {
                out = [Double](unsafeUninitializedCapacity: n) { o, done in
                    magnitude(x, y, z, into: o)
                    done = n
                }
                return
            }
        }
        out.withUnsafeMutableBufferPointer { o in magnitude(x, y, z, into: o) }
    }

    /// The `x`, `y` and `z` columns of a batch; throws `FieldError` when it has none.
    private static func xyz(in batch: SampleBatch) throws -> ([Double], [Double], [Double]) {
        guard let xyz = batch.xyz else {
            throw FieldError("'magnitude' needs x, y and z fields; \(batch.sensor.rawValue) has none")
        }
        return xyz
    }

    /// Writes √(x² + y² + z²) of each row into `o` (as many rows as `x` has).
    @inline(__always)
    private static func magnitude(_ x: [Double], _ y: [Double], _ z: [Double], into o: UnsafeMutableBufferPointer<Double>) {
        x.withUnsafeBufferPointer { xb in
            y.withUnsafeBufferPointer { yb in
                z.withUnsafeBufferPointer { zb in
                    for i in 0..<xb.count { o[i] = (xb[i] * xb[i] + yb[i] * yb[i] + zb[i] * zb[i]).squareRoot() }
                }
            }
        }
    }

    /// Each row's `windowStart` and `windowEnd` (wall seconds; NaN where the end is a
    /// missing optional value), from the sensor's `SampleWindow`; nil when its samples span
    /// no window, or for a batch without the window's field (deletion records).
    static func window(in batch: SampleBatch) throws -> (start: [Double], end: [Double])? {
        guard let window = batch.sensor.info.window else { return nil }
        switch window {
        case .toField(let name):
            guard batch.column(name) != nil else { return nil }
            return (batch.times, try numbers(name, in: batch))
        case .forDuration(let name):
            guard batch.column(name) != nil else { return nil }
            return (batch.times, zip(batch.times, try numbers(name, in: batch)).map(+))
        case .durationBeforeWrite(let name):
            guard batch.column(name) != nil else { return nil }
            let writes = batch.writeTimes.array
            return (zip(writes, try numbers(name, in: batch)).map(-), writes)
        }
    }

    /// Row `i`'s window, as `window(in:)` gives it, reading only that row.
    static func window(in batch: SampleBatch, row i: Int) -> (start: Double, end: Double)? {
        func number(_ name: String) -> Double? {
            guard let column = batch.column(name) else { return nil }
            if let present = column.present, !present[i] { return .nan }
            switch column.data {
            case .double(let v): return v[i]
            case .int(let v): return Double(v[i])
            case .intRuns(let v): return Double(v[i])
            default: return nil
            }
        }
        switch batch.sensor.info.window {
        case .toField(let name)?: return number(name).map { (batch.times[i], $0) }
        case .forDuration(let name)?: return number(name).map { (batch.times[i], batch.times[i] + $0) }
        case .durationBeforeWrite(let name)?: return number(name).map { (batch.writeTimes[i] - $0, batch.writeTimes[i]) }
        case nil: return nil
        }
    }

    static func column(_ field: String, in batch: SampleBatch) throws -> ColumnData {
        switch field {
        case "time", "writeTime", "magnitude", "windowStart", "windowEnd", batch.sensor.info.rowTimeField?.name:
            return .double(try numbers(field, in: batch))
        default:
            guard let column = batch.column(field) else { throw unknown(field, in: batch) }
            return column.data
        }
    }

    static func unknown(_ field: String, in batch: SampleBatch) -> FieldError {
        let window = batch.sensor.info.window.map { w in
            switch w { case .toField(let n), .forDuration(let n), .durationBeforeWrite(let n): n }
        }
        let names = batch.columns.map(\.name) + ["time", "writeTime"]
            + (window.map { batch.column($0) != nil } == true ? ["windowStart", "windowEnd"] : [])
        return FieldError("\(batch.sensor.rawValue) has no field '\(field)' (fields: \(names.joined(separator: ", ")))")
    }
}

/// Count, sum, mean, min, max and variance, mergeable across chunks (Chan et al.).
public struct RunningStats: Sendable, Equatable {
    public private(set) var count = 0
    public private(set) var sum = 0.0
    public private(set) var min = Double.nan
    public private(set) var max = Double.nan
    private var mean_ = 0.0
    private var m2 = 0.0

    public init() {}

    /// Stats from their parts (`m2`: the sum of squared deviations from the mean); empty when `count` is 0.
    init(count: Int, sum: Double, min: Double, max: Double, m2: Double) {
        guard count > 0 else { return }
        self.count = count
        self.sum = sum
        self.min = min
        self.max = max
        self.mean_ = sum / Double(count)
        self.m2 = m2
    }

    /// Stats of `values[range]`.
    init(_ values: [Double], range: Range<Int>) {
        var n = 0, sum = 0.0, lo = Double.infinity, hi = -Double.infinity
        values.withUnsafeBufferPointer { v in
            for i in range {
                let x = v[i]
                if x.isNaN { continue }
                n += 1
                sum += x
                lo = Swift.min(lo, x)
                hi = Swift.max(hi, x)
            }
        }
        guard n > 0 else { return }
        let mean = sum / Double(n)
        var m2 = 0.0
        values.withUnsafeBufferPointer { v in
            for i in range where !v[i].isNaN { let d = v[i] - mean; m2 += d * d }
        }
        self.count = n
        self.sum = sum
        self.min = lo
        self.max = hi
        self.mean_ = mean
        self.m2 = m2
    }

    init(_ values: [Double], selection: [Int]?) {
        var n = 0, s = 0.0, lo = Double.infinity, hi = -Double.infinity
        values.withUnsafeBufferPointer { v in
            func take(_ x: Double) {
                guard !x.isNaN else { return }
                n += 1
                s += x
                if x < lo { lo = x }
                if x > hi { hi = x }
            }
            if let selection { for i in selection { take(v[i]) } } else { for x in v { take(x) } }
        }
        guard n > 0 else { return }
        let mean = s / Double(n)
        var m2 = 0.0
        values.withUnsafeBufferPointer { v in
            if let selection {
                for i in selection where !v[i].isNaN { let d = v[i] - mean; m2 += d * d }
            } else {
                for x in v where !x.isNaN { let d = x - mean; m2 += d * d }
            }
        }
        self.count = n
        self.sum = s
        self.min = lo
        self.max = hi
        self.mean_ = mean
        self.m2 = m2
    }

    public mutating func add(_ x: Double) {
        count += 1
        sum += x
        min = min.isNaN ? x : Swift.min(min, x)
        max = max.isNaN ? x : Swift.max(max, x)
        let d = x - mean_
        mean_ += d / Double(count)
        m2 += d * (x - mean_)
    }

    public mutating func merge(_ o: RunningStats) {
        guard o.count > 0 else { return }
        guard count > 0 else { self = o; return }
        let n = Double(count + o.count)
        let d = o.mean_ - mean_
        m2 += o.m2 + d * d * Double(count) * Double(o.count) / n
        mean_ += d * Double(o.count) / n
        count += o.count
        sum += o.sum
        min = Swift.min(min, o.min)
        max = Swift.max(max, o.max)
    }

    public var mean: Double { count > 0 ? sum / Double(count) : .nan }
    /// Sample standard deviation (n − 1).
    public var standardDeviation: Double { count > 1 ? (m2 / Double(count - 1)).squareRoot() : .nan }
}

/// Group keys for sample times in a time zone, fast within a stretch of constant UTC offset.
struct LocalKeys {
    /// The key of a time that has none (`keyRange`).
    static let none = Int64.min
    let grouping: Grouping
    let timeZone: TimeZone
    private var offset = 0.0
    private var validFrom = Double.infinity
    private var validUntil = -Double.infinity

    init(grouping: Grouping, timeZone: TimeZone) {
        self.grouping = grouping
        self.timeZone = timeZone
    }

    /// The UTC offset in force at `t`, cached until the next time-zone transition.
    private mutating func localOffset(_ t: Double) -> Double {
        if t >= validFrom, t < validUntil { return offset }
        offset = LocalTime.offset(at: t, timeZone)
        let next = LocalTime.nextTransition(after: t, timeZone)
        validFrom = t
        validUntil = Swift.min(next, t + 86_400 * 30)
        return offset
    }

    /// The key of `t`, which must lie in `LocalTime.supportedInstants`; `Int64.min` otherwise.
    mutating func key(for t: Double) -> Int64 {
        guard LocalTime.supportedInstants.contains(t) else { return Int64.min }
        switch grouping {
        case .localHour: return Int64(((t + localOffset(t)) / 3600).rounded(.down))
        case .localDay: return Int64(((t + localOffset(t)) / 86_400).rounded(.down))
        case .hourOfDay:
            let h = Int64(((t + localOffset(t)) / 3600).rounded(.down)) % 24
            return h < 0 ? h + 24 : h
        case .window(let seconds, let origin): return Int64(((t - origin) / seconds).rounded(.down))
        }
    }

    /// The key of `t` and a UTC range `from..<until` holding `t` in which every time has
    /// that key (`key(for:)` is monotone within a stretch of constant UTC offset, so the
    /// range's ends are the first times of this key and the next, found to the ulp), so a
    /// caller keys a run of rows with two comparisons each. A `t` outside
    /// `LocalTime.supportedInstants` (NaN and the infinities included) has no key: `Int64.min`
    /// (`LocalKeys.none`, which no supported time has) and an empty range.
    mutating func keyRange(for t: Double) -> (key: Int64, from: Double, until: Double) {
        guard LocalTime.supportedInstants.contains(t) else { return (LocalKeys.none, .nan, .nan) }
        let shift: Double, width: Double
        var from = -Double.infinity, until = Double.infinity
        switch grouping {
        case .localHour, .hourOfDay, .localDay:
            shift = localOffset(t)
            width = grouping == .localDay ? 86_400 : 3_600
            from = validFrom
            until = validUntil
        case .window(let seconds, let origin):
            shift = -origin
            width = seconds
        }
        func linear(_ x: Double) -> Int64 { Int64(((x + shift) / width).rounded(.down)) }
        let k = linear(t)
        from = Swift.max(from, LocalKeys.firstTime(of: k, guess: Double(k) * width - shift, linear) ?? t)
        until = Swift.min(until, LocalKeys.firstTime(of: k + 1, guess: Double(k + 1) * width - shift, linear) ?? t.nextUp)
        // Only supported times share a key's range: a later row beyond the calendar is keyed (and refused) on its own.
        from = Swift.max(from, LocalTime.supportedInstants.lowerBound)
        until = Swift.min(until, LocalTime.supportedInstants.upperBound)
        if case .hourOfDay = grouping {
            let h = k % 24
            return (h < 0 ? h + 24 : h, from, until)
        }
        return (k, from, until)
    }

    /// The smallest time whose key (`f`, monotone) is at least `target`, searched ulp by ulp
    /// from `guess`; nil when it is not within 64 ulps.
    static func firstTime(of target: Int64, guess: Double, _ f: (Double) -> Int64) -> Double? {
        guard guess.isFinite, abs(guess) < 1e15 else { return nil }
        var c = guess
        if f(c) >= target {
            for _ in 0..<64 {
                let below = c.nextDown
                if f(below) < target { return c }
                c = below
            }
        } else {
            for _ in 0..<64 {
                c = c.nextUp
                if f(c) >= target { return c }
            }
        }
        return nil
    }

    func start(for key: Int64) -> Double {
        switch grouping {
        case .localHour: return localStart(Double(key) * 3600)
        case .localDay: return localStart(Double(key) * 86_400)
        case .hourOfDay: return Double(key) * 3600
        case .window(let seconds, let origin): return origin + Double(key) * seconds
        }
    }

    /// The UTC instant of a local wall time given as seconds since 1970-01-01 00:00 local.
    private func localStart(_ local: Double) -> Double { LocalTime.instant(wall: local, timeZone) }

    func label(for key: Int64) -> String {
        switch grouping {
        case .localHour: return LocalTime.wallLabel(Double(key) * 3600, "%Y-%m-%d %H:00")
        case .localDay: return LocalTime.wallLabel(Double(key) * 86_400, "%Y-%m-%d")
        case .hourOfDay: return String(format: "%02d", Int(key))
        case .window(let seconds, let origin): return LocalTime.wallLabel(origin + Double(key) * seconds, "%Y-%m-%dT%H:%M:%SZ")
        }
    }
}

/// The state of `SampleSet.distinct()` across chunks: the rows kept so far in the
/// current run of equal write times (which may continue into the next chunk).
struct DistinctRows {
    /// Batches holding the current run's kept rows (the last one is the chunk being read).
    private var batches: [SampleBatch] = []
    private var runWrite: UInt64?
    /// Kept rows of the run: (index in `batches`, row).
    private var kept: [(batch: Int, row: Int)] = []
    private var latest = -Double.infinity
    /// Kept rows by the bit pattern of their time, built when first needed.
    private var byTime: [UInt64: [Int]]?

    mutating func filter(_ batch: SampleBatch) -> SampleBatch {
        guard batch.count > 0 else { return batch }
        if runWrite == batch.writeTimes.first?.bitPattern {
            batches.append(batch)
        } else {
            batches = [batch]
            kept = []
            byTime = nil
            latest = -.infinity
            runWrite = nil
        }
        var keep: [Int] = []
        keep.reserveCapacity(batch.count)
        var dropped = false
        var writes = batch.writeTimes.makeIterator()
        for i in 0..<batch.count {
            let w = writes.next()!.bitPattern
            if w != runWrite {
                if batches.count > 1 { batches = [batch] }
                runWrite = w
                kept = []
                byTime = nil
                latest = -.infinity
            }
            let current = batches.count - 1
            let t = batch.times[i]
            if t > latest {
                latest = t
            } else {
                if byTime == nil {
                    var index: [UInt64: [Int]] = [:]
                    for (k, r) in kept.enumerated() { index[batches[r.batch].times[r.row].bitPattern, default: []].append(k) }
                    byTime = index
                }
                if let candidates = byTime?[t.bitPattern],
                   candidates.contains(where: { DistinctRows.same(batches[kept[$0].batch], kept[$0].row, batch, i) }) {
                    dropped = true
                    continue
                }
            }
            kept.append((current, i))
            byTime?[t.bitPattern, default: []].append(kept.count - 1)
            keep.append(i)
        }
        return dropped ? batch.gather(keep) : batch
    }

    /// Row `i` of `a` equals row `j` of `b` in write time, time and every column.
    static func same(_ a: SampleBatch, _ i: Int, _ b: SampleBatch, _ j: Int) -> Bool {
        guard a.writeTimes[i].bitPattern == b.writeTimes[j].bitPattern, a.times[i].bitPattern == b.times[j].bitPattern,
              a.columns.count == b.columns.count else { return false }
        for (ca, cb) in zip(a.columns, b.columns) {
            guard ca.name == cb.name else { return false }
            let pa = ca.present?[i] ?? true, pb = cb.present?[j] ?? true
            guard pa == pb else { return false }
            if !pa { continue }
            switch (ca.data, cb.data) {
            case let (.double(x), .double(y)): if x[i].bitPattern != y[j].bitPattern { return false }
            case let (.int(x), .int(y)): if x[i] != y[j] { return false }
            case (.int, .intRuns), (.intRuns, .int), (.intRuns, .intRuns): if ca.data.integer(at: i) != cb.data.integer(at: j) { return false }
            case let (.bool(x), .bool(y)): if x[i] != y[j] { return false }
            case let (.string(x), .string(y)): if x[i] != y[j] { return false }
            case let (.value(x), .value(y)): if x[i] != y[j] { return false }
            default: return false
            }
        }
        return true
    }
}
