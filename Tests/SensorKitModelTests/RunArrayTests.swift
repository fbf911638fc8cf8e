import XCTest
@testable import SensorKitModel

/// `RunArray` (a batch's write times): every operation gives the same elements as the
/// plain array it stands for, and the runs stay canonical (neighbours differ).
final class RunArrayTests: XCTestCase {
    /// Write times as batches make them: runs of random length, some of length one.
    func sample(_ seed: UInt64, rows: Int) -> [Double] {
        var rng = StableHash(seed: seed)
        var out: [Double] = []
        var w = 1_772_409_600.5934494
        while out.count < rows {
            let len = rng.next() % 4 == 0 ? 1 : Int(rng.next() % 300) + 1
            out += repeatElement(w, count: min(len, rows - out.count))
            w += Double(rng.next() % 6_000) / 100
        }
        return out
    }

    func assertCanonical(_ r: WriteTimes, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.values.count, r.ends.count, file: file, line: line)
        for k in r.ends.indices {
            XCTAssertLessThan(k == 0 ? 0 : r.ends[k - 1], r.ends[k], "empty run \(k)", file: file, line: line)
            if k > 0 { XCTAssertFalse(r.values[k].sameRun(as: r.values[k - 1]), "runs \(k - 1) and \(k) not merged", file: file, line: line) }
        }
    }

    func testEveryReadAgreesWithThePlainArray() {
        for seed in 1...5 as ClosedRange<UInt64> {
            let plain = sample(seed, rows: 5_000)
            let runs = WriteTimes(plain)
            assertCanonical(runs)
            XCTAssertLessThan(runs.runCount, plain.count / 10)
            XCTAssertEqual(runs.count, plain.count)
            XCTAssertEqual(runs.array, plain)
            XCTAssertEqual(Array(runs), plain, "iterator")
            for i in stride(from: 0, to: plain.count, by: 7) { XCTAssertEqual(runs[i], plain[i]) }
            XCTAssertEqual(runs.first, plain.first)
            XCTAssertEqual(runs.last, plain.last)
            XCTAssertEqual(WriteTimes(plain.lazy.map { $0 }), runs, "built from a sequence")
            var appended = WriteTimes()
            for x in plain { appended.append(x) }
            XCTAssertEqual(appended, runs, "built a row at a time")
        }
    }

    func testSliceGatherAndAppendAgreeWithThePlainArray() {
        let plain = sample(9, rows: 4_000)
        let runs = WriteTimes(plain)
        var rng = StableHash(seed: 11)
        for _ in 0..<200 {
            let a = Int(rng.next() % 4_001), b = Int(rng.next() % 4_001)
            let r = min(a, b)..<max(a, b)
            let s = runs.slice(r)
            assertCanonical(s)
            XCTAssertEqual(s.array, Array(plain[r]))
        }
        let indices = (0..<3_000).map { _ in Int(rng.next() % 4_000) } + Array(100..<900) + [3_999, 0, 0]
        let g = runs.gather(indices)
        assertCanonical(g)
        XCTAssertEqual(g.array, indices.map { plain[$0] })
        var joined = runs.slice(0..<1_234)
        joined += runs.slice(1_234..<4_000)
        assertCanonical(joined)
        XCTAssertEqual(joined, runs, "a run cut in two joins again")
        joined.append(plain.last!, count: 5)
        XCTAssertEqual(joined.runCount, runs.runCount)
        XCTAssertEqual(joined.count, 4_005)
    }

    func testBoundsFindTheRowsOfAWriteTimeRange() {
        let plain = sample(4, rows: 3_000)
        let runs = WriteTimes(plain)
        var probes = Array(Set(plain)) + [0, .infinity, -.infinity, plain[0] - 1, plain.last! + 1]
        probes += probes.map { $0 + 0.001 }
        for x in probes {
            XCTAssertEqual(runs.lowerBound(x), plain.firstIndex { $0 >= x } ?? plain.count, "lowerBound \(x)")
            XCTAssertEqual(runs.upperBound(x), plain.firstIndex { $0 > x } ?? plain.count, "upperBound \(x)")
        }
        XCTAssertTrue(runs.isSorted)
        XCTAssertFalse(WriteTimes([1, 1, 3, 2]).isSorted)
    }

    func testRunsKeepEveryBit() {
        let nan1 = Double(bitPattern: 0x7FF8_0000_0000_0001), nan2 = Double(bitPattern: 0x7FF8_0000_0000_0002)
        let plain: [Double] = [0.0, -0.0, -0.0, nan1, nan1, nan2, 5, 5]
        let runs = WriteTimes(plain)
        XCTAssertEqual(runs.runCount, 5, "-0.0 and 0.0 apart, NaN payloads apart")
        XCTAssertEqual(runs.array.map(\.bitPattern), plain.map(\.bitPattern))
        XCTAssertEqual(WriteTimes(repeating: 2, count: 0).count, 0)
        XCTAssertEqual(WriteTimes(repeating: 2, count: 0).runCount, 0)
        XCTAssertEqual(WriteTimes().slice(0..<0).count, 0)
        XCTAssertEqual(WriteTimes().gather([]).count, 0)
    }

    /// Results (the rows written together) start where the write time or the batch
    /// identifier changes, whether the identifier is held in runs or one value a row.
    func testResultsStartWhereWriteTimeOrIdentifierChanges() {
        let writes: [Double] = [5, 5, 5, 5, 6, 6, 6, 7, 7, 8]
        let ids: [Int64] = [1, 1, 2, 2, 2, 3, 3, 3, 4, 4]
        let expected = [0, 2, 4, 5, 7, 8, 9]
        for data in [ColumnData.int(ids), .intRuns(RunArray(ids))] {
            let b = SampleBatch(sensor: .accelerometer, writeTimes: writes, times: writes.indices.map { Double($0) },
                                columns: [Column(name: "identifier", data: data)])
            XCTAssertEqual(FetchChunk.resultStarts(b), expected, "\(data)")
        }
        let noIDs = SampleBatch(sensor: .accelerometer, writeTimes: writes, times: writes.indices.map { Double($0) })
        XCTAssertEqual(FetchChunk.resultStarts(noIDs), [0, 4, 7, 9])
    }

    func testIntegerRunsReadAsTheIntegersTheyHold() {
        let ids: [Int64] = [7, 7, 7, 9, 9, 7]
        let runs = ColumnData.intRuns(RunArray(ids))
        XCTAssertEqual(runs, .int(ids), "== compares elements, not the form")
        XCTAssertNotEqual(runs, .int([7, 7, 7, 9, 9, 9]))
        XCTAssertEqual(runs.ints, ids)
        XCTAssertEqual(runs.dense, .int(ids))
        XCTAssertEqual(runs.kind, .int)
        XCTAssertEqual(runs.count, 6)
        XCTAssertEqual(ids.indices.map { runs.integer(at: $0) }, ids)
        XCTAssertEqual(runs.slice(2..<5), .int([7, 9, 9]))
        XCTAssertEqual(runs.gather([5, 0, 3]), .int([7, 7, 9]))
        XCTAssertEqual(runs.appending(.int([1])), .int(ids + [1]))
        XCTAssertEqual(runs.appending(runs), .int(ids + ids))
        if case .intRuns(let joined)? = runs.appending(runs) { XCTAssertEqual(joined.runCount, 5) } else { XCTFail("runs joined stay runs") }
    }

    func testBatchOperationsKeepWriteTimesInRuns() {
        let plain = sample(5, rows: 2_000)
        let batch = SampleBatch(sensor: .accelerometer, writeTimes: plain, times: plain.indices.map { Double($0) },
                                columns: [Column(name: "x", data: .double(plain.indices.map { Double($0) }))])
        XCTAssertEqual(batch.writeTimes.runCount, WriteTimes(plain).runCount)
        var a = batch.slice(0..<700)
        a.append(batch.slice(700..<2_000))
        XCTAssertEqual(a, batch)
        XCTAssertEqual(batch.gather([5, 1_999, 5]).writeTimes.array, [plain[5], plain[1_999], plain[5]])
    }
}

private extension StableHash {
    /// The next of a seeded stream of bits (the model's own mixer as a generator).
    mutating func next() -> UInt64 {
        combine(UInt64(1))
        return state
    }
}
