import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// A text file that an editor saved with a UTF-8 byte-order mark (a spreadsheet's "CSV
/// UTF-8" does) imports as the same file without it, and the summary says how many began
/// with one; text in another encoding is named ("UTF-16LE text, not UTF-8"), never read as
/// a header with invisible characters.
final class ByteOrderMarkTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/exports")
    static let mark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The whole decompressed content of the file at `path`, read as the importers read it.
    func content(_ path: String) throws -> [UInt8] {
        let source = try openByteSource(path, readAhead: false)
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while case let n = try source.read(into: buffer, count: 1 << 16), n > 0 { out += UnsafeRawBufferPointer(start: buffer, count: n) }
        return out
    }

    /// A copy of the fixture tree `name` in `dir` whose every file begins with a UTF-8
    /// byte-order mark, compressed as the original was (gzip, zstd or not at all).
    /// Returns the copy's root and the number of files.
    func copyWithMarks(_ name: String, in dir: URL) throws -> (URL, Int) {
        let from = Self.fixtures.appendingPathComponent(name), to = dir.appendingPathComponent(name)
        let files = FileManager.default.enumerator(atPath: from.path)!.compactMap { $0 as? String }
            .filter { !$0.hasPrefix(".") && !(try! FileManager.default.attributesOfItem(atPath: from.appendingPathComponent($0).path)[.type] as! FileAttributeType == .typeDirectory) }
        for file in files {
            let source = from.appendingPathComponent(file).path, target = to.appendingPathComponent(file)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            let marked = Self.mark + (try content(source))
            switch target.pathExtension {
            case "gz":
                let plain = target.deletingPathExtension()
                try Data(marked).write(to: plain)
                _ = try gzipFile(plain.path)
                try FileManager.default.removeItem(at: plain)
            case "zstd": try Data(try ZstdCompressor.compress(marked)).write(to: target)
            default: try Data(marked).write(to: target)
            }
        }
        return (to, files.count)
    }

    func imported(_ request: ImportRequest, _ dir: URL, _ name: String) throws -> (ImportStats, RecordedSource) {
        var request = request
        request.progressBar = false
        let store = try RecordedStore(path: dir.appendingPathComponent(name).path)
        let stats = try store.importData(request)
        return (stats, try store.source())
    }

    func assertSameStores(_ a: RecordedSource, _ b: RecordedSource, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(a.participants.map(\.id), b.participants.map(\.id), file: file, line: line)
        for p in a.participants.map(\.id) {
            let devices = a.devices(participant: p)
            XCTAssertEqual(b.devices(participant: p), devices, file: file, line: line)
            for sensor in Sensor.allCases {
                for device in devices {
                    let x = try a.samples(participant: p, sensor: sensor, device: device, writtenAfter: -1e10, through: 1e10)
                    let y = try b.samples(participant: p, sensor: sensor, device: device, writtenAfter: -1e10, through: 1e10)
                    assertSameRows(x, y, "\(p) \(sensor) \(device.name)", file: file, line: line)
                }
            }
        }
    }

    func testFilesSavedWithAByteOrderMarkImportAsWithoutAndAreCounted() throws {
        let dir = try recordedTempDir(self)
        // (fixture, format, files in it, files read: the MyHeartCounts tree's two HealthKit uploads are not)
        let cases: [(String, ImportFormat, Int, Int)] = [
            ("mhc", .mhc, 36, 34),
            ("mdh/RK.4F2A9C.Sleep and Light Pilot_20231106-20231109", .mdhJSON, 30, 30),
        ]
        for (name, format, copied, files) in cases {
            let (marked, count) = try copyWithMarks(name, in: dir)
            XCTAssertEqual(count, copied, name)
            let (plainStats, plain) = try imported(ImportRequest(format: format, sources: [Self.fixtures.appendingPathComponent(name).path], timeZone: "UTC"),
                                                   dir, "plain-\(format).sqlite")
            let (markedStats, withMarks) = try imported(ImportRequest(format: format, sources: [marked.path], timeZone: "UTC"), dir, "marked-\(format).sqlite")
            XCTAssertGreaterThan(plainStats.rowsStored, 0, name)
            XCTAssertEqual(markedStats.rowsRead, plainStats.rowsRead, name)
            XCTAssertEqual(markedStats.rowsStored, plainStats.rowsStored, name)
            XCTAssertEqual(markedStats.files, plainStats.files, name)
            try assertSameStores(plain, withMarks)
            XCTAssertNil(plainStats.forms[ByteWindow.byteOrderMarkForm], name)
            XCTAssertEqual(markedStats.forms[ByteWindow.byteOrderMarkForm], files, name)
            XCTAssertTrue(markedStats.report().contains("form: text after a UTF-8 byte-order mark (passed over): \(files) file(s)"), markedStats.report())
        }
    }

    /// The window passes over a mark at a file's start however the first bytes trickle in,
    /// and only there: a reader of the rest of a file from its middle keeps U+FEFF as text.
    func testOnlyAFilesFirstBytesArePassedOver() throws {
        /// A source that gives one byte a read.
        final class Trickle: ByteSource {
            let bytes: [UInt8]
            var at = 0
            init(_ bytes: [UInt8]) { self.bytes = bytes }
            var fileBytesRead: Int64 { Int64(at) }
            func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
                guard at < bytes.count, count > 0 else { return 0 }
                p.storeBytes(of: bytes[at], as: UInt8.self)
                at += 1
                return 1
            }
        }
        let text = Self.mark + Array("lux,x\n1,2\n".utf8)
        for source in [Trickle(text), MemorySource(text)] as [ByteSource] {
            let csv = CSVReader(path: "a.csv", source: source)
            XCTAssertTrue(try csv.nextRecord())
            XCTAssertEqual(csv.string(0), "lux")
            XCTAssertTrue(csv.window.byteOrderMarkSkipped)
            XCTAssertEqual(csv.line, 1)
        }
        let middle = CSVReader(path: "a.csv", source: MemorySource(text), firstLine: 7)
        XCTAssertTrue(try middle.nextRecord())
        XCTAssertEqual(middle.string(0), "\u{FEFF}lux")
        XCTAssertFalse(middle.window.byteOrderMarkSkipped)
        // Only a whole mark is one; a file of just a mark is empty.
        let cut = CSVReader(path: "a.csv", source: MemorySource([0xEF, 0xBB]))
        XCTAssertFalse(cut.window.byteOrderMarkSkipped)
        let onlyMark = JSONReader(file: "a.json", source: MemorySource(Self.mark))
        XCTAssertNil(try onlyMark.peek())
        XCTAssertTrue(onlyMark.window.byteOrderMarkSkipped)
    }

    func testTextInAnotherEncodingIsNamed() throws {
        XCTAssertEqual(LeadingBytes([0xFF, 0xFE, 0x74, 0x00], complete: true), .otherEncoding("UTF-16LE"))
        XCTAssertEqual(LeadingBytes([0xFE, 0xFF, 0x00, 0x74], complete: true), .otherEncoding("UTF-16BE"))
        XCTAssertEqual(LeadingBytes([0xFF, 0xFE, 0x00, 0x00, 0x74, 0, 0, 0], complete: true), .otherEncoding("UTF-32LE"))
        XCTAssertEqual(LeadingBytes([0x00, 0x00, 0xFE, 0xFF], complete: true), .otherEncoding("UTF-32BE"))
        XCTAssertEqual(LeadingBytes(Self.mark + Array("a,b".utf8), complete: true), .text)
        XCTAssertEqual(LeadingBytes.otherEncoding("UTF-16LE").problem(compression: "zstd"),
                       "the file's zstd-decompressed content is UTF-16LE text, not UTF-8 (save it as UTF-8)")
        let dir = try recordedTempDir(self)
        // A spreadsheet's "Unicode text": UTF-16 with its mark.
        let utf16 = try writeFile(dir, "in/heartRate.csv", "")
        try "timestamp,value,confidence,device\n1732143600,60,3,Watch\n".data(using: .utf16LittleEndian).map { Data([0xFF, 0xFE]) + $0 }!
            .write(to: URL(fileURLWithPath: utf16))
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .mhcCSV, sources: [utf16], participant: "p", progressBar: false))) { error in
            XCTAssertTrue("\(error)".contains("heartRate.csv: not a MyHeartCounts SensorKit CSV file: the file is UTF-16LE text, not UTF-8 (save it as UTF-8)"), "\(error)")
        }
        let json = try writeFile(dir, "mdh/sensorkit-ambient-light-sensor/iPhone/P1/d1/q.json", "")
        try "{\"device\": {}}".data(using: .utf16BigEndian).map { Data([0xFE, 0xFF]) + $0 }!.write(to: URL(fileURLWithPath: json))
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .mdhJSON, sources: [dir.appendingPathComponent("mdh").path], progressBar: false))) { error in
            XCTAssertTrue("\(error)".contains("q.json: not JSON text: the file is UTF-16BE text, not UTF-8 (save it as UTF-8)"), "\(error)")
        }
    }
}
