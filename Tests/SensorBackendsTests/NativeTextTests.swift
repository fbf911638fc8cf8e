import Foundation
import XCTest
@testable import SensorBackends

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
            guard let n = FileOutput.shortDecimal(v, into: buf) else { continue }
            short += 1
            XCTAssertEqual(String(decoding: UnsafeBufferPointer(start: buf, count: n), as: UTF8.self), v.description)
        }
        XCTAssertGreaterThan(short, 40_000)
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
}
