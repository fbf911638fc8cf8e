import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// What an import's summary says: a device object that disagrees with its folder, the counts
/// of each participant's devices apart, and every file not read with the right reason.
final class ImportSummaryTests: XCTestCase {
    static let phone = "{\"name\":\"iPhone\",\"model\":\"iPhone\",\"systemName\":\"iOS\",\"systemVersion\":\"17.1\",\"productType\":\"iPhone15,2\"}"
    static let watch = "{\"name\":\"Apple Watch\",\"model\":\"Watch\",\"systemName\":\"watchOS\",\"systemVersion\":\"10.1\",\"productType\":\"Watch6,14\"}"

    /// Writes a MyDataHelps ambient-light file of `rows` items from `t` under `root`.
    func mdhLight(_ root: URL, folder: String, participant: String, deviceID: String, device: String, rows: Int, t: Int = mdhWindowDay) throws {
        let items = (0..<rows).map { i in
            "{\"timestamp\":\((t + 60 * i) * 1000),\"sample\":{\"lux\":\(10 + i),\"chromaticity\":{\"x\":0.3,\"y\":0.4},\"placement\":\"FrontTop\"}}"
        }
        try writeFile(root, "sensorkit-ambient-light-sensor/\(folder)/\(participant)/\(deviceID)/\(mdhWindowFileName)",
                      "{\"device\":\(device),\"samples\":[\(items.joined(separator: ","))]}")
    }

    func importing(_ format: ImportFormat, _ root: URL, into dir: URL) throws -> (ImportStats, RecordedStore) {
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        return (try store.importData(ImportRequest(format: format, sources: [root.path], progressBar: false)), store)
    }

    /// A file in an `iPhone/` folder whose device object describes a watch is stored as the
    /// folder says, and the disagreement is named with the file; agreeing files are not.
    func testMyDataHelpsDeviceObjectDisagreeingWithItsFolderIsNamed() throws {
        let dir = try recordedTempDir(self)
        let root = dir.appendingPathComponent("RK.1.P_1-2")
        try mdhLight(root, folder: "iPhone", participant: "P1", deviceID: "w9", device: Self.watch, rows: 3)
        try mdhLight(root, folder: "iPhone", participant: "P1", deviceID: "p1", device: Self.phone, rows: 3, t: mdhWindowDay + 1_000)
        try mdhLight(root, folder: "AppleWatch", participant: "P1", deviceID: "w1", device: Self.watch, rows: 3, t: mdhWindowDay + 2_000)
        let (stats, store) = try importing(.mdhJSON, root, into: dir)
        XCTAssertEqual(stats.rowsStored, 9)
        let mismatches = stats.warnings.filter { $0.contains("the device object describes") }
        XCTAssertEqual(mismatches, [root.path + "/sensorkit-ambient-light-sensor/iPhone/P1/w9/\(mdhWindowFileName): the device object describes a watch "
                                    + "(model 'Watch', systemName 'watchOS', productType 'Watch6,14'), but the file is in the device-type folder 'iPhone' "
                                    + "(a phone): stored as the folder says, a phone with the object's fields"])
        let devices = try XCTUnwrap(RecordedStudy(store: store).participant("P1")).devices
        XCTAssertEqual(devices.filter { $0.productType == "Watch6,14" }.map(\.kind).sorted { $0.rawValue < $1.rawValue }, [.phone, .watch])
    }

    /// Keys no schema path names are counted as not understood at any depth (`chromaticity.z`)
    /// and in the device object (`serial`); a DateInterval's `duration` (its end − start) and a
    /// file's known keys are not.
    func testKeysNotUnderstoodAreNamedAtAnyDepth() throws {
        let dir = try recordedTempDir(self)
        let root = dir.appendingPathComponent("RK.1.P_1-2")
        let device = Self.phone.replacingOccurrences(of: "}", with: ",\"serial\":\"F2LX\"}")
        let item = "{\"timestamp\":\(mdhWindowDay * 1000),\"sample\":{\"lux\":5,\"chromaticity\":{\"x\":0.3,\"y\":0.4,\"z\":0.3},\"placement\":\"FrontTop\"}}"
        try writeFile(root, "sensorkit-ambient-light-sensor/iPhone/P1/p1/\(mdhWindowFileName)", "{\"device\":\(device),\"samples\":[\(item)]}")
        let visit = "{\"timestamp\":\(mdhWindowDay * 1000),\"sample\":{\"distanceFromHome\":1200.0,"
            + "\"arrivalDateInterval\":{\"start\":\"2023-11-08T08:00:00Z\",\"end\":\"2023-11-08T08:15:00Z\",\"duration\":900},"
            + "\"departureDateInterval\":{\"start\":\"2023-11-08T17:00:00Z\",\"end\":\"2023-11-08T17:15:00Z\",\"duration\":900},"
            + "\"locationCategory\":\"Work\",\"identifier\":\"ABC\"}}"
        try writeFile(root, "sensorkit-visits/iPhone/P1/p1/\(mdhWindowFileName)", "{\"device\":\(Self.phone),\"samples\":[\(visit)]}")
        let (stats, _) = try importing(.mdhJSON, root, into: dir)
        XCTAssertEqual(stats.rowsStored, 2)
        XCTAssertEqual(stats.notUnderstood, ["ambientLightSensor sample: chromaticity.z": 1, "ambientLightSensor device: serial": 1])
        // No --timezone: the offset the file names are stamped with is given as a hint.
        XCTAssertTrue(stats.warnings.contains { $0.hasPrefix("MyDataHelps exports carry no time zone: UTC assumed (use --timezone); the files' query windows are stamped with UTC offset -0600 ") },
                      "\(stats.warnings)")
    }

    /// The summary counts each participant's devices apart: two participants' phones of one
    /// product type are two lines, not one line adding them up.
    func testSummaryCountsEachParticipantApart() throws {
        let dir = try recordedTempDir(self)
        let root = dir.appendingPathComponent("RK.1.P_1-2")
        try mdhLight(root, folder: "iPhone", participant: "P1", deviceID: "p1", device: Self.phone, rows: 3)
        try mdhLight(root, folder: "iPhone", participant: "P2", deviceID: "p2", device: Self.phone, rows: 5)
        let (stats, _) = try importing(.mdhJSON, root, into: dir)
        let report = stats.report()
        XCTAssertTrue(report.contains("\n  P1  ambientLightSensor phone iPhone15,2 iOS 17.1  3 read, 3 stored, duplicates: 0 in the input, 0 already stored\n"), report)
        XCTAssertTrue(report.contains("\n  P2  ambientLightSensor phone iPhone15,2 iOS 17.1  5 read, 5 stored, duplicates: 0 in the input, 0 already stored\n"), report)
        XCTAssertEqual(stats.bySensor[.ambientLightSensor]?.rowsRead, 8)
    }

    /// Every file under a MyHeartCounts tree that is not read is named, with why: a file in
    /// the users folder or beside it, and a file in a subfolder of liveHealthSamples/ (not a
    /// HealthKit upload); a HealthKit upload is named as one.
    func testMyHeartCountsFilesNotReadAreNamedWithWhy() throws {
        let dir = try recordedTempDir(self)
        let root = dir.appendingPathComponent("tree")
        try writeFile(root, "users/u1/SensorKit/\(Sensor.heartRate.identifier)/A.csv",
                      "timestamp,value,confidence,device\n\(mdhWindowDay),60,3,\"model=Watch; name=W; systemName=watchOS; systemVersion=10; productType=Watch7,2\"\n")
        try writeFile(root, "users/notes.csv", "timestamp,value\n")
        try writeFile(root, "README.txt", "about the export\n")
        try writeFile(root, "users/u1/liveHealthSamples/batch1/notes.json", "[]")
        try writeFile(root, "users/u1/liveHealthSamples/HKQuantityTypeIdentifierStepCount_1.json", "[]")
        try writeFile(root, "users/u1/liveHealthSamples/export_1.json", "[]")
        let (stats, _) = try importing(.mhc, root, into: dir)
        XCTAssertEqual(stats.rowsRead, 1)
        let p = root.path
        XCTAssertEqual(stats.notRead[p + "/users/notes.csv"], "a file where a user's folder (users/<uid>/) was expected")
        XCTAssertEqual(stats.notRead[p + "/README.txt"], "beside the users folder (MyHeartCounts uploads are under users/<uid>/)")
        XCTAssertEqual(stats.notRead[p + "/users/u1/liveHealthSamples/batch1/notes.json"],
                       "in a subfolder of liveHealthSamples/, where MyHeartCounts writes no uploads, and not named as a MyHeartCounts SensorKit upload "
                       + "(<sensor id>_<UUID>.json.zstd, such as com.apple.SensorKit.onWristState_…): 'notes.json' is not a SensorKit sensor id")
        XCTAssertEqual(stats.notRead[p + "/users/u1/liveHealthSamples/HKQuantityTypeIdentifierStepCount_1.json"],
                       "not SensorKit data (a HealthKit sample upload: 'HKQuantityTypeIdentifierStepCount')")
        XCTAssertEqual(stats.notRead[p + "/users/u1/liveHealthSamples/export_1.json"],
                       "not named as a MyHeartCounts SensorKit upload (<sensor id>_<UUID>.json.zstd, such as com.apple.SensorKit.onWristState_…): "
                       + "'export' is not a SensorKit sensor id")
        XCTAssertEqual(stats.notRead.count, 5, "\(stats.notRead)")
    }
}
