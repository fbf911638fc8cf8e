import CZstd
import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// `SourcesAhead`: several files opened (and decompressing) ahead of the one read. What is
/// stored, its order and every error are those of one file ahead; a damaged file among
/// several in flight is reported in its turn, by name; the decoded buffers in flight stay
/// within the budget (fewer files ahead when they are large).
final class SourcesAheadTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/exports")

    /// A MyHeartCounts heart-rate upload of `lines` rows from second `first` (one a second;
    /// values by the second, so that uploads that overlap repeat the same rows).
    func heartRateUpload(from first: Int, lines: Int) -> [UInt8] {
        var text = "timestamp,value,confidence,device\n"
        for t in first..<first + lines { text += "\(t),\(60 + t % 40),\(t % 4),\"model=Watch; name=Apple Watch; systemName=watchOS\"\n" }
        return Array(text.utf8)
    }

    /// A user's upload tree of `count` zstd heart-rate uploads, each overlapping the one before
    /// by 100 rows (duplicates across uploads), the third uploaded again under a new name;
    /// `damage` changes the bytes of the upload at an index. Returns the upload paths in name order.
    @discardableResult
    func uploadTree(_ root: URL, count: Int, lines: Int = 2_000, damage: [Int: ([UInt8]) -> [UInt8]] = [:]) throws -> [String] {
        let folder = root.appendingPathComponent("users/u1/SensorKit/com.apple.SensorKit.heart.rate")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var paths: [String] = []
        for k in 0...count {
            // The last one re-uploads the third's rows.
            let text = heartRateUpload(from: 1_732_143_600 + (k == count ? 2 : k) * (lines - 100), lines: lines)
            var bytes = try ZstdCompressor.compress(text)
            if let change = damage[k] { bytes = change(bytes) }
            let path = folder.appendingPathComponent(String(format: "%02d-upload.csv.zstd", k)).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        return paths
    }

    func importResult(_ request: ImportRequest, _ dir: URL, ahead: ReadAhead) throws -> (stats: ImportStats, digest: String) {
        var request = request
        request.readAhead = ahead
        request.progressBar = false
        let store = try RecordedStore(path: dir.appendingPathComponent("s-\(UInt32.random(in: 0...UInt32.max)).sqlite").path)
        defer { try? store.close() }
        let stats = try store.importData(request)
        return (stats, try store.contentDigest())
    }

    func testSeveralFilesAheadStoreWhatOneAheadStores() throws {
        let dir = try recordedTempDir(self)
        let tree = dir.appendingPathComponent("tree")
        try uploadTree(tree, count: 12)
        let requests = [
            ("many zstd uploads", ImportRequest(format: .mhc, sources: [tree.path], timeZone: "UTC")),
            ("the MyHeartCounts fixture", ImportRequest(format: .mhc, sources: [Self.fixtures.appendingPathComponent("mhc").path], timeZone: "UTC")),
            ("the MyDataHelps fixture", ImportRequest(format: .mdhJSON, sources: [Self.fixtures.appendingPathComponent("mdh/RK.4F2A9C.Sleep and Light Pilot_20231106-20231109").path],
                                                      timeZone: "UTC")),
        ]
        for (what, request) in requests {
            let one = try importResult(request, dir, ahead: ReadAhead(files: 1))
            XCTAssertGreaterThan(one.stats.rowsStored, 0, what)
            for ahead in [ReadAhead(files: 4), ReadAhead(files: 8), ReadAhead(files: 8, budgetBytes: 1 << 20)] {
                let several = try importResult(request, dir, ahead: ahead)
                XCTAssertEqual(several.digest, one.digest, "\(what), \(ahead): the same store")
                XCTAssertEqual(several.stats.rowsRead, one.stats.rowsRead, "\(what), \(ahead)")
                XCTAssertEqual(several.stats.rowsStored, one.stats.rowsStored, "\(what), \(ahead)")
                XCTAssertEqual(several.stats.duplicatesDropped, one.stats.duplicatesDropped, "\(what), \(ahead)")
                XCTAssertEqual(several.stats.files, one.stats.files, "\(what), \(ahead)")
            }
        }
        // The many uploads: 13 files, 12 × 100 rows repeated by the next upload and one whole re-upload.
        let stats = try importResult(requests[0].1, dir, ahead: ReadAhead(files: 8)).stats
        XCTAssertEqual(stats.files, 13)
        XCTAssertEqual(stats.rowsRead, 13 * 2_000)
        XCTAssertEqual(stats.duplicatesDropped, 11 * 100 + 2_000)
    }

    /// Two damaged uploads among files in flight: the later one fails as soon as it is
    /// opened ahead (cut in half: its decoding ahead meets the cut while the first file is
    /// still read), the earlier one only at its end (a wrong checksum, after all its rows).
    /// Both have whole first blocks, so that the look at each upload's header passes. The error is the earlier one's, by name, as when reading one file at a time;
    /// with it whole, the later one's. The store keeps what an earlier import stored.
    func testADamagedFileAmongSeveralInFlightIsReportedInItsTurn() throws {
        let dir = try recordedTempDir(self)
        let store = try RecordedStore(path: dir.appendingPathComponent("kept.sqlite").path)
        let earlier = try writeFile(dir, "earlier/heartRate.csv", String(decoding: heartRateUpload(from: 1_700_000_000, lines: 500), as: UTF8.self))
        XCTAssertEqual(try store.importData(ImportRequest(format: .mhcCSV, sources: [earlier], participant: "u1", progressBar: false)).rowsStored, 500)
        let kept = try store.contentDigest()
        let wrongChecksum: ([UInt8]) -> [UInt8] = { bytes in var b = bytes; b[b.count - 1] ^= 0xFF; return b }
        let cutInHalf: ([UInt8]) -> [UInt8] = { bytes in Array(bytes.prefix(bytes.count / 2)) }
        let cases: [(String, [Int: ([UInt8]) -> [UInt8]], String)] = [
            ("both", [2: wrongChecksum, 5: cutInHalf], "02-upload.csv.zstd: not valid zstd data (incorrect checksum"),
            ("the later", [5: cutInHalf], "05-upload.csv.zstd: truncated zstd file"),
        ]
        for (name, damage, expected) in cases {
            let tree = dir.appendingPathComponent(name)
            try uploadTree(tree, count: 8, lines: 20_000, damage: damage)
            for ahead in [ReadAhead(files: 1), ReadAhead(files: 6)] {
                var request = ImportRequest(format: .mhc, sources: [tree.path], timeZone: "UTC", progressBar: false)
                request.readAhead = ahead
                var message = "no error"
                do { try store.importData(request) } catch { message = "\(error)" }
                XCTAssertTrue(message.contains(expected), "\(name) damaged, \(ahead): \(message)")
                XCTAssertEqual(try store.contentDigest(), kept, "\(name) damaged, \(ahead): the earlier import's rows, none of the failed one's")
            }
        }
    }

    /// An accelerometer upload of `batches` write batches of 1,500 rows from batch `first`
    /// (values by batch and row, so that uploads that overlap repeat the same rows);
    /// `badLine`: that data line's `y` becomes text.
    func accelerometerUpload(from first: Int, batches: Int, badLine: Int? = nil) -> String {
        var text = "timestamp,identifier,x,y,z,device\n"
        var line = 0
        for b in first..<first + batches {
            for i in 0..<1_500 {
                line += 1
                let y = line == badLine ? "zero" : "\(Double((b * 7 + i) % 1_000) / 1_000)"
                text += "\(1_732_143_600 + b * 30 + i / 50).\(String(format: "%02d", (i % 50) * 2)),\(b),0.25,\(y),-0.98,\"model=iPhone; name=iPhone; systemName=iOS\"\n"
            }
        }
        return text
    }

    /// Batched uploads (accelerometer) are read while the one before is stored: the store
    /// is the one that importing the files one at a time, in order, makes — uploads of one
    /// piece or several, overlapping ones, a re-upload —, and of two damaged uploads the
    /// earlier one's error stops the import, by file and line, with nothing of it stored,
    /// whether the later one was read ahead or not.
    func testBatchedUploadsReadAheadStoreWhatOneAtATimeStores() throws {
        let dir = try recordedTempDir(self)
        let sizes = [30, 50, 1, 90, 10, 2, 20, 45]
        var first = 0
        var files: [String] = []
        for (k, batches) in sizes.enumerated() {
            // Each upload repeats the last 10 batches of the one before; the last re-uploads the second.
            let from = k == sizes.count - 1 ? 20 : first
            files.append(try writeFile(dir, String(format: "uploads/%02d_accelerometer.csv", k), accelerometerUpload(from: from, batches: batches)))
            first = max(0, from + batches - 10)
        }
        let together = try RecordedStore(path: dir.appendingPathComponent("together.sqlite").path)
        let stats = try together.importData(ImportRequest(format: .mhcCSV, sources: [dir.appendingPathComponent("uploads").path],
                                                          participant: "u1", progressBar: false))
        XCTAssertEqual(stats.files, sizes.count)
        XCTAssertEqual(stats.rowsRead, sizes.reduce(0, +) * 1_500)
        let apart = try RecordedStore(path: dir.appendingPathComponent("apart.sqlite").path)
        var storedApart = 0
        for f in files {
            storedApart += try apart.importData(ImportRequest(format: .mhcCSV, sources: [f], participant: "u1", progressBar: false)).rowsStored
        }
        XCTAssertEqual(stats.rowsStored, storedApart)
        XCTAssertEqual(stats.duplicatesDropped, stats.rowsRead - storedApart)
        // The same rows, times, values and write batches (chunks differ: one import per file closes its chunks).
        let rowsTogether = try together.source(), rowsApart = try apart.source()
        let device = rowsTogether.devices(participant: "u1")
        XCTAssertEqual(device.count, 1)
        XCTAssertEqual(device, rowsApart.devices(participant: "u1"))
        let all = try rowsTogether.samples(participant: "u1", sensor: .accelerometer, device: device[0], writtenAfter: 0, through: 5e9)
        XCTAssertEqual(all.count, storedApart)
        let allApart = try rowsApart.samples(participant: "u1", sensor: .accelerometer, device: device[0], writtenAfter: 0, through: 5e9)
        func rows(_ b: SampleBatch) -> [[Double]] {
            let ids = recInts(b, "identifier"), x = recDoubles(b, "x"), y = recDoubles(b, "y"), z = recDoubles(b, "z")
            return (0..<b.count).map { [b.writeTimes[$0], b.times[$0], Double(ids[$0]), x[$0], y[$0], z[$0]] }
        }
        let a = rows(all), b = rows(allApart)
        let firstDifference = a.indices.first { $0 >= b.count || a[$0] != b[$0] }
        XCTAssertNil(firstDifference, "row \(firstDifference ?? -1): \(firstDifference.map { "\(a[$0]) vs \(b[$0])" } ?? "")")

        // Upload 03 fails at its 100,000th line (pieces of it stored before), 04 at its
        // second, while it is read ahead as 03 is stored: 04's error waits for its turn.
        let kept = try together.contentDigest()
        for (name, damaged) in [("both", [3: 100_000, 4: 2]), ("the later", [4: 2])] {
            let tree = dir.appendingPathComponent(name)
            first = 0
            for (k, batches) in sizes.enumerated() {
                let from = k == sizes.count - 1 ? 20 : first
                try writeFile(tree, String(format: "%02d_accelerometer.csv", k),
                              accelerometerUpload(from: from + 1_000, batches: batches, badLine: damaged[k]))
                first = max(0, from + batches - 10)
            }
            let expected = damaged[3] != nil ? "03_accelerometer.csv:100001, column 'y': expected a number, found 'zero'"
                : "04_accelerometer.csv:3, column 'y': expected a number, found 'zero'"
            for ahead in [ReadAhead(files: 1), ReadAhead(files: 6)] {
                var request = ImportRequest(format: .mhcCSV, sources: [tree.path], participant: "u1", progressBar: false)
                request.readAhead = ahead
                XCTAssertThrowsError(try together.importData(request), "\(name), \(ahead)") { error in
                    XCTAssertTrue("\(error)".contains(expected), "\(name), \(ahead): \(error)")
                }
                XCTAssertEqual(try together.contentDigest(), kept, "\(name), \(ahead): nothing of the failed import")
            }
        }
    }

    /// Files of about 3 MB decompressed: within an 8 MiB budget only the next one is open
    /// ahead (it always is); within 64 MiB, as many as allowed. Small files: as many as
    /// allowed within 8 MiB. Every file reads whole, in order, and its ring is the size counted.
    func testTheBudgetBoundsTheFilesAhead() throws {
        let dir = try recordedTempDir(self)
        func files(_ name: String, lines: Int) throws -> [(String, [UInt8])] {
            try (0..<8).map { k in
                let text = heartRateUpload(from: 1_732_143_600 + k * lines, lines: lines)
                let path = try writeFile(dir, "\(name)/\(k).csv.zstd", "")
                try Data(try ZstdCompressor.compress(text)).write(to: URL(fileURLWithPath: path))
                return (path, text)
            }
        }
        let large = try files("large", lines: 45_000), small = try files("small", lines: 100)
        let largeBytes = SourcesAhead.decodedBufferBytes(large[0].0)
        XCTAssertGreaterThan(largeBytes, 3_000_000)
        XCTAssertLessThan(largeBytes, 4 << 20)
        XCTAssertLessThan(SourcesAhead.decodedBufferBytes(small[0].0), 64 << 10)
        XCTAssertEqual(SourcesAhead.decodedBufferBytes(try writeFile(dir, "plain.csv", "timestamp\n")), 0)
        for (set, budget, expectedAhead) in [(large, 8 << 20, 1), (large, 64 << 20, 5), (small, 8 << 20, 5)] {
            let limit = ReadAhead(files: 5, budgetBytes: budget)
            let sources = SourcesAhead(set.map(\.0), limit: limit)
            for (k, (path, text)) in set.enumerated() {
                let source = try sources.open(k)
                XCTAssertEqual(sources.openAhead, min(expectedAhead, set.count - 1 - k), "file \(k), budget \(budget >> 20) MiB")
                if sources.openAhead > 1 { XCTAssertLessThanOrEqual(sources.bytesInFlight, budget) }
                XCTAssertEqual(try readAll(source), text, path)
                XCTAssertEqual((source as? ZstdSource)?.ringBytes, SourcesAhead.decodedBufferBytes(path, lookahead: limit.lookaheadBytes),
                               "the ring counted is the ring made")
            }
        }
    }

    /// A frame that declares no content size (streamed, as `compressFile` writes it): one file
    /// ahead or several, a share of the budget (at most 32 MiB, at least 2 MiB), so that an
    /// upload ahead decodes whole. Its ring is the size counted.
    func testSeveralAheadDecodeFurtherAhead() throws {
        let dir = try recordedTempDir(self)
        let plain = try writeFile(dir, "upload.csv", String(decoding: heartRateUpload(from: 1_732_143_600, lines: 150_000), as: UTF8.self))
        let path = dir.appendingPathComponent("upload.csv.zstd").path
        try ZstdCompressor.compressFile(plain, to: path)
        XCTAssertEqual(ReadAhead(files: 1).lookaheadBytes, 32 << 20, "a large file decodes its next windows while one is parsed")
        XCTAssertEqual(ReadAhead(files: 8).lookaheadBytes, (256 << 20) / 9)
        XCTAssertEqual(ReadAhead(files: 4).lookaheadBytes, 32 << 20)
        XCTAssertEqual(ReadAhead(files: 4, budgetBytes: 1 << 20).lookaheadBytes, 2 << 20, "never less than one file ahead's")
        for limit in [ReadAhead(files: 1), ReadAhead(files: 4), ReadAhead(files: 4, budgetBytes: 1 << 20)] {
            let sources = SourcesAhead([path], limit: limit)
            let source = try sources.open(0)
            let text = try readAll(source)
            XCTAssertEqual(text.count, (try FileManager.default.attributesOfItem(atPath: plain)[.size] as? NSNumber)?.intValue)
            let ring = try XCTUnwrap((source as? ZstdSource)?.ringBytes)
            XCTAssertEqual(ring, SourcesAhead.decodedBufferBytes(path, lookahead: limit.lookaheadBytes), "\(limit)")
            if limit.lookaheadBytes == 2 << 20 { XCTAssertLessThan(ring, text.count, "a tight budget: less than the upload") } else {
                XCTAssertGreaterThan(ring, text.count, "the whole upload fits")
            }
        }
    }

    func readAll(_ source: ByteSource) throws -> [UInt8] {
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = try source.read(into: buffer, count: 1 << 16)
            if n == 0 { return out }
            out += UnsafeRawBufferPointer(start: buffer, count: n)
        }
    }

    func testFilesAheadFollowTheCores() {
        XCTAssertEqual(ReadAhead.files(forCores: 1), 1)
        XCTAssertEqual(ReadAhead.files(forCores: 2), 1, "two cores: one file ahead, as before")
        XCTAssertEqual(ReadAhead.files(forCores: 4), 2)
        XCTAssertEqual(ReadAhead.files(forCores: 16), 8)
        XCTAssertEqual(ReadAhead(files: 0).files, 1)
    }
}
