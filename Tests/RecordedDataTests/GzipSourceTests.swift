import Foundation
import XCTest
@testable import StudyStore
@testable import Importers

/// `GzipSource` (ISA-L's inflate) reads what gzip wrote, member after member, and refuses
/// every damaged file with the file's name: never a short or altered input.
final class GzipSourceTests: XCTestCase {
    /// Text that compresses like an export (repeated keys, varying numbers), `lines` lines.
    func exportLikeText(lines: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var out: [UInt8] = []
        for i in 0..<lines {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            out += Array("{\"x\": \(Double(state >> 40) / 1e7), \"identifier\": \(i / 50), \"junk\": \"\(String(state >> 52, radix: 36))\"},\n".utf8)
        }
        return out
    }

    /// Writes `bytes` to `name` in `dir` and gzips it with the system's gzip; the .gz path.
    func gzipped(_ bytes: [UInt8], _ name: String, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try gzipFile(path)
    }

    /// Everything `GzipSource` gives for `path`, read in pieces of varying sizes.
    func readAll(_ path: String) throws -> [UInt8] {
        let source = try GzipSource(path: path)
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

    func message(_ body: () throws -> Any) -> String {
        do { _ = try body(); return "" } catch { return "\(error)" }
    }

    func testReadsWhatGzipWroteMemberAfterMember() throws {
        let dir = try recordedTempDir(self)
        let a = exportLikeText(lines: 40_000, seed: 1), b = exportLikeText(lines: 3, seed: 2)
        let one = try gzipped(a, "a.json", in: dir)
        XCTAssertEqual(try readAll(one), a)
        // Two members, as `cat a.gz b.gz` or a gzip appended to: one stream.
        let two = dir.appendingPathComponent("ab.json.gz")
        try (try Data(contentsOf: URL(fileURLWithPath: one)) + Data(contentsOf: URL(fileURLWithPath: try gzipped(b, "b.json", in: dir)))).write(to: two)
        XCTAssertEqual(try readAll(two.path), a + b)
        // An empty member (gzip of an empty file) between them changes nothing.
        let empty = try gzipped([], "e.json", in: dir)
        let three = dir.appendingPathComponent("aeb.json.gz")
        try (try Data(contentsOf: URL(fileURLWithPath: one)) + Data(contentsOf: URL(fileURLWithPath: empty))
             + Data(contentsOf: URL(fileURLWithPath: dir.appendingPathComponent("b.json.gz").path))).write(to: three)
        XCTAssertEqual(try readAll(three.path), a + b)
    }

    func testEveryCutIsTruncatedNeverShort() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 5_000, seed: 3)
        let gz = try Data(contentsOf: URL(fileURLWithPath: try gzipped(text, "t.json", in: dir)))
        let cut = dir.appendingPathComponent("cut.json.gz").path
        // Cuts through the header, the deflate data, and each byte of the 8-byte trailer.
        var cuts = Array(stride(from: 1, to: gz.count - 8, by: max(1, gz.count / 40)))
        cuts += (gz.count - 8)..<gz.count
        for n in cuts {
            try gz.prefix(n).write(to: URL(fileURLWithPath: cut))
            let e = message { try self.readAll(cut) }
            XCTAssertTrue(e.contains("cut.json.gz") && e.contains("truncated gzip file"), "cut at \(n) of \(gz.count): \(e)")
        }
        try Data().write(to: URL(fileURLWithPath: cut))
        XCTAssertTrue(message { try self.readAll(cut) }.contains("empty file: expected gzip-compressed data"))
    }

    func testDamageIsNamed() throws {
        let dir = try recordedTempDir(self)
        let text = exportLikeText(lines: 5_000, seed: 4)
        let gz = try Data(contentsOf: URL(fileURLWithPath: try gzipped(text, "d.json", in: dir)))
        let bad = dir.appendingPathComponent("bad.json.gz")
        func refused(_ data: Data) -> String {
            try? data.write(to: bad)
            return message { try self.readAll(bad.path) }
        }
        // The trailer's CRC-32, then its length.
        var crc = gz
        crc[gz.count - 8] ^= 0x01
        XCTAssertTrue(refused(crc).contains("not valid gzip data (incorrect data check)"), refused(crc))
        var length = gz
        length[gz.count - 2] ^= 0x01
        XCTAssertTrue(refused(length).contains("not valid gzip data"), refused(length))
        // Not gzip at all, and a wrong compression method.
        XCTAssertTrue(refused(Data("{\"device\": 1}".utf8)).contains("not valid gzip data (incorrect header check) near compressed byte"))
        var method = gz
        method[2] = 7
        XCTAssertTrue(refused(method).contains("not valid gzip data"), refused(method))
        // Bytes after the last member that do not start another.
        XCTAssertTrue(refused(gz + Data("trailing".utf8)).contains("bytes after the end of the compressed stream"), refused(gz + Data("trailing".utf8)))
        // Any single flipped byte in the compressed data: refused, never other text.
        for k in stride(from: 20, to: gz.count - 8, by: max(1, gz.count / 30)) {
            var flipped = gz
            flipped[k] ^= 0x20
            try flipped.write(to: bad)
            if let read = try? readAll(bad.path) {
                XCTAssertEqual(read, text, "a flip at \(k) was read as other text")
            } else {
                XCTAssertTrue(refused(flipped).contains("bad.json.gz"), refused(flipped))
            }
        }
    }
}

/// `ReadAheadSource` gives the inner source's bytes in order, then its end or its error
/// (after the bytes before it), whatever the block size; dropping it mid-file stops its thread.
final class ReadAheadSourceTests: XCTestCase {
    /// Bytes, then (when `failing`) an error.
    final class Inner: ByteSource {
        let bytes: [UInt8]
        let failing: Bool
        var offset = 0
        init(_ bytes: [UInt8], failing: Bool) { self.bytes = bytes; self.failing = failing }
        var fileBytesRead: Int64 { Int64(offset) }
        func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
            // Short reads of varying size, as a decompressor gives.
            let n = min(count, bytes.count - offset, 1 + offset % 13)
            if n == 0 && failing { throw ImportError(file: "inner", "broken after \(offset) bytes") }
            if n > 0 { bytes.withUnsafeBytes { p.copyMemory(from: $0.baseAddress! + offset, byteCount: n) } }
            offset += n
            return n
        }
    }

    /// What `source` gives in reads of varying size, and the error that ended it (if any).
    func drain(_ source: ByteSource) -> ([UInt8], String?) {
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 100, alignment: 8)
        defer { buffer.deallocate() }
        var size = 3
        while true {
            do {
                let n = try source.read(into: buffer, count: size)
                if n == 0 { return (out, nil) }
                out += UnsafeRawBufferPointer(start: buffer, count: n)
                size = size * 5 % 97 + 1
            } catch {
                return (out, "\(error)")
            }
        }
    }

    func testBytesThenEndOrErrorInOrder() {
        let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) }
        for (blockBytes, depth) in [(1, 1), (7, 2), (64, 3), (4_096, 8), (1 << 20, 2)] {
            let (plain, none) = drain(ReadAheadSource(Inner(bytes, failing: false), blockBytes: blockBytes, depth: depth))
            XCTAssertEqual(plain, bytes, "blocks of \(blockBytes)")
            XCTAssertNil(none)
            let (before, error) = drain(ReadAheadSource(Inner(bytes, failing: true), blockBytes: blockBytes, depth: depth))
            XCTAssertEqual(before, bytes, "every byte before the error, blocks of \(blockBytes)")
            XCTAssertEqual(error, "inner: broken after 5000 bytes")
        }
        let (empty, end) = drain(ReadAheadSource(Inner([], failing: false), blockBytes: 8, depth: 2))
        XCTAssertEqual(empty, [])
        XCTAssertNil(end)
    }

    func testDroppingItMidFileStopsItsThread() throws {
        let bytes = [UInt8](repeating: 42, count: 1 << 16)
        for _ in 0..<50 {
            let source = ReadAheadSource(Inner(bytes, failing: false), blockBytes: 16, depth: 2)
            var b: UInt64 = 0
            XCTAssertEqual(try source.read(into: &b, count: 8), 8)
            XCTAssertEqual(b, 0x2A2A_2A2A_2A2A_2A2A)
            // deinit cancels and waits for the thread: a hang here would stop the test run.
        }
    }
}
