import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore

/// `RowDedup` pairs rows by bit-identical write and sample times, whatever their order and
/// whichever path it takes (a write batch stored again, or any other), as a brute force does.
final class RowDedupTests: XCTestCase {
    struct Generator {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % n
        }
    }

    /// Write batches of 5–40 rows, sample times ascending by default; some batches with
    /// repeated, unordered, NaN or negative times.
    func batch(_ g: inout Generator) -> (writes: [Double], times: [Double]) {
        var writes: [Double] = [], times: [Double] = []
        var w = 1_000.0
        for _ in 0..<12 {
            w += Double(1 + g.next(3))
            let n = 5 + g.next(36)
            var t = w - 10
            for _ in 0..<n {
                t += 0.02
                writes.append(w)
                times.append(t)
            }
            let last = times.count - 1
            switch g.next(6) {
            case 0: times[last] = times[last - 1]                       // a repeated time
            case 1: times.swapAt(last, last - 3)                        // out of order
            case 2: times[last - 2] = .nan                              // NaN bits
            case 3: times[last - n + 1] = -times[last - n + 1]          // a negative time first
            default: break
            }
        }
        return (writes, times)
    }

    func testPairsAreThoseOfABruteForce() {
        var g = Generator(state: 11)
        for round in 0..<300 {
            let a = batch(&g)
            var b = a
            // Stored again, or with a few times changed, removed or added.
            for _ in 0..<g.next(4) {
                let k = g.next(b.times.count)
                switch g.next(3) {
                case 0: b.times[k] += 0.001
                case 1: b.times.remove(at: k); b.writes.remove(at: k)
                default: b.times.insert(b.times[k], at: k); b.writes.insert(b.writes[k], at: k)
                }
            }
            let sa = SampleBatch(sensor: .accelerometer, writeTimes: a.writes, times: a.times)
            let sb = SampleBatch(sensor: .accelerometer, writeTimes: b.writes, times: b.times)
            let pairs = RowDedup.samePlaceInTime(sa, sb).map { [$0.0, $0.1] }
            var expected: [[Int]] = []
            for i in a.times.indices {
                for j in b.times.indices where a.writes[i].bitPattern == b.writes[j].bitPattern
                    && a.times[i].bitPattern == b.times[j].bitPattern {
                    expected.append([i, j])
                }
            }
            XCTAssertEqual(pairs.sorted { $0.lexicographicallyPrecedes($1) }, expected, "round \(round)")
        }
    }
}
