import Foundation
import SensorKitModel
import XCTest
@testable import StudyRuntime

/// Quantiles by selection agree exactly with the sorted array's type-7 quantiles.
final class QuantileSelectionTests: XCTestCase {
    /// The sort-based R type 7 quantile (the definition the selection must reproduce).
    static func sorted(_ v: [Double], _ q: Double) -> Double {
        guard !v.isEmpty else { return .nan }
        let h = Double(v.count - 1) * q
        let lo = Int(h.rounded(.down)), hi = min(lo + 1, v.count - 1)
        return v[lo] + (h - Double(lo)) * (v[hi] - v[lo])
    }

    static let qs: [Double] = [0, 0.001, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.999, 1]

    func check(_ values: [Double], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        var copy = values
        let ascending = values.sorted()
        let got = Quantiles.of(&copy, QuantileSelectionTests.qs)
        for (q, g) in zip(QuantileSelectionTests.qs, got) {
            let want = QuantileSelectionTests.sorted(ascending, q)
            XCTAssertEqual(g.bitPattern, want.bitPattern, "\(what): q = \(q): \(g) vs \(want)", file: file, line: line)
        }
        XCTAssertEqual(copy.sorted(), ascending, "\(what): selection only reorders", file: file, line: line)
        // The same values gathered in a segmented pool (as summarize keeps them) give the same bits.
        var pool = ValuePool()
        for x in values { pool.append(x) }
        XCTAssertEqual(pool.count, values.count, file: file, line: line)
        XCTAssertEqual(pool.segments.flatMap { $0 }, values, "\(what): the pool keeps every value in order", file: file, line: line)
        for (g, p) in zip(got, Quantiles.of(pool, QuantileSelectionTests.qs)) {
            XCTAssertEqual(p.bitPattern, g.bitPattern, "\(what): pooled \(p) vs \(g)", file: file, line: line)
        }
    }

    /// Pools spanning several segments (and a partial last one) select across them.
    func testPoolsAcrossSegments() {
        var rng = SplitMix(seed: 5)
        for n in [ValuePool.segmentSize - 1, ValuePool.segmentSize, ValuePool.segmentSize + 1, 3 * ValuePool.segmentSize + 17] {
            check((0..<n).map { _ in 1 + Double(rng.next() % 100_000) / 1e6 }, "n = \(n) across segments")
        }
        var pool = ValuePool()
        for i in 0..<(2 * ValuePool.segmentSize + 3) { pool.append(Double(i)) }
        XCTAssertEqual(pool.segments.map(\.count), [ValuePool.segmentSize, ValuePool.segmentSize, 3])
    }

    /// Appending a stretch of rows at once keeps exactly the present values, in order, across
    /// segment ends, as appending them one by one does; mixed with single appends.
    func testAppendingStretchesKeepsThePresentValuesInOrder() {
        var rng = SplitMix(seed: 9)
        let size = ValuePool.segmentSize
        let v: [Double] = (0..<(3 * size + 101)).map { i in i % 7 == 3 || i == size ? .nan : Double(rng.next() % 1_000) }
        for cuts in [[0, v.count], [0, 5, size - 2, size + 3, 2 * size, v.count], [0, 1, 2, v.count - 1, v.count]] {
            var pool = ValuePool()
            var added = 0
            v.withUnsafeBufferPointer { b in
                for (k, (a, e)) in zip(cuts, cuts.dropFirst()).enumerated() {
                    if k % 2 == 1 {
                        for x in v[a..<e] where !x.isNaN { pool.append(x) }
                        added += v[a..<e].filter { !$0.isNaN }.count
                    } else {
                        added += pool.appendPresent(b, a..<e)
                    }
                }
            }
            let present = v.filter { !$0.isNaN }
            XCTAssertEqual(added, present.count, "\(cuts)")
            XCTAssertEqual(pool.count, present.count, "\(cuts)")
            XCTAssertEqual(pool.segments.flatMap { $0 }, present, "\(cuts)")
            XCTAssertEqual(pool.segments.dropLast().map(\.count), [Int](repeating: size, count: present.count / size), "\(cuts)")
        }
    }

    func testTinyGroups() {
        var empty: [Double] = []
        XCTAssertTrue(Quantiles.of(&empty, [0.5])[0].isNaN)
        check([3], "one value")
        check([2, 1], "two values")
        check([5, 5, 5], "three ties")
        check([1, -1, 0.5, 7, 7, -3], "six values")
    }

    func testManyTiesAndSmallAlphabetsOnBothPaths() {
        var rng = SplitMix(seed: 7)
        for n in [25, 100, 1000, Quantiles.radixThreshold - 1, Quantiles.radixThreshold, 50_000] {
            check((0..<n).map { _ in Double(rng.next() % 3) }, "n = \(n), three distinct values")
            check([Double](repeating: 1.25, count: n), "n = \(n), all equal")
            check((0..<n).map { _ in Double(rng.next() % 1000) / 7 - 50 }, "n = \(n), 1000 values with negatives")
            check((0..<n).map { i in Double(i) }, "n = \(n), ascending")
            check((0..<n).map { i in Double(n - i) }, "n = \(n), descending")
        }
    }

    func testRandomDoublesAcrossMagnitudesOnTheRadixPath() {
        var rng = SplitMix(seed: 11)
        // Clustered like accelerometer magnitudes, plus a far outlier that stretches the key range.
        var v = (0..<60_000).map { _ in 1 + (Double(rng.next() % 1_000_000) / 1_000_000 - 0.5) * 0.01 }
        v.append(1e300)
        v.append(-1e-300)
        check(v, "clustered with outliers")
        check((0..<30_000).map { _ in Double(bitPattern: rng.next() >> 2) }, "random bit patterns")
    }

    func testOutOfRangeQIsNaN() {
        var v: [Double] = [1, 2, 3]
        let r = Quantiles.of(&v, [-0.1, 0.5, 1.5])
        XCTAssertTrue(r[0].isNaN)
        XCTAssertEqual(r[1], 2)
        XCTAssertTrue(r[2].isNaN)
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `SampleSet.summarize`: every aggregate of a grouping from one pass equals the
/// aggregate computed on its own.
final class SummarizeTests: XCTestCase {
    let utc = TimeZone(identifier: "UTC")!

    /// Heart-rate-like rows every 60 s for three days, some missing, in chunks of 500.
    func heartRate() -> SampleSet {
        var rng = SplitMix(seed: 3)
        var batches: [SampleBatch] = []
        let n = 3 * 1440
        var i = 0
        while i < n {
            let rows = i..<min(i + 500, n)
            let times = rows.map { Double($0) * 60 }
            let values = rows.map { _ in Double(50 + rng.next() % 60) }
            let present = rows.map { $0 % 17 != 0 }
            batches.append(SampleBatch(sensor: .heartRate, writeTimes: times, times: times,
                                       columns: [Column(name: "heartRate", data: .double(values), present: present)]))
            i = rows.upperBound
        }
        return SampleSet(sensor: .heartRate, timeZone: utc, batches: batches)
    }

    func testEveryAggregateMatchesItsOwnPass() throws {
        let set = heartRate()
        let high = RowFilter(field: "heartRate", op: .gt, operand: .number(90))
        let aggregates = [
            SummaryColumn(name: "rows", aggregate: .count, field: nil),
            SummaryColumn(name: "n", aggregate: .count, field: "heartRate"),
            SummaryColumn(name: "sum", aggregate: .sum, field: "heartRate"),
            SummaryColumn(name: "mean", aggregate: .mean, field: "heartRate"),
            SummaryColumn(name: "min", aggregate: .min, field: "heartRate"),
            SummaryColumn(name: "max", aggregate: .max, field: "heartRate"),
            SummaryColumn(name: "sd", aggregate: .stddev, field: "heartRate"),
            SummaryColumn(name: "p10", aggregate: .quantile(0.1), field: "heartRate"),
            SummaryColumn(name: "p90", aggregate: .quantile(0.9), field: "heartRate"),
            SummaryColumn(name: "high", aggregate: .count, field: nil, filters: [high]),
            SummaryColumn(name: "highMedian", aggregate: .quantile(0.5), field: "heartRate", filters: [high]),
            SummaryColumn(name: "wm", aggregate: .weightedMean(weight: "time"), field: "heartRate"),
        ]
        for grouping in [Grouping.localDay, .localHour, .hourOfDay, .window(seconds: 7200, origin: 1800)] {
            let rows = try set.summarize(aggregates, by: grouping)
            let single: [Aggregate] = [.count, .count, .sum, .mean, .min, .max, .stddev, .quantile(0.1), .quantile(0.9)]
            for (g, agg) in single.enumerated() where g != 1 {
                let alone = try set.grouped(by: grouping, agg, of: agg == .count ? nil : "heartRate")
                XCTAssertEqual(alone.map(\.label), rows.map(\.label), "\(grouping) \(agg)")
                for (a, r) in zip(alone, rows) {
                    XCTAssertEqual(a.value, r.values[g], accuracy: 1e-9, "\(grouping) \(agg) \(r.label)")
                }
            }
            let filtered = set.filtered(high)
            let highCounts = try filtered.grouped(by: grouping, .count, of: nil)
            let highMedians = try filtered.grouped(by: grouping, .quantile(0.5), of: "heartRate")
            let byLabel = Dictionary(uniqueKeysWithValues: zip(highCounts.map(\.label), zip(highCounts, highMedians)))
            for r in rows {
                XCTAssertEqual(r.values[1], Double(r.counts[2]))
                XCTAssertEqual(r.values[0], Double(r.rows))
                XCTAssertEqual(r.values[9], byLabel[r.label].map { Double($0.0.count) } ?? 0, "\(grouping) \(r.label)")
                if let m = byLabel[r.label]?.1.value { XCTAssertEqual(r.values[10], m) } else { XCTAssertTrue(r.values[10].isNaN) }
            }
        }
        let whole = try set.summarize(aggregates, by: nil)
        XCTAssertEqual(whole.count, 1)
        XCTAssertEqual(whole[0].rows, 3 * 1440)
        XCTAssertEqual(whole[0].values[3], try set.stats("heartRate").mean, accuracy: 1e-9)
        XCTAssertEqual(whole[0].values[8], try set.quantile("heartRate", 0.9))
    }

    /// Hourly heart rate (the hour of the day as its value) for days 1–4 in order, in chunks
    /// of a day, then late rows for days 1 (100) and 3 (−100) in a chunk of their own.
    static func lateRows() -> SampleSet {
        var times = (0..<(4 * 24)).map { Double($0) * 3600 }
        var values = times.map { ($0 / 3600).truncatingRemainder(dividingBy: 24) }
        times += [3600 * 5.5, 3600 * 54.5]
        values += [100, -100]
        let batch = SampleBatch(sensor: .heartRate, writeTimes: times, times: times,
                                columns: [Column(name: "heartRate", data: .double(values))])
        return SampleSet(sensor: .heartRate, timeZone: TimeZone(identifier: "UTC")!,
                         batches: stride(from: 0, to: 96, by: 24).map { batch.slice($0..<($0 + 24)) } + [batch.slice(96..<98)])
    }

    func testLateRowsOfClosedGroupsAreExactAndBatched() throws {
        // With a budget of one value, each late day takes its own second pass.
        let set = SummarizeTests.lateRows()
        let aggregates = [SummaryColumn(name: "median", aggregate: .quantile(0.5), field: "heartRate"),
                          SummaryColumn(name: "max", aggregate: .max, field: "heartRate")]
        for budget in [1, 1 << 20] {
            let rows = try set.summarize(aggregates, by: .localDay, lateBudget: budget)
            var day1 = (0..<24).map(Double.init) + [100], day3 = (0..<24).map(Double.init) + [-100]
            XCTAssertEqual(rows.map(\.values), [[Quantiles.of(&day1, 0.5), 100], [11.5, 23], [Quantiles.of(&day3, 0.5), 23], [11.5, 23]])
            XCTAssertEqual(rows.map(\.counts), [[25, 25], [24, 24], [25, 25], [24, 24]])
        }
    }

    func testEmptySetGivesOneUngroupedRowAndNoGroups() throws {
        let set = SampleSet(sensor: .heartRate, timeZone: utc, batches: [])
        let aggregates = [SummaryColumn(name: "n", aggregate: .count, field: nil),
                          SummaryColumn(name: "p", aggregate: .quantile(0.5), field: "heartRate")]
        XCTAssertEqual(try set.summarize(aggregates, by: .localDay), [])
        let whole = try set.summarize(aggregates, by: nil)
        XCTAssertEqual(whole.count, 1)
        XCTAssertEqual(whole[0].values[0], 0)
        XCTAssertTrue(whole[0].values[1].isNaN)
    }

    func testUnknownFieldThrows() {
        let set = heartRate()
        XCTAssertThrowsError(try set.summarize([SummaryColumn(name: "x", aggregate: .sum, field: "lux")], by: .localDay)) { e in
            XCTAssertTrue("\(e)".contains("no field 'lux'"), "\(e)")
        }
    }
}

/// `LocalKeys.keyRange` (the fast path of summaries) agrees with `key(for:)` for every time
/// in the range it returns, around DST changes and at exact boundaries.
final class KeyRangeTests: XCTestCase {
    func testRangesHoldTheirKeyAndEndAtTheNextKey() throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        // 2026-03-29 01:00 UTC: clocks go forward; 2026-10-25 01:00 UTC: back.
        let instants: [Double] = [1_774_746_000, 1_792_890_000, 1_772_409_600, 1_772_406_000]
        for grouping in [Grouping.localHour, .localDay, .hourOfDay, .window(seconds: 900, origin: 0.1)] {
            var ranged = LocalKeys(grouping: grouping, timeZone: berlin)
            var plain = LocalKeys(grouping: grouping, timeZone: berlin)
            for instant in instants {
                var times: [Double] = []
                for d in stride(from: -7_300.0, through: 7_300, by: 0.37) { times.append(instant + d) }
                for edge in [instant - 3_600, instant, instant + 3_600, instant + 86_400] {
                    var t = edge
                    for _ in 0..<4 { t = t.nextDown }
                    for _ in 0..<8 { times.append(t); t = t.nextUp }
                }
                for t in times {
                    let (k, from, until) = ranged.keyRange(for: t)
                    XCTAssertEqual(k, plain.key(for: t), "\(grouping) at \(t)")
                    XCTAssertTrue(from <= t && t < until, "\(grouping): \(t) outside \(from)..<\(until)")
                    XCTAssertEqual(plain.key(for: from), k, "\(grouping): range start \(from)")
                    XCTAssertEqual(plain.key(for: until.nextDown), k, "\(grouping): range end \(until)")
                }
            }
        }
        var keys = LocalKeys(grouping: .localDay, timeZone: berlin)
        XCTAssertEqual(keys.keyRange(for: .nan).key, Int64.min)
    }
}

/// A fetch read once is replayed from memory while it fits the run's budget.
final class ChunkCacheTests: XCTestCase {
    final class Reads: @unchecked Sendable { var count = 0 }

    func set(_ reads: Reads) -> SampleSet {
        let batches = (0..<4).map { c in
            let times = (0..<1000).map { Double(c * 1000 + $0) }
            return SampleBatch(sensor: .heartRate, writeTimes: times, times: times,
                               columns: [Column(name: "heartRate", data: .double(times.map { 50 + $0.truncatingRemainder(dividingBy: 70) }))])
        }
        return SampleSet(sensor: .heartRate, timeZone: TimeZone(identifier: "UTC")!) {
            reads.count += 1
            return BatchIterator(batches)
        }
    }

    func testLaterPassesReplayAKeptRead() throws {
        let reads = Reads(), budget = ChunkBudget(limit: 1 << 20)
        var cached: SampleSet? = set(reads).cached(in: budget)
        let plain = set(Reads())
        do {                                                                // an abandoned read keeps nothing
            let partial = cached!.produce()
            XCTAssertEqual(try partial.next()?.count, 1000)
        }
        XCTAssertEqual(budget.held, 0)
        XCTAssertEqual(try cached!.count(), 4000)
        XCTAssertGreaterThan(budget.held, 4000 * 16)
        XCTAssertEqual(try cached!.stats("heartRate").mean, try plain.stats("heartRate").mean)
        XCTAssertEqual(try cached!.quantile("heartRate", 0.9), try plain.quantile("heartRate", 0.9))
        XCTAssertEqual(try cached!.filtered(RowFilter(field: "heartRate", op: .gt, operand: .number(100))).count(),
                       try plain.filtered(RowFilter(field: "heartRate", op: .gt, operand: .number(100))).count())
        XCTAssertEqual(reads.count, 2, "one abandoned read, one complete read, then replays")
        cached = nil
        XCTAssertEqual(budget.held, 0, "a collected set returns its bytes")
    }

    /// A pass whose read throws (a recorded store's broken chunk) rethrows that very error
    /// from every aggregate, through the chunk cache and a filter, and keeps nothing: the
    /// next pass reads the source again.
    func testAReadThatThrowsIsRethrownAndNotKept() throws {
        struct Broken: Error {}
        let reads = Reads(), budget = ChunkBudget(limit: 1 << 20)
        let good = SampleBatch(sensor: .heartRate, writeTimes: [1, 2], times: [1, 2],
                               columns: [Column(name: "heartRate", data: .double([60, 70]))])
        let set = SampleSet(sensor: .heartRate, timeZone: TimeZone(identifier: "UTC")!) {
            reads.count += 1
            var step = 0
            return BatchIterator {
                step += 1
                if step == 1 { return good }
                throw Broken()
            }
        }.cached(in: budget)
        XCTAssertThrowsError(try set.count()) { XCTAssertTrue($0 is Broken, "\($0)") }
        XCTAssertEqual(budget.held, 0)
        XCTAssertThrowsError(try set.filtered(RowFilter(field: "heartRate", op: .gt, operand: .number(65))).stats("heartRate")) {
            XCTAssertTrue($0 is Broken, "\($0)")
        }
        XCTAssertThrowsError(try set.distinct().quantile("heartRate", 0.5)) { XCTAssertTrue($0 is Broken, "\($0)") }
        XCTAssertEqual(reads.count, 3, "a pass that threw is read again next time")
        XCTAssertEqual(budget.held, 0)
    }

    /// A set over a source that reads only the columns asked for (as a store does): the
    /// projections asked, in order.
    final class Projections: @unchecked Sendable { var asked: [ColumnProjection] = [] }

    func projectedSet(_ asked: Projections, budget: ChunkBudget) -> SampleSet {
        let batches = NaturalFormTests.batches()
        return SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!) { (columns: ColumnProjection) in
            asked.asked.append(columns)
            return BatchIterator(columns: columns, batches.map { $0.keeping(columns) })
        }.cached(in: budget)
    }

    /// A kept read made with fewer columns is never replayed to a pass that needs more: that
    /// pass reads the source (asking for its columns and the kept read's), and its complete
    /// read replaces the kept one; passes it covers replay it.
    func testAProjectedReadIsNotReplayedToAPassNeedingMoreColumns() throws {
        let asked = Projections(), budget = ChunkBudget(limit: 64 << 20)
        let set = projectedSet(asked, budget: budget)
        let plain = SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!, batches: NaturalFormTests.batches())
        XCTAssertEqual(try set.count(), 86_400)
        XCTAssertEqual(asked.asked, [.none])
        let held = budget.held
        XCTAssertEqual(try set.count(), 86_400)
        XCTAssertEqual(asked.asked, [.none], "a count replays the kept read")
        XCTAssertEqual(try set.stats("x"), try plain.stats("x"))
        XCTAssertEqual(asked.asked, [.none, ColumnProjection(["x"])])
        XCTAssertGreaterThan(budget.held, held, "the wider read replaced the narrower one")
        XCTAssertEqual(try set.stats("magnitude"), try plain.stats("magnitude"))
        XCTAssertEqual(asked.asked, [.none, ColumnProjection(["x"]), ColumnProjection(["x", "y", "z"])])
        let high = RowFilter(field: "magnitude", op: .gt, operand: .number(1.1))
        XCTAssertEqual(try set.filtered(high).stats("x"), try plain.filtered(high).stats("x"))
        XCTAssertEqual(try set.grouped(by: .localDay, quantiles: [0.5], of: "y").map(\.values),
                       try plain.grouped(by: .localDay, quantiles: [0.5], of: "y").map(\.values))
        XCTAssertEqual(asked.asked.count, 3, "x, y and z are kept: the filter and the quantiles replay them")
        XCTAssertEqual(try set.materialize(), try plain.materialize())
        XCTAssertEqual(asked.asked.last, .all)
        XCTAssertThrowsError(try set.stats("nonsense")) { XCTAssertTrue("\($0)".contains("fields: x, y, z, time, writeTime"), "\($0)") }
    }

    /// Without room to keep a read, every pass reads the source with its own columns.
    func testEveryPassAsksForItsOwnColumns() throws {
        let asked = Projections()
        let set = projectedSet(asked, budget: ChunkBudget(limit: 0))
        let high = RowFilter(field: "magnitude", op: .gt, operand: .number(1.1))
        _ = try set.count()
        _ = try set.filtered(high).count()
        _ = try set.summarize([SummaryColumn(name: "n", aggregate: .count, field: nil, filters: [RowFilter(field: "x", op: .gt, operand: .number(0))]),
                               SummaryColumn(name: "w", aggregate: .weightedMean(weight: "z"), field: "y")], by: .localHour)
        _ = try set.column("time")
        _ = try set.distinct().count()
        XCTAssertEqual(asked.asked, [.none, ColumnProjection(["x", "y", "z"]), ColumnProjection(["x", "y", "z"]), .none, .all])
    }

    func testAReadLargerThanTheBudgetIsNotKept() throws {
        let reads = Reads(), budget = ChunkBudget(limit: 40_000)
        let cached = set(reads).cached(in: budget)
        XCTAssertEqual(try cached.count(), 4000)
        XCTAssertEqual(try cached.count(), 4000)
        XCTAssertEqual(reads.count, 2)
        XCTAssertEqual(budget.held, 0)
    }
}

/// The natural form of a protocol — one aggregate per statement over one fetched set —
/// gives exactly what one `summarize` pass gives, and what a plain loop computes, whether
/// the set's read is kept for later passes or (budget too small) read again each time.
final class NaturalFormTests: XCTestCase {
    final class Reads: @unchecked Sendable { var count = 0 }

    /// Two days of accelerometer rows every 2 s, in chunks of 1,000 rows (not aligned
    /// to hours), x/y/z around 1 g.
    static func batches() -> [SampleBatch] {
        var rng = SplitMix(seed: 11)
        func unit() -> Double { Double(rng.next() % 1_000_000) / 1_000_000 }
        let n = 2 * 43_200, start = 1_700_000_000.0
        var out: [SampleBatch] = []
        var i = 0
        while i < n {
            let rows = i..<min(i + 1_000, n)
            let times = rows.map { start + Double($0) * 2 }
            let x = rows.map { _ in unit() - 0.5 }, y = rows.map { _ in unit() - 0.5 }, z = rows.map { _ in 0.6 + unit() * 0.7 }
            out.append(SampleBatch(sensor: .accelerometer, writeTimes: times, times: times,
                                   columns: [Column(name: "x", data: .double(x)), Column(name: "y", data: .double(y)),
                                             Column(name: "z", data: .double(z))]))
            i = rows.upperBound
        }
        return out
    }

    func set(_ reads: Reads, budget: ChunkBudget) -> SampleSet {
        let batches = NaturalFormTests.batches()
        return SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!) {
            reads.count += 1
            return BatchIterator(batches)
        }.cached(in: budget)
    }

    /// The set over a source that reads only the columns each pass asks for (as a store does).
    func projectedSet(_ reads: Reads, budget: ChunkBudget) -> SampleSet {
        let batches = NaturalFormTests.batches()
        return SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!) { (columns: ColumnProjection) in
            reads.count += 1
            return BatchIterator(columns: columns, batches.map { $0.keeping(columns) })
        }.cached(in: budget)
    }

    func testNaturalFormEqualsOnePassAndAPlainLoop() throws {
        // The plain loop: hour sums, day counts and pools, quantiles by sorting (R type 7).
        var hourSum: [Int: (Double, Int)] = [:], dayPool: [Int: [Double]] = [:], dayActive: [Int: Int] = [:]
        for b in NaturalFormTests.batches() {
            guard case .double(let x) = b.columns[0].data, case .double(let y) = b.columns[1].data,
                  case .double(let z) = b.columns[2].data else { return XCTFail("columns") }
            for i in 0..<b.count {
                let m = (x[i] * x[i] + y[i] * y[i] + z[i] * z[i]).squareRoot()
                let h = Int((b.times[i] / 3_600).rounded(.down)), d = Int((b.times[i] / 86_400).rounded(.down))
                hourSum[h, default: (0, 0)].0 += m
                hourSum[h, default: (0, 0)].1 += 1
                dayPool[d, default: []].append(m)
                if m > 1.1 { dayActive[d, default: 0] += 1 }
            }
        }
        let qs = [0.05, 0.5, 0.95]
        let active = RowFilter(field: "magnitude", op: .gt, operand: .number(1.1))
        // Budgets: none (every pass reads the source), and room for the whole read (kept);
        // a source that answers every column, and one that reads only those asked for (the
        // count reads none: the mean's read, with x, y and z, is the one kept).
        for (limit, projected, expectedReads) in [(0, false, 6), (64 << 20, false, 1), (0, true, 6), (64 << 20, true, 2)] {
            let reads = Reads(), budget = ChunkBudget(limit: limit)
            let week = projected ? projectedSet(reads, budget: budget) : set(reads, budget: budget)
            // The four statements of the natural form…
            let total = try week.count()
            let hourly = try week.grouped(by: .localHour, .mean, of: "magnitude")
            let activeDays = try week.filtered(active).grouped(by: .localDay, .count, of: nil)
            let spread = try week.grouped(by: .localDay, quantiles: qs, of: "magnitude")
            // …and the one-pass form.
            let hours = try week.summarize([SummaryColumn(name: "mean", aggregate: .mean, field: "magnitude")], by: .localHour)
            let days = try week.summarize([SummaryColumn(name: "samples", aggregate: .count, field: nil),
                                           SummaryColumn(name: "active", aggregate: .count, field: nil, filters: [active])]
                                          + qs.map { SummaryColumn(name: "q\($0)", aggregate: .quantile($0), field: "magnitude") },
                                          by: .localDay)
            let what = "budget \(limit), projected \(projected)"
            XCTAssertEqual(reads.count, expectedReads, what)
            XCTAssertEqual(budget.held > 0, limit > 0, what)
            XCTAssertEqual(total, 86_400, what)
            XCTAssertEqual(total, days.reduce(0) { $0 + $1.rows }, what)
            XCTAssertEqual(hourly.count, hourSum.count, what)
            XCTAssertEqual(spread.count, dayPool.count, what)
            XCTAssertEqual(hourly.map(\.label), hours.map(\.label), what)
            XCTAssertEqual(hourly.map { $0.value.bitPattern }, hours.map { $0.values[0].bitPattern }, what)
            for (h, row) in zip(hourSum.keys.sorted(), hourly) {
                XCTAssertEqual(row.value, hourSum[h]!.0 / Double(hourSum[h]!.1), accuracy: 1e-12, what)
                XCTAssertEqual(row.count, hourSum[h]!.1, what)
            }
            XCTAssertEqual(spread.map(\.label), days.map(\.label), what)
            XCTAssertEqual(activeDays.map(\.label), days.map(\.label), what)
            for ((d, natural), (filtered, row)) in zip(zip(dayPool.keys.sorted(), spread), zip(activeDays, days)) {
                let sorted = dayPool[d]!.sorted()
                XCTAssertEqual(natural.count, sorted.count, what)
                XCTAssertEqual(row.values[0], Double(sorted.count), what)
                XCTAssertEqual(Int(filtered.value), dayActive[d], what)
                XCTAssertEqual(row.values[1], Double(dayActive[d]!), what)
                XCTAssertEqual(natural.values.map(\.bitPattern), Array(row.values[2...]).map(\.bitPattern), what)
                XCTAssertEqual(natural.values, qs.map { QuantileSelectionTests.sorted(sorted, $0) }, what)
            }
        }
    }

    /// The natural form's three grouped aggregates asked together (`SampleSet.summarize`
    /// of requests, as a script's deferred results are answered) read the source once,
    /// with no budget to keep anything, and give each its own pass's rows bit for bit.
    func testAggregatesOfOneLineageAskedTogetherReadItOnce() throws {
        let qs = [0.05, 0.5, 0.95]
        let active = RowFilter(field: "magnitude", op: .gt, operand: .number(1.1))
        // A filter that leaves whole days empty: their groups must not appear.
        let early = RowFilter(field: "time", op: .lt, operand: .number(1_700_000_000 + 30_000))
        for projected in [false, true] {
            let reads = Reads(), budget = ChunkBudget(limit: 0)
            let week = projected ? projectedSet(reads, budget: budget) : set(reads, budget: budget)
            let requests = [
                SummaryRequest(set: week, aggregates: GroupResult.columns(.mean, of: "magnitude"), grouping: .localHour),
                SummaryRequest(set: week.filtered(active), aggregates: GroupResult.columns(.count, of: nil), grouping: .localDay),
                SummaryRequest(set: week, aggregates: GroupResult.columns(quantiles: qs, of: "magnitude"), grouping: .localDay),
                SummaryRequest(set: week.filtered(early).filtered(active), aggregates: GroupResult.columns(.max, of: "x"),
                               grouping: .hourOfDay),
                SummaryRequest(set: week.filtered(early), aggregates: GroupResult.columns(.count, of: nil), grouping: nil),
            ]
            let together = try SampleSet.summarize(requests)
            XCTAssertEqual(reads.count, 1, "projected \(projected): one read for every request")
            for (r, request) in requests.enumerated() {
                let alone = try request.set.summarize(request.aggregates, by: request.grouping)
                XCTAssertEqual(together[r].map(\.label), alone.map(\.label), "request \(r)")
                XCTAssertEqual(together[r].map(\.rows), alone.map(\.rows), "request \(r)")
                XCTAssertEqual(together[r].map(\.counts), alone.map(\.counts), "request \(r)")
                XCTAssertEqual(together[r].map { $0.values.map(\.bitPattern) }, alone.map { $0.values.map(\.bitPattern) }, "request \(r)")
            }
            XCTAssertEqual(reads.count, 1 + requests.count, "each alone reads again")
            XCTAssertEqual(together[1].count, together[2].count, "every day has active rows")
            XCTAssertEqual(together[3].count, 9, "the early rows' hours of the day only")
            XCTAssertEqual(together[4].first?.rows, 15_000)
        }
    }

    /// Requests whose groups close and then get late rows take their second pass alone and
    /// still equal their own pass; an error of one request (an unknown field) is thrown.
    func testLateRowsAndErrorsOfRequestsAskedTogether() throws {
        let set = SummarizeTests.lateRows()
        let high = set.filtered(RowFilter(field: "heartRate", op: .ge, operand: .number(12)))
        let requests = [SummaryRequest(set: set, aggregates: GroupResult.columns(quantiles: [0.5], of: "heartRate"), grouping: .localDay),
                        SummaryRequest(set: high, aggregates: GroupResult.columns(.quantile(0.25), of: "heartRate"), grouping: .localDay)]
        let together = try SampleSet.summarize(requests, lateBudget: 1)
        for (r, request) in requests.enumerated() {
            let alone = try request.set.summarize(request.aggregates, by: request.grouping, lateBudget: 1)
            XCTAssertEqual(together[r].map { $0.values.map(\.bitPattern) }, alone.map { $0.values.map(\.bitPattern) })
            XCTAssertEqual(together[r].map(\.counts), alone.map(\.counts))
        }
        XCTAssertEqual(together[0][0].counts, [25])
        XCTAssertThrowsError(try SampleSet.summarize(requests + [SummaryRequest(set: high, aggregates: GroupResult.columns(.mean, of: "pulse"),
                                                                                 grouping: .localHour)])) { error in
            XCTAssertTrue("\(error)".contains("has no field 'pulse'"), "\(error)")
        }
    }

    /// A kept read serves only its own set and the sets made from it (`where`, grouping):
    /// another fetch (another window) sharing the budget reads its own samples.
    func testAKeptReadServesOnlyItsOwnSet() throws {
        let budget = ChunkBudget(limit: 64 << 20)
        let readsA = Reads(), readsB = Reads()
        let a = set(readsA, budget: budget)
        let later = NaturalFormTests.batches().suffix(10)
        let laterRows = later.reduce(0) { $0 + $1.count }
        let b = SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!) {
            readsB.count += 1
            return BatchIterator(Array(later))
        }.cached(in: budget)
        XCTAssertEqual(try a.count(), 86_400)
        XCTAssertEqual(try b.count(), laterRows)
        let high = RowFilter(field: "magnitude", op: .gt, operand: .number(1.1))
        let plainB = SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!, batches: Array(later))
        XCTAssertEqual(try b.filtered(high).count(), try plainB.filtered(high).count())
        XCTAssertEqual(try a.filtered(high).count(),
                       try SampleSet(sensor: .accelerometer, timeZone: TimeZone(identifier: "UTC")!,
                                     batches: NaturalFormTests.batches()).filtered(high).count())
        XCTAssertEqual(try b.count(), laterRows)
        XCTAssertEqual(readsA.count, 1)
        XCTAssertEqual(readsB.count, 1)
    }
}

/// A numeric row filter over every row (four values compared at once, groups that all fail
/// passed over) selects exactly the rows a plain comparison per row selects, in order, for
/// every operator, with NaN among the values and as the operand, and any length.
final class RowFilterSelectionTests: XCTestCase {
    func testEveryOperatorSelectsWhatAComparisonPerRowSelects() throws {
        var rng = SplitMix(seed: 3)
        let ops: [(RowFilter.Op, (Double, Double) -> Bool)] = [
            (.lt, { $0 < $1 }), (.le, { $0 <= $1 }), (.gt, { $0 > $1 }),
            (.ge, { $0 >= $1 }), (.eq, { $0 == $1 }), (.ne, { $0 != $1 }),
        ]
        for n in [0, 1, 3, 4, 5, 8, 13, 1_003] {
            // Few distinct values, so every operator both passes and fails rows; a rare pass
            // leaves whole groups of four failing.
            let v: [Double] = (0..<n).map { _ in
                switch rng.next() % 20 { case 0: .nan; case 1: 1.5; case 2: -0.0; default: 1.0 }
            }
            let batch = SampleBatch(sensor: .accelerometer, writeTimes: v.map { _ in 1 }, times: v.map { _ in 1 },
                                    columns: [Column(name: "x", data: .double(v))])
            for operand in [1.0, 1.1, 0.0, -1, .nan] {
                for (op, compare) in ops {
                    let filter = RowFilter(field: "x", op: op, operand: .number(operand))
                    let want = v.indices.filter { compare(v[$0], operand) }
                    XCTAssertEqual(try filter.select(in: batch, among: nil), want, "n \(n), x \(op.rawValue) \(operand)")
                    let odd = Array(stride(from: 1, to: n, by: 2))
                    XCTAssertEqual(try filter.select(in: batch, among: odd), odd.filter { compare(v[$0], operand) },
                                   "n \(n), among odd rows, x \(op.rawValue) \(operand)")
                }
            }
        }
    }
}
