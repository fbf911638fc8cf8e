import Foundation
import XCTest
import GRDB
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// Values from import files and exports that would leave their folder or hold impossible values.
final class ImportValidationTests: XCTestCase {
    func testExportFolderNamesStayInsideTheExport() {
        XCTAssertEqual(NativeFormat.safeName(".."), "_..")
        XCTAssertEqual(NativeFormat.safeName("."), "_.")
        XCTAssertEqual(NativeFormat.safeName(""), "_")
        XCTAssertEqual(NativeFormat.safeName("a/../b"), "a_.._b")
        XCTAssertEqual(NativeFormat.safeName("Lea"), "Lea")
        for id in ["..", ".", "", "../../etc", "a/b"] {
            XCTAssertFalse(NativeFormat.safeName(id).contains("/"))
            XCTAssertFalse([".", ".."].contains(NativeFormat.safeName(id)))
        }
    }

    func testManifestFilePathsMustStayInsideTheFolder() {
        XCTAssertTrue(NativeFormat.staysInside("P1/phone/heartRate.csv"))
        for bad in ["", "/etc/passwd", "../x.csv", "P1/../../x.csv"] { XCTAssertFalse(NativeFormat.staysInside(bad), bad) }
    }

    /// The message of a failed import (fails the test when the import succeeds).
    func refusal(_ request: ImportRequest, _ dir: URL, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let store = try RecordedStore(path: dir.appendingPathComponent("s-\(UUID().uuidString).sqlite").path)
            defer { try? store.close() }
            try store.importData(request)
            XCTFail("the import was accepted", file: file, line: line)
            return ""
        } catch { return "\(error)" }
    }

    static let device = "{\"systemVersion\": \"17.4\", \"systemName\": \"iOS\", \"model\": \"iPhone\", \"name\": \"iPhone\"}"

    /// Out-of-range enumeration raw values and non-finite measurements are refused, not stored (or trapped on).
    func testMyDataHelpsRawValuesMustBeKnownAndNumbersFinite() throws {
        let dir = try recordedTempDir(self)
        for (i, (sample, says)) in [
            ("{\"lux\": 20, \"placement\": 1e19, \"chromaticity\": {\"x\": 0.3, \"y\": 0.3}}", "column 'placement': expected one of unknown (0), frontTop (1)"),
            ("{\"lux\": 20, \"placement\": 42, \"chromaticity\": {\"x\": 0.3, \"y\": 0.3}}", "found 42"),
            ("{\"lux\": 1e999, \"placement\": 1, \"chromaticity\": {\"x\": 0.3, \"y\": 0.3}}", "column 'lux': expected a finite number"),
        ].enumerated() {
            let root = dir.appendingPathComponent("mdh\(i)")
            _ = try writeFile(root, "sensorkit-ambient-light-sensor/iPhone/P1/d1/q.json",
                              "{\"device\": \(Self.device), \"samples\": [{\"timestamp\": 1732143600, \"sample\": \(sample)}]}")
            let e = refusal(ImportRequest(format: .mdhJSON, sources: [root.path], progressBar: false), dir)
            XCTAssertTrue(e.contains(says), e)
        }
    }

    func testMyHeartCountsHeartRatesAndConfidencesWithinRange() throws {
        let dir = try recordedTempDir(self)
        let watch = "\"<SRDevice: 0x2835; name = Apple Watch; model = Watch; systemName = watchOS; systemVersion = 10.4; productType = Watch6,1>\""
        for (i, (row, says)) in [("nan,1", "column 'value': expected a number of beats per minute"), ("inf,1", "more than 0 and at most 400"),
                                 ("-5,1", "column 'value'"), ("70,9", "column 'confidence'")].enumerated() {
            let folder = dir.appendingPathComponent("mhc\(i)")
            _ = try writeFile(folder, "heartRate_1.csv", "timestamp,value,confidence,device\n1732143600,\(row),\(watch)\n")
            let e = refusal(ImportRequest(format: .mhcCSV, sources: [folder.path], participant: "p1", progressBar: false), dir)
            XCTAssertTrue(e.contains(says), e)
        }
    }

    func testNativeManifestSpansAndIntervalsMustBeOrderedAndFinite() throws {
        let dir = try recordedTempDir(self)
        let person = "\"participants\": [{\"id\": \"P1\", \"timeZone\": \"UTC\", \"devices\": [], \"streams\": []"
        for (i, (body, says)) in [
            ("\"span\": {\"start\": 1772496000, \"end\": 1772409600}, \(person)}]", "$.span: the span must start before it ends"),
            ("\(person), \"recording\": [{\"sensor\": \"heartRate\", \"device\": null, \"after\": 1772409600, \"through\": 1772400000}]}]",
             "recording[0]: a recording interval must start before it ends"),
            ("\(person), \"recording\": [{\"sensor\": \"heartRate\", \"device\": null, \"after\": 1e999, \"through\": 1772400000}]}]",
             "recording[0].after: expected a finite number"),
        ].enumerated() {
            let folder = dir.appendingPathComponent("native\(i)")
            _ = try writeFile(folder, "manifest.json", "{\"format\": \"\(NativeFormat.formatName)\", \"version\": 1, \(body)}")
            let e = refusal(ImportRequest(format: .native, sources: [folder.path], progressBar: false), dir)
            XCTAssertTrue(e.contains(says), e)
        }
    }

    /// A native sample file whose rows go through the fast number reader refuses the same
    /// values as the general reader: raw values outside an enumeration, numbers that overflow.
    func testNativeFastRowsRefuseUnknownRawValuesAndOverflow() throws {
        let dir = try recordedTempDir(self)
        let sim = makeRecSource(seed: 3, [recTrio[0]])
        let study = NativeFormat.Study(start: recMonday, end: recMonday + 86_400, participants: [
            .init(id: recTrio[0].id, timeZone: recTrio[0].timeZone, authorization: [], deletions: [])], sensors: [.ambientLightSensor])
        for (i, (edit, says)) in [({ (f: [String]) in [f[0], f[1], f[2], "42", f[4], f[5]] }, "column 'placement': expected unknown (0)"),
                                  ({ (f: [String]) in [f[0], f[1], "1e400", f[3], f[4], f[5]] }, "column 'lux': expected a finite number")].enumerated() {
            let folder = dir.appendingPathComponent("native\(i)")
            _ = try NativeFormat.export(study, source: sim, to: folder)
            let file = try XCTUnwrap(FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }
                .first { $0.hasSuffix("ambientLightSensor.csv") })
            let url = folder.appendingPathComponent(file)
            var lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init)
            XCTAssertEqual(lines[0], "writeTime,time,lux,placement,chromaticityX,chromaticityY")
            XCTAssertGreaterThan(lines.count, 100)
            lines[50] = edit(lines[50].split(separator: ",").map(String.init)).joined(separator: ",")
            try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
            let e = refusal(ImportRequest(format: .native, sources: [folder.path], progressBar: false), dir)
            XCTAssertTrue(e.contains(says), e)
            XCTAssertTrue(e.contains("ambientLightSensor.csv:51, "), e)
        }
    }

    /// Two input folders holding the same samples: the second copy is a duplicate in the input,
    /// not "already stored"; a later import of them is "already stored". Counts per sensor.
    func testDuplicatesAreToldApartAndCountedPerSensor() throws {
        let dir = try recordedTempDir(self)
        let sim = makeRecSource(seed: 5, [recTrio[0]])
        let sensors: [Sensor] = [.ambientLightSensor, .pedometerData]
        let study = NativeFormat.Study(start: recMonday, end: recMonday + 86_400, participants: [
            .init(id: recTrio[0].id, timeZone: recTrio[0].timeZone, authorization: [], deletions: [])], sensors: sensors)
        let first = dir.appendingPathComponent("copy1"), second = dir.appendingPathComponent("copy2")
        let exported = try NativeFormat.export(study, source: sim, to: first)
        _ = try NativeFormat.export(study, source: sim, to: second)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let both = try store.importData(ImportRequest(format: .native, sources: [first.path, second.path], progressBar: false))
        XCTAssertEqual(both.rowsRead, 2 * exported.rows)
        XCTAssertEqual(both.rowsStored, exported.rows)
        XCTAssertEqual(both.duplicatesInInput, exported.rows)
        XCTAssertEqual(both.duplicatesAlreadyStored, 0)
        XCTAssertEqual(Set(both.bySensor.keys), Set(sensors))
        for sensor in sensors {
            let c = try XCTUnwrap(both.bySensor[sensor])
            XCTAssertGreaterThan(c.rowsStored, 0, "\(sensor)")
            XCTAssertEqual(c.rowsRead, 2 * c.rowsStored, "\(sensor)")
            XCTAssertEqual(c.duplicatesInInput, c.rowsStored, "\(sensor)")
        }
        XCTAssertEqual(both.bySensor.values.map(\.rowsStored).reduce(0, +), both.rowsStored)
        // One summary line per participant, sensor and device.
        XCTAssertTrue(both.report().split(separator: "\n").contains { $0.hasPrefix("  \(recTrio[0].id)  pedometerData phone ") && $0.contains("  \(both.bySensor[.pedometerData]!.rowsRead) read, ") }, both.report())
        let again = try store.importData(ImportRequest(format: .native, sources: [first.path], progressBar: false))
        XCTAssertEqual(again.rowsStored, 0)
        XCTAssertEqual(again.duplicatesAlreadyStored, exported.rows)
        XCTAssertEqual(again.duplicatesInInput, 0)
    }

    // MARK: stores

    /// A small native study imported into a new store; returns its path.
    func smallStore(_ dir: URL) throws -> String {
        let path = dir.appendingPathComponent("study.sqlite").path
        let store = try RecordedStore(path: path)
        _ = try writeFile(dir, "mhc/heartRate_1.csv", "timestamp,value,confidence,device\n1732143600,61,1,\n1732143601,62,2,\n")
        try store.importData(ImportRequest(format: .mhcCSV, sources: [dir.appendingPathComponent("mhc").path], participant: "p1", progressBar: false))
        try store.checkpoint()
        try store.close()
        return path
    }

    func fileState(_ path: String) throws -> (Data, Date, [String]) {
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let side = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }
        return (try Data(contentsOf: URL(fileURLWithPath: path)),
                try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as! Date, side.sorted())
    }

    /// Reading a store (inspect, replay) opens it read-only: its bytes, its date and its folder stay as they were.
    func testReadingAStoreWritesNothing() throws {
        let dir = try recordedTempDir(self)
        let path = try smallStore(dir)
        let before = try fileState(path)
        XCTAssertEqual(before.2, [], "no side files after the import closed")
        let store = try RecordedStore(path: path, readOnly: true)
        let source = try store.source()
        XCTAssertEqual(source.participants.map(\.id), ["p1"])
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .mhcCSV, sources: [dir.appendingPathComponent("mhc").path], participant: "p2", progressBar: false)))
        try store.close()
        let after = try fileState(path)
        XCTAssertEqual(before.0, after.0)
        XCTAssertEqual(before.1, after.1)
        // SQLite may leave its shared-memory index beside a WAL store; the log holds nothing.
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        XCTAssertEqual(wal, 0, "nothing written to the write-ahead log")
    }

    /// `import --into` a SQLite file that is not a Sensorium store, or a file that is not SQLite, is refused and leaves it untouched.
    func testImportRefusesAForeignFile() throws {
        let dir = try recordedTempDir(self)
        let foreign = dir.appendingPathComponent("other.sqlite").path
        let q = try DatabaseQueue(path: foreign)
        try q.write { db in try db.execute(sql: "CREATE TABLE notes(text); INSERT INTO notes VALUES ('keep me')") }
        try q.close()
        let text = dir.appendingPathComponent("notes.sqlite").path
        try "not a database\n".write(toFile: text, atomically: true, encoding: .utf8)
        for (path, says) in [(foreign, "a SQLite database without Sensorium's tables"), (text, "not a SQLite database")] {
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertThrowsError(try RecordedStore(path: path)) { XCTAssertTrue("\($0)".contains(says), "\($0)") }
            XCTAssertThrowsError(try RecordedStore(path: path, readOnly: true))
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "left untouched")
        }
        let mode = try DatabaseQueue(path: foreign).read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(mode, "delete", "not switched to WAL")
    }
}
