import Foundation
import XCTest
@testable import Importers

/// The exporter's number text and the native reader's fast path agree with the general ones.
final class NativeTextTests: XCTestCase {
    /// Short decimals are written as `Double.description` writes them; other numbers are left to it.
    func testShortDecimalsMatchDescription() {
        var rng = SplitMix(seed: 11)
        var values: [Double] = [1_772_409_540, 1_772_409_540.02, 1_772_409_540.1, 0.5, -0.5, 100, 0.0001, 0.00001, 1e-4,
                                9_007_199_254_740_991, 9_007_199_254_740_992, 123_456_789.123456789, -17.25, 0, -0.0, .nan, .infinity]
        for _ in 0..<20_000 {
            values.append(Double(Int64(rng.next() % 400_000_000_000) - 200_000_000_000) / 100)
            values.append(Double(rng.next() % 1_000_000) / 1e6)
            values.append(Double(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()) & 0x7F7F_FFFF)))
            values.append(Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF))
        }
        let buf = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
        defer { buf.deallocate() }
        var short = 0
        for v in values {
            guard let n = NumberText.shortDecimal(v, into: buf) else { continue }
            short += 1
            XCTAssertEqual(String(decoding: UnsafeBufferPointer(start: buf, count: n), as: UTF8.self), v.description)
        }
        XCTAssertGreaterThan(short, 40_000)
    }

    /// Float32s of every kind: ordinary, ±0, integers, powers of two and their neighbours,
    /// subnormals, the largest, tiny and huge exponents, and random bit patterns.
    static func float32Samples(random: Int) -> [Float] {
        var rng = SplitMix(seed: 5)
        var floats: [Float] = [0, -0.0, 1, -1, 0.5, 0.1, -9.80665, 123_456.7, 1e-4, Float(1e-4).nextDown, 16_777_215, 16_777_216,
                               16_777_218, 33_554_432, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, Float(3e-42 as Double), .leastNormalMagnitude,
                               .greatestFiniteMagnitude, 1e30, -1e-30, 1e-5]
        for e in -30...30 {
            let p = Float(sign: .plus, exponent: e, significand: 1)
            floats += [p, p.nextUp, p.nextDown, -p]
        }
        for _ in 0..<random {
            floats.append(Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())))
            floats.append(Float(Double(Int64(rng.next() % 4_000_001) - 2_000_000) / 1e6))
        }
        return floats.filter(\.isFinite)
    }

    /// The String-free Float32 text is `Float.description`'s (the shortest decimal that reads
    /// back) and reads back bit-exact as the native reader reads a Float32 column (a correctly
    /// rounded double, then the nearest Float32); a double that is not a Float32 is refused.
    func testFloat32TextIsFloatDescriptionAndReadsBack() {
        let buf = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
        defer { buf.deallocate() }
        var fast = 0
        var failures: [String] = []
        for f in Self.float32Samples(random: 100_000) {
            guard let n = NumberText.float32(Double(f), into: buf) else { continue }
            fast += 1
            let text = String(decoding: UnsafeBufferPointer(start: buf, count: n), as: UTF8.self)
            let back = NumberParser.double(UnsafeBufferPointer(start: buf, count: n)).map { Float($0).bitPattern }
            if text != f.description || back != f.bitPattern { failures.append("\(f.description): wrote \(text)") }
        }
        XCTAssertEqual(failures.prefix(10), [])
        XCTAssertGreaterThan(fast, 100_000, "the accelerometer-like values and most others take the fast path")
        for d in [0.1, 1.0 / 3, 1_772_409_600.02, Double(Float(0.1)).nextUp, .nan, .infinity, -.infinity] {
            XCTAssertNil(NumberText.float32(d, into: buf), "\(d) is not a Float32")
        }
    }

    /// Whole numbers written through a text cache (a batch identifier repeats down its column)
    /// are their decimal text, repeated or not, whatever the length before.
    func testCachedIntTextIsTheNumbersText() throws {
        let values: [Int64] = [5, 5, -5, -5, 123_456_789, 123_456_789, 5, 0, 0, .min, .min, .max, 29_540_097, 29_540_097, 29_540_098]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ints-\(getpid()).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var out = FileOutput()
        try out.open(path)
        var cache = FileOutput.TextCache()
        for v in values {
            try out.reserve(24)
            out.int(v, cache: &cache)
            out.byte(10)
        }
        try out.close()
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), values.map { "\($0)\n" }.joined())
    }

    /// Through `FileOutput`: every Float32, including those outside the fast path's range
    /// (subnormals, huge and tiny exponents), reads back bit-exact; other doubles are refused.
    func testFileOutputFloat32ReadsBackForEveryFloat32() throws {
        let floats = Self.float32Samples(random: 20_000)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("float32-\(getpid()).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var out = FileOutput()
        try out.open(path)
        for f in floats {
            try out.reserve(64)
            XCTAssertTrue(out.float32(Double(f)))
            out.byte(10)
        }
        try out.reserve(64)
        XCTAssertFalse(out.float32(0.1), "not a Float32: nothing written")
        XCTAssertFalse(out.float32(.nan))
        try out.close()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, floats.count)
        var failures: [String] = []
        for (line, f) in zip(lines, floats) {
            var text = String(line)
            let back = text.withUTF8 { NumberParser.double($0) }.map { Float($0).bitPattern }
            if back != f.bitPattern { failures.append("\(f.description): wrote \(line)") }
        }
        XCTAssertEqual(failures.prefix(10), [])
    }

    /// Rows of plain numbers read by the fast path give what the general reader gives, and a
    /// row it cannot take (empty field, `nan`, quotes, `+`) goes to the general reader.
    func testFastNumberRowsMatchTheGeneralReader() throws {
        var text = "writeTime,time,x,identifier,y\n"
        text += "1772409600.5934494,1772409540.02,0.024411888793110847,-7,1e-05\n"
        text += "1772409600.5,1772409540.5,-0.0,0,123456789012345678e-30\n"
        text += "1772409600.5,,nan,+5,\"1.5\"\n"
        text += "00.5,.5,5.,000,0e5\r\n"
        let source = MemorySource(Array(text.utf8))
        let csv = CSVReader(path: "t.csv", source: source)
        let general = CSVReader(path: "t.csv", source: MemorySource(Array(text.utf8)))
        // The header goes through the general reader (it fills the window).
        XCTAssertTrue(try csv.nextRecord())
        XCTAssertTrue(try general.nextRecord())
        let out = UnsafeMutableRawPointer.allocate(byteCount: 8 * 5 * 8, alignment: 8)
        defer { out.deallocate() }
        let targets = (0..<5).map { out + 64 * $0 }
        let whole = [false, false, false, true, false]
        var fastRows: [[UInt64]] = []
        while true {
            let n = targets.withUnsafeBufferPointer { t in whole.withUnsafeBufferPointer { w in
                csv.fastNumberRows(5, targets: t.baseAddress!, wholeNumber: w.baseAddress!, maxRows: 1)
            } }
            XCTAssertTrue(try general.nextRecord())
            if n == 1 {
                let row = (0..<5).map { f in targets[f].load(as: UInt64.self) }
                let want = (0..<5).map { f -> UInt64 in
                    whole[f] ? UInt64(bitPattern: NumberParser.int(general.bytes(f))!) : NumberParser.double(general.bytes(f))!.bitPattern
                }
                XCTAssertEqual(row, want, "line \(general.line)")
                fastRows.append(row)
            } else {
                guard try csv.nextRecord() else { break }
                XCTAssertEqual(csv.line, 4, "only the row with an empty field, nan, + and quotes is left to the general reader")
            }
            if general.line == 5 { break }
        }
        XCTAssertEqual(fastRows.count, 3)
    }

    /// A repeated field (the write time of a batch) reuses the previous row's value only when
    /// its text and the separator after it are the same bytes: a longer, shorter or other
    /// text in the same place is parsed afresh; values equal the general reader's.
    func testRepeatedFieldIsReusedOnlyForTheSameText() throws {
        let lines = ["1772409600.5934494,1", "1772409600.5934494,2", "1772409600.59344945,3", "1772409600.5934494,4",
                     "1772409600.593449,5", "1772409600.5934494,6", "1772409600.5934494,7", "1772409601.5934494,8",
                     "1772409600.5934494e0,9", "1772409600.5934494,10"]
        let text = "writeTime,identifier\n" + lines.joined(separator: "\n") + "\n"
        let csv = CSVReader(path: "t.csv", source: MemorySource(Array(text.utf8)))
        XCTAssertTrue(try csv.nextRecord())
        let out = UnsafeMutableRawPointer.allocate(byteCount: 8 * 2 * 16, alignment: 8)
        defer { out.deallocate() }
        let targets = [out, out + 8 * 16]
        let whole = [false, true]
        let n = targets.withUnsafeBufferPointer { t in whole.withUnsafeBufferPointer { w in
            csv.fastNumberRows(2, targets: t.baseAddress!, wholeNumber: w.baseAddress!, repeating: 0, maxRows: 16)
        } }
        XCTAssertEqual(n, lines.count)
        for (r, line) in lines.enumerated() {
            var s = String(line.split(separator: ",")[0])
            let want = s.withUTF8 { NumberParser.double($0) }!
            XCTAssertEqual(targets[0].load(fromByteOffset: 8 * r, as: Double.self).bitPattern, want.bitPattern, line)
            XCTAssertEqual(targets[1].load(fromByteOffset: 8 * r, as: Int64.self), Int64(r + 1))
        }
    }
}
