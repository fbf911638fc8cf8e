import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// Native sample files parsed in blocks of lines on worker threads give exactly what the
/// row-by-row reader gives: the same store, the same errors at the same lines.
final class NativeBlocksTests: XCTestCase {
    /// Blocks end at line breaks, hold every byte once and in order, keep a line longer than a
    /// block whole, and end with the last line even without a line break.
    func testLineBlocksCutAtLineBreaks() throws {
        let long = String(repeating: "7", count: 300)
        let body = (0..<200).map { "\($0),\($0 * 3)" + ($0 == 90 ? long : "") }.joined(separator: "\n") + "\n1,2"
        let csv = CSVReader(path: "t.csv", source: MemorySource(Array(("a,b\n" + body).utf8)))
        XCTAssertTrue(try csv.nextRecord())
        let blocks = LineBlocks(after: csv, size: 64)
        let block = TextBlock(capacity: 8)
        var all: [UInt8] = []
        var count = 0
        while try blocks.next(into: block) {
            count += 1
            let bytes = block.bytes(from: 0)
            XCTAssertEqual(block.base[block.count], 0, "the sentinel")
            all += bytes
            if all.count < body.utf8.count {
                XCTAssertEqual(bytes.last, 10, "block \(count) ends at a line break")
                XCTAssertTrue(bytes.count <= 64 || bytes.contains(UInt8(ascii: "7")), "only the long line makes a block longer")
            }
        }
        XCTAssertEqual(String(decoding: all, as: UTF8.self), body)
        XCTAssertGreaterThan(count, 20)
    }

    /// Ten minutes of phone and watch accelerometer (two files of about 30 000 rows): imported in
    /// blocks of 1 MiB and of 4 KiB, the store is the row-by-row reader's, byte for byte.
    func testBlocksStoreWhatRowByRowStores() throws {
        let dir = try recordedTempDir(self)
        let folder = try export(dir, minutes: 10)
        var digests: [Int: String] = [:]
        var stored: [Int] = []
        for bytes in [0, 4_096, 1 << 20] {
            let store = try RecordedStore(path: dir.appendingPathComponent("s\(bytes).sqlite").path)
            let stats = try NativeNumericPipeline.$blockBytes.withValue(bytes) {
                try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
            }
            stored.append(stats.rowsStored)
            digests[bytes] = try store.contentDigest()
            try store.close()
        }
        XCTAssertGreaterThan(stored[0], 50_000)
        XCTAssertEqual(Set(stored).count, 1)
        XCTAssertEqual(digests[4_096], digests[0])
        XCTAssertEqual(digests[1 << 20], digests[0])
    }

    /// Lines the fast path does not take (an empty field, quotes, a blank line, no final line
    /// break) hand the rest of the file to the generic reader: same store as row by row.
    func testOddLinesStoreWhatRowByRowStores() throws {
        let dir = try recordedTempDir(self)
        let folder = try export(dir, minutes: 2)
        let file = try phoneFile(folder)
        var lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.popLast(), "")
        var f = lines[3_000].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        f[1] = ""
        lines[3_000] = f.joined(separator: ",")
        f = lines[4_500].split(separator: ",").map(String.init)
        f[2] = "\"\(f[2])\""
        lines[4_500] = f.joined(separator: ",")
        lines.insert("", at: 5_000)
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        var digests: [String] = []
        var stored: [Int] = []
        for bytes in [0, 4_096] {
            let store = try RecordedStore(path: dir.appendingPathComponent("s\(bytes).sqlite").path)
            let stats = try NativeNumericPipeline.$blockBytes.withValue(bytes) {
                try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
            }
            stored.append(stats.rowsStored)
            digests.append(try store.contentDigest())
            try store.close()
        }
        XCTAssertGreaterThan(stored[0], 5_000)
        XCTAssertEqual(stored[1], stored[0])
        XCTAssertEqual(digests[1], digests[0])
    }

    /// A bad value found by the fast path's checks (an implausible date), a text the generic
    /// reader refuses, and a row after a blank line: the same error at the same line either way.
    func testErrorsNameTheSameLineInBlocks() throws {
        let dir = try recordedTempDir(self)
        for (k, (line, edit)) in [(4_321, { (f: inout [String]) in f[0] = "12" }),
                                  (5_555, { (f: inout [String]) in f[3] = "abc" }),
                                  (2_222, { (f: inout [String]) in f[6] = "1.5" })].enumerated() {
            let folder = try export(dir.appendingPathComponent("\(k)"), minutes: 2)
            let file = try phoneFile(folder)
            var lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
            var f = lines[line - 1].split(separator: ",").map(String.init)
            edit(&f)
            lines[line - 1] = f.joined(separator: ",")
            if k == 2 { lines.insert("", at: 1_000) }
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            var errors: [String] = []
            for bytes in [0, 4_096, 1 << 20] {
                let store = try RecordedStore(path: dir.appendingPathComponent("s\(k)-\(bytes).sqlite").path)
                defer { try? store.close() }
                do {
                    try NativeNumericPipeline.$blockBytes.withValue(bytes) {
                        _ = try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
                    }
                    XCTFail("accepted")
                } catch { errors.append("\(error)") }
            }
            let at = k == 2 ? line + 1 : line
            XCTAssertTrue(errors[0].contains("accelerometer.csv:\(at), "), errors[0])
            XCTAssertEqual(errors[1], errors[0])
            XCTAssertEqual(errors[2], errors[0])
        }
    }

    /// A gzip file cut short: the rows before the cut are read (and a bad one among them is
    /// the error), else the truncation is; the same either way.
    func testTruncatedGzipFailsAsRowByRow() throws {
        let dir = try recordedTempDir(self)
        for bad in [false, true] {
            let folder = try export(dir.appendingPathComponent("\(bad)"), minutes: 10)
            let file = try phoneFile(folder)
            if bad {
                var lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
                lines[3_333] = lines[3_333].replacingOccurrences(of: ",", with: ";")
                try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            }
            let gz = try gzipFile(file.path)
            let data = try Data(contentsOf: URL(fileURLWithPath: gz))
            try data.prefix(data.count * 3 / 4).write(to: URL(fileURLWithPath: gz))
            try FileManager.default.removeItem(at: file)
            let manifest = folder.appendingPathComponent("manifest.json")
            try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "phone/accelerometer.csv", with: "phone/accelerometer.csv.gz")
                .write(to: manifest, atomically: true, encoding: .utf8)
            var errors: [String] = []
            for bytes in [0, 4_096, 1 << 20] {
                let store = try RecordedStore(path: dir.appendingPathComponent("s\(bad)-\(bytes).sqlite").path)
                defer { try? store.close() }
                do {
                    try NativeNumericPipeline.$blockBytes.withValue(bytes) {
                        _ = try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
                    }
                    XCTFail("accepted")
                } catch { errors.append("\(error)") }
            }
            XCTAssertTrue(errors[0].contains(bad ? "accelerometer.csv.gz:3334" : "truncated gzip file"), errors[0])
            XCTAssertEqual(errors[1], errors[0])
            XCTAssertEqual(errors[2], errors[0])
        }
    }

    /// Random edits (a byte replaced by a separator, quote, line break, sign, letter or digit,
    /// or removed): blocks of 4 KiB and row by row store the same or refuse with the same words.
    func testRandomEditsBehaveAsRowByRow() throws {
        let dir = try recordedTempDir(self)
        let folder = try export(dir, minutes: 1)
        let file = try phoneFile(folder)
        let original = try Data(contentsOf: file)
        let bytes: [UInt8] = Array(",\n\"\r-.e9 x".utf8)
        var rng = SplitMix(seed: 23)
        var refused = 0
        for c in 0..<40 {
            var text = [UInt8](original)
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let at = 40 + Int(rng.next() % UInt64(text.count - 40))
                let pick = Int(rng.next() % UInt64(bytes.count + 1))
                if pick == bytes.count { text.remove(at: at) } else { text[at] = bytes[pick] }
            }
            try Data(text).write(to: file)
            var outcomes: [String] = []
            for bytes in [0, 4_096] {
                let store = try RecordedStore(path: dir.appendingPathComponent("s\(c)-\(bytes).sqlite").path)
                defer { try? store.close() }
                do {
                    try NativeNumericPipeline.$blockBytes.withValue(bytes) {
                        _ = try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
                    }
                    outcomes.append("stored " + (try store.contentDigest()))
                } catch { outcomes.append("\(error)") }
            }
            XCTAssertEqual(outcomes[1], outcomes[0], "case \(c)")
            if !outcomes[0].hasPrefix("stored") { refused += 1 }
        }
        XCTAssertGreaterThan(refused, 10, "most edits make a bad file")
    }

    /// One participant's phone and watch accelerometer over `minutes` minutes.
    func export(_ dir: URL, minutes: Double) throws -> URL {
        let sim = makeRecSource(seed: 5, [recTrio[0]])
        let start = recMonday + 9 * 3_600
        let folder = dir.appendingPathComponent("export")
        _ = try NativeFormat.export(NativeFormat.Study(start: start, end: start + 60 * minutes, participants: [
            .init(id: recTrio[0].id, timeZone: recTrio[0].timeZone)], sensors: [.accelerometer]), source: sim, to: folder)
        return folder
    }

    func phoneFile(_ folder: URL) throws -> URL {
        let file = try XCTUnwrap(FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String }
            .first { $0.hasSuffix("phone/accelerometer.csv") })
        return folder.appendingPathComponent(file)
    }
}
