import Foundation
import SensorKitModel

/// What is computed over a field's present values (NaN is no value), or over rows for
/// `count` without a field. The one aggregate type: `SampleSet`'s methods, a grouped set's
/// methods and `summarize`'s `{ how, field, … }` all name theirs from `Name`.
public enum Aggregate: Sendable, Equatable {
    /// Rows (no field), or values of the field that are present.
    case count
    case sum, mean, min, max
    /// Sample standard deviation (n − 1).
    case stddev
    /// R type 7 quantile, q in 0…1.
    case quantile(Double)
    /// Σ field × weight / Σ weight over rows where both are present.
    case weightedMean(weight: String)

    /// Every aggregate's name, written once: the Lua methods and `summarize`'s first
    /// element are these, in this order.
    public enum Name: String, Sendable, CaseIterable {
        case count, sum, mean, min, max, stddev, quantile, weightedMean

        /// The names of aggregates that take no parameter besides the field
        /// (`count` … `stddev`): those `Aggregate(plain:)` answers.
        public static var plain: [Name] { allCases.filter { Aggregate(plain: $0) != nil } }
        /// `"count, sum, mean, min, max, stddev, quantile, weightedMean"`: for messages.
        public static var list: String { allCases.map(\.rawValue).joined(separator: ", ") }
    }

    /// The aggregate `name` means alone; nil for `quantile` and `weightedMean`, which take a parameter.
    public init?(plain name: Name) {
        switch name {
        case .count: self = .count
        case .sum: self = .sum
        case .mean: self = .mean
        case .min: self = .min
        case .max: self = .max
        case .stddev: self = .stddev
        case .quantile, .weightedMean: return nil
        }
    }

    public var name: Name {
        switch self {
        case .count: .count
        case .sum: .sum
        case .mean: .mean
        case .min: .min
        case .max: .max
        case .stddev: .stddev
        case .quantile: .quantile
        case .weightedMean: .weightedMean
        }
    }

    /// Whether a whole-number result is given to Lua as an integer (counts and sums).
    public var isIntegral: Bool { self == .count || self == .sum }

    /// The aggregate's value from a field's running statistics: `count` (of values) to
    /// `stddev`; nil for `quantile` and `weightedMean`, which need more than the stats.
    public func value(of stats: RunningStats) -> Double? {
        switch self {
        case .count: Double(stats.count)
        case .sum: stats.sum
        case .mean: stats.mean
        case .min: stats.min
        case .max: stats.max
        case .stddev: stats.standardDeviation
        case .quantile, .weightedMean: nil
        }
    }
}

/// One named column of `SampleSet.summarize`: an aggregate, over which field, on which rows.
public struct SummaryColumn: Sendable, Equatable {
    public var name: String
    public var aggregate: Aggregate
    /// The numeric field; nil only for `count` of rows.
    public var field: String?
    /// Only rows where every filter holds go into this column.
    public var filters: [RowFilter]

    public init(name: String, aggregate: Aggregate, field: String?, filters: [RowFilter] = []) {
        self.name = name
        self.aggregate = aggregate
        self.field = field
        self.filters = filters
    }
}

/// One group of a summary (or the whole set, ungrouped).
public struct SummaryRow: Sendable, Equatable {
    /// The group's label (`LocalKeys.label`); "" for an ungrouped summary.
    public var label: String
    /// Wall seconds of the group's start (seconds after midnight for `hourOfDay`); NaN ungrouped.
    public var start: Double
    /// Rows of the set in the group.
    public var rows: Int
    /// One value per aggregate, in the order given.
    public var values: [Double]
    /// How many values went into each aggregate (present, passing its filters).
    public var counts: [Int]
}

extension SampleSet {
    /// Every aggregate of `aggregates` over each group of `grouping` (nil: the whole set,
    /// one row even when empty) from one streaming pass over the set's chunks. Rows come
    /// back in key order; a group exists when it has at least one row of the set.
    ///
    /// Each chunk's fields (and `magnitude`) are read once and shared by the aggregates
    /// that use them; quantiles of the same field and filters share one pool of values
    /// per group, from which all their ranks are selected at once. A group's pool is
    /// freed once a chunk without rows of it follows a later group's rows, so memory is
    /// bounded by about one group.
    /// Rows arriving for a group already closed (sample time out of write order) send
    /// that group's quantiles through a second pass over just the late groups, batched
    /// so that their pools stay within `lateBudget` values.
    ///
    /// Throws `FieldError` for an unknown or non-numeric field.
    public func summarize(_ aggregates: [SummaryColumn], by grouping: Grouping?,
                          lateBudget: Int = 8 << 20) throws -> [SummaryRow] {
        let layout = SummaryLayout(aggregates)
        var pass = SummaryPass(layout: layout, grouping: grouping, timeZone: timeZone)
        try forEachChunk(reading: layout.readFields) { batch, sel in try pass.add(batch, sel) }
        pass.closeAll()
        for late in pass.lateBatches(budget: lateBudget) {
            let slots = Set(late)
            try forEachChunk(reading: layout.readFields) { batch, sel in try pass.addLate(batch, sel, slots: slots) }
            for s in late { pass.close(s) }
        }
        return pass.rows()
    }
}

/// One summary asked of a set: what `SampleSet.summarize(_:by:)` takes.
public struct SummaryRequest {
    public var set: SampleSet
    public var aggregates: [SummaryColumn]
    public var grouping: Grouping?

    public init(set: SampleSet, aggregates: [SummaryColumn], grouping: Grouping?) {
        self.set = set
        self.aggregates = aggregates
        self.grouping = grouping
    }
}

extension SampleSet {
    /// The summaries of several sets of one lineage (`SampleSet.lineage`: a set and those
    /// `filtered` made of it) from one pass over their chunks: each request's rows are
    /// those of its own `summarize(_:by:)` — it sees the same chunks and, after its set's
    /// filters, the same rows in the same order — while each chunk is read once and each
    /// of its fields (`magnitude` too) computed once for all of them (`ChunkColumns`).
    /// Late groups (see `summarize(_:by:)`) take their second pass per request.
    /// Throws what any request's own pass throws (`FieldError`, `GroupingError`, a read
    /// error); the caller may then run them one by one to tell which.
    public static func summarize(_ requests: [SummaryRequest], lateBudget: Int = 8 << 20) throws -> [[SummaryRow]] {
        guard let first = requests.first else { return [] }
        precondition(requests.allSatisfy { $0.set.lineage === first.set.lineage }, "summaries of one pass share a lineage")
        let layouts = requests.map { SummaryLayout($0.aggregates) }
        var passes = requests.indices.map {
            SummaryPass(layout: layouts[$0], grouping: requests[$0].grouping, timeZone: requests[$0].set.timeZone)
        }
        let projection = requests.indices.map { requests[$0].set.projection(reading: layouts[$0].readFields) }
            .dropFirst().reduce(first.set.projection(reading: layouts[0].readFields)) { $0.union($1) }
        let chunks = first.set.read(projection)
        while let batch = try chunks.next() {
            guard batch.count > 0 else { continue }
            let columns = ChunkColumns(batch)
            for r in requests.indices {
                // As `forEachChunk` selects for this request's set alone.
                var selection: [Int]?
                for filter in requests[r].set.filters {
                    selection = try filter.select(in: batch, among: selection, columns: columns)
                    if selection?.isEmpty == true { break }
                }
                if let selection, selection.isEmpty { continue }
                try passes[r].add(batch, selection, columns: columns)
            }
        }
        for r in requests.indices {
            passes[r].closeAll()
            for late in passes[r].lateBatches(budget: lateBudget) {
                let slots = Set(late)
                try requests[r].set.forEachChunk(reading: layouts[r].readFields) { batch, sel in
                    try passes[r].addLate(batch, sel, slots: slots)
                }
                for s in late { passes[r].close(s) }
            }
        }
        return passes.map { $0.rows() }
    }
}

/// The numeric fields of one chunk, each read (or computed: `magnitude`) once for every
/// pass and filter over the chunk that asks for it (`SampleSet.summarize(_:)` of requests).
final class ChunkColumns {
    let batch: SampleBatch
    private var read: [String: [Double]] = [:]

    init(_ batch: SampleBatch) { self.batch = batch }

    /// The field's values, one per row (`FieldReader.numbers`); throws its `FieldError`.
    func numbers(_ field: String) throws -> [Double] {
        if let known = read[field] { return known }
        let values = try FieldReader.numbers(field, in: batch)
        read[field] = values
        return values
    }
}

/// What one summary reads per chunk: distinct fields, distinct filter lists, and the
/// quantile pools (one per field and filter list).
struct SummaryLayout {
    let aggregates: [SummaryColumn]
    private(set) var fields: [String] = []
    private(set) var filterLists: [[RowFilter]] = []
    private(set) var aggField: [Int?] = []
    private(set) var aggWeight: [Int?] = []
    private(set) var aggMask: [Int?] = []
    /// Quantile pools: (field, mask) and the aggregates (with q) answered from each.
    private(set) var pools: [(field: Int, mask: Int?, members: [(agg: Int, q: Double)])] = []
    private(set) var aggPool: [Int?] = []

    init(_ aggregates: [SummaryColumn]) {
        self.aggregates = aggregates
        for a in aggregates {
            let f = a.field.map { fieldIndex($0) }
            let m = a.filters.isEmpty ? nil : maskIndex(a.filters)
            aggField.append(f)
            aggMask.append(m)
            if case .weightedMean(let w) = a.aggregate { aggWeight.append(fieldIndex(w)) } else { aggWeight.append(nil) }
            if case .quantile(let q) = a.aggregate, let f {
                if let p = pools.firstIndex(where: { $0.field == f && $0.mask == m }) {
                    pools[p].members.append((aggWeight.count - 1, q))
                    aggPool.append(p)
                } else {
                    pools.append((f, m, [(aggWeight.count - 1, q)]))
                    aggPool.append(pools.count - 1)
                }
            } else {
                aggPool.append(nil)
            }
        }
    }

    /// Every field the summary reads: the aggregates' fields and weights, and their filters'.
    var readFields: [String] { fields + filterLists.joined().map(\.field) }

    private mutating func fieldIndex(_ name: String) -> Int {
        if let i = fields.firstIndex(of: name) { return i }
        fields.append(name)
        return fields.count - 1
    }

    private mutating func maskIndex(_ filters: [RowFilter]) -> Int {
        if let i = filterLists.firstIndex(of: filters) { return i }
        filterLists.append(filters)
        return filterLists.count - 1
    }

    /// The numeric fields of a chunk (only those pools read when `poolsOnly`). Computed
    /// fields (`magnitude`) are written into `spare`'s buffers, which `keep` hands back.
    /// `shared`: the chunk's fields read already for other passes (nothing is then computed here).
    func columns(_ batch: SampleBatch, poolsOnly: Bool, reusing spare: inout [[Double]], shared: ChunkColumns? = nil) throws -> [[Double]] {
        if let shared { return try fields.map { try shared.numbers($0) } }
        if spare.count != fields.count { spare = [[Double]](repeating: [], count: fields.count) }
        var out: [[Double]] = []
        for i in fields.indices {
            if poolsOnly && !pools.contains(where: { $0.field == i }) {
                out.append([])
            } else if fields[i] == "magnitude" {
                var buffer = spare[i]
                spare[i] = []
                try FieldReader.magnitude(in: batch, into: &buffer)
                out.append(buffer)
            } else {
                out.append(try FieldReader.numbers(fields[i], in: batch))
            }
        }
        return out
    }

    /// Returns the computed columns' buffers to `spare` for the next chunk.
    func keep(_ columns: [[Double]], in spare: inout [[Double]]) {
        for i in fields.indices where fields[i] == "magnitude" { spare[i] = columns[i] }
    }

    /// For each filter list, whether each row of the chunk passes all its filters.
    func masks(_ batch: SampleBatch, columns: [[Double]], poolsOnly: Bool) throws -> [[Bool]] {
        try filterLists.indices.map { i in
            if poolsOnly && !pools.contains(where: { $0.mask == i }) { return [] }
            var mask = [Bool](repeating: true, count: batch.count)
            for f in filterLists[i] {
                let known = fields.firstIndex(of: f.field).map { columns[$0] }
                try f.narrow(&mask, in: batch, numbers: known?.count == batch.count ? known : nil)
            }
            return mask
        }
    }
}

/// The state of one summary pass: per group (slot) and aggregate.
struct SummaryPass {
    let layout: SummaryLayout
    let grouped: Bool
    var keyer: LocalKeys
    private var index: [Int64: Int] = [:]
    private var keys: [Int64] = []
    private var groupRows: [Int] = []
    /// slot × aggregate
    private var stats: [RunningStats] = []
    private var rowCounts: [Int] = []
    private var weighted: [(num: Double, den: Double, n: Int)] = []
    /// slot × pool
    private var pools: [ValuePool] = []
    private var poolSizes: [Int] = []
    private var answers: [[Double]?] = []
    private var open: [Int] = []
    private var closed: [Bool] = []
    private var late: Set<Int> = []
    /// Buffers of computed columns, reused chunk after chunk.
    private var spare: [[Double]] = []
    /// The latest group key seen.
    private var latest = Int64.min

    init(layout: SummaryLayout, grouping: Grouping?, timeZone: TimeZone) {
        self.layout = layout
        self.grouped = grouping != nil
        self.keyer = LocalKeys(grouping: grouping ?? .localDay, timeZone: timeZone)
        if grouping == nil { _ = slot(for: 0) }
    }

    private var nAgg: Int { layout.aggregates.count }
    private var nPool: Int { layout.pools.count }

    private mutating func slot(for key: Int64) -> Int {
        if let known = index[key] { return known }
        index[key] = keys.count
        keys.append(key)
        groupRows.append(0)
        stats += [RunningStats](repeating: RunningStats(), count: nAgg)
        rowCounts += [Int](repeating: 0, count: nAgg)
        weighted += [(num: Double, den: Double, n: Int)](repeating: (0, 0, 0), count: nAgg)
        pools += [ValuePool](repeating: ValuePool(), count: nPool)
        poolSizes += [Int](repeating: 0, count: nPool)
        answers += [[Double]?](repeating: nil, count: nPool)
        closed.append(false)
        return keys.count - 1
    }

    /// Calls `body(key, a, b)` for each run of equal group keys over positions a..<b of the
    /// chunk's rows (row indices `sel[a..<b]`, or a..<b when `sel` is nil). Throws
    /// `GroupingError` (before any call) when a row's time has no key (`LocalKeys.keyRange`).
    private mutating func runs(_ batch: SampleBatch, _ sel: [Int]?, _ body: (inout SummaryPass, Int64, Int, Int) throws -> Void) throws {
        let count = sel?.count ?? batch.count
        guard grouped else { try body(&self, 0, 0, count); return }
        var start = 0, runKey = Int64.min
        var cuts: [(Int64, Int, Int)] = []
        // Rows inside the current key's time range need no keying.
        var k = Int64.min, from = Double.nan, until = Double.nan
        try batch.times.withUnsafeBufferPointer { t in
            for j in 0..<count {
                let time = t[sel?[j] ?? j]
                if !(time >= from && time < until) {
                    (k, from, until) = keyer.keyRange(for: time)
                    if k == LocalKeys.none { throw GroupingError(sensor: batch.sensor, grouping: keyer.grouping, time: time) }
                }
                if k != runKey || j == 0 { if j > start { cuts.append((runKey, start, j)) }; start = j; runKey = k }
            }
        }
        if count > start { cuts.append((runKey, start, count)) }
        for (k, a, b) in cuts { try body(&self, k, a, b) }
    }

    /// Adds a chunk's selected rows to every aggregate (first pass).
    /// `columns`: the chunk's fields shared with other passes (`ChunkColumns`), nil: read here.
    mutating func add(_ batch: SampleBatch, _ sel: [Int]?, columns shared: ChunkColumns? = nil) throws {
        let cols = try layout.columns(batch, poolsOnly: false, reusing: &spare, shared: shared)
        defer { if shared == nil { layout.keep(cols, in: &spare) } }
        let masks = try layout.masks(batch, columns: cols, poolsOnly: false)
        var touched: Set<Int> = []
        try runs(batch, sel) { pass, key, a, b in
            let s = pass.slot(for: key)
            pass.groupRows[s] += b - a
            pass.accumulate(s, a, b, sel, cols, masks)
            if pass.closed[s] { pass.late.insert(s) }
            pass.fillPools(s, a, b, sel, cols, masks, store: !pass.late.contains(s))
            guard pass.nPool > 0 else { return }
            if !pass.closed[s] && !pass.open.contains(s) { pass.open.append(s) }
            touched.insert(s)
            pass.latest = max(pass.latest, key)
        }
        // Rows come in (nearly) time order, and a result SensorKit delivers twice is repeated
        // within its chunk: a group without rows in this chunk, older than the latest, is complete.
        for o in open where !touched.contains(o) && keys[o] < latest { close(o) }
    }

    /// Adds a chunk's rows of the `slots` groups to their quantile pools (late pass).
    mutating func addLate(_ batch: SampleBatch, _ sel: [Int]?, slots: Set<Int>) throws {
        let cols = try layout.columns(batch, poolsOnly: true, reusing: &spare)
        defer { layout.keep(cols, in: &spare) }
        let masks = try layout.masks(batch, columns: cols, poolsOnly: true)
        try runs(batch, sel) { pass, key, a, b in
            guard let s = pass.index[key], slots.contains(s) else { return }
            pass.fillPools(s, a, b, sel, cols, masks, store: true, counting: false)
        }
    }

    /// Stats, counts and weighted sums of rows a..<b for group `s`.
    private mutating func accumulate(_ s: Int, _ a: Int, _ b: Int, _ sel: [Int]?, _ cols: [[Double]], _ masks: [[Bool]]) {
        for g in 0..<nAgg {
            let agg = layout.aggregates[g]
            let mask = layout.aggMask[g].map { masks[$0] }
            switch agg.aggregate {
            case .quantile: continue
            case .count where layout.aggField[g] == nil:
                var n = 0
                if mask == nil { n = b - a } else { Rows.each(a, b, sel, mask) { _ in n += 1 } }
                rowCounts[s * nAgg + g] += n
            case .weightedMean:
                let v = cols[layout.aggField[g]!], w = cols[layout.aggWeight[g]!]
                var acc = weighted[s * nAgg + g]
                v.withUnsafeBufferPointer { v in
                    w.withUnsafeBufferPointer { w in
                        Rows.each(a, b, sel, mask) { i in
                            if !v[i].isNaN, !w[i].isNaN { acc.num += v[i] * w[i]; acc.den += w[i]; acc.n += 1 }
                        }
                    }
                }
                weighted[s * nAgg + g] = acc
            default:
                let part = cols[layout.aggField[g]!].withUnsafeBufferPointer { Rows.stats($0, a, b, sel, mask) }
                stats[s * nAgg + g].merge(part)
            }
        }
    }

    /// Appends the present values of rows a..<b to group `s`'s quantile pools (`store`),
    /// counting them in the pool sizes (`counting`).
    private mutating func fillPools(_ s: Int, _ a: Int, _ b: Int, _ sel: [Int]?, _ cols: [[Double]], _ masks: [[Bool]],
                                    store: Bool, counting: Bool = true) {
        for (p, pool) in layout.pools.enumerated() {
            let mask = pool.mask.map { masks[$0] }
            let at = s * nPool + p
            var n = 0
            cols[pool.field].withUnsafeBufferPointer { v in
                if store {
                    var values = pools[at]
                    pools[at] = ValuePool()
                    if sel == nil && mask == nil {
                        n = values.appendPresent(v, a..<b)
                    } else {
                        let before = values.count
                        Rows.each(a, b, sel, mask) { i in if !v[i].isNaN { values.append(v[i]) } }
                        n = values.count - before
                    }
                    pools[at] = values
                } else {
                    Rows.each(a, b, sel, mask) { i in if !v[i].isNaN { n += 1 } }
                }
            }
            if counting { poolSizes[at] += n }
        }
    }

    /// Takes group `s`'s quantiles from its pools and frees them.
    mutating func close(_ s: Int) {
        for (p, pool) in layout.pools.enumerated() {
            answers[s * nPool + p] = Quantiles.of(pools[s * nPool + p], pool.members.map(\.q))
            pools[s * nPool + p] = ValuePool()
        }
        closed[s] = true
        open.removeAll { $0 == s }
    }

    mutating func closeAll() {
        for s in open { close(s) }
    }

    /// The late groups in batches whose pools hold at most `budget` values together
    /// (a group larger than the budget goes alone).
    func lateBatches(budget: Int) -> [[Int]] {
        var out: [[Int]] = [], current: [Int] = [], size = 0
        for s in late.sorted(by: { keys[$0] < keys[$1] }) {
            let n = (0..<nPool).reduce(0) { $0 + poolSizes[s * nPool + $1] }
            if !current.isEmpty && size + n > budget { out.append(current); current = []; size = 0 }
            current.append(s)
            size += n
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    /// The result rows in key order.
    func rows() -> [SummaryRow] {
        keys.indices.sorted { keys[$0] < keys[$1] }.map { s in
            var values: [Double] = [], counts: [Int] = []
            for g in 0..<nAgg {
                let st = stats[s * nAgg + g]
                switch layout.aggregates[g].aggregate {
                case .count where layout.aggField[g] == nil:
                    values.append(Double(rowCounts[s * nAgg + g])); counts.append(rowCounts[s * nAgg + g])
                case .count, .sum, .mean, .min, .max, .stddev:
                    values.append(layout.aggregates[g].aggregate.value(of: st)!); counts.append(st.count)
                case .weightedMean:
                    let w = weighted[s * nAgg + g]
                    values.append(w.den > 0 ? w.num / w.den : .nan); counts.append(w.n)
                case .quantile:
                    let p = layout.aggPool[g]!
                    let member = layout.pools[p].members.firstIndex { $0.agg == g }!
                    values.append(answers[s * nPool + p]?[member] ?? .nan)
                    counts.append(poolSizes[s * nPool + p])
                }
            }
            return SummaryRow(label: grouped ? keyer.label(for: keys[s]) : "", start: grouped ? keyer.start(for: keys[s]) : .nan,
                              rows: groupRows[s], values: values, counts: counts)
        }
    }
}

/// Loops over the rows of a run: positions a..<b of a chunk's selection (or rows a..<b),
/// skipping rows a mask clears.
enum Rows {
    @inline(__always)
    static func each(_ a: Int, _ b: Int, _ sel: [Int]?, _ mask: [Bool]?, _ body: (Int) -> Void) {
        if let sel {
            if let mask { for j in a..<b where mask[sel[j]] { body(sel[j]) } } else { for j in a..<b { body(sel[j]) } }
        } else if let mask {
            mask.withUnsafeBufferPointer { m in for i in a..<b where m[i] { body(i) } }
        } else {
            for i in a..<b { body(i) }
        }
    }

    /// Count, sum, min, max and squared deviations of the present values among the rows.
    static func stats(_ v: UnsafeBufferPointer<Double>, _ a: Int, _ b: Int, _ sel: [Int]?, _ mask: [Bool]?) -> RunningStats {
        var n = 0, sum = 0.0, lo = Double.infinity, hi = -Double.infinity
        each(a, b, sel, mask) { i in
            let x = v[i]
            if x.isNaN { return }
            n += 1
            sum += x
            if x < lo { lo = x }
            if x > hi { hi = x }
        }
        guard n > 0 else { return RunningStats() }
        let mean = sum / Double(n)
        var m2 = 0.0
        each(a, b, sel, mask) { i in
            let x = v[i]
            if !x.isNaN { let d = x - mean; m2 += d * d }
        }
        return RunningStats(count: n, sum: sum, min: lo, max: hi, m2: m2)
    }
}
