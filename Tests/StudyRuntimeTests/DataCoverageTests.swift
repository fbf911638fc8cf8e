import XCTest
import SensorKitModel
@testable import StudyRuntime
@testable import StudyReport

/// The run report's completeness grid notes ⌊t / 3600⌋ of every fetched sample time; the
/// note skips runs of times inside the last hour noted, and must still note exactly those hours.
final class DataCoverageTests: XCTestCase {
    func testNotedHoursAreTheFloorOfEveryFiniteTime() {
        let h0 = 1_772_409_600.0   // 2026-03-02 00:00 UTC, an hour boundary
        var times: [Double] = []
        // 50 Hz across three hour boundaries, the hour's last second included.
        var t = h0 - 2.0
        while t < h0 + 3 * 3_600 + 2 { times.append(t); t += 0.02 }
        // Out of order, a hole of several hours, exact boundaries and the last representable time before one.
        times += [h0 + 10 * 3_600, h0 + 1_800, h0 + 7 * 3_600 - 0.0000002, (h0 + 9 * 3_600).nextDown, h0 + 9 * 3_600, h0 - 7_200]
        // Not a time on any clock: left out.
        times += [.nan, .infinity, -.infinity, 1e300]
        var coverage = DataCoverage()
        coverage.note(SampleBatch(sensor: .accelerometer, writeTimes: times, times: times), participant: "P1")
        coverage.note(SampleBatch(sensor: .accelerometer, writeTimes: [h0 + 20 * 3_600], times: [h0 + 20 * 3_600]), participant: "P1")
        var expected = Set<Int64>()
        for t in times + [h0 + 20 * 3_600] where t.isFinite && abs(t) < 1e15 { expected.insert(Int64((t / 3_600).rounded(.down))) }
        XCTAssertEqual(coverage.hours["P1"]?[.accelerometer], expected)
        XCTAssertEqual(expected.count, 11)   // h0−1 h, h0−2 h … +3 h, +6 h, +8 h, +9 h, +10 h, +20 h
    }
}
