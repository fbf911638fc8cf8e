import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// A failed import leaves the store file byte for byte as it was, for every input format:
/// nothing is written outside the import's transaction (opening a store writes nothing).
extension RecordedImportTests {
    func testFailedImportsOfEveryFormatLeaveTheFileByteIdentical() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        let (folder, _) = try mhcFixture(dir)
        do {
            let store = try RecordedStore(path: path)
            try store.importData(ImportRequest(format: .mhcCSV, sources: [folder], participant: "p1", progressBar: false))
            try store.checkpoint()
            try store.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        // mhc-csv: a bad value on the second line.
        let mhc = dir.appendingPathComponent("bad-mhc")
        try writeFile(mhc, "heart.csv", "timestamp,value,confidence,device\n\(Self.t0),sixty,3,Watch\n")
        // mdh-json: a good tree with one file that is not JSON.
        let mdh = try mdhTree(dir.appendingPathComponent("bad-mdh"))
        try writeFile(URL(fileURLWithPath: mdh), "sensorkit-heart-rate/Watch/P7/dev-W/q2.json", "{\"device\": ")
        // native: an export whose heart-rate file has a bad value on its last line.
        let export = dir.appendingPathComponent("bad-native")
        try NativeFormat.export(NativeFormat.Study(start: recMonday, end: recMonday + recDay, participants: [.init(id: "ana", timeZone: "Europe/Berlin")],
                                                   sensors: [.heartRate]), source: makeRecSource(seed: 3, [recTrio[0]]), to: export)
        let hrFile = export.appendingPathComponent("ana/watch/heartRate.csv").path
        try (try String(contentsOfFile: hrFile, encoding: .utf8) + "1772420000.5,1772420000.5,oops,3,12.5\n")
            .write(toFile: hrFile, atomically: true, encoding: .utf8)

        let requests = [
            ImportRequest(format: .mhcCSV, sources: [mhc.path], participant: "p2", progressBar: false),
            ImportRequest(format: .mhcCSV, sources: [mhc.path], participant: "p1", progressBar: false),
            ImportRequest(format: .mdhJSON, sources: [mdh], progressBar: false),
            ImportRequest(format: .native, sources: [export.path], progressBar: false),
        ]
        for request in requests {
            let store = try RecordedStore(path: path)
            XCTAssertThrowsError(try store.importData(request), "\(request.format) should fail")
            try store.close()
            let after = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertEqual(after.count, before.count, "\(request.format) import for \(request.participant ?? "all"): file size changed")
            XCTAssertTrue(after == before, "\(request.format) import for \(request.participant ?? "all"): file bytes changed")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal") && ((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")))?.count ?? 0) > 0,
                           "a non-empty WAL file was left behind")
        }
        // Opening a store to read it writes nothing either.
        _ = try RecordedStudy(path: path)
        XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
