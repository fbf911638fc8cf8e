import Foundation
import XCTest
@testable import Importers

/// `FileOutput` writes the same bytes with direct I/O as through the page cache: whole
/// blocks directly, the partial block carried to the next flush, the tail at `close`.
final class FileOutputTests: XCTestCase {
    /// Writes pieces of pseudo-random sizes (up to 3 MiB and an odd tail, so that flushes
    /// fall mid-block) through `FileOutput`; returns what it wrote and whether it wrote directly.
    func write(_ path: String, seed: UInt64) throws -> ([UInt8], Bool) {
        var out = FileOutput()
        try out.open(path)
        let direct = out.writesDirectly
        var expected: [UInt8] = []
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        while expected.count < 3 << 20 {
            switch next() % 4 {
            case 0:
                // A long run through append (crosses the 1 MiB buffer).
                let piece = (0..<Int(next() % 300_000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(truncatingIfNeeded: state)) }
                try piece.withUnsafeBufferPointer { try out.append(bytes: $0) }
                expected += piece
            case 1:
                let v = Int64(bitPattern: next() << 20) >> Int(next() % 40)
                try out.reserve(24)
                out.int(v)
                expected += Array(String(v).utf8)
            case 2:
                let d = Double(next() % 1_000_000) / 977
                try out.reserve(32)
                out.double(d)
                expected += Array(d.description.utf8)
            default:
                try out.reserve(1)
                out.byte(UInt8(ascii: "\n"))
                expected.append(UInt8(ascii: "\n"))
            }
        }
        try out.append("tail")
        expected += Array("tail".utf8)
        try out.close()
        return (expected, direct)
    }

    func testDirectAndCachedWritesGiveTheSameBytes() throws {
        let dir = try recordedTempDir(self)
        let direct = dir.appendingPathComponent("direct.txt").path
        let cached = dir.appendingPathComponent("cached.txt").path
        let (expected, wroteDirectly) = try write(direct, seed: 7)
        let (again, notDirect) = try FileOutput.$directIO.withValue(false) { try write(cached, seed: 7) }
        XCTAssertEqual(expected, again)
        XCTAssertFalse(notDirect, "directIO off: through the page cache")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: direct)), Data(expected))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: cached)), Data(expected))
        // Where the file system takes O_DIRECT, the writer used it.
        let probe = open(dir.appendingPathComponent("probe").path, O_WRONLY | O_CREAT | FileOutput.openDirect, 0o644)
        if FileOutput.openDirect != 0 && probe >= 0 {
            close(probe)
            XCTAssertTrue(wroteDirectly, "the temporary folder takes direct I/O, the writer should use it")
        }
    }

    /// Reopening a `FileOutput` for the next file (MDHWriter: a file per day) closes the
    /// previous one with its tail.
    func testReopeningClosesThePreviousFileWithItsTail() throws {
        let dir = try recordedTempDir(self)
        var out = FileOutput()
        let a = dir.appendingPathComponent("a").path, b = dir.appendingPathComponent("b").path
        try out.open(a)
        let text = String(repeating: "0123456789", count: 1_000) + "end"
        try out.append(text)
        try out.open(b)
        try out.append("second")
        try out.close()
        XCTAssertEqual(try String(contentsOfFile: a, encoding: .utf8), text)
        XCTAssertEqual(try String(contentsOfFile: b, encoding: .utf8), "second")
    }
}
