import Foundation
import GRDB
import XCTest
import SensorKitModel
@testable import StudyStore

/// The store's column encodings: each one chosen where it fits, exact to the bit, and
/// corrupt blobs refused with an error (never a trap).
final class ColumnCodecTests: XCTestCase {
    func roundTrip(_ c: ColumnData, times: [Double]? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        let bytes = ColumnCodec.encode(c, times: times)
        let back = try bytes.withUnsafeBytes { try ColumnCodec.decode($0, kind: c.kind, count: c.count, times: times) }
        switch (c, back) {
        case let (.double(a), .double(b)): XCTAssertEqual(a.map(\.bitPattern), b.map(\.bitPattern), file: file, line: line)
        default: XCTAssertEqual(c, back, file: file, line: line)
        }
        return bytes
    }

    func testFloat32ValuesTakeFourBytes() throws {
        var rng = SplitMix(seed: 3)
        var v = (0..<5_000).map { _ in Double(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()) & 0x7F7F_FFFF | 0x3000_0000)) }
        v += [-0.0, 0.0, Double(Float.greatestFiniteMagnitude), Double(Float.leastNonzeroMagnitude), -.infinity, .infinity, -1.5]
        let bytes = try roundTrip(.double(v))
        XCTAssertEqual(bytes[0], 3)
        XCTAssertEqual(bytes.count, 1 + 4 * v.count)
        // One value that is not a Float32 widened: another encoding, still exact.
        v[2_500] = 0.1
        let other = try roundTrip(.double(v))
        XCTAssertNotEqual(other[0], 3)
        v[2_500] = Double(bitPattern: 0x7FF8_0000_0000_0001) // a NaN payload a Float32 cannot carry
        XCTAssertNotEqual(try roundTrip(.double(v))[0], 3)
    }

    func testWriteTimesOfBatchesAreRuns() throws {
        // 65 536 rows in 3 000-row write batches with full-precision write times.
        var v: [Double] = []
        var w = 1_772_409_600.5934494
        while v.count < 65_536 {
            v += repeatElement(w, count: min(3_000, 65_536 - v.count))
            w += 60.0123456789
        }
        let bytes = try roundTrip(.double(v))
        XCTAssertEqual(bytes[0], 5)
        XCTAssertLessThan(bytes.count, 22 * 12 + 16)
    }

    /// Write times decode straight into runs from every double encoding, equal to the
    /// plain decode bit for bit; a run of equal times is one run, not one value a row.
    func testWriteTimesDecodeIntoRunsFromEveryEncoding() throws {
        var batches: [Double] = []
        var w = 1_772_409_600.5934494
        while batches.count < 20_000 { batches += repeatElement(w, count: 3_000); w += 60.0123456789 }
        let decimalRuns: [Double] = (0..<9_000).map { i -> Double in Double(1_772_409_600_000 + (i / 3_000) * 60_000) / 1_000 }
        let decimalDeltas: [Double] = (0..<500).map { i -> Double in Double(1_772_409_600_000 + i * i * 7) / 1_000 }
        let float32: [Double] = (0..<300).map { i -> Double in Double(Float(i) * 0.37) }
        let raw: [Double] = (0..<300).map { i -> Double in 1_772_409_600 + Double(i / 3) * Double.pi }
        let cases: [(String, [Double])] = [
            ("bit runs", batches), ("decimal runs", decimalRuns), ("decimal deltas", decimalDeltas),
            ("constant", [Double](repeating: 1_772_409_600.25, count: 100)), ("float32", float32), ("raw", raw),
            ("one row", [1_772_409_600.125]),
        ]
        var tags = Set<UInt8>()
        for (name, v) in cases {
            var writer = ByteWriter()
            ColumnCodec.encodeDoubles(v, into: &writer)
            tags.insert(writer.bytes[0])
            let runs = try writer.bytes.withUnsafeBytes { try ColumnCodec.decodeWriteTimes($0, count: v.count) }
            XCTAssertEqual(runs.array.map(\.bitPattern), v.map(\.bitPattern), name)
            XCTAssertEqual(runs.runCount, WriteTimes(v).runCount, name)
            XCTAssertEqual(runs, WriteTimes(v), name)
            // Cut short or padded: an error, never a trap.
            XCTAssertThrowsError(try writer.bytes.dropLast().withUnsafeBytes { try ColumnCodec.decodeWriteTimes($0, count: v.count) }, name)
            XCTAssertThrowsError(try (writer.bytes + [0]).withUnsafeBytes { try ColumnCodec.decodeWriteTimes($0, count: v.count) }, name)
        }
        XCTAssertEqual(tags, [0, 1, 2, 3, 4, 5], "every double encoding a write-time column can take is covered")
    }

    /// A batch identifier (one value per 3,000 rows) comes back from the store in runs;
    /// integers that change often come back one a row; both equal to what was stored.
    func testBatchIdentifiersDecodeIntoRuns() throws {
        let ids = (0..<65_536).map { Int64(29_540_699 + $0 / 3_000) }
        let back = try ColumnCodec.encode(.int(ids)).withUnsafeBytes { try ColumnCodec.decode($0, kind: .int, count: ids.count) }
        guard case .intRuns(let runs) = back else { return XCTFail("identifier decoded as \(back.kind), not in runs") }
        XCTAssertEqual(runs.runCount, 22)
        XCTAssertEqual(runs.array, ids)
        let constant = [Int64](repeating: -4, count: 500)
        let c = try ColumnCodec.encode(.int(constant)).withUnsafeBytes { try ColumnCodec.decode($0, kind: .int, count: 500) }
        XCTAssertEqual(c, .int(constant))
        if case .intRuns(let r) = c { XCTAssertEqual(r.runCount, 1) } else { XCTFail("a constant column is one run") }
        let steps = (0..<5_000).map { Int64($0 * 3) }  // an arithmetic progression: runs form, one value a row
        let s = try ColumnCodec.encode(.int(steps)).withUnsafeBytes { try ColumnCodec.decode($0, kind: .int, count: steps.count) }
        guard case .int(let dense) = s else { return XCTFail("a progression is not held in runs") }
        XCTAssertEqual(dense, steps)
    }

    func testUptimeIsStoredAsOffsetsFromTheSampleTimes() throws {
        // timestamp = time − boot, with a reboot in the middle of the chunk.
        let times = (0..<10_000).map { Double(88_620_477_000 + $0) * 0.02 }
        let boot1 = 1_772_162_315.5123, boot2 = 1_772_409_000.25
        let uptime = times.enumerated().map { i, t in t - (i < 6_000 ? boot1 : boot2) }
        let bytes = try roundTrip(.double(uptime), times: times)
        XCTAssertEqual(bytes[0], 6)
        XCTAssertLessThan(bytes.count, 40)
        // Without the times the blob cannot be read: an error, not a guess.
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try ColumnCodec.decode($0, kind: .double, count: uptime.count) })
        // Values that are not time − c for few constants are stored otherwise.
        var noisy = uptime
        for i in stride(from: 0, to: noisy.count, by: 7) { noisy[i] += 1e-6 }
        XCTAssertNotEqual(try roundTrip(.double(noisy), times: times)[0], 6)
    }

    func testFiftyHertzTimesAreDecimalRuns() throws {
        // Two stretches of 50 Hz samples with a gap between them.
        let first: [Int64] = (0..<30_000).map { (k: Int) -> Int64 in 177_241_098_000 + 2 * Int64(k) }
        let second: [Int64] = (0..<30_000).map { (k: Int) -> Int64 in 177_241_298_000 + 2 * Int64(k) }
        let scaled = first + second
        let v = scaled.map { Double($0) / 100 }
        let bytes = try roundTrip(.double(v))
        XCTAssertEqual(bytes[0], 4)
        XCTAssertLessThan(bytes.count, 24)
        // Noisy decimals keep the varint deltas.
        var rng = SplitMix(seed: 5)
        let noisy = (0..<5_000).map { _ in Double(Int(rng.next() % 2_000_001) - 1_000_000) / 1e6 }
        XCTAssertEqual(try roundTrip(.double(noisy))[0], 1)
    }

    /// A tag-4 blob (decimal runs, `digits` decimals) of `ints`, written as the encoder does.
    func decimalRunsBlob(_ ints: [Int64], digits: Int) -> [UInt8] {
        var w = ByteWriter()
        w.byte(4)
        w.byte(UInt8(digits))
        ints.withUnsafeBufferPointer { p in
            ColumnCodec.writeRuns(p.baseAddress!, ints.count, runs: ColumnCodec.deltaRunCount(p.baseAddress!, ints.count), into: &w)
        }
        return w.bytes
    }

    /// Decimal runs decode four at a time where every value is exact in a Double, value by
    /// value elsewhere: either way bit for bit `Double(v) / 10^d`, the one division of the
    /// scalar decoder. The sample times' range comes with them, read off the runs: exactly
    /// the least and greatest time; none when a run overflows (its values wrap) and none
    /// for encodings without runs.
    func testDecimalRunsDecodeBitForBitWithTheRangeOfTheTimes() throws {
        let limit: Int64 = 1 << 52
        var rng = SplitMix(seed: 11)
        let cases: [(String, [Int64], Int)] = [
            ("50 Hz, two stretches", (0..<3_001).map { 177_241_098_000 + 2 * Int64($0) }
                + (0..<2_999).map { 177_241_298_000 + 2 * Int64($0) }, 2),
            ("falling, negative, odd lengths", (0..<1_003).map { 5_000 - 7 * Int64($0) } + (0..<5).map { -9_000 + Int64($0) }, 3),
            ("a run ending at 2^52", (0..<101).map { limit - 100 + Int64($0) }, 0),
            ("a run past 2^52 (value by value)", (0..<101).map { limit - 50 + Int64($0) }, 1),
            ("a run from -2^52", (0..<64).map { -limit + 3 * Int64($0) }, 6),
            ("short runs", (0..<200).map { Int64($0 / 3) * 1_000 + Int64($0 % 3) }, 9),
            ("a single value", [123_456_789], 4),
            ("random steps", (0..<400).map { _ in Int64(rng.next() % 3) }.reduce(into: [Int64(0)]) { $0.append($0.last! + $1) }, 15),
        ]
        for (what, ints, d) in cases {
            let blob = decimalRunsBlob(ints, digits: d)
            let (values, within) = try blob.withUnsafeBytes { try ColumnCodec.decodeTimes($0, count: ints.count) }
            let scale = ColumnCodec.pow10[d]
            let expected = ints.map { Double($0) / scale }
            XCTAssertEqual(values.map(\.bitPattern), expected.map(\.bitPattern), what)
            XCTAssertEqual(try blob.withUnsafeBytes { try ColumnCodec.decodeDoubles($0, count: ints.count) }.map(\.bitPattern),
                           expected.map(\.bitPattern), what)
            XCTAssertEqual(within, expected.min()!...expected.max()!, what)
        }
        // A run that passes Int64.max wraps as the scalar decoder's `&+` does, and states no range.
        let wrapping: [Int64] = (0..<20).map { Int64.max - 9 &+ Int64($0) }
        let (wrapped, none) = try decimalRunsBlob(wrapping, digits: 0).withUnsafeBytes { try ColumnCodec.decodeTimes($0, count: 20) }
        XCTAssertEqual(wrapped.map(\.bitPattern), wrapping.map { Double($0).bitPattern })
        XCTAssertNil(none)
        // Other encodings: a constant states its value (NaN: none); raw and varint deltas state none.
        func within(_ v: [Double]) throws -> ClosedRange<Double>? {
            try ColumnCodec.encode(.double(v)).withUnsafeBytes { try ColumnCodec.decodeTimes($0, count: v.count) }.within
        }
        XCTAssertEqual(try within([5.5, 5.5, 5.5]), 5.5...5.5)
        XCTAssertNil(try within([.nan, .nan]))
        XCTAssertNil(try within((0..<100).map { _ in Double(rng.next() % 1_000_000) / 1e6 }), "varint deltas")
        XCTAssertNil(try within((0..<100).map { _ in Double(bitPattern: rng.next() >> 2) }), "raw")
    }

    func testIntRunsAndTheirBoundaries() throws {
        // Batch identifiers: constant stretches.
        let ids = (0..<65_536).map { Int64(29_540_159 + $0 / 3_000) }
        let bytes = try roundTrip(.int(ids))
        XCTAssertEqual(bytes[0], 1)
        XCTAssertLessThan(bytes.count, 120)
        // Deltas at the extremes wrap exactly.
        let extreme: [Int64] = [.min] + repeatElement(.max, count: 20) + repeatElement(.min, count: 20) + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        XCTAssertEqual(try roundTrip(.int(extreme))[0], 1)
        _ = try roundTrip(.int([5]))
        _ = try roundTrip(.int([5, 6]))
        _ = try roundTrip(.double([1.5]))
        _ = try roundTrip(.double([Double.nan, 1]))
    }

    func testPresenceMasks() throws {
        for n in [1, 7, 8, 9, 65_537] {
            var rng = SplitMix(seed: UInt64(n))
            let p = (0..<n).map { _ in rng.next() % 3 != 0 } + [false]
            let enc = try XCTUnwrap(ColumnCodec.encodePresent(p))
            XCTAssertEqual(enc.count, p.contains(true) ? 1 + (p.count + 7) / 8 : 1)
            XCTAssertEqual(try enc.withUnsafeBytes { try ColumnCodec.decodePresent($0, count: p.count, encoding: 2) }, p)
        }
        XCTAssertNil(ColumnCodec.encodePresent([true, true]))
        XCTAssertEqual(ColumnCodec.encodePresent([false, false, false]), [2])
        // Chunks of encoding 1 keep one byte a row.
        XCTAssertEqual(try ([1, 0, 1] as [UInt8]).withUnsafeBytes { try ColumnCodec.decodePresent($0, count: 3, encoding: 1) }, [true, false, true])
        for bad: [UInt8] in [[], [1, 0xFF], [2, 0], [9], [0, 1]] {
            XCTAssertThrowsError(try bad.withUnsafeBytes { try ColumnCodec.decodePresent($0, count: 9, encoding: 2) }, "\(bad)")
        }
    }

    /// Every prefix of every encoding, and every blob with a byte too many, is an error.
    func testCorruptBlobsAreErrors() throws {
        let times = (0..<64).map { Double(88_620_477_000 + $0) * 0.02 }
        let cases: [ColumnData] = [
            .double(times.map { Double(Float($0 / 1e9)) }),
            .double(times),
            .double(times.map { $0 - 1_772_162_315.5123 }),
            .double((0..<64).map { Double($0 / 16) + 0.123456789012 }),
            .double((0..<64).map { Double(bitPattern: 0x4000_0000_0000_0000 &+ UInt64($0 * $0)) }),
            .double(repeatElement(2.5, count: 64).map { $0 }),
            .int((0..<64).map { Int64($0 / 10) }),
            .int((0..<64).map { Int64($0 * $0 * 1_000_003) }),
        ]
        for c in cases {
            let bytes = try roundTrip(c, times: times)
            for cut in 0..<bytes.count {
                let prefix = Array(bytes[..<cut])
                XCTAssertThrowsError(try prefix.withUnsafeBytes { try ColumnCodec.decode($0, kind: c.kind, count: c.count, times: times) },
                                     "tag \(bytes[0]) cut at \(cut)")
            }
            let longer = bytes + [0]
            XCTAssertThrowsError(try longer.withUnsafeBytes { try ColumnCodec.decode($0, kind: c.kind, count: c.count, times: times) },
                                 "tag \(bytes[0]) with a byte too many")
        }
        // Runs that claim more values than the column holds.
        var w = ByteWriter()
        w.byte(1); w.varint(1); w.zigzag(0); w.zigzag(1); w.varint(1_000)
        XCTAssertThrowsError(try w.bytes.withUnsafeBytes { try ColumnCodec.decode($0, kind: .int, count: 10) })
    }

    /// A chunk of an encoding this version does not know is refused with a message saying so.
    func testUnknownChunkEncodingIsRefused() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        let store = try RecordedStore(path: path)
        let sim = makeRecSource([recTrio[0]])
        let phone = sim.devices(participant: "ana")[0]
        _ = try store.copy(.accelerometer, from: sim, participant: "ana", device: phone, start: recMonday,
                                                  end: recMonday + 3_600, timeZone: "Europe/Berlin")
        try store.pool.write { db in try db.execute(sql: "UPDATE chunk SET encoding = 9") }
        let id = try store.pool.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM chunk")! }
        XCTAssertThrowsError(try store.pool.read { db in try RecordedSource.decodeChunk(db, id: id, sensor: .accelerometer) }) { e in
            XCTAssertTrue("\(e)".contains("encoding 9; this Sensorium reads encodings 1–2"), "\(e)")
        }
        try store.close()
    }

    /// A column stored in another kind than its sensor's schema holds is corruption, named
    /// (chunks of one stream could otherwise not be joined).
    func testColumnOfTheWrongKindIsRefused() throws {
        let dir = try recordedTempDir(self)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let sim = makeRecSource([recTrio[0]])
        let phone = sim.devices(participant: "ana")[0]
        _ = try store.copy(.accelerometer, from: sim, participant: "ana", device: phone, start: recMonday,
                                                  end: recMonday + 3_600, timeZone: "Europe/Berlin")
        let id = try store.pool.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM chunk")! }
        XCTAssertNoThrow(try store.pool.read { db in try RecordedSource.decodeChunk(db, id: id, sensor: .accelerometer) })
        try store.pool.write { db in try db.execute(sql: "UPDATE chunkColumn SET kind = 'double' WHERE name = 'identifier' AND chunk = ?", arguments: [id]) }
        XCTAssertThrowsError(try store.pool.read { db in try RecordedSource.decodeChunk(db, id: id, sensor: .accelerometer) }) { e in
            XCTAssertTrue("\(e)".contains("column identifier: stored as double, but accelerometer.identifier holds int values"), "\(e)")
        }
        try store.close()
    }

    /// Chunks written with encoding 1 (one presence byte a row) read as before.
    func testChunksOfEncodingOneStayReadable() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        let store = try RecordedStore(path: path)
        let batch = SampleBatch(sensor: .accelerometer, writeTimes: [recMonday + 60, recMonday + 60, recMonday + 120],
                                times: [recMonday, recMonday + 0.02, recMonday + 60],
                                columns: [Column(name: "x", data: .double([0.5, 0.25, 1])), Column(name: "y", data: .double([0, 0, 0])),
                                          Column(name: "z", data: .double([1, 1, -1])),
                                          Column(name: "timestamp", data: .double([1, .nan, 3]), present: [true, false, true]),
                                          Column(name: "identifier", data: .int([7, 7, 8]))])
        _ = try store.importing { s in
            try s.addParticipant(RecordedParticipant(id: "p", timeZone: "UTC"))
            try s.append(participant: "p", device: recordedPhone, batch)
        }
        let before = try store.source().samples(participant: "p", sensor: .accelerometer, device: recordedPhone,
                                                writtenAfter: recMonday, through: recMonday + 200)
        try store.pool.write { db in
            try db.execute(sql: "UPDATE chunkColumn SET present = x'010001' WHERE present IS NOT NULL")
            try db.execute(sql: "UPDATE chunk SET encoding = 1")
        }
        let after = try store.source().samples(participant: "p", sensor: .accelerometer, device: recordedPhone,
                                               writtenAfter: recMonday, through: recMonday + 200)
        assertSameRows(before, after, "encoding 1")
        XCTAssertEqual(after.column("timestamp")?.present, [true, false, true])
        try store.close()
    }

    /// A store whose schema has a migration this version does not know is refused on opening.
    func testNewerSchemaIsRefused() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        try RecordedStore(path: path).close()
        let q = try DatabaseQueue(path: path)
        try q.write { db in try db.execute(sql: "INSERT INTO grdb_migrations(identifier) VALUES ('v99')") }
        try q.close()
        XCTAssertThrowsError(try RecordedStore(path: path)) { e in
            XCTAssertTrue("\(e)".contains("written by a newer Sensorium"), "\(e)")
        }
    }
}

/// A store hands its chunks over as pieces (`samplePiece`): one chunk per piece, whole
/// chunks not copied, every row of the range exactly once and in order; where two imports'
/// chunks interleave in write time, one piece holds the whole range, ordered.
final class StoredPieceTests: XCTestCase {
    func pieces(_ source: RecordedSource, device: SRDevice, after: Double, through: Double) throws -> [(SampleBatch, Double)] {
        var out: [(SampleBatch, Double)] = []
        var cursor = after
        while cursor < through {
            let (batch, reached) = try source.samplePiece(participant: "ana", sensor: .accelerometer, device: device,
                                                      writtenAfter: cursor, through: through, producedIn: nil)
            XCTAssertGreaterThan(reached, cursor, "a piece moves on")
            XCTAssertLessThanOrEqual(reached, through)
            if batch.count > 0 {
                XCTAssertGreaterThan(batch.writeTimes.first!, cursor)
                XCTAssertLessThanOrEqual(batch.writeTimes.last!, reached)
            }
            out.append((batch, reached))
            cursor = reached
        }
        return out
    }

    /// A piece read with a projection holds exactly the columns asked for (times and write
    /// times always), equal to the whole read's; the source's chunk cache never answers a
    /// read that needs more columns with a narrower chunk. A column no pass asks for is not
    /// read at all: broken bytes there stop only the reads that need it.
    func testProjectedPiecesHoldTheColumnsAskedForAndNoFewer() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        let store = try RecordedStore(path: path)
        let sim = makeRecSource([recTrio[0]])
        let phone = sim.devices(participant: "ana")[0]
        _ = try store.copy(.accelerometer, from: sim, participant: "ana", device: phone, start: recMonday,
                                                  end: recMonday + 3 * 3_600, timeZone: "Europe/Berlin")
        let source = try store.source()
        func piece(_ columns: ColumnProjection) throws -> SampleBatch {
            try source.samplePiece(participant: "ana", sensor: .accelerometer, device: phone, writtenAfter: recMonday,
                                   through: recMonday + 3 * 3_600, producedIn: nil, columns: columns).batch
        }
        let none = try piece(.none)
        XCTAssertEqual(none.columns.map(\.name), [])
        let xyz = try piece(ColumnProjection(["z", "x", "y"]))
        XCTAssertEqual(xyz.columns.map(\.name), ["x", "y", "z"], "schema order")
        let whole = try piece(.all)
        XCTAssertEqual(whole.columns.map(\.name), Sensor.accelerometer.info.columnFields.map(\.name))
        XCTAssertEqual(try piece(ColumnProjection(["x"])).columns.map(\.name), ["x"], "served from the whole chunk, narrowed")
        for b in [none, xyz] {
            XCTAssertEqual(b.times, whole.times)
            XCTAssertEqual(b.writeTimes, whole.writeTimes)
        }
        for name in ["x", "y", "z"] { XCTAssertEqual(xyz.column(name), whole.column(name), name) }
        try store.close()

        // Broken x blobs: a read of the times or of y still succeeds, one of x fails (a fresh source: no cache).
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE chunkColumn SET data = x'ffffffffffffffff' WHERE name = 'x'") }
        try queue.close()
        let broken = try RecordedStore(path: path).source()
        func read(_ columns: ColumnProjection) throws -> SampleBatch {
            try broken.samplePiece(participant: "ana", sensor: .accelerometer, device: phone, writtenAfter: recMonday,
                                   through: recMonday + 3 * 3_600, producedIn: nil, columns: columns).batch
        }
        XCTAssertEqual(try read(.none).times, whole.times)
        XCTAssertEqual(try read(ColumnProjection(["y"])).column("y"), whole.column("y"))
        XCTAssertThrowsError(try read(ColumnProjection(["x"]))) { XCTAssertTrue("\($0)".contains("column x"), "\($0)") }
        XCTAssertThrowsError(try read(.all)) { XCTAssertTrue($0 is SampleReadError, "\($0)") }
    }

    /// Stored 50 Hz chunks state the range of their sample times (`timesWithin`, read off the
    /// decimal runs), in whole and in partial pieces; a fetch whose recording starts and stops
    /// inside chunks still leaves out, row by row, the samples measured outside recording,
    /// delivering what the same fetch over the simulator (which states no range) does.
    func testStatedRangesOfTimesKeepWholeChunksAndFilterTheOthersRowByRow() throws {
        let dir = try recordedTempDir(self)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let sim = makeRecSource([recTrio[0]])
        let phone = sim.devices(participant: "ana")[0]
        let start = recMonday, end = recMonday + 4 * 3_600
        _ = try store.copy(.accelerometer, from: sim, participant: "ana", device: phone, start: start - 3_600, end: end,
                           timeZone: "Europe/Berlin")
        let rec = try store.source()
        for (batch, _) in try pieces(rec, device: phone, after: start + 1_000, through: end) where batch.count > 0 {
            let within = try XCTUnwrap(batch.timesWithin, "a stored 50 Hz chunk states its range")
            XCTAssertTrue(batch.times.allSatisfy { within.contains($0) })
        }

        var study = ResolvedStudy()
        study.entitledSensors = [.accelerometer]
        var model = ParticipantModel(participant: "ana", study: study, activation: start - 30 * recDay)
        _ = model.authorization.setStatus(.accelerometer, .authorized)
        // Recording on and off inside stored chunks (they hold about an hour each).
        let on = [(start + 1_234.5, start + 2_345.25), (start + 7_000.1, start + 12_600.7)]
        for (a, b) in on { model.recording.addInterval(.accelerometer, by: .system, after: a, through: b) }
        model.advance(to: end + recDay)
        let req = FetchRequest(from: model.clock.srTime(atTrue: start), to: model.clock.srTime(atTrue: end), device: phone)
        let fromStore = try model.fetch(req, sensor: .accelerometer, source: rec).plan!.collect()
        let fromSim = try model.fetch(req, sensor: .accelerometer, source: sim).plan!.collect()
        XCTAssertGreaterThan(fromSim.count, 10_000)
        assertSameRows(fromStore, fromSim, "recording on and off inside chunks")
        XCTAssertTrue(fromStore.times.allSatisfy { t in on.contains { t >= $0.0 && t <= $0.1 } }, "only samples measured while recording")
        let written = try rec.samples(participant: "ana", sensor: .accelerometer, device: phone, writtenAfter: on[0].0, through: on[0].1)
        XCTAssertTrue(written.times.contains { $0 < on[0].0 }, "rows written after recording began but measured before: left out")
        try store.close()
    }

    func testPiecesFollowChunksAndJoinToTheWholeAnswer() throws {
        let dir = try recordedTempDir(self)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let sim = makeRecSource([recTrio[0]])
        let phone = sim.devices(participant: "ana")[0]
        _ = try store.copy(.accelerometer, from: sim, participant: "ana", device: phone, start: recMonday,
                                                  end: recMonday + 3 * 3_600, timeZone: "Europe/Berlin")
        let chunkSpans = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT minWrite, maxWrite FROM chunk ORDER BY minWrite").map { ($0[0] as Double, $0[1] as Double) }
        }
        XCTAssertGreaterThan(chunkSpans.count, 3, "the range spans several chunks")
        let source = try store.source()
        // From mid-chunk to mid-chunk: partial first and last pieces, whole ones between.
        let after = (chunkSpans[0].0 + chunkSpans[0].1) / 2, through = (chunkSpans[3].0 + chunkSpans[3].1) / 2
        let got = try pieces(source, device: phone, after: after, through: through)
        XCTAssertEqual(got.map(\.1), [chunkSpans[0].1, chunkSpans[1].1, chunkSpans[2].1, through], "one piece per chunk")
        var joined = SampleBatch.empty(for: .accelerometer)
        for (b, _) in got { joined.append(b) }
        assertSameRows(joined, try source.samples(participant: "ana", sensor: .accelerometer, device: phone, writtenAfter: after, through: through),
                       "pieces joined")
        try store.close()
    }

    func testInterleavedImportsAnswerTheWholeRangeInOrder() throws {
        let dir = try recordedTempDir(self)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let write = recMonday + 600
        func batch(_ x: Double) -> SampleBatch {
            SampleBatch(sensor: .accelerometer, writeTimes: [write, write + 60], times: [write - 1, write + 59],
                        columns: [Column(name: "x", data: .double([x, x])), Column(name: "y", data: .double([0, 0])),
                                  Column(name: "z", data: .double([1, 1])), Column(name: "timestamp", data: .double([1, 2])),
                                  Column(name: "identifier", data: .int([1, 2]))])
        }
        for x in [0.5, 0.25] {
            _ = try store.importing { s in
                try? s.addParticipant(RecordedParticipant(id: "ana", timeZone: "UTC"))
                try s.append(participant: "ana", device: recordedPhone, batch(x))
            }
        }
        let source = try store.source()
        let got = try pieces(source, device: recordedPhone, after: recMonday, through: recMonday + 3_600)
        XCTAssertEqual(got.count, 1, "interleaved chunks come as one piece")
        XCTAssertEqual(got[0].0.writeTimes, try source.samples(participant: "ana", sensor: .accelerometer, device: recordedPhone,
                                                           writtenAfter: recMonday, through: recMonday + 3_600).writeTimes)
        XCTAssertEqual(got[0].0.writeTimes, [write, write, write + 60, write + 60])
        try store.close()
    }
}
