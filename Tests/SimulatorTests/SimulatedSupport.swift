import Foundation
import XCTest
import SensorKitModel
import Simulator

/// 2026-03-02 00:00 UTC, a Monday.
let simMonday = 1_772_409_600.0
let simDay = 86_400.0

func makeSimSource(seed: UInt64 = 7, _ participants: [ParticipantDescription],
                settings: SimulationSettings = SimulationSettings()) -> SimulatedSource {
    try! SimulatedSource(seed: seed, participants: participants, settings: settings)
}

/// Three participants with different habits, zones and devices.
let simTrio: [ParticipantDescription] = [
    ParticipantDescription(id: "ana", timeZone: "Europe/Berlin", watch: .defaultWatch, profile: {
        var p = ParticipantProfile(preset: .officeWorker)
        p.wearsWatchToSleep = true
        return p
    }()),
    ParticipantDescription(id: "ben", timeZone: "America/New_York", watch: .defaultWatch,
                           profile: ParticipantProfile(preset: .student)),
    ParticipantDescription(id: "cho", timeZone: "Asia/Tokyo", watch: .defaultWatch,
                           profile: ParticipantProfile(preset: .retiree)),
]

/// Every implemented (sensor, device) pair of a participant.
func simStreams(_ s: SimulatedSource, _ id: String) -> [(Sensor, SRDevice)] {
    SimulatedSource.implementedSensors.flatMap { sensor in
        s.devices(participant: id).filter { SimulatedSource.produces(sensor, on: $0.kind) }.map { (sensor, $0) }
    }
}

func simConcat(_ batches: [SampleBatch]) -> SampleBatch {
    guard let first = batches.first else { fatalError("no batches") }
    var out = SampleBatch(sensor: first.sensor)
    for b in batches {
        out.writeTimes.append(contentsOf: b.writeTimes)
        out.times.append(contentsOf: b.times)
    }
    for (i, c0) in first.columns.enumerated() {
        precondition(batches.allSatisfy { $0.columns[i].name == c0.name })
        var data: ColumnData
        switch c0.data.kind {
        case .double:
            var a: [Double] = []
            for b in batches { if case .double(let x) = b.columns[i].data { a.append(contentsOf: x) } }
            data = .double(a)
        case .int:
            var a: [Int64] = []
            for b in batches { if let x = b.columns[i].data.ints { a.append(contentsOf: x) } }
            data = .int(a)
        case .bool:
            var a: [Bool] = []
            for b in batches { if case .bool(let x) = b.columns[i].data { a.append(contentsOf: x) } }
            data = .bool(a)
        case .string:
            var a: [String] = []
            for b in batches { if case .string(let x) = b.columns[i].data { a.append(contentsOf: x) } }
            data = .string(a)
        case .value:
            var a: [FieldValue] = []
            for b in batches { if case .value(let x) = b.columns[i].data { a.append(contentsOf: x) } }
            data = .value(a)
        }
        var present: [Bool]? = nil
        if batches.contains(where: { $0.columns[i].present != nil }) {
            var m: [Bool] = []
            for b in batches { m.append(contentsOf: b.columns[i].present ?? Array(repeating: true, count: b.count)) }
            // Normalise all-present masks to nil so equality does not depend on chunking.
            present = m.allSatisfy { $0 } ? nil : m
        }
        out.columns.append(Column(name: c0.name, data: data, present: present))
    }
    return out
}

func simDoubles(_ b: SampleBatch, _ name: String, file: StaticString = #filePath, line: UInt = #line) -> [Double] {
    guard let c = b.column(name), case .double(let v) = c.data else {
        XCTFail("no double column \(name)", file: file, line: line); return []
    }
    return v
}

func simInts(_ b: SampleBatch, _ name: String, file: StaticString = #filePath, line: UInt = #line) -> [Int64] {
    guard let c = b.column(name), let v = c.data.ints else {
        XCTFail("no int column \(name)", file: file, line: line); return []
    }
    return v
}

func simBools(_ b: SampleBatch, _ name: String, file: StaticString = #filePath, line: UInt = #line) -> [Bool] {
    guard let c = b.column(name), case .bool(let v) = c.data else {
        XCTFail("no bool column \(name)", file: file, line: line); return []
    }
    return v
}

func simMean(_ xs: [Double]) -> Double { xs.isEmpty ? .nan : xs.reduce(0, +) / Double(xs.count) }

func simVariance(_ xs: [Double]) -> Double {
    let m = simMean(xs)
    return xs.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(max(1, xs.count - 1))
}

func simPercentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    guard !s.isEmpty else { return .nan }
    return s[min(s.count - 1, Int(Double(s.count - 1) * p))]
}

/// Indices of rows whose sample time lies in [a, b). The batch's times must ascend (true of
/// every simulated stream: write times are monotone in sample time).
func simRows(_ batch: SampleBatch, from a: Double, to b: Double) -> Range<Int> {
    func lowerBound(_ x: Double) -> Int {
        var lo = 0, hi = batch.times.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if batch.times[mid] < x { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
    let lo = lowerBound(a)
    return lo..<max(lo, lowerBound(b))
}

/// Local calendar date ("YYYY-MM-DD") of an instant in a zone.
func simLocalDate(_ t: Double, _ zone: String) -> String {
    var cal = Calendar(identifier: .gregorian)
    cal.timeZone = TimeZone(identifier: zone)!
    let c = cal.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: t))
    return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
}

/// Rows are ordered by write time, then sample time, and every write time is in (a, b].
func assertSimOrdered(_ batch: SampleBatch, after a: Double, through b: Double, _ label: String,
                   file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(batch.writeTimes.count, batch.times.count, label, file: file, line: line)
    for c in batch.columns { XCTAssertEqual(c.count, batch.count, "\(label) column \(c.name)", file: file, line: line) }
    for i in batch.writeTimes.indices {
        let w = batch.writeTimes[i]
        if !(w > a && w <= b) { XCTFail("\(label): write time \(w) outside (\(a), \(b)]", file: file, line: line); return }
        if i > 0 {
            let p = batch.writeTimes[i - 1]
            if p > w || (p == w && batch.times[i - 1] > batch.times[i]) {
                XCTFail("\(label): rows out of order at \(i)", file: file, line: line); return
            }
        }
    }
}

/// Compares two batches and reports only the first difference (batches can hold millions of rows).
func assertSameSimBatch(_ a: SampleBatch, _ b: SampleBatch, _ label: String,
                     file: StaticString = #filePath, line: UInt = #line) {
    if a == b { return }
    guard a.sensor == b.sensor else { return XCTFail("\(label): sensors differ", file: file, line: line) }
    guard a.count == b.count else { return XCTFail("\(label): \(a.count) rows vs \(b.count)", file: file, line: line) }
    if let i = a.writeTimes.indices.first(where: { a.writeTimes[$0] != b.writeTimes[$0] }) {
        return XCTFail("\(label): write time of row \(i): \(a.writeTimes[i]) vs \(b.writeTimes[i])", file: file, line: line)
    }
    if let i = a.times.indices.first(where: { a.times[$0] != b.times[$0] }) {
        return XCTFail("\(label): time of row \(i): \(a.times[i]) vs \(b.times[i])", file: file, line: line)
    }
    guard a.columns.map(\.name) == b.columns.map(\.name) else {
        return XCTFail("\(label): columns \(a.columns.map(\.name)) vs \(b.columns.map(\.name))", file: file, line: line)
    }
    for (x, y) in zip(a.columns, b.columns) where x != y {
        var detail = ""
        switch (x.data, y.data) {
        case let (.double(p), .double(q)):
            if let i = p.indices.first(where: { p[$0] != q[$0] }) { detail = "row \(i) (t=\(a.times[i])): \(p[i]) vs \(q[i])" }
        case let (.int(p), .int(q)):
            if let i = p.indices.first(where: { p[$0] != q[$0] }) { detail = "row \(i) (t=\(a.times[i])): \(p[i]) vs \(q[i])" }
        case let (.bool(p), .bool(q)):
            if let i = p.indices.first(where: { p[$0] != q[$0] }) { detail = "row \(i): \(p[i]) vs \(q[i])" }
        case let (.string(p), .string(q)):
            if let i = p.indices.first(where: { p[$0] != q[$0] }) { detail = "row \(i): \(p[i]) vs \(q[i])" }
        case let (.value(p), .value(q)):
            if let i = p.indices.first(where: { p[$0] != q[$0] }) { detail = "row \(i): \(String(describing: p[i]).prefix(300)) vs \(String(describing: q[i]).prefix(300))" }
        default: detail = "kinds differ"
        }
        if detail.isEmpty { detail = "presence masks differ" }
        return XCTFail("\(label): column \(x.name): \(detail)", file: file, line: line)
    }
}

/// Streams with rows every day; the others (ECG on some days, Siri and calls on most) may be empty.
let sparseSensors: Set<Sensor> = [.electrocardiogram, .siriSpeechMetrics, .telephonySpeechMetrics, .sleepSessions,
                                    .wristTemperature]

/// The first batch with rows for `sensor` among the participants, over a day, else a week.
func simFirstNonEmpty(_ s: SimulatedSource, _ sensor: Sensor, ids: [String] = ["ana", "ben", "cho"]) -> SampleBatch? {
    for span in [simDay, 7 * simDay] {
        for id in ids {
            for d in s.devices(participant: id) where SimulatedSource.produces(sensor, on: d.kind) {
                let b = s.samples(participant: id, sensor: sensor, device: d, writtenAfter: simMonday, through: simMonday + span)
                if b.count > 0 { return b }
            }
        }
    }
    return nil
}
