import Foundation
import SensorKitModel
import XCTest
@testable import StudyRuntime

/// The streaming aggregates behind `SampleSet`, checked against direct computations.
final class SampleSetTests: XCTestCase {
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// Accelerometer-like rows, one per `step` seconds from `start`, in chunks of `chunk` rows.
    func accelerometer(start: Double, count: Int, step: Double, chunk: Int) -> [SampleBatch] {
        var batches: [SampleBatch] = []
        var i = 0
        while i < count {
            let n = min(chunk, count - i)
            let idx = (i..<(i + n)).map(Double.init)
            let times = idx.map { start + $0 * step }
            batches.append(SampleBatch(sensor: .accelerometer, writeTimes: times, times: times, columns: [
                Column(name: "x", data: .double(idx.map { $0.truncatingRemainder(dividingBy: 7) })),
                Column(name: "y", data: .double(idx.map { _ in 3 })),
                Column(name: "z", data: .double(idx.map { _ in 4 })),
                Column(name: "identifier", data: .int(idx.map { Int64($0) / 100 })),
            ]))
            i += n
        }
        return batches
    }

    func testStatsMatchDirectComputationAcrossChunks() throws {
        let batches = accelerometer(start: 1_772_406_000, count: 10_000, step: 0.02, chunk: 777)
        let set = SampleSet(sensor: .accelerometer, timeZone: berlin, batches: batches)
        let xs = (0..<10_000).map { Double($0).truncatingRemainder(dividingBy: 7) }
        let mean = xs.reduce(0, +) / Double(xs.count)
        let variance = xs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(xs.count - 1)
        let stats = try set.stats("x")
        XCTAssertEqual(try set.count(), 10_000)
        XCTAssertEqual(stats.count, 10_000)
        XCTAssertEqual(stats.sum, xs.reduce(0, +), accuracy: 1e-6)
        XCTAssertEqual(stats.mean, mean, accuracy: 1e-12)
        XCTAssertEqual(stats.standardDeviation, variance.squareRoot(), accuracy: 1e-9)
        XCTAssertEqual(stats.min, 0)
        XCTAssertEqual(stats.max, 6)
    }

    func testMagnitudeAndFilters() throws {
        let set = SampleSet(sensor: .accelerometer, timeZone: berlin,
                            batches: accelerometer(start: 0, count: 700, step: 1, chunk: 64))
        // x = i mod 7, y = 3, z = 4: when x == 0 the magnitude is exactly 5.
        let zeros = set.filtered(RowFilter(field: "x", op: .eq, operand: .number(0)))
        XCTAssertEqual(try zeros.count(), 100)
        XCTAssertEqual(try zeros.stats("magnitude").mean, 5, accuracy: 1e-12)
        let big = set.filtered(RowFilter(field: "x", op: .gt, operand: .number(4)))
        XCTAssertEqual(try big.count(), 200)                           // x ∈ {5, 6}
        let chained = big.filtered(RowFilter(field: "x", op: .lt, operand: .number(6)))
        XCTAssertEqual(try chained.count(), 100)
        XCTAssertThrowsError(try set.stats("lux")) { error in
            XCTAssertTrue("\(error)".contains("no field 'lux'"), "\(error)")
        }
    }

    func testQuantileIsRType7() throws {
        let batches = accelerometer(start: 0, count: 11, step: 1, chunk: 3)  // x: 0..6, 0..3
        let set = SampleSet(sensor: .accelerometer, timeZone: berlin, batches: batches)
        var xs = (0..<11).map { Double($0 % 7) }
        xs.sort()                                                       // 0 0 1 1 2 2 3 3 4 5 6
        XCTAssertEqual(try set.quantile("x", 0.5), 2)
        XCTAssertEqual(try set.quantile("x", 0.95), 5.5, accuracy: 1e-12)  // h = 9.5
        XCTAssertEqual(try set.quantile("x", 0), 0)
        XCTAssertEqual(try set.quantile("x", 1), 6)
    }

    /// 2026-03-29 is the spring-forward day in Berlin: that local day has 23 hours.
    func testLocalDayAndHourGroupingAcrossDST() throws {
        let start = 1_774_652_400.0                                     // 2026-03-28 00:00 CET (UTC+1)
        let batches = accelerometer(start: start, count: 3 * 24 * 60, step: 60, chunk: 500)
        let set = SampleSet(sensor: .accelerometer, timeZone: berlin, batches: batches)
        let days = try set.grouped(by: .localDay, .count, of: nil)
        XCTAssertEqual(days.map(\.label), ["2026-03-28", "2026-03-29", "2026-03-30", "2026-03-31"])
        XCTAssertEqual(days.map(\.count), [1440, 1380, 1440, 60])
        XCTAssertEqual(days[1].start, start + 86_400)
        XCTAssertEqual(days[2].start, start + 86_400 + 23 * 3600)      // midnight CEST
        let hours = try set.grouped(by: .localHour, .count, of: nil)
        XCTAssertFalse(hours.contains { $0.label == "2026-03-29 02:00" }, "02:00 does not exist that night")
        XCTAssertTrue(hours.allSatisfy { $0.count == 60 })
        let profile = try set.grouped(by: .hourOfDay, .mean, of: "y")
        XCTAssertEqual(profile.count, 24)
        XCTAssertEqual(profile.first?.label, "00")
        XCTAssertEqual(profile.first?.value, 3)
    }

    func testWeightedMeanUsesDuration() throws {
        let batch = SampleBatch(sensor: .deviceUsageReport, writeTimes: [1, 2, 3], times: [1, 2, 3], columns: [
            Column(name: "duration", data: .double([900, 900, 1800])),
            Column(name: "totalUnlocks", data: .int([2, 4, 1])),
        ])
        let set = SampleSet(sensor: .deviceUsageReport, timeZone: berlin, batches: [batch])
        let expected: Double = (2.0 * 900.0 + 4.0 * 900.0 + 1.0 * 1800.0) / 3600.0
        XCTAssertEqual(try set.weightedMean("totalUnlocks"), expected, accuracy: 1e-12)
        XCTAssertEqual(try set.stats("totalUnlocks").sum, 7)
    }

    func testMissingOptionalValuesAreSkipped() throws {
        let batch = SampleBatch(sensor: .pedometerData, writeTimes: [1, 2, 3], times: [1, 2, 3], columns: [
            Column(name: "distance", data: .double([10, 99, 30]), present: [true, false, true]),
        ])
        let set = SampleSet(sensor: .pedometerData, timeZone: berlin, batches: [batch])
        let stats = try set.stats("distance")
        XCTAssertEqual(stats.count, 2)
        XCTAssertEqual(stats.mean, 20)
    }
}

/// Grouped quantiles free finished groups; rows arriving late still give exact results.
final class GroupedQuantileTests: XCTestCase {
    func testGroupedQuantilesMatchDirectComputationEvenWithLateRows() throws {
        let utc = TimeZone(identifier: "UTC")!
        // Four days of hourly rows, value = hour of day; then a late batch for day 1 at the end.
        var times = (0..<(4 * 24)).map { Double($0) * 3600 }
        var values = times.map { ($0 / 3600).truncatingRemainder(dividingBy: 24) }
        let main = SampleBatch(sensor: .heartRate, writeTimes: times, times: times,
                               columns: [Column(name: "heartRate", data: .double(values))])
        times = [3600 * 5.5, 3600 * 6.5]
        values = [100, 200]
        let lateBatch = SampleBatch(sensor: .heartRate, writeTimes: times, times: times,
                                    columns: [Column(name: "heartRate", data: .double(values))])
        let set = SampleSet(sensor: .heartRate, timeZone: utc, batches: [main, lateBatch])
        let medians = try set.grouped(by: .localDay, .quantile(0.5), of: "heartRate")
        XCTAssertEqual(medians.map(\.label), ["1970-01-01", "1970-01-02", "1970-01-03", "1970-01-04"])
        var day1 = (0..<24).map(Double.init) + [100, 200]
        XCTAssertEqual(medians[0].value, Quantiles.of(&day1, 0.5), "the late rows must be included")
        XCTAssertEqual(medians[0].count, 26)
        XCTAssertEqual(medians[1].value, 11.5)
        XCTAssertEqual(medians[3].value, 11.5)
    }
}
