import Foundation
import SensorKitModel
import XCTest
@testable import StudyRuntime

/// `SampleSet:distinct()` drops exact duplicate records (SensorKit's ≈1 %, contract §7.4; the
/// `duplicateRate` switch) and nothing else; `SampleSet:fields()` of a tombstone reader
/// lists `SRDeletionRecord`'s fields.
final class DistinctTests: XCTestCase {
    let utc = TimeZone(identifier: "UTC")!

    /// Rows (write, time, x, present?) as an accelerometer-shaped batch.
    func batch(_ rows: [(Double, Double, Double, Bool)]) -> SampleBatch {
        SampleBatch(sensor: .accelerometer, writeTimes: rows.map(\.0), times: rows.map(\.1), columns: [
            Column(name: "x", data: .double(rows.map(\.2)), present: rows.map(\.3)),
            Column(name: "identifier", data: .int(rows.map { Int64($0.0) })),
        ])
    }

    func xs(_ set: SampleSet) throws -> [Double] {
        guard case .double(let v) = try set.column("x") else { return [] }
        return v
    }

    func testDropsExactRepeatsOnlyWithinAWriteTimeEvenAcrossChunks() throws {
        let chunks = [
            batch([(10, 1, 0.5, true), (10, 2, 0.6, true), (10, 1, 0.5, true), (10, 2, 0.6, true),   // a result twice
                   (20, 3, 0.7, true), (20, 3, 0.7, true)]),
            batch([(20, 3, 0.7, true),                          // the same run continues in the next chunk
                   (20, 3, 0.8, true),                          // same time, other value: kept
                   (20, 3, 0.7, false),                         // same value but absent: kept
                   (30, 3, 0.7, true),                          // same fields, other write time: kept
                   (30, 2.5, .nan, true), (30, 2.5, .nan, true), // NaN equal bit for bit: a repeat
                   (30, 2.6, 0.9, true)]),
        ]
        let set = SampleSet(sensor: .accelerometer, timeZone: utc, batches: chunks)
        XCTAssertEqual(try set.count(), 13)
        let unique = set.distinct()
        XCTAssertEqual(try unique.count(), 8)
        let x = try xs(unique)
        XCTAssertEqual(x.count, 8)
        XCTAssertEqual(Array(x.prefix(5)), [0.5, 0.6, 0.7, 0.8, 0.7])
        let m = try unique.materialize()
        XCTAssertEqual(m.writeTimes, [10, 10, 20, 20, 20, 30, 30, 30])
        XCTAssertEqual(m.times, [1, 2, 3, 3, 3, 3, 2.5, 2.6])
        XCTAssertEqual(m.column("x")?.present, [true, true, true, true, false, true, true, true])
        XCTAssertEqual(try unique.distinct().count(), 8, "idempotent")
        // Filters and distinct commute.
        XCTAssertEqual(try set.filtered(RowFilter(field: "x", op: .ge, operand: .number(0.6))).distinct().count(),
                       try unique.filtered(RowFilter(field: "x", op: .ge, operand: .number(0.6))).count())
    }

    func testOutOfOrderElementsAreNotDuplicates() throws {
        // PPG-like jitter: times go back within a result, but no row repeats.
        let set = SampleSet(sensor: .accelerometer, timeZone: utc, batches: [
            batch([(10, 1.0, 1, true), (10, 1.2, 2, true), (10, 1.1, 3, true), (10, 1.05, 4, true), (10, 1.3, 5, true)]),
        ])
        XCTAssertEqual(try set.distinct().count(), 5)
    }

    /// Through the runtime: with duplicates injected, distinct() gives exactly the set a
    /// world without duplicates gives.
    func testDistinctUndoesInjectedDuplicates() throws {
        let source = #"""
        local T = require "t"
        T.study({ "pedometerData", "accelerometer" })
        local steps = sensorkit.reader "pedometerData"
        local accel = sensorkit.reader "accelerometer"
        sensorkit.requestAuthorization({ "pedometerData", "accelerometer" }, function()
          steps:startRecording(); accel:startRecording()
        end)
        schedule.at(time.parse("day 3 06:00"), function()
          local day = steps:samples { from = time.parse("day 1 00:00"), to = time.parse("day 2 00:00") }
          local u = day:distinct()
          T.log("steps", day:count(), u:count(), day:sum("numberOfSteps"), u:sum("numberOfSteps"))
          local hour = accel:samples { from = time.parse("day 1 10:00"), to = time.parse("day 1 11:00") }
          T.log("accel", hour:count(), hour:distinct():count(), string.format("%.6f", hour:distinct():mean("x")))
          local tomb = sensorkit.reader "pedometerData.tombstones"
          T.log("tombstone fields", table.concat(tomb:samples { from = time.studyStart(), to = time.now() }:fields(), ","))
        end)
        """#
        let h = try ProtocolHarness()
        let dup = try h.run(source, scenario: #"return { switches = { duplicateRate = 0.2 } }"#)
        let none = try h.run(source, scenario: #"return { switches = { duplicateRate = 0 } }"#)
        XCTAssertEqual(dup.lines.count, 3, dup.output)
        XCTAssertEqual(none.lines.count, 3, none.output)
        guard dup.lines.count == 3, none.lines.count == 3 else { return }
        let d = dup.lines[0].split(separator: " "), n = none.lines[0].split(separator: " ")
        func num(_ x: Substring) -> Double { Double(x) ?? .nan }
        XCTAssertGreaterThan(num(d[1]), num(d[2]), "duplicates were injected: \(dup.lines[0])")
        XCTAssertEqual(n[1], n[2], "nothing to drop without duplicates")
        XCTAssertEqual(d[2], n[1], "distinct() leaves exactly the records of a world without duplicates")
        XCTAssertEqual(d[4], n[3], "and their steps")
        XCTAssertGreaterThan(num(d[3]), num(d[4]), "duplicates inflate the raw sum")
        let da = dup.lines[1].split(separator: " "), na = none.lines[1].split(separator: " ")
        XCTAssertGreaterThan(num(da[1]), num(da[2]), dup.lines[1])
        XCTAssertEqual(da[2], na[1])
        XCTAssertEqual(da[3], na[3])
        XCTAssertEqual(dup.lines[2], "tombstone fields startTime,endTime,reason,time,writeTime")
    }
}
