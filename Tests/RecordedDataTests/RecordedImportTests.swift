import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// MyHeartCounts CSV and MyDataHelps JSON fixtures made from the published column lists
/// and property names; bad input; atomicity; idempotence.
final class RecordedImportTests: XCTestCase {
    /// SRDevice's description as MyHeartCounts writes it (the productType holds a comma, so the field is quoted).
    static let phoneText = "<SRDevice: 0x2834; name = iPhone; model = iPhone; systemName = iOS; systemVersion = 17.4; productType = iPhone15,2>"
    static let watchText = "<SRDevice: 0x2835; name = Apple Watch; model = Watch; systemName = watchOS; systemVersion = 10.4; productType = Watch6,1>"
    /// 2024-11-21 00:00 Europe/Berlin (23:00 UTC the day before).
    static let t0 = 1_732_143_600.0

    func csvField(_ s: String) -> String { s.contains(",") ? "\"\(s)\"" : s }

    /// Writes a fixture of every MHC CSV sensor; returns (folder, expected rows).
    func mhcFixture(_ dir: URL) throws -> (String, Int) {
        let folder = dir.appendingPathComponent("mhc")
        let phone = csvField(Self.phoneText), watch = csvField(Self.watchText)
        var rows = 0
        // Accelerometer: 3 batches of 50 samples at 50 Hz.
        var accel = "timestamp,identifier,x,y,z,device\n"
        for b in 0..<3 {
            for i in 0..<50 {
                let t = Self.t0 + 3_600 + Double(b) * 60 + Double(i) * 0.02
                accel += "\(t),\(1000 + b),\(0.001 * Double(i)),-0.5,\(-0.98 + 0.0001 * Double(b)),\(phone)\n"
                rows += 1
            }
        }
        try writeFile(folder, "accelerometer_1.csv", accel)
        var light = "timestamp,lux,placement,chromacityX,chromacityY,device\n"
        let placements = ["frontTop", "frontBottom", "unknown"]
        for i in 0..<6 {
            light += "\(Self.t0 + 7_200 + Double(i) * 10),\(100.5 + Double(i)),\(placements[i % 3]),0.31,0.32,\(phone)\n"
            rows += 1
        }
        try writeFile(folder, "ambientLight_1.csv", light)
        var pressure = "timestamp,identifier,pressure,temperature,device\n"
        for i in 0..<10 {
            pressure += "\(Self.t0 + 100 + Double(i)),7,101.325,21.5,\(phone)\n"
            rows += 1
        }
        try writeFile(folder, "pressure_1.csv", pressure)
        var hr = "timestamp,value,confidence,device\n"
        for i in 0..<5 {
            hr += "\(Self.t0 + 9_000 + Double(i)),\(60 + i),\(i % 4),\(watch)\n"
            rows += 1
        }
        try writeFile(folder, "heartRate_1.csv", hr)
        let ped = """
        start,end,steps,distance,floorsUp,floorsDown,currentPace,currentCadence,avgActivePace,device
        \(Self.t0 + 36_000),\(Self.t0 + 36_150),210,160.5,1,0,0.8,1.6,0.75,\(phone)
        \(Self.t0 + 36_150),\(Self.t0 + 36_300),90,,,,,,,\(phone)

        """
        rows += 2
        try writeFile(folder, "pedometer_1.csv", ped)
        let temp = """
        timestamp,value,errorEstimate,condition
        \(Self.t0 + 3_000),35.1,0.1,
        \(Self.t0 + 3_300),35.2,0.1,"offWrist,inMotion"
        \(Self.t0 + 3_600),35.3,0.2,onCharger

        """
        rows += 1
        try writeFile(folder, "wristTemperature_session1.csv", temp)
        return (folder.path, rows)
    }

    func testMyHeartCountsFixturesImportEveryPublishedColumn() throws {
        let dir = try recordedTempDir(self)
        let (folder, expected) = try mhcFixture(dir)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .mhcCSV, sources: [folder], participant: "p1",
                                                       timeZone: "Europe/Berlin", progressBar: false))
        XCTAssertEqual(stats.rowsStored, expected)
        XCTAssertEqual(stats.duplicatesDropped, 0)
        let rec = try store.source()
        XCTAssertEqual(rec.participant("p1")?.timeZone, "Europe/Berlin")
        let devices = rec.devices(participant: "p1")
        XCTAssertEqual(devices.map(\.kind), [.phone, .watch])
        let phone = devices[0], watch = devices[1]
        XCTAssertEqual(phone.productType, "iPhone15,2")
        XCTAssertEqual(phone.systemVersion, "17.4")
        XCTAssertEqual(watch.name, "Apple Watch")
        XCTAssertEqual(watch.systemName, "watchOS")

        let all = (-1e10, 1e10)
        let accel = try rec.samples(participant: "p1", sensor: .accelerometer, device: phone, writtenAfter: all.0, through: all.1)
        XCTAssertEqual(accel.count, 150)
        XCTAssertEqual(recInts(accel, "identifier").prefix(2), [1000, 1000])
        XCTAssertEqual(recDoubles(accel, "x")[49], 0.049, accuracy: 1e-15)
        XCTAssertEqual(recDoubles(accel, "z")[100], -0.9798, accuracy: 1e-15)
        // Write time = the batch's last sample.
        XCTAssertEqual(accel.writeTimes[0], Self.t0 + 3_600 + 49 * 0.02, accuracy: 1e-9)
        XCTAssertEqual(accel.times[1], Self.t0 + 3_600 + 0.02, accuracy: 1e-9)
        XCTAssertEqual(accel.column("timestamp")?.present?.contains(true), false, "MHC has no uptime: missing")

        let light = try rec.samples(participant: "p1", sensor: .ambientLightSensor, device: phone, writtenAfter: all.0, through: all.1)
        XCTAssertEqual(recInts(light, "placement"), [1, 2, 0, 1, 2, 0])
        XCTAssertEqual(recDoubles(light, "chromaticityX")[0], 0.31)
        XCTAssertEqual(recDoubles(light, "lux")[5], 105.5)

        let pressure = try rec.samples(participant: "p1", sensor: .ambientPressure, device: phone, writtenAfter: all.0, through: all.1)
        XCTAssertEqual(recDoubles(pressure, "pressure").first, 101.325)
        XCTAssertEqual(recDoubles(pressure, "temperature").first, 21.5)

        let hr = try rec.samples(participant: "p1", sensor: .heartRate, device: watch, writtenAfter: all.0, through: all.1)
        XCTAssertEqual(recDoubles(hr, "heartRate"), [60, 61, 62, 63, 64])
        XCTAssertEqual(recInts(hr, "confidence"), [0, 1, 2, 3, 0])

        let ped = try rec.samples(participant: "p1", sensor: .pedometerData, device: phone, writtenAfter: all.0, through: all.1)
        XCTAssertEqual(recInts(ped, "numberOfSteps"), [210, 90])
        XCTAssertEqual(ped.column("distance")?.present, [true, false])
        XCTAssertEqual(ped.column("floorsAscended")?.present, [true, false])
        XCTAssertEqual(recDoubles(ped, "endDate")[0], Self.t0 + 36_150)
        XCTAssertEqual(ped.writeTimes, [Self.t0 + 36_150, Self.t0 + 36_300])

        let temp = try rec.samples(participant: "p1", sensor: .wristTemperature, device: watch, writtenAfter: all.0, through: all.1)
        XCTAssertEqual(temp.count, 1, "one session per file")
        XCTAssertEqual(temp.times, [Self.t0 + 3_000])
        XCTAssertEqual(recDoubles(temp, "duration"), [600])
        guard case .value(let v)? = temp.column("temperatures")?.data, case .array(let readings) = v[0] else {
            return XCTFail("temperatures")
        }
        XCTAssertEqual(readings.count, 3)
        XCTAssertEqual(readings[1], .object([("timestamp", .double(Self.t0 + 3_300)), ("value", .double(35.2)),
                                              ("condition", .int(5)), ("errorEstimate", .double(0.1))]))
    }

    /// Three days of pedometer bins and heart rate in Berlin: daily totals and means through
    /// the store (fetched as a protocol would) equal an independent computation.
    func testDailySummariesThroughTheStoreMatchAnIndependentComputation() throws {
        let dir = try recordedTempDir(self)
        let folder = dir.appendingPathComponent("mhc")
        let phone = csvField(Self.phoneText), watch = csvField(Self.watchText)
        var ped = "start,end,steps,distance,floorsUp,floorsDown,currentPace,currentCadence,avgActivePace,device\n"
        var hr = "timestamp,value,confidence,device\n"
        var expectedSteps: [Int: Int] = [:]
        var hrSum: [Int: Double] = [:], hrCount: [Int: Int] = [:]
        var rng = SplitMix(seed: 42)
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        func localDay(_ t: Double) -> Int {
            let offset = Double(berlin.secondsFromGMT(for: Date(timeIntervalSince1970: t)))
            return Int(((t + offset) / 86_400).rounded(.down))
        }
        var t = Self.t0 - 3_600
        while t < Self.t0 + 3 * 86_400 {
            let steps = Int(rng.next() % 400)
            ped += "\(t),\(t + 150),\(steps),\(Double(steps) * 0.7),,,,,,\(phone)\n"
            expectedSteps[localDay(t), default: 0] += steps
            t += 150
        }
        t = Self.t0 - 3_600
        while t < Self.t0 + 3 * 86_400 {
            let bpm = 50 + Double(rng.next() % 9_000) / 100
            hr += "\(t),\(bpm),3,\(watch)\n"
            hrSum[localDay(t), default: 0] += bpm
            hrCount[localDay(t), default: 0] += 1
            t += 60
        }
        try writeFile(folder, "pedometer.csv", ped)
        try writeFile(folder, "heart_rate.csv", hr)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        try store.importData(ImportRequest(format: .mhcCSV, sources: [folder.path], participant: "p1", timeZone: "Europe/Berlin",
                                           progressBar: false))
        let rec = try store.source()
        let zone = TimeZone(identifier: rec.participant("p1")!.timeZone)!
        XCTAssertEqual(zone, berlin)
        // Fetch as a protocol does: through the rules, after the holding period, in chunks.
        var study = ResolvedStudy()
        study.entitledSensors = [.pedometerData, .heartRate]
        var switches = WorldSwitches()
        switches.duplicateRate = 0
        var model = ParticipantModel(participant: "p1", study: study, switches: switches, activation: Self.t0 - 30 * 86_400)
        for s in [Sensor.pedometerData, .heartRate] {
            _ = model.authorization.setStatus(s, .authorized)
            model.recording.addInterval(s, by: .system, after: Self.t0 - 86_400, through: Self.t0 + 4 * 86_400)
        }
        model.advance(to: Self.t0 + 5 * 86_400)
        let devices = rec.devices(participant: "p1")
        func fetch(_ s: Sensor, _ d: SRDevice) throws -> SampleBatch {
            try model.fetch(FetchRequest(from: model.clock.srTime(atTrue: Self.t0 - 86_400), to: model.clock.srTime(atTrue: Self.t0 + 4 * 86_400),
                                     device: d), sensor: s, source: rec).plan!.collect()
        }
        let p = try fetch(.pedometerData, devices[0])
        var steps: [Int: Int] = [:]
        for (i, n) in recInts(p, "numberOfSteps").enumerated() { steps[localDay(p.times[i]), default: 0] += Int(n) }
        XCTAssertEqual(steps, expectedSteps)
        let h = try fetch(.heartRate, devices[1])
        var sum: [Int: Double] = [:], count: [Int: Int] = [:]
        for (i, v) in recDoubles(h, "heartRate").enumerated() { sum[localDay(h.times[i]), default: 0] += v; count[localDay(h.times[i]), default: 0] += 1 }
        XCTAssertEqual(count, hrCount)
        for (d, s) in hrSum { XCTAssertEqual(sum[d]! / Double(count[d]!), s / Double(hrCount[d]!), accuracy: 1e-9) }
        XCTAssertEqual(Set(steps.keys).count, 4, "four local days touched (the first hour is the day before)")
    }

    /// The batched-stream reader (fast path, slow path, pieces cut at write-batch
    /// boundaries, a batch longer than a chunk, device changes, CRLF and unusual numbers)
    /// against values computed here from the text.
    func testBatchedAccelerometerFileMatchesAnIndependentReading() throws {
        let dir = try recordedTempDir(self)
        let phone = csvField(Self.phoneText), watch = csvField(Self.watchText)
        var text = "timestamp,identifier,x,y,z,device\n"
        struct Row { var t: Double; var id: Int64; var x: Double; var y: Double; var z: Double; var watch: Bool }
        var rows: [Row] = []
        var rng = SplitMix(seed: 5)
        var id: Int64 = 10
        var t = Self.t0
        // Batches of 1…4,000 rows, one of 80,000 (longer than a chunk), a watch stretch in the middle.
        var sizes = (0..<60).map { _ in Int(rng.next() % 4_000) + 1 }
        sizes.insert(80_000, at: 20)
        for (b, size) in sizes.enumerated() {
            let onWatch = b >= 40 && b < 45
            for _ in 0..<size {
                let x = Double(Int64(rng.next() % 2_000_001) - 1_000_000) / 1e6
                var xs = "\(x)"
                switch rng.next() % 50 {
                case 0: xs = String(format: "%.17g", x)            // 17 digits: the slow path
                case 1: xs = String(format: "%.3e", x)             // an exponent
                default: break
                }
                let y = Double(rng.next() % 1_000) / 1_000, z = -0.98
                let line = "\(String(format: "%.2f", t)),\(id),\(xs),\(y),\(z),\(onWatch ? watch : phone)"
                text += line + (rng.next() % 97 == 0 ? "\r\n" : "\n")
                rows.append(Row(t: Double(String(format: "%.2f", t))!, id: id, x: Double(xs)!, y: y, z: z, watch: onWatch))
                t += 0.02
            }
            id += 1
        }
        let f = try writeFile(dir, "in/accelerometer.csv", text)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .mhcCSV, sources: [f], participant: "p", progressBar: false))
        XCTAssertEqual(stats.rowsRead, rows.count)
        XCTAssertEqual(stats.rowsStored, rows.count)
        let rec = try store.source()
        let devices = rec.devices(participant: "p")
        XCTAssertEqual(devices.map(\.kind), [.phone, .watch])
        for (k, d) in devices.enumerated() {
            let want = rows.filter { $0.watch == (k == 1) }
            // Write time: the latest sample time of the row's batch (identifier run).
            var batchMax: [Int64: Double] = [:]
            for r in want { batchMax[r.id] = max(batchMax[r.id] ?? -.infinity, r.t) }
            let got = try rec.samples(participant: "p", sensor: .accelerometer, device: d, writtenAfter: 0, through: 5e9)
            XCTAssertEqual(got.count, want.count)
            guard got.count == want.count else { continue }
            XCTAssertEqual(got.times.map(\.bitPattern), want.map(\.t.bitPattern))
            XCTAssertEqual(got.writeTimes.array, want.map { batchMax[$0.id]! })
            XCTAssertEqual(recInts(got, "identifier"), want.map(\.id))
            XCTAssertEqual(recDoubles(got, "x").map(\.bitPattern), want.map(\.x.bitPattern))
            XCTAssertEqual(recDoubles(got, "y").map(\.bitPattern), want.map(\.y.bitPattern))
            XCTAssertEqual(recDoubles(got, "z").map(\.bitPattern), want.map(\.z.bitPattern))
        }
        // A bad date after many good rows names its line.
        let bad = text + "1732143600125,99,0,0,0,\(phone)\n"
        let g = try writeFile(dir, "in2/accelerometer.csv", bad)
        let e = importError(ImportRequest(format: .mhcCSV, sources: [g], participant: "p"), dir)
        XCTAssertTrue(e.contains("accelerometer.csv:\(rows.count + 2), column 'timestamp'"), e)
        XCTAssertTrue(e.contains("looks like milliseconds"), e)
    }

    // MARK: MyDataHelps

    func mdhItem(_ write: Double, _ sample: String) -> String { "{\"timestamp\": \(write), \"sample\": \(sample)}" }

    func accelBatch(_ write: Double, _ id: Int, count: Int) -> String {
        let elements = (0..<count).map { i in
            "{\"acceleration\": {\"x\": \(0.01 * Double(i)), \"y\": 0.5, \"z\": -0.98}, \"timestamp\": \(5_000.0 + Double(i) * 0.02), \"startDate\": \(write - 60 + Double(i) * 0.02), \"identifier\": \(id)}"
        }
        return mdhItem(write, "[" + elements.joined(separator: ",") + "]")
    }

    func mdhTree(_ dir: URL, duplicate: Bool = false) throws -> String {
        let root = dir.appendingPathComponent("export")
        let device = "{\"systemVersion\": \"17.4\", \"systemName\": \"iOS\", \"model\": \"iPhone\", \"name\": \"iPhone\"}"
        var items = [accelBatch(Self.t0 + 60, 1, count: 20), accelBatch(Self.t0 + 120, 2, count: 20)]
        if duplicate { items.append(accelBatch(Self.t0 + 60, 1, count: 20)) }
        let accel = "{\"device\": \(device), \"samples\": [\(items.joined(separator: ",\n"))]}"
        let f = try writeFile(root, "sensorkit-accelerometer/iPhone/P7/dev-A/2024-11-21T00-00-00.json", accel)
        _ = try gzipFile(f)
        try FileManager.default.removeItem(atPath: f)
        let light = "[{\"device\": \(device), \"samples\": [" + (0..<4).map { i in
            mdhItem(Self.t0 + Double(i) * 10, "{\"lux\": \(20.0 + Double(i)), \"placement\": \(i % 2 == 0 ? "\"frontTop\"" : "3"), \"chromaticity\": {\"x\": 0.3, \"y\": 0.33}, \"mystery\": 1}")
        }.joined(separator: ",") + "]}]"
        try writeFile(root, "sensorkit-ambient-light-sensor/iPhone/P7/dev-A/q1.json", light)
        let watchDevice = "{\"systemVersion\": \"10.4\", \"systemName\": \"watchOS\", \"model\": \"Watch\", \"name\": \"Watch\"}"
        let hr = "{\"device\": \(watchDevice), \"samples\": [" + (0..<3).map { i in
            mdhItem(Self.t0 + 4_000 + Double(i), "{\"heartRate\": \(70 + i), \"confidence\": \"high\", \"date\": \"2024-11-21T00:0\(i):00.5Z\", \"timestamp\": \(900.5 + Double(i))}")
        }.joined(separator: ",") + "]}"
        try writeFile(root, "sensorkit-heart-rate/Watch/P7/dev-W/q1.json", hr)
        return root.path
    }

    /// Plain items of an array-shaped sensor are read straight from the bytes (`MDHFastItems`):
    /// whatever their layout (keys in any order, `sample` before `timestamp`, line breaks, exponents,
    /// whole numbers in number columns) they store the rows the general reader stores for the
    /// same data written so that only it reads it (`{value, unit}` measurements, "-0"); an item
    /// the fast path leaves, after plain ones, is read and its error names its line.
    func testMyDataHelpsPlainItemsMatchTheGeneralReader() throws {
        let dir = try recordedTempDir(self)
        let device = "{\"systemVersion\": \"17.4\", \"systemName\": \"iOS\", \"model\": \"iPhone\", \"name\": \"iPhone\"}"
        func element(_ i: Int, _ write: Double, general: Bool) -> String {
            let x = general ? "{\"value\": \(Double(i) * 0.013 - 1.7), \"unit\": \"g\"}" : "\(Double(i) * 0.013 - 1.7)"
            let y = i % 5 == 0 ? (general ? "-0" : "0") : i % 5 == 1 ? "1e-05" : i % 5 == 2 ? "12" : "\(0.5 - Double(i) * 1e-3)"
            let t = "\"startDate\": \(write - 60 + Double(i) * 0.02)", id = "\"identifier\": \(i / 7)", up = "\"timestamp\": \(5_000 + Double(i) * 0.02)"
            // Elements laid out as the one before but for a number's text (an exponent, one in
            // the whole-number column) or an extra key at the end.
            if i == 10 { return "{\"acceleration\": {\"x\": \(x), \"y\": \(y), \"z\": -0.98}, \(up), \(t), \"identifier\": 1e0}" }
            if i == 11 { return "{\"acceleration\": {\"x\": \(x), \"y\": -98e-2, \"z\": -0.98}, \(up), \(t), \(id), \"mystery\": 1}" }
            return i % 3 == 0
                ? "{\(id),\n \(t), \"acceleration\": {\"z\": -0.98, \"y\": \(y), \"x\": \(x)}, \(up)}"
                : "{\"acceleration\": {\"x\": \(x), \"y\": \(y), \"z\": -0.98}, \(up), \(t), \(id)}"
        }
        func file(general: Bool) -> String {
            let items = (0..<5).map { k -> String in
                let w = Self.t0 + 60 * Double(k + 1)
                let sample = "[" + (0..<30).map { element($0, w, general: general) }.joined(separator: k == 3 ? ",\n" : ", ") + "]"
                return k == 2 ? "{\"sample\": \(sample), \"timestamp\": \(w)}" : "{\"timestamp\": \(w), \"sample\": \(sample)}"
            }
            return "{\"device\": \(device), \"samples\": [\n" + items.joined(separator: ",\n")
        }
        var rows: [SampleBatch] = []
        for general in [false, true] {
            let root = dir.appendingPathComponent(general ? "general" : "plain")
            try writeFile(root, "sensorkit-accelerometer/iPhone/P1/d1/q.json", file(general: general) + "]}")
            let store = try RecordedStore(path: dir.appendingPathComponent(general ? "general.sqlite" : "plain.sqlite").path)
            let stats = try store.importData(ImportRequest(format: .mdhJSON, sources: [root.path], progressBar: false))
            XCTAssertEqual(stats.rowsStored, 150)
            XCTAssertEqual(stats.notUnderstood, ["accelerometer sample: mystery": 5])
            let rec = try store.source()
            rows.append(try rec.samples(participant: "P1", sensor: .accelerometer, device: rec.devices(participant: "P1")[0], writtenAfter: 0, through: 4e9))
        }
        assertSameRows(rows[0], rows[1], "plain items vs the general reader")
        XCTAssertEqual(recDoubles(rows[0], "y")[0].sign, .plus, "\"-0\" and \"0\" are both +0 as whole numbers")
        XCTAssertEqual(recDoubles(rows[0], "y")[1], 1e-05)
        XCTAssertEqual(recInts(rows[0], "identifier")[29], 4)
        XCTAssertEqual(recInts(rows[0], "identifier")[10], 1, "1e0 in the whole-number column")
        XCTAssertEqual(recDoubles(rows[0], "y")[11], -0.98)

        // After the plain items, one in milliseconds: the general reader names its line.
        let text = file(general: false)
        let line = text.filter { $0 == "\n" }.count + 2
        let root = dir.appendingPathComponent("late-error")
        try writeFile(root, "sensorkit-accelerometer/iPhone/P1/d1/q.json",
                      text + ",\n" + "{\"timestamp\": \(Self.t0 + 600), \"sample\": [{\"acceleration\": {\"x\": 1, \"y\": 2, \"z\": 3}, \"timestamp\": 1, \"startDate\": 1732143600125, \"identifier\": 9}]}]}")
        let e = importError(ImportRequest(format: .mdhJSON, sources: [root.path], progressBar: false), dir)
        XCTAssertTrue(e.contains("q.json:\(line) ") && e.contains("looks like milliseconds"), e)
    }

    /// Six simulated minutes of phone and watch accelerometer and rotation rate across a UTC
    /// day (so two files per device and sensor), written as a MyDataHelps tree (`MDHWriter`:
    /// shortest round-trip numbers), imports to exactly the simulator's rows.
    func testMyDataHelpsExportOfTheSimulatorImportsToTheSameRows() throws {
        let dir = try recordedTempDir(self)
        let sim = makeRecSource([recTrio[0]])
        let start = recMonday + recDay - 180, end = start + 360
        let root = dir.appendingPathComponent("export").path
        let devices = sim.devices(participant: "ana")
        for sensor in [Sensor.accelerometer, .rotationRate] {
            for d in devices where sensor.deviceKinds.contains(d.kind) {
                try MDHWriter.write(source: sim, participant: "ana", device: d, deviceID: d.kind.rawValue, sensor: sensor,
                                    start: start, end: end, root: root)
            }
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: root).filter { $0.hasSuffix(".json") }
        XCTAssertEqual(files.count, 2 * 2 * devices.count, files.description)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .mdhJSON, sources: [root], progressBar: false))
        XCTAssertEqual(stats.notUnderstood, [:])
        let rec = try store.source()
        var compared = 0
        for sensor in [Sensor.accelerometer, .rotationRate] {
            for d in devices where sensor.deviceKinds.contains(d.kind) {
                let want = sim.samples(participant: "ana", sensor: sensor, device: d, writtenAfter: start, through: end)
                guard let stored = rec.devices(participant: "ana").first(where: { $0.kind == d.kind }) else {
                    XCTFail("no \(d.kind) device stored"); continue
                }
                let got = try rec.samples(participant: "ana", sensor: sensor, device: stored, writtenAfter: start, through: end)
                assertSameRows(got, want, "\(sensor) of the \(d.kind)")
                compared += want.count
            }
        }
        XCTAssertGreaterThan(compared, 4 * 15_000)
        XCTAssertEqual(stats.rowsStored, compared)
    }

    /// Two readers of one file (`MDHPipeline.FileParser.Speculation`, here sharing windows of
    /// a few KiB so that it runs on a small file): the store holds exactly what one reader
    /// stores (same chunks, same bytes), and an error late in the file names the same line
    /// and JSON path.
    func testMyDataHelpsTwoReadersReadAsOne() throws {
        let dir = try recordedTempDir(self)
        let device = "{\"systemVersion\": \"17.4\", \"systemName\": \"iOS\", \"model\": \"iPhone\", \"name\": \"iPhone\"}"
        func item(_ k: Int, bad: Bool = false) -> String {
            let w = Self.t0 + 60 * Double(k + 1)
            let elements = (0..<50).map { i -> String in
                let x = k % 20 == 13 && i == 5 ? "{\"value\": 0.25, \"unit\": \"g\"}" : "\(Double(i * k) * 1.3e-3 - 0.7)"
                let date = bad && i == 9 ? "1732143600125" : "\(w - 60 + Double(i) * 0.02)"
                return "{\"acceleration\": {\"x\": \(x), \"y\": \(0.5 - Double(i) * 1e-3), \"z\": -0.98}, \"timestamp\": \(5_000 + Double(i) * 0.02), \"startDate\": \(date), \"identifier\": \(k)}"
            }
            let sample = "[" + elements.joined(separator: k % 5 == 0 ? ",\n" : ",") + "]"
            return k % 4 == 1 ? "{\"sample\": \(sample), \"timestamp\": \(w)}" : "{\"timestamp\": \(w), \"sample\": \(sample)}"
        }
        func importFile(_ text: String, _ name: String, windowBytes: Int?, zstd: Bool = false) throws -> (digest: String, readAhead: Int) {
            var path = try writeFile(dir, "\(name)/q.json", text)
            if zstd {
                try Data(try ZstdCompressor.compress(Array(text.utf8))).write(to: URL(fileURLWithPath: path + ".zstd"))
                try FileManager.default.removeItem(atPath: path)
                path += ".zstd"
            }
            let store = try RecordedStore(path: dir.appendingPathComponent("\(name)-\(windowBytes ?? 0).sqlite").path)
            let job = MDHFormat.FileJob(path: path, sensor: .accelerometer, kind: .phone, participant: "P1", deviceID: "d1")
            let (notes, _) = try store.importing { session in
                try session.addParticipant(RecordedParticipant(id: "P1", timeZone: "UTC"))
                return try windowBytes.map { try MDHPipeline.run(job, session: session, progress: nil, speculationBytes: $0) }
                    ?? MDHPipeline.run(job, session: session, progress: nil)
            }
            return (try store.contentDigest(), notes.itemsReadAhead)
        }
        let good = "{\"device\": \(device), \"samples\": [\n" + (0..<60).map { item($0) }.joined(separator: ",\n") + "]}\n"
        let one = try importFile(good, "one", windowBytes: nil)
        let two = try importFile(good, "two", windowBytes: 8_192)
        XCTAssertEqual(one.readAhead, 0)
        XCTAssertGreaterThan(two.readAhead, 5, "the second reader's items were taken")
        XCTAssertEqual(two.digest, one.digest)
        // A compressed file (read into a window, not mapped) has its second reader too.
        let compressed = try importFile(good, "zstd", windowBytes: 8_192, zstd: true)
        XCTAssertGreaterThan(compressed.readAhead, 5, "the second reader's items were taken from a zstd file")
        XCTAssertEqual(compressed.digest, one.digest)

        let bad = "{\"device\": \(device), \"samples\": [\n" + (0..<60).map { item($0, bad: $0 == 50) }.joined(separator: ",\n") + "]}\n"
        var messages: [String] = []
        for (name, bytes) in [("bad-one", nil), ("bad-two", 8_192)] as [(String, Int?)] {
            XCTAssertThrowsError(try importFile(bad, name, windowBytes: bytes)) { messages.append("\($0)") }
        }
        // The item's line: where its first element is.
        let line = bad.components(separatedBy: "\n").firstIndex { $0.contains("\"identifier\": 50}") }.map { $0 + 1 } ?? -1
        XCTAssertEqual(messages.count, 2)
        XCTAssertEqual(messages.first.map { $0.replacingOccurrences(of: "bad-one", with: "bad-two") }, messages.last)
        XCTAssertTrue(messages.first?.contains("q.json:\(line) at") == true && messages.first?.contains("$.samples[50].sample[9].startDate") == true,
                      messages.first ?? "")
    }

    /// A stream buffer hands out its rows but the last write batch (which may go on), presence
    /// flags included; unsorted rows or `keepingLastRun` false hand out everything.
    func testStreamBufferKeepsTheLastWriteBatch() throws {
        let b = StreamBuffer(streamID: 1, sensor: .heartRate)
        let names = b.columns.map(\.name)
        func batch(_ writes: [Double], missingAt: Int) -> SampleBatch {
            let columns = Sensor.heartRate.info.columnFields.map { f -> Column in
                let c = ColumnBuilder(name: f.name, kind: f.type.columnKind)
                for r in writes.indices {
                    if r == missingAt { c.appendMissing(); continue }
                    switch f.type.columnKind {
                    case .double: c.appendDouble(60 + Double(r))
                    case .int: c.appendInt(Int64(r % 3))
                    default: c.appendMissing()
                    }
                }
                return c.take()
            }
            return SampleBatch(sensor: .heartRate, writeTimes: writes, times: writes.indices.map { Self.t0 + Double($0) }, columns: columns)
        }
        let rows = batch([10, 10, 20, 30, 30, 30], missingAt: 4)
        try b.append(rows)
        let (head, sorted) = b.take(keepingLastRun: true)
        XCTAssertTrue(sorted)
        assertSameRows(head, rows.slice(0..<3), "the rows before the last write batch")
        XCTAssertEqual(b.count, 3)
        assertSameRows(b.take(), rows.slice(3..<6), "the last write batch, its missing value kept")
        XCTAssertEqual(b.columns.map(\.name), names)

        try b.append(batch([30, 20, 20], missingAt: -1))
        let (all, unsorted) = b.take(keepingLastRun: true)
        XCTAssertFalse(unsorted)
        XCTAssertEqual(all.count, 3, "rows out of order are all handed out (they are sorted when stored)")
        XCTAssertEqual(b.count, 0)
    }

    func testMyDataHelpsTreeImportsGzipAndPlainJSON() throws {
        let dir = try recordedTempDir(self)
        let root = try mdhTree(dir)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .mdhJSON, sources: [root], timeZone: "Europe/Berlin", progressBar: false))
        XCTAssertEqual(stats.rowsStored, 40 + 4 + 3)
        XCTAssertEqual(stats.notUnderstood["ambientLightSensor sample: mystery"], 4, "unknown fields are reported")
        let rec = try store.source()
        XCTAssertEqual(rec.participants.map(\.id), ["P7"])
        let devices = rec.devices(participant: "P7")
        XCTAssertEqual(devices.map(\.kind), [.phone, .watch])
        XCTAssertEqual(devices[0].productType, "dev-A", "MyDataHelps names no productType: the device folder stands in")
        let accel = try rec.samples(participant: "P7", sensor: .accelerometer, device: devices[0], writtenAfter: 0, through: 4e9)
        XCTAssertEqual(accel.count, 40)
        XCTAssertEqual(accel.writeTimes[0], Self.t0 + 60)
        XCTAssertEqual(accel.times[3], Self.t0 + 0.06, accuracy: 1e-9)
        XCTAssertEqual(recDoubles(accel, "timestamp")[1], 5_000.02, "CMLogItem uptime kept")
        XCTAssertEqual(recInts(accel, "identifier")[25], 2)
        let light = try rec.samples(participant: "P7", sensor: .ambientLightSensor, device: devices[0], writtenAfter: 0, through: 4e9)
        XCTAssertEqual(recInts(light, "placement"), [1, 3, 1, 3], "case names and raw values both read")
        XCTAssertEqual(recDoubles(light, "chromaticityY"), [0.33, 0.33, 0.33, 0.33])
        let hr = try rec.samples(participant: "P7", sensor: .heartRate, device: devices[1], writtenAfter: 0, through: 4e9)
        XCTAssertEqual(recInts(hr, "confidence"), [2, 2, 2])
        XCTAssertEqual(hr.times[1], 1_732_147_260.5, "ISO 8601 dates read")
    }

    func testExactDuplicatesAreDroppedAndCounted() throws {
        let dir = try recordedTempDir(self)
        let root = try mdhTree(dir, duplicate: true)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .mdhJSON, sources: [root], progressBar: false))
        XCTAssertEqual(stats.duplicatesInInput, 20, "the batch reported twice")
        XCTAssertEqual(stats.rowsStored, 47)
        XCTAssertTrue(stats.report().contains("duplicates dropped: 20"))
    }

    /// Rows at the same write and sample time are duplicates only when every field is equal.
    func testInputDuplicatesNeedEveryFieldEqual() throws {
        let dir = try recordedTempDir(self)
        let w = csvField(Self.watchText)
        let t = Self.t0 + 100
        let f = try writeFile(dir, "in/heart_rate.csv", """
        timestamp,value,confidence,device
        \(t),60,3,\(w)
        \(t),61,3,\(w)
        \(t),60,2,\(w)
        \(t),60,3,\(w)
        \(t),61,3,\(w)
        \(t + 1),60,3,\(w)

        """)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .mhcCSV, sources: [f], participant: "p", progressBar: false))
        XCTAssertEqual(stats.duplicatesInInput, 2)
        XCTAssertEqual(stats.rowsStored, 4)
        let rec = try store.source()
        let hr = try rec.samples(participant: "p", sensor: .heartRate, device: rec.devices(participant: "p")[0], writtenAfter: 0, through: 5e9)
        XCTAssertEqual(recDoubles(hr, "heartRate"), [60, 61, 60, 60])
        XCTAssertEqual(recInts(hr, "confidence"), [3, 3, 2, 3])
    }

    // MARK: Re-import and atomicity

    func testReimportingTheSameFilesChangesNothing() throws {
        let dir = try recordedTempDir(self)
        let (folder, expected) = try mhcFixture(dir)
        let root = try mdhTree(dir)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let mhc = ImportRequest(format: .mhcCSV, sources: [folder], participant: "p1", timeZone: "UTC", progressBar: false)
        let mdh = ImportRequest(format: .mdhJSON, sources: [root], progressBar: false)
        try store.importData(mhc)
        try store.importData(mdh)
        let before = try store.contentDigest()
        let again = try store.importData(mhc)
        XCTAssertEqual(again.rowsStored, 0)
        XCTAssertEqual(again.duplicatesAlreadyStored, expected)
        XCTAssertEqual(again.metadataAdded, 0)
        let again2 = try store.importData(mdh)
        XCTAssertEqual(again2.rowsStored, 0)
        XCTAssertEqual(try store.contentDigest(), before)
    }

    /// A second file that overlaps the first (other chunk boundaries, a changed value, a
    /// reordered write batch, new batches) adds exactly the rows that are not already stored.
    func testOverlappingReimportDropsOnlyExactDuplicates() throws {
        let dir = try recordedTempDir(self)
        let phone = csvField(Self.phoneText)
        // Batch b: 3,000 rows at 50 Hz, identifier b.
        func line(_ b: Int, _ i: Int, x: Double? = nil) -> String {
            let t = Self.t0 + Double(b) * 60 + Double(i) * 0.02
            return "\(String(format: "%.2f", t)),\(b),\(x ?? Double((b * 7 + i) % 1_000) / 1_000),0.5,-0.98,\(phone)\n"
        }
        let header = "timestamp,identifier,x,y,z,device\n"
        var a = header
        for b in 0..<80 { for i in 0..<3_000 { a += line(b, i) } }
        var b = header
        var expectedNew = 0, expectedDup = 0
        for bb in 50..<110 {
            var rows = (0..<3_000).map { line(bb, $0) }
            if bb == 60 { rows[1_234] = line(bb, 1_234, x: 9.5); expectedNew += 1; expectedDup += 2_999 }
            else if bb == 61 { rows.reverse(); expectedDup += 3_000 }
            else if bb < 80 { expectedDup += 3_000 }
            else { expectedNew += 3_000 }
            b += rows.joined()
        }
        let fa = try writeFile(dir, "a/accelerometer.csv", a), fb = try writeFile(dir, "b/accelerometer.csv", b)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let first = try store.importData(ImportRequest(format: .mhcCSV, sources: [fa], participant: "p", progressBar: false))
        XCTAssertEqual(first.rowsStored, 240_000)
        XCTAssertGreaterThan(first.chunks, 2)
        let second = try store.importData(ImportRequest(format: .mhcCSV, sources: [fb], participant: "p", progressBar: false))
        XCTAssertEqual(second.duplicatesAlreadyStored, expectedDup)
        XCTAssertEqual(second.duplicatesInInput, 0)
        XCTAssertEqual(second.rowsStored, expectedNew)
        XCTAssertTrue(second.report().contains("duplicates dropped: \(expectedDup)"), second.report())
        let rec = try store.source()
        let all = try rec.samples(participant: "p", sensor: .accelerometer, device: rec.devices(participant: "p")[0], writtenAfter: 0, through: 5e9)
        XCTAssertEqual(all.count, 240_000 + expectedNew)
        XCTAssertEqual(recDoubles(all, "x").filter { $0 == 9.5 }.count, 1, "the changed row is kept beside the original")
        // Both files again: nothing changes.
        let digest = try store.contentDigest()
        let third = try store.importData(ImportRequest(format: .mhcCSV, sources: [fa, fb], participant: "p", progressBar: false))
        XCTAssertEqual(third.rowsStored, 0)
        XCTAssertEqual(third.duplicatesDropped, 240_000 + 180_000)
        XCTAssertEqual(try store.contentDigest(), digest)
    }

    func testAFailureMidwayLeavesTheStoreExactlyAsItWas() throws {
        let dir = try recordedTempDir(self)
        let (folder, _) = try mhcFixture(dir)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        try store.importData(ImportRequest(format: .mhcCSV, sources: [folder], participant: "p1", progressBar: false))
        let before = try store.contentDigest()
        // A second participant: a large good file, then a file that fails on its last line.
        let bad = dir.appendingPathComponent("bad")
        var good = "timestamp,identifier,x,y,z,device\n"
        for i in 0..<200_000 { good += "\(Self.t0 + Double(i) * 0.02),\(i / 3_000),0.1,0.2,0.3,iPhone\n" }
        try writeFile(bad, "a_accelerometer.csv", good)
        try writeFile(bad, "b_heart.csv", "timestamp,value,confidence,device\n\(Self.t0),60,3,Watch\n\(Self.t0 + 1),sixty,3,Watch\n")
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .mhcCSV, sources: [bad.path], participant: "p2",
                                                                progressBar: false))) { e in
            XCTAssertTrue("\(e)".contains("b_heart.csv:3, column 'value': expected a number"), "\(e)")
        }
        XCTAssertEqual(try store.contentDigest(), before)
        XCTAssertEqual(try store.source().participants.map(\.id), ["p1"])
        // A bad line deep inside one large batched file (chunks of it already written in
        // the transaction), for the participant the store already holds.
        var inside = "timestamp,identifier,x,y,z,device\n"
        for i in 0..<150_000 { inside += "\(Self.t0 + 86_400 + Double(i) * 0.02),\(i / 3_000),0.1,0.2,0.3,iPhone\n" }
        inside += "\(Self.t0 + 90_000),99,0.1,zero,0.3,iPhone\n"
        for i in 0..<1_000 { inside += "\(Self.t0 + 90_000 + Double(i) * 0.02),100,0.1,0.2,0.3,iPhone\n" }
        try writeFile(bad, "c_accelerometer.csv", inside)
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .mhcCSV, sources: [bad.appendingPathComponent("c_accelerometer.csv").path],
                                                                participant: "p1", progressBar: false))) { e in
            XCTAssertTrue("\(e)".contains("c_accelerometer.csv:150002, column 'y': expected a number, found 'zero'"), "\(e)")
        }
        XCTAssertEqual(try store.contentDigest(), before)
        // Same for the native format failing in its second stream.
        let sim = makeRecSource(seed: 3, [recTrio[0]])
        let export = dir.appendingPathComponent("native")
        try NativeFormat.export(NativeFormat.Study(start: recMonday, end: recMonday + recDay, participants: [.init(id: "ana", timeZone: "Europe/Berlin")],
                                                   sensors: [.ambientLightSensor, .heartRate]), source: sim, to: export)
        let hrFile = export.appendingPathComponent("ana/watch/heartRate.csv").path
        var text = try String(contentsOfFile: hrFile, encoding: .utf8)
        text += "1772420000.5,1772420000.5,oops,3,12.5\n"
        try text.write(toFile: hrFile, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try store.importData(ImportRequest(format: .native, sources: [export.path], progressBar: false))) { e in
            XCTAssertTrue("\(e)".contains("heartRate.csv:"), "\(e)")
            XCTAssertTrue("\(e)".contains("column 'heartRate': expected a number, found 'oops'"), "\(e)")
        }
        XCTAssertEqual(try store.contentDigest(), before)
    }

    // MARK: Bad input

    func importError(_ request: ImportRequest, _ dir: URL) -> String {
        do {
            let store = try RecordedStore(path: dir.appendingPathComponent("err-\(UInt32.random(in: 0...UInt32.max)).sqlite").path)
            try store.importData(request)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    func testWrongHeaderNamesFileLineColumnAndExpectation() throws {
        let dir = try recordedTempDir(self)
        let f = try writeFile(dir, "in/accelerometer_7.csv", "timestamp,identifier,X,y,z,device\n1732143600.0,1,0,0,0,iPhone\n")
        let e = importError(ImportRequest(format: .mhcCSV, sources: [f], participant: "p"), dir)
        XCTAssertTrue(e.contains("accelerometer_7.csv:1, column 'X'"), e)
        XCTAssertTrue(e.contains("column 3 is 'X', expected 'x'"), e)
        XCTAssertTrue(e.contains("timestamp,identifier,x,y,z,device"), e)
        let g = try writeFile(dir, "in2/whatever.csv", "a,b,c\n1,2,3\n")
        let e2 = importError(ImportRequest(format: .mhcCSV, sources: [g], participant: "p"), dir)
        XCTAssertTrue(e2.contains("whatever.csv:1: not a MyHeartCounts SensorKit CSV header"), e2)
        XCTAssertTrue(e2.contains("heart rate: timestamp,value,confidence,device"), e2)
    }

    func testNonNumericValueNamesLineAndColumn() throws {
        let dir = try recordedTempDir(self)
        let f = try writeFile(dir, "in/accel.csv", "timestamp,identifier,x,y,z,device\n1732143600.0,1,0,0,0,iPhone\n1732143600.02,1,0.1,abc,0,iPhone\n")
        let e = importError(ImportRequest(format: .mhcCSV, sources: [f], participant: "p"), dir)
        XCTAssertTrue(e.contains("accel.csv:3, column 'y': expected a number, found 'abc'"), e)
    }

    func testMillisecondTimestampsAreCaught() throws {
        let dir = try recordedTempDir(self)
        let f = try writeFile(dir, "in/hr.csv", "timestamp,value,confidence,device\n1732143600125,60,3,Watch\n")
        let e = importError(ImportRequest(format: .mhcCSV, sources: [f], participant: "p"), dir)
        XCTAssertTrue(e.contains("hr.csv:2, column 'timestamp'"), e)
        XCTAssertTrue(e.contains("looks like milliseconds since 1970"), e)
        XCTAssertTrue(e.contains("expected seconds since 1970"), e)
        // The same in a MyDataHelps file, named by its JSON path.
        let json = "{\"device\": {\"name\": \"iPhone\"}, \"samples\": [{\"timestamp\": 1732143600.5, \"sample\": {\"lux\": 3, \"placement\": 1, \"chromaticity\": {\"x\": 0, \"y\": 0}}}, {\"timestamp\": 1732143600500, \"sample\": {\"lux\": 3, \"placement\": 1, \"chromaticity\": {\"x\": 0, \"y\": 0}}}]}"
        try writeFile(dir, "mdh/sensorkit-ambient-light-sensor/iPhone/P1/d1/q.json", json)
        let e2 = importError(ImportRequest(format: .mdhJSON, sources: [dir.appendingPathComponent("mdh").path]), dir)
        // A file's unit is decided by its first item: a later item in another unit is refused.
        XCTAssertTrue(e2.contains("q.json:1 at $.samples[1].timestamp"), e2)
        XCTAssertTrue(e2.contains("1732143600500 is not a date in seconds since 1970, the unit of this file's items (decided by its first item)"), e2)
        // Seconds since 2001 are caught too.
        let f3 = try writeFile(dir, "in3/hr.csv", "timestamp,value,confidence,device\n753836400.5,60,3,Watch\n")
        let e3 = importError(ImportRequest(format: .mhcCSV, sources: [f3], participant: "p"), dir)
        XCTAssertTrue(e3.contains("looks like seconds since 2001-01-01"), e3)
    }

    func testTruncatedGzipIsAnError() throws {
        let dir = try recordedTempDir(self)
        let root = try mdhTree(dir)
        let gz = root + "/sensorkit-accelerometer/iPhone/P7/dev-A/2024-11-21T00-00-00.json.gz"
        let data = try Data(contentsOf: URL(fileURLWithPath: gz))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: gz))
        let e = importError(ImportRequest(format: .mdhJSON, sources: [root]), dir)
        XCTAssertTrue(e.contains("2024-11-21T00-00-00.json.gz"), e)
        XCTAssertTrue(e.contains("truncated gzip file"), e)
    }

    func testUnknownSensorFolderIsAnError() throws {
        let dir = try recordedTempDir(self)
        let root = try mdhTree(dir)
        try FileManager.default.moveItem(atPath: root + "/sensorkit-heart-rate", toPath: root + "/sensorkit-acelerometer")
        let e = importError(ImportRequest(format: .mdhJSON, sources: [root]), dir)
        XCTAssertTrue(e.contains("sensorkit-acelerometer: unknown sensor folder 'sensorkit-acelerometer'"), e)
        XCTAssertTrue(e.contains("did you mean 'sensorkit-accelerometer'"), e)
    }

    func testBadJSONNamesThePath() throws {
        let dir = try recordedTempDir(self)
        let json = "{\"device\": {\"name\": \"iPhone\"},\n \"samples\": [{\"timestamp\": 1732143600.5, \"sample\": {\"lux\": \"bright\", \"placement\": 1}}]}"
        try writeFile(dir, "mdh/sensorkit-ambient-light-sensor/iPhone/P1/d1/q.json", json)
        let e = importError(ImportRequest(format: .mdhJSON, sources: [dir.appendingPathComponent("mdh").path]), dir)
        XCTAssertTrue(e.contains("q.json:2 at $.samples[0].sample.lux, column 'lux': expected a number, found \"bright\""), e)
        try writeFile(dir, "mdh2/sensorkit-ambient-light-sensor/iPhone/P1/d1/q.json", "{\"device\": {\"name\": \"iPhone\"}, \"samples\": [1, 2")
        let e2 = importError(ImportRequest(format: .mdhJSON, sources: [dir.appendingPathComponent("mdh2").path]), dir)
        XCTAssertTrue(e2.contains("at $.samples[0]: expected a sample item as an object"), e2)
    }

    func testNumberParserIsExact() {
        let cases = ["0", "-0.0", "1732204800.125", "0.12345678901234568", "1e-05", "5e+20", "-1.7976931348623157e+308",
                     "4.9406564584124654e-324", "123456789012345678901234", "0.1", "2.2250738585072014e-308", "nan", "inf", "-inf"]
        for c in cases {
            let got = Array(c.utf8).withUnsafeBufferPointer { NumberParser.double($0) }
            let want = Double(c)!
            XCTAssertEqual(got?.bitPattern, want.bitPattern, c)
        }
        for bad in ["", "abc", "1.2.3", "1e", "--1", "0x10", " 1"] {
            XCTAssertNil(Array(bad.utf8).withUnsafeBufferPointer { NumberParser.double($0) }, bad)
        }
        var rng = SplitMix(seed: 9)
        for _ in 0..<20_000 {
            let d = Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF)
            let text = "\(d)"
            XCTAssertEqual(Array(text.utf8).withUnsafeBufferPointer { NumberParser.double($0) }?.bitPattern, d.bitPattern, text)
        }
        // Long decimals (Eisel-Lemire): random 16–19 digit mantissas over the exponents it
        // handles and beyond, halfway cases, and Float32s widened; all as strtod rounds them.
        var texts = ["9007199254740993", "9007199254740995", "9007199254740992.5", "1e23", "8.98846567431158e307",
                     "0.024411889165639877", "247224.53564572334", "1772409600.5934494", "2.2250738585072011e-308",
                     "1.7976931348623158e+308", "4.4501477170144023e-308", "123456789012345678e-70", "9999999999999999999"]
        for _ in 0..<20_000 {
            let digits = String(rng.next() % 10_000_000_000_000_000_000)
            let e = Int(rng.next() % 161) - 80
            texts.append("\(rng.next() % 2 == 0 ? "-" : "")\(digits)e\(e)")
            let f = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()) & 0x7F7F_FFFF)
            texts.append("\(Double(f))")
        }
        for text in texts {
            let want = strtod(text, nil)
            XCTAssertEqual(Array(text.utf8).withUnsafeBufferPointer { NumberParser.double($0) }?.bitPattern, want.bitPattern, text)
        }
    }

    func testColumnCodecRoundTripsEveryKind() throws {
        var rng = SplitMix(seed: 1)
        let columns: [ColumnData] = [
            .double((0..<1000).map { _ in Double(bitPattern: rng.next()) }),
            .double((0..<1000).map { Double($0) * 0.02 + 1_732_143_600 }),
            .double((0..<1000).map { _ in Double(Int(rng.next() % 2_000_001) - 1_000_000) / 1e6 }),
            .double([Double](repeating: -0.0, count: 50)),
            .double([0.1, -0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]),
            .int((0..<1000).map { _ in Int64(bitPattern: rng.next()) }),
            .int([Int64](repeating: 7, count: 100)),
            // Deltas at every varint length boundary (zigzag 0x7F/0x80, 0x3FFF/0x4000, 0x1FFFFF/0x200000…).
            .int([0, 63, -1, 64, -64, 8_191, 0, 8_192, -8_192, 1_048_575, 0, 1_048_576, -1_048_576, 1 << 40, -(1 << 40),
                  .max, .min, 0, -1, 1]),
            .double((0..<300).map { Double(($0 * 7_919 % 4_200_001) - 2_100_000) / 1_000 }),
            .bool([true, false, true]),
            .string(["a", "b", "a", "a", "ü,\"x\"", ""]),
            .string(["x", "y"]),
            .value([.null, .object([("a", .array([.int(1), .double(.nan), .string("s")])), ("b", .bool(true))])]),
        ]
        for c in columns {
            let bytes = ColumnCodec.encode(c)
            let back = try bytes.withUnsafeBytes { try ColumnCodec.decode($0, kind: kind(c), count: c.count) }
            switch (c, back) {
            case let (.double(a), .double(b)): XCTAssertEqual(a.map(\.bitPattern), b.map(\.bitPattern))
            default: XCTAssertEqual(c, back)
            }
        }
    }

    /// 50 Hz times: sampled values every 22.5 s suggest one decimal; the encoder must find two.
    func testDecimalTimesEncodeCompactly() throws {
        let v = (0..<72_000).map { Double(177_241_098_000 + 2 * Int64($0)) / 100 }
        let bytes = ColumnCodec.encode(.double(v))
        XCTAssertEqual(bytes[0], 4, "decimal-scaled runs")
        XCTAssertLessThan(bytes.count, v.count * 2)
        let back = try bytes.withUnsafeBytes { try ColumnCodec.decode($0, kind: .double, count: v.count) }
        guard case .double(let b) = back else { return XCTFail() }
        XCTAssertEqual(b.map(\.bitPattern), v.map(\.bitPattern))
    }

    func kind(_ c: ColumnData) -> ColumnKind { c.kind }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RecordedImportTests {
    /// MyDataHelps items in milliseconds (real exports) are read as such, decided per file by
    /// the query window in its name; capitalised enumerations and `unknown<N>` are names.
    func testMyDataHelpsMillisecondItemsAndCapitalisedEnumerationsImport() throws {
        let dir = try recordedTempDir(self)
        let item = { (ms: Int, placement: String) in
            "{\"timestamp\":\(ms),\"sample\":{\"lux\":71,\"chromaticity\":{\"x\":0,\"y\":0},\"placement\":\"\(placement)\"}}"
        }
        let json = "{\"device\":{\"name\":\"W\",\"model\":\"Watch\",\"systemName\":\"watchOS\",\"systemVersion\":\"10.1\",\"productType\":\"Watch6,14\"},\"samples\":["
            + [item(1699471879000, "FrontTopRight"), item(1699471939000, "frontTop"), item(1699471999000, "unknown<3>")].joined(separator: ",") + "]}"
        try writeFile(dir, "mdh/sensorkit-ambient-light-sensor/AppleWatch/P1/d1/2023-11-07T155131-0600_2023-11-08T152527-0600.json", json)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        let stats = try store.importData(ImportRequest(format: .mdhJSON, sources: [dir.appendingPathComponent("mdh").path], progressBar: false))
        XCTAssertEqual(stats.rowsStored, 3)
        XCTAssertEqual(stats.forms["MyDataHelps item timestamps in milliseconds since 1970"], 1)
        let study = try RecordedStudy(store: store)
        let p = try XCTUnwrap(study.participant("P1"))
        let watch = try XCTUnwrap(p.devices.first)
        XCTAssertEqual(watch.kind, .watch)
        let batch = try study.source.samples(participant: "P1", sensor: .ambientLightSensor, device: watch, writtenAfter: 1_699_471_000,
                                         through: 1_699_472_000)
        XCTAssertEqual(batch.writeTimes.array, [1_699_471_879, 1_699_471_939, 1_699_471_999])
        XCTAssertEqual(batch.column("placement")?.data, .int([5, 1, 3]))
    }

    /// The unit of a file without a window in its name follows from the values; one value
    /// that is a date in neither unit is refused with its JSON path.
    func testQueryWindowParsing() {
        let w = MDHItemTimes.queryWindow(fileName: "2023-11-07T155131-0600_2023-11-08T152527-0600.json.gz")
        XCTAssertEqual(w?.from, 1_699_393_891)
        XCTAssertEqual(w?.to, 1_699_478_727)
        XCTAssertNil(MDHItemTimes.queryWindow(fileName: "samples.json"))
    }
}
