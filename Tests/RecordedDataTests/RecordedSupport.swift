import Foundation
import XCTest
import SensorKitModel
import Simulator

/// 2026-03-02 00:00 UTC, a Monday.
let recMonday = 1_772_409_600.0
let recDay = 86_400.0

/// An iPhone, as SensorKit describes one (the device the store tests write under).
let recordedPhone = SRDevice(name: "iPhone", model: "iPhone", systemName: "iOS", systemVersion: "17.4",
                             productType: "iPhone15,2", kind: .phone)

func makeRecSource(seed: UInt64 = 7, _ participants: [ParticipantDescription]) -> SimulatedSource {
    try! SimulatedSource(seed: seed, participants: participants)
}

/// Three participants with different habits, zones and devices.
let recTrio: [ParticipantDescription] = [
    ParticipantDescription(id: "ana", timeZone: "Europe/Berlin", watch: .defaultWatch,
                           profile: ParticipantProfile(preset: .officeWorker)),
    ParticipantDescription(id: "ben", timeZone: "America/New_York", watch: .defaultWatch,
                           profile: ParticipantProfile(preset: .student)),
    ParticipantDescription(id: "cho", timeZone: "Asia/Tokyo", watch: .defaultWatch,
                           profile: ParticipantProfile(preset: .retiree)),
]

func recDoubles(_ b: SampleBatch, _ name: String, file: StaticString = #filePath, line: UInt = #line) -> [Double] {
    guard let c = b.column(name), case .double(let v) = c.data else {
        XCTFail("no double column \(name)", file: file, line: line); return []
    }
    return v
}

func recInts(_ b: SampleBatch, _ name: String, file: StaticString = #filePath, line: UInt = #line) -> [Int64] {
    guard let c = b.column(name), let v = c.data.ints else {
        XCTFail("no int column \(name)", file: file, line: line); return []
    }
    return v
}

/// A fresh temporary folder, removed at the end of the test.
func recordedTempDir(_ test: XCTestCase, _ name: String = #function) throws -> URL {
    let clean = name.filter { $0.isLetter || $0.isNumber }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-rec-\(clean)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
    return dir
}

/// Bit-exact row equality (NaN equals NaN; an all-true presence mask equals none; a missing
/// value's slot is not compared). Reports the first differing row of each part.
func assertSameRows(_ a: SampleBatch, _ b: SampleBatch, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
    guard a.count == b.count else {
        XCTFail("\(what): \(a.count) rows vs \(b.count)", file: file, line: line)
        return
    }
    let n = a.count
    /// The first row where `same` is false, if any (plain loops: debug builds compare millions of rows).
    func firstDifference(_ same: (Int) -> Bool) -> Int? {
        for i in 0..<n where !same(i) { return i }
        return nil
    }
    func fail(_ part: String, _ i: Int?, _ describe: (Int) -> String) {
        if let i { XCTFail("\(what): \(part) differs first at row \(i) of \(n): \(describe(i))", file: file, line: line) }
    }
    XCTAssertEqual(a.sensor, b.sensor, what, file: file, line: line)
    a.writeTimes.array.withUnsafeBufferPointer { x in
        b.writeTimes.array.withUnsafeBufferPointer { y in
            fail("write time", firstDifference { x[$0].bitPattern == y[$0].bitPattern }) { "\(x[$0]) vs \(y[$0])" }
        }
    }
    a.times.withUnsafeBufferPointer { x in
        b.times.withUnsafeBufferPointer { y in
            fail("time", firstDifference { x[$0].bitPattern == y[$0].bitPattern }) { "\(x[$0]) vs \(y[$0])" }
        }
    }
    XCTAssertEqual(a.columns.map(\.name), b.columns.map(\.name), "\(what): column names", file: file, line: line)
    for (ca, cb) in zip(a.columns, b.columns) {
        let pa = ca.present ?? [Bool](repeating: true, count: ca.count)
        let pb = cb.present ?? [Bool](repeating: true, count: cb.count)
        guard pa.count == n, pb.count == n, ca.count == n, cb.count == n else {
            XCTFail("\(what): column \(ca.name) has \(ca.count)/\(cb.count) values and \(pa.count)/\(pb.count) presence flags for \(n) rows", file: file, line: line)
            continue
        }
        fail("presence of \(ca.name)", firstDifference { pa[$0] == pb[$0] }) { "\(pa[$0]) vs \(pb[$0])" }
        let part = "column \(ca.name)"
        switch (ca.data.dense, cb.data.dense) {
        case let (.double(x), .double(y)):
            fail(part, firstDifference { !pa[$0] || x[$0].bitPattern == y[$0].bitPattern }) { "\(x[$0]) vs \(y[$0])" }
        case let (.int(x), .int(y)):
            fail(part, firstDifference { !pa[$0] || x[$0] == y[$0] }) { "\(x[$0]) vs \(y[$0])" }
        case let (.bool(x), .bool(y)):
            fail(part, firstDifference { !pa[$0] || x[$0] == y[$0] }) { "\(x[$0]) vs \(y[$0])" }
        case let (.string(x), .string(y)):
            fail(part, firstDifference { !pa[$0] || x[$0] == y[$0] }) { "\(x[$0]) vs \(y[$0])" }
        case let (.value(x), .value(y)):
            fail(part, firstDifference { !pa[$0] || x[$0] == y[$0] }) { "\(x[$0]) vs \(y[$0])" }
        default:
            XCTFail("\(what): column \(ca.name) has kinds \(ca.data.kind) vs \(cb.data.kind)", file: file, line: line)
        }
    }
}

/// A MyDataHelps file name: its query window, 2023-11-07 15:51:31 to 2023-11-08 15:25:27 at -0600.
let mdhWindowFileName = "2023-11-07T155131-0600_2023-11-08T152527-0600.json"
/// 2023-11-08 00:00 UTC (seconds since 1970), inside `mdhWindowFileName`'s window.
let mdhWindowDay = 1_699_401_600

/// Writes `text` to `dir/name` (creating folders) and returns the path.
@discardableResult
func writeFile(_ dir: URL, _ name: String, _ text: String) throws -> String {
    try writeFile(dir, name, bytes: Array(text.utf8))
}

/// Writes `bytes` (text or not) to `dir/name` (creating folders) and returns the path.
@discardableResult
func writeFile(_ dir: URL, _ name: String, bytes: [UInt8]) throws -> String {
    let url = dir.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(bytes).write(to: url)
    return url.path
}

/// gzip-compresses `data` with the system's gzip (as MyDataHelps ships its files).
func gzipFile(_ path: String) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/gzip")
    p.arguments = ["-kf", path]
    try p.run()
    p.waitUntilExit()
    return path + ".gz"
}
