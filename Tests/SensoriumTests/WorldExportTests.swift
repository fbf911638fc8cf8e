import Foundation
import Sensorium
import XCTest

/// `WorldExport`: a simulated world in the native format, as `sensorium export` writes it.
final class WorldExportTests: XCTestCase {
    func smallWorld() throws -> WorldExport {
        var configuration = StudyConfiguration()
        configuration.days = 1
        configuration.participants = 2
        return try WorldExport(configuration: configuration)
    }

    /// The same world and sensors as `sensorium export --days 1 --participants 2 --sensors
    /// heartRate,onWristState,pedometerData`, which says "6 files, 142532 rows".
    func testWritesEveryStreamOfTheSelectedSensors() throws {
        let export = try smallWorld()
        XCTAssertEqual(export.participants, ["P1", "P2"])
        XCTAssertEqual(export.days, 1)
        XCTAssertTrue(export.sensors.contains("accelerometer"), "every simulated sensor by default: \(export.sensors)")
        try export.select(sensors: ["heartRate", "onWristState", "pedometerData"])
        XCTAssertEqual(export.sensors, ["heartRate", "onWristState", "pedometerData"])
        XCTAssertEqual(export.streamCount, 6)   // 2 participants × (phone: pedometer; watch: heart rate, wrist)
        XCTAssertGreaterThan(export.estimatedBytes, 0)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-export-test-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let started = Started()
        let summary = try export.write(to: folder.path) { started.add($0) }
        XCTAssertEqual(summary.files, 6)
        XCTAssertEqual(summary.rows, 142_532)
        XCTAssertEqual(started.files.sorted(), ["P1/phone/pedometerData.csv", "P1/watch/heartRate.csv", "P1/watch/onWristState.csv",
                                                "P2/phone/pedometerData.csv", "P2/watch/heartRate.csv", "P2/watch/onWristState.csv"])
        let manifest = try String(contentsOf: folder.appendingPathComponent("manifest.json"), encoding: .utf8)
        XCTAssertTrue(manifest.contains("\"P2\""), manifest)
        // Deterministic: the same world writes the same rows again.
        XCTAssertEqual(try export.write(to: folder.path), summary)
    }

    func testAnUnknownSensorIsRefusedWithTheClosestName() throws {
        let export = try smallWorld()
        XCTAssertThrowsError(try export.select(sensors: ["heartRat"])) { error in
            XCTAssertEqual((error as? StudyError)?.message, "unknown sensor 'heartRat' — did you mean 'heartRate'?")
        }
    }

    func testABrokenWorldIsAStudyError() throws {
        var configuration = StudyConfiguration()
        configuration.timeZone = "Mars/Olympus"
        XCTAssertThrowsError(try WorldExport(configuration: configuration)) { error in
            XCTAssertTrue((error as? StudyError)?.message.contains("unknown time zone 'Mars/Olympus'") ?? false, "\(error)")
        }
    }
}

/// The files `write` reports, from the threads that write them.
private final class Started: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    var files: [String] { lock.withLock { list } }
    func add(_ file: String) { lock.withLock { list.append(file) } }
}
