import Foundation
import Sensorium
import XCTest

/// `TestHeartRate`'s samples with an authorization and a recording timeline of its own.
struct TimedHeartRate: StudyDataSource {
    var changes: [StudyAuthorizationChange] = []
    var spans: [StudyRecordingSpan] = []
    let samples = TestHeartRate()

    func participants() -> [StudyParticipant] { samples.participants() }
    func samples(of sensor: String, participant: String, device: StudyDevice, writtenAfter after: Double, through: Double) throws -> [Sample] {
        try samples.samples(of: sensor, participant: participant, device: device, writtenAfter: after, through: through)
    }
    func authorization(participant: String) -> [StudyAuthorizationChange] { changes }
    func recording(participant: String) -> [StudyRecordingSpan] { spans }
}

/// A protocol that fetches each released day's heart rate under `pcall` and reports the
/// count and the fast readings, or the error it got.
let outcomeProtocol = """
study { id = "t", title = "t", usage = "u", entitlements = { "heart-rate" },
        sensors = { heartRate = { detail = "d", required = true } } }
local report = require "report"
local t = report.table("days", { columns = { "day", "device", "outcome", "fast" } })
schedule.daily("09:00", function(now)
  local day = require("time").releasedDay(now)
  if not day then return end
  local found, devices = pcall(sensors.heartRate.devices, sensors.heartRate)
  if not found then
    t:row { day = day.day, device = "-", outcome = tostring(devices) }
    return
  end
  for _, device in ipairs(devices) do
    local ok, set = pcall(sensors.heartRate.samples, sensors.heartRate, { device = device, from = day.start, to = day.stop })
    if ok then
      t:row { day = day.day, device = device.model, outcome = set:count(), fast = set:where("heartRate", ">", 100):count() }
    else
      t:row { day = day.day, device = device.model, outcome = tostring(set) }
    end
  end
end)
"""

/// An embedder's authorization and recording timelines reach the SensorKit model: a
/// paused span is empty, a denied sensor's fetch fails as SensorKit's does.
final class DataTimelineTests: XCTestCase {
    static let day = TestHeartRate.day

    func run(_ data: TimedHeartRate) throws -> StudyResult {
        var study = Study(.source(outcomeProtocol, name: "outcome.lua"), world: .data(data))
        study.configuration.days = 3
        return try study.run()
    }

    /// (day, outcome, fast) of the rows (heart rate has the watch only, "-" when its devices failed).
    func watchRows(_ result: StudyResult) throws -> [[String]] {
        try XCTUnwrap(result.table("days")).rows.filter { $0["device"].textValue == "Watch" || $0["device"].textValue == "-" }
            .map { [$0["day"].description, $0["outcome"].description, $0["fast"].description] }
    }

    /// The defaults (no changes, no spans) are the data source as before: authorized, and
    /// recording from when the protocol starts it.
    func testDefaultsAuthorizeAndRecordThroughout() throws {
        let result = try run(TimedHeartRate())
        XCTAssertEqual(try watchRows(result), [["2026-03-02", "138", "12"]], "\(result.reportText)")
        XCTAssertTrue(result.findings.isEmpty)
    }

    /// Recording paused from 12:00 to 14:00: the samples written then are never delivered
    /// (the twelve fast readings), the rest of the day is — all 132 of them: the recording
    /// began an hour before the study, so the watch's sync lag after the protocol starts
    /// recording (the 6 readings missing by default) costs nothing.
    func testPausedRecordingSpanIsEmpty() throws {
        let spans = [StudyRecordingSpan(sensor: "heartRate", after: Self.day - 3600, through: Self.day + 12 * 3600),
                     StudyRecordingSpan(sensor: "heartRate", after: Self.day + 14 * 3600, through: Self.day + 4 * 86_400)]
        let result = try run(TimedHeartRate(spans: spans))
        XCTAssertEqual(try watchRows(result), [["2026-03-02", "132", "0"]], "\(result.reportText)")
    }

    /// Authorization revoked on 2026-03-03 at 06:00: the 09:00 fetch of 2026-03-02 fails with
    /// the model's error for a sensor that is not authorized, which the protocol's pcall catches.
    func testDeniedSensorFailsTheFetch() throws {
        let changes = [StudyAuthorizationChange(sensor: "heartRate", time: Self.day + 30 * 3600, authorized: false)]
        let result = try run(TimedHeartRate(changes: changes))
        let rows = try watchRows(result)
        XCTAssertEqual(rows.count, 1, "\(result.reportText)")
        XCTAssertEqual(rows.first?[0], "2026-03-02")
        XCTAssertTrue(rows.first?[1].contains("SRErrorDomain 8193 (connectionNotFound): fetchDevices failed: not authorized for heartRate") == true,
                      "\(result.reportText)")
        XCTAssertTrue(result.findings.isEmpty)
        // Authorized again at 08:00: the fetch at 09:00 succeeds.
        let back = changes + [StudyAuthorizationChange(sensor: "heartRate", time: Self.day + 32 * 3600, authorized: true)]
        XCTAssertEqual(try watchRows(run(TimedHeartRate(changes: back))), [["2026-03-02", "138", "12"]])
    }

    /// A sensor denied from the start is never authorized: the protocol sees no data.
    func testDeniedAtTheStartIsNeverAuthorized() throws {
        let changes = [StudyAuthorizationChange(sensor: "heartRate", time: Self.day - 86_400, authorized: false)]
        let result = try run(TimedHeartRate(changes: changes))
        XCTAssertFalse(result.reportText.contains("138"), result.reportText)
        XCTAssertFalse(try watchRows(result).contains { $0[1] == "138" })
    }

    /// Timelines naming an unknown sensor or an empty span are refused before the run,
    /// naming participant, entry and what was expected.
    func testBadTimelinesAreRefused() throws {
        XCTAssertThrowsError(try run(TimedHeartRate(changes: [StudyAuthorizationChange(sensor: "heartrate", time: 0, authorized: true)]))) {
            XCTAssertEqual("\($0)", "data source: participant P1, authorization #1: unknown sensor 'heartrate' — did you mean 'heartRate'?")
        }
        XCTAssertThrowsError(try run(TimedHeartRate(spans: [StudyRecordingSpan(sensor: "heartRate", after: 5, through: 5)]))) {
            XCTAssertEqual("\($0)", "data source: participant P1, recording #1 (heartRate): expected finite times with after < through, got (5.0, 5.0]")
        }
    }
}
