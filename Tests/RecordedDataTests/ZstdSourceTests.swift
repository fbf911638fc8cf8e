import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// `ZstdSource` (libzstd's buffer-less decompression into a ring) reads what zstd wrote,
/// frame after frame, on a thread of its own or on the reader's, and refuses every damaged
/// file with the file's name: never a short or altered input. Compressed data is made here with libzstd (`ZstdCompressor`, content checksums
/// on), not kept as binary files.
final class ZstdSourceTests: XCTestCase {
    /// Text that compresses like an export (repeated keys, varying numbers), `lines` lines.
    func exportLikeText(lines: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var out: [UInt8] = []
        for i in 0..<lines {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out += Array("\(Double(state >> 40) / 1e7),\(i / 50),\(String(state >> 52, radix: 36)),\"model=iPhone; name=Ana's\"\n".utf8)
        }
        return out
    }

    /// A skippable frame (magic 0x184D2A5X, little-endian length, then that many bytes).
    func skippableFrame(_ payload: [UInt8], variant: UInt8 = 0x53) -> [UInt8] {
        let n = UInt32(payload.count)
        return [variant, 0x2A, 0x4D, 0x18, UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)] + payload
    }

    func write(_ bytes: [UInt8], _ name: String, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Everything `source` gives, read in pieces of varying sizes.
    func readAll(_ source: ByteSource) throws -> [UInt8] {
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 70_000, alignment: 8)
        defer { buffer.deallocate() }
        var size = 1
        while true {
            let n = try source.read(into: buffer, count: size)
            if n == 0 { break }
            out += UnsafeRawBufferPointer(start: buffer, count: n)
            size = size * 7 % 69_997 + 1
        }
        return out
    }

    func readAll(_ path: String) throws -> [UInt8] { try readAll(try ZstdSource(path: path)) }

    func message(_ body: () throws -> Any) -> String {
        do { _ = try body(); return "" } catch { return "\(error)" }
    }

    func testReadsWhatZstdWroteFrameAfterFrame() throws {
        let dir = try recordedTempDir(self)
        // About 3 MB: many of libzstd's 128 KiB blocks, and many of the source's input reads.
        let a = exportLikeText(lines: 60_000, seed: 1), b = exportLikeText(lines: 3, seed: 2)
        let frameA = try ZstdCompressor.compress(a), frameB = try ZstdCompressor.compress(b)
        XCTAssertEqual(Array(frameA.prefix(4)), [0x28, 0xB5, 0x2F, 0xFD])
        XCTAssertLessThan(frameA.count, a.count / 3, "the text compresses")
        XCTAssertTrue(try readAll(try write(frameA, "a.csv.zstd", in: dir)) == a)
        // Frames one after another (as `cat a.zst b.zst`), an empty frame and skippable
        // frames between and after them: one stream of a then b.
        let joined = skippableFrame(Array("metadata".utf8)) + frameA + (try ZstdCompressor.compress([])) + skippableFrame([], variant: 0x5F)
            + frameB + skippableFrame([0, 1, 2, 0xFF])
        let path = try write(joined, "ab.csv.zstd", in: dir)
        XCTAssertTrue(try readAll(path) == a + b)
        // Through openByteSource: read ahead on a thread of its own, the same bytes.
        let opened = try openByteSource(path)
        XCTAssertTrue(opened is ZstdSource)
        XCTAssertEqual(opened.compression, "zstd")
        XCTAssertTrue(try readAll(opened) == a + b)
        // A file of nothing but a skippable frame holds no bytes (and is no error).
        XCTAssertEqual(try readAll(try write(skippableFrame([7, 7]), "skip.zstd", in: dir)), [])
    }

    /// A file's ring goes to the next file whose ring has the same size (so that an import
    /// of many uploads does not map, and have zeroed, a fresh one for each), and the kept
    /// rings go back to the system when an import ends.
    func testRingsPassFromFileToFileAndGoBackWithTheImport() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 20_000, seed: 8)
        let plain = try write(text, "upload.csv", in: dir)
        let path = dir.appendingPathComponent("upload.csv.zstd").path
        try ZstdCompressor.compressFile(plain, to: path, level: 1)
        ZstdRings.shared.drain()
        var first: ZstdSource? = try ZstdSource(path: path, readAhead: false, lookahead: 1 << 20)
        XCTAssertTrue(try readAll(first!) == text)
        let size = first!.ringBytes
        XCTAssertEqual(ZstdRings.shared.keptCount, 0)
        first = nil
        XCTAssertEqual(ZstdRings.shared.keptCount, 1, "kept when its file is done")
        let second = try ZstdSource(path: path, readAhead: false, lookahead: 1 << 20)
        XCTAssertTrue(try readAll(second) == text)
        XCTAssertEqual(second.ringBytes, size)
        XCTAssertEqual(ZstdRings.shared.keptCount, 0, "the next file took it")
        var other: ZstdSource? = try ZstdSource(path: path, readAhead: false, lookahead: 1 << 19)
        XCTAssertTrue(try readAll(other!) == text)
        XCTAssertNotEqual(other!.ringBytes, size, "another size: a ring of its own")
        withExtendedLifetime(second) {}
        other = nil
        XCTAssertGreaterThanOrEqual(ZstdRings.shared.keptCount, 1)
        // An import drains what is kept, even one that fails (this file is no MyHeartCounts CSV).
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .mhcCSV, sources: [path], participant: "p", timeZone: "UTC",
                                                                progressBar: false)))
        XCTAssertEqual(ZstdRings.shared.keptCount, 0)
        try store.close()
    }

    /// Frames without a declared content size (as a streaming producer writes them) decoded
    /// through a ring only a little larger than their window: the ring wraps many times,
    /// whether a thread decodes ahead or the reader decodes, and the bytes are the same.
    func testRingWrapsAndReaderDecodesGiveTheSameBytes() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 90_000, seed: 6)
        let plain = try write(text, "big.csv", in: dir)
        // Level 1: a 512 KiB window, so a ring of about 0.8 MB (window, two blocks, the
        // lookahead) for about 5 MB of text: it must wrap to hold them.
        let compressed = dir.appendingPathComponent("big.csv.zstd").path
        try ZstdCompressor.compressFile(plain, to: compressed, level: 1)
        for lookahead in [1, 4_096, 300_000, ZstdSource.lookahead] {
            XCTAssertTrue(try readAll(ZstdSource(path: compressed, lookahead: lookahead)) == text, "read ahead, lookahead \(lookahead)")
            XCTAssertTrue(try readAll(ZstdSource(path: compressed, readAhead: false, lookahead: lookahead)) == text, "on the reader's thread, lookahead \(lookahead)")
        }
        // Two streamed frames and a one-shot frame (content size declared) in one file.
        let joined = try write(Array(try Data(contentsOf: URL(fileURLWithPath: compressed))) + (try ZstdCompressor.compress(text))
            + Array(try Data(contentsOf: URL(fileURLWithPath: compressed))), "three.zstd", in: dir)
        XCTAssertTrue(try readAll(ZstdSource(path: joined, lookahead: 4_096)) == text + text + text)
        XCTAssertTrue(try readAll(ZstdSource(path: joined, readAhead: false)) == text + text + text)
        // A second frame cut short: every byte of the first, then the error.
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: compressed)))
        let damaged = try write(whole + whole.prefix(whole.count / 2), "damaged.zstd", in: dir)
        for readAhead in [true, false] {
            let source = try ZstdSource(path: damaged, readAhead: readAhead, lookahead: 4_096)
            var got: [UInt8] = []
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 65_536, alignment: 8)
            defer { buffer.deallocate() }
            var error = ""
            do {
                while true {
                    let n = try source.read(into: buffer, count: 65_536)
                    if n == 0 { break }
                    got += UnsafeRawBufferPointer(start: buffer, count: n)
                }
            } catch let e {
                error = "\(e)"
            }
            XCTAssertTrue(error.contains("damaged.zstd: truncated zstd file"), error)
            XCTAssertGreaterThanOrEqual(got.count, text.count, "the bytes before the damage came first")
            XCTAssertTrue(Array(got.prefix(text.count)) == text, "and they are the file's")
            // The error again on the next read, never an end.
            XCTAssertThrowsError(try source.read(into: buffer, count: 1))
        }
    }

    func testDroppingItMidFileStopsItsThread() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 40_000, seed: 7)
        let path = dir.appendingPathComponent("drop.zstd").path
        try ZstdCompressor.compressFile(try write(text, "drop.csv", in: dir), to: path, level: 1)
        for _ in 0..<30 {
            let source = try ZstdSource(path: path, lookahead: 4_096)
            var b: UInt64 = 0
            XCTAssertEqual(try source.read(into: &b, count: 8), 8)
            XCTAssertEqual(Array(withUnsafeBytes(of: b) { Array($0) }), Array(text.prefix(8)))
            // deinit cancels and waits for the thread: a hang here would stop the test run.
        }
    }

    func testEveryCutIsTruncatedNeverShort() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 5_000, seed: 3)
        let frame = try ZstdCompressor.compress(text)
        let cut = dir.appendingPathComponent("cut.csv.zstd").path
        // Cuts through the magic, the frame header, the blocks, and each byte of the 4-byte
        // content checksum at the end.
        var cuts = Array(stride(from: 1, to: frame.count - 4, by: max(1, frame.count / 40)))
        cuts += (frame.count - 4)..<frame.count
        for n in cuts {
            try Data(frame.prefix(n)).write(to: URL(fileURLWithPath: cut))
            let e = message { try self.readAll(cut) }
            XCTAssertTrue(e.contains("cut.csv.zstd") && e.contains("truncated zstd file") && e.contains("the download or copy was cut short"),
                          "cut at \(n) of \(frame.count): \(e)")
        }
        // A second frame cut short after a whole first one.
        try Data(frame + frame.prefix(frame.count / 2)).write(to: URL(fileURLWithPath: cut))
        XCTAssertTrue(message { try self.readAll(cut) }.contains("truncated zstd file"))
        try Data().write(to: URL(fileURLWithPath: cut))
        XCTAssertEqual(message { try self.readAll(cut) }, "\(cut): empty file: expected zstd-compressed data")
    }

    func testDamageIsNamed() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 5_000, seed: 4)
        let frame = try ZstdCompressor.compress(text)
        let bad = dir.appendingPathComponent("bad.json.zstd")
        func refused(_ bytes: [UInt8]) -> String {
            try? Data(bytes).write(to: bad)
            return message { try self.readAll(bad.path) }
        }
        // The content checksum (the frame's last 4 bytes).
        var checksum = frame
        checksum[frame.count - 2] ^= 0x01
        XCTAssertTrue(refused(checksum).contains("bad.json.zstd: not valid zstd data (incorrect checksum"), refused(checksum))
        // Bytes after the last frame that do not start another: many, or fewer than a magic.
        for trailing in ["trailing garbage", "x", "(\u{B5}"] {
            let e = refused(frame + Array(trailing.utf8))
            XCTAssertTrue(e.contains("bytes after the end of the compressed stream that do not start another frame") && e.contains("near compressed byte \(frame.count)"), e)
        }
        // Not zstd at all.
        XCTAssertTrue(refused(Array("{\"device\": 1}".utf8)).contains("not valid zstd data (the file does not start with a zstd frame)"))
        // A reserved bit in the frame header: libzstd's own words, and where.
        var header = frame
        header[4] |= 0x08
        // The bytes named are those of the failed step: the frame header's (at most 18).
        XCTAssertTrue(refused(header).contains("not valid zstd data (") && refused(header).contains("near compressed bytes 0–18"), refused(header))
        // Any single flipped byte in the frame: refused, never other text.
        var refusals = 0
        for k in stride(from: 6, to: frame.count - 4, by: max(1, frame.count / 40)) {
            var flipped = frame
            flipped[k] ^= 0x20
            try Data(flipped).write(to: bad)
            if let read = try? readAll(bad.path) {
                XCTAssertTrue(read == text, "a flip at \(k) was read as other text")
            } else {
                refusals += 1
                XCTAssertTrue(refused(flipped).contains("bad.json.zstd: not valid zstd data"), refused(flipped))
            }
        }
        XCTAssertGreaterThan(refusals, 0)
    }

    func testCompressionIsRecognisedByMagicWhateverTheName() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 2_000, seed: 5)
        let zstdNamedCSV = try write(try ZstdCompressor.compress(text), "upload.csv", in: dir)
        let source = try openByteSource(zstdNamedCSV)
        XCTAssertEqual(source.compression, "zstd")
        XCTAssertTrue(try readAll(source) == text)
        // gzip named .json, and a gzip file named .zstd.
        let gz = try gzipFile(try write(text, "g.txt", in: dir))
        for name in ["g.json", "g.zstd"] {
            let renamed = dir.appendingPathComponent(name).path
            try FileManager.default.copyItem(atPath: gz, toPath: renamed)
            let opened = try openByteSource(renamed)
            XCTAssertEqual(opened.compression, "gzip", name)
            XCTAssertTrue(try readAll(opened) == text, name)
        }
        // Plain text named .csv.zstd is read as it is.
        let plain = try openByteSource(try write(text, "plain.csv.zstd", in: dir))
        XCTAssertTrue(plain is FileSource)
        XCTAssertTrue(try readAll(plain) == text)
        // A file of one byte or none: plain.
        XCTAssertTrue(try openByteSource(try write([0x28], "one", in: dir)) is FileSource)
        XCTAssertTrue(try openByteSource(try write([], "none", in: dir)) is FileSource)
    }

    /// The word-at-a-time scan of plain ASCII finds the same first bad byte as a byte loop,
    /// wherever it lies in a word, and hands UTF-8 after ASCII to the full check.
    func testLeadingBytesFindTheFirstBadByteAnywhereInAWord() {
        let text = Array("timestamp,value,confidence,device\r\n1732143600,61,3,\"Watch\"\t\n".utf8)
        XCTAssertEqual(LeadingBytes(text, complete: true), .text)
        for bad: UInt8 in [0x00, 0x01, 0x08, 0x0B, 0x1B, 0x1F, 0x7F, 0x80, 0xC0, 0xFF] {
            for at in 0..<text.count {
                var b = text
                b[at] = bad
                XCTAssertEqual(LeadingBytes(b, complete: true), .binary(offset: at), "byte \(bad) at \(at)")
            }
        }
        for at in 0..<text.count {
            var b = text
            b.insert(contentsOf: Array("é😀".utf8), at: at)
            XCTAssertEqual(LeadingBytes(b, complete: true), .text, "UTF-8 at \(at)")
        }
    }

    func testLeadingBytesAreClassifiedNeverPrinted() throws {
        XCTAssertEqual(LeadingBytes([0x28, 0xB5, 0x2F, 0xFD, 0], complete: true), .zstd)
        XCTAssertEqual(LeadingBytes([0x1F, 0x8B, 8], complete: true), .gzip)
        XCTAssertEqual(LeadingBytes([0x5E, 0x2A, 0x4D, 0x18, 0], complete: true), .zstd, "a skippable frame first")
        XCTAssertEqual(LeadingBytes(Array("`*M\u{18}".utf8), complete: true), .binary(offset: 3), "not a skippable frame's magic")
        XCTAssertEqual(LeadingBytes(Array("timestamp,lux\r\n\t1,2 — ü 😀\n".utf8), complete: true), .text)
        XCTAssertEqual(LeadingBytes([], complete: true), .text)
        XCTAssertEqual(LeadingBytes(Array("ab\u{0}c".utf8), complete: true), .binary(offset: 2))
        XCTAssertEqual(LeadingBytes(Array("abc\u{1B}[31m".utf8), complete: true), .binary(offset: 3))
        XCTAssertEqual(LeadingBytes([0x61, 0x7F], complete: true), .binary(offset: 1))
        XCTAssertEqual(LeadingBytes([0x61, 0xC0, 0x80], complete: true), .binary(offset: 1), "an overlong form")
        XCTAssertEqual(LeadingBytes([0x61, 0xED, 0xA0, 0x80], complete: true), .binary(offset: 1), "a surrogate")
        XCTAssertEqual(LeadingBytes([0x61, 0xE2, 0x28, 0xA1], complete: true), .binary(offset: 1), "a broken sequence")
        XCTAssertEqual(LeadingBytes([0x89, 0x50, 0x4E, 0x47], complete: true), .binary(offset: 0), "a PNG")
        // A sequence cut by the end of a sample is text that continues; by the end of the file, not.
        XCTAssertEqual(LeadingBytes([0x61, 0xE2, 0x80], complete: false), .text)
        XCTAssertEqual(LeadingBytes([0x61, 0xE2, 0x80], complete: true), .binary(offset: 1))
        XCTAssertEqual(LeadingBytes.binary(offset: 9).notText, "not UTF-8 text (binary data at byte 9)")
        XCTAssertEqual(LeadingBytes.zstd.problem(compression: nil), "the file is zstd-compressed")
        XCTAssertEqual(LeadingBytes.gzip.problem(compression: "zstd"), "the file's zstd-decompressed content is gzip-compressed (compressed twice?)")
        XCTAssertNil(LeadingBytes.text.problem(compression: "gzip"))
        // An error message never carries control characters, whatever it quotes.
        let e = ImportError(file: "a\u{7}.csv", field: "x\u{0}", "found '\u{1B}[2J\u{85}'")
        XCTAssertEqual("\(e)", "a\\u{7}.csv, column 'x\\u{0}': found '\\u{1B}[2J\\u{85}'")
    }
}

/// The importers read zstd uploads as the files inside them, and a file that is not text
/// is named for what it is, never printed. (An extension: it shares the MyHeartCounts fixture.)
extension RecordedImportTests {
    /// No C0, DEL or C1 control character (a binary byte read as text) in `text`.
    func assertPrintable(_ text: String, file: StaticString = #filePath, line: UInt = #line) {
        let bad = text.unicodeScalars.first { $0.value < 0x20 || ($0.value >= 0x7F && $0.value <= 0x9F) }
        XCTAssertNil(bad, "a control character in: \(text.debugDescription)", file: file, line: line)
    }

    func testMyHeartCountsZstdUploadsImportTheSameRowsAsPlainFiles() throws {
        let dir = try recordedTempDir(self)
        let (plainFolder, expected) = try mhcFixture(dir)
        // The same files as MyHeartCounts uploads them: <UUID>.csv.zstd (and one .zst).
        let zstdFolder = dir.appendingPathComponent("zstd")
        try FileManager.default.createDirectory(at: zstdFolder, withIntermediateDirectories: true)
        let names = try FileManager.default.contentsOfDirectory(atPath: plainFolder).sorted()
        XCTAssertEqual(names.count, 6)
        for (i, name) in names.enumerated() {
            let target = zstdFolder.appendingPathComponent(name + (i == 0 ? ".zst" : ".zstd")).path
            XCTAssertGreaterThan(try ZstdCompressor.compressFile(plainFolder + "/" + name, to: target), 0)
        }
        func imported(_ folder: String, _ name: String) throws -> (ImportStats, RecordedSource) {
            let store = try RecordedStore(path: dir.appendingPathComponent(name).path)
            let stats = try store.importData(ImportRequest(format: .mhcCSV, sources: [folder], participant: "p1",
                                                           timeZone: "Europe/Berlin", progressBar: false))
            return (stats, try store.source())
        }
        let (plainStats, plain) = try imported(plainFolder, "plain.sqlite")
        let (zstdStats, zstd) = try imported(zstdFolder.path, "zstd.sqlite")
        XCTAssertEqual(plainStats.rowsStored, expected)
        XCTAssertEqual(zstdStats.rowsStored, expected)
        XCTAssertEqual(zstdStats.files, plainStats.files)
        let devices = plain.devices(participant: "p1")
        XCTAssertEqual(zstd.devices(participant: "p1"), devices)
        for sensor in [Sensor.accelerometer, .ambientLightSensor, .ambientPressure, .heartRate, .pedometerData, .wristTemperature] {
            for device in devices {
                let a = try plain.samples(participant: "p1", sensor: sensor, device: device, writtenAfter: -1e10, through: 1e10)
                let b = try zstd.samples(participant: "p1", sensor: sensor, device: device, writtenAfter: -1e10, through: 1e10)
                assertSameRows(a, b, "\(sensor) on \(device.name)")
            }
        }
    }

    func testFilesThatAreNotTextAreNamedNotPrinted() throws {
        let dir = try recordedTempDir(self)
        // A binary file named .csv: a header of escape sequences, a NUL, bytes that are not UTF-8.
        var binary = Array("timestamp,\u{1B}[2J\u{7}".utf8) + [0, 0xFF, 0xC3, 0x28, 0x22, 0x0A]
        for i in 0..<2_000 { binary.append(UInt8(truncatingIfNeeded: i &* 151 &+ i >> 3)) }
        let csv = try writeFile(dir, "in/heartRate.csv", "")
        try Data(binary).write(to: URL(fileURLWithPath: csv))
        let e = importError(ImportRequest(format: .mhcCSV, sources: [csv], participant: "p"), dir)
        XCTAssertTrue(e.contains("heartRate.csv: not a MyHeartCounts SensorKit CSV file: the file is not UTF-8 text (binary data at byte 10)"), e)
        assertPrintable(e)
        // The same inside a zstd upload: named as the decompressed content.
        let zstdPath = dir.appendingPathComponent("z/heartRate.csv.zstd")
        try FileManager.default.createDirectory(at: zstdPath.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(try ZstdCompressor.compress(binary)).write(to: zstdPath)
        let ez = importError(ImportRequest(format: .mhcCSV, sources: [zstdPath.path], participant: "p"), dir)
        XCTAssertTrue(ez.contains("heartRate.csv.zstd: not a MyHeartCounts SensorKit CSV file: the file's zstd-decompressed content is not UTF-8 text (binary data at byte 10"), ez)
        assertPrintable(ez)
        // Compressed twice: gzip inside zstd.
        let text = Array("timestamp,value,confidence,device\n1732143600,60,3,Watch\n".utf8)
        let gz = try gzipFile(try writeFile(dir, "twice/hr.csv", String(decoding: text, as: UTF8.self)))
        let twice = dir.appendingPathComponent("twice/hr.csv.zstd")
        try Data(try ZstdCompressor.compress([UInt8](try Data(contentsOf: URL(fileURLWithPath: gz))))).write(to: twice)
        try FileManager.default.removeItem(atPath: gz)
        try FileManager.default.removeItem(atPath: dir.appendingPathComponent("twice/hr.csv").path)
        let e2 = importError(ImportRequest(format: .mhcCSV, sources: [twice.path], participant: "p"), dir)
        XCTAssertTrue(e2.contains("hr.csv.zstd: not a MyHeartCounts SensorKit CSV file: the file's zstd-decompressed content is gzip-compressed"), e2)
        assertPrintable(e2)
        // A MyDataHelps file that is binary, plain and zstd-compressed.
        let json = try writeFile(dir, "mdh/sensorkit-ambient-light-sensor/iPhone/P1/d1/q.json", "")
        try Data(Array("{\"dev\u{1}".utf8) + binary).write(to: URL(fileURLWithPath: json))
        let e3 = importError(ImportRequest(format: .mdhJSON, sources: [dir.appendingPathComponent("mdh").path]), dir)
        XCTAssertTrue(e3.contains("q.json: not JSON text: the file is not UTF-8 text (binary data at byte 5)"), e3)
        assertPrintable(e3)
        try FileManager.default.removeItem(atPath: json)
        try Data(try ZstdCompressor.compress(Array("{\"dev\u{1}".utf8) + binary)).write(to: URL(fileURLWithPath: json + ".zstd"))
        let e4 = importError(ImportRequest(format: .mdhJSON, sources: [dir.appendingPathComponent("mdh").path]), dir)
        XCTAssertTrue(e4.contains("q.json.zstd: not JSON text: the file's zstd-decompressed content is not UTF-8 text (binary data at byte 5"), e4)
        assertPrintable(e4)
    }

    /// The next file is opened (and decompressed) ahead while one is parsed: a damaged next
    /// file fails in its turn, named, after the file before it; a damaged first file fails
    /// while the next one is being decompressed ahead; either way the store keeps what an
    /// earlier import stored and nothing of the failed one.
    func testAFileOpenedAheadFailsInItsTurnAndNothingStoredIsLost() throws {
        let dir = try recordedTempDir(self)
        func upload(from first: Int, lines: Int) -> [UInt8] {
            var text = "timestamp,value,confidence,device\n"
            for i in 0..<lines { text += "\(first + i),\(60 + i % 40),3,\"model=Watch; name=Apple Watch; systemName=watchOS\"\n" }
            return Array(text.utf8)
        }
        let big = try ZstdCompressor.compress(upload(from: 1_732_143_600, lines: 200_000))
        let small = try ZstdCompressor.compress(upload(from: 1_732_443_600, lines: 3_000))
        let store = try RecordedStore(path: dir.appendingPathComponent("kept.sqlite").path)
        let earlier = try writeFile(dir, "earlier/heartRate.csv", String(decoding: upload(from: 1_732_043_600, lines: 500), as: UTF8.self))
        XCTAssertEqual(try store.importData(ImportRequest(format: .mhcCSV, sources: [earlier], participant: "p", progressBar: false)).rowsStored, 500)
        // Files are read in name order: a-… first, b-… opened ahead while a-… is parsed.
        let cases = [("second", big, Array(small.prefix(small.count - 10)), "b-upload.csv.zstd"),
                     ("first", Array(big.prefix(big.count / 2)), small, "a-upload.csv.zstd")]
        for (name, a, b, bad) in cases {
            let folder = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(a).write(to: folder.appendingPathComponent("a-upload.csv.zstd"))
            try Data(b).write(to: folder.appendingPathComponent("b-upload.csv.zstd"))
            var message = "no error"
            do {
                try store.importData(ImportRequest(format: .mhcCSV, sources: [folder.path], participant: "p", progressBar: false))
            } catch {
                message = "\(error)"
            }
            XCTAssertTrue(message.contains("\(bad): truncated zstd file"), "\(name): \(message)")
            let source = try store.source()
            let device = try XCTUnwrap(source.devices(participant: "p").first)
            XCTAssertEqual(try source.samples(participant: "p", sensor: .heartRate, device: device, writtenAfter: -1e10, through: 1e10).count, 500,
                           "\(name): the earlier import's rows, none of the failed one's")
        }
        // Both whole: every row of both.
        let folder = dir.appendingPathComponent("whole")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(big).write(to: folder.appendingPathComponent("a-upload.csv.zstd"))
        try Data(small).write(to: folder.appendingPathComponent("b-upload.csv.zstd"))
        XCTAssertEqual(try store.importData(ImportRequest(format: .mhcCSV, sources: [folder.path], participant: "p", progressBar: false)).rowsStored, 203_000)
    }

    func testTruncatedZstdUploadIsAnError() throws {
        let dir = try recordedTempDir(self)
        var text = "timestamp,value,confidence,device\n"
        for i in 0..<3_000 { text += "\(1_732_143_600 + i),\(60 + i % 40),3,\"model=Watch; name=Apple Watch; systemName=watchOS\"\n" }
        let frame = try ZstdCompressor.compress(Array(text.utf8))
        let path = try writeFile(dir, "in/0C5E-upload.csv.zstd", "")
        try Data(frame.prefix(frame.count - 10)).write(to: URL(fileURLWithPath: path))
        let e = importError(ImportRequest(format: .mhcCSV, sources: [dir.appendingPathComponent("in").path], participant: "p"), dir)
        XCTAssertTrue(e.contains("0C5E-upload.csv.zstd: truncated zstd file"), e)
    }
}
