import Foundation
import XCTest
import StudyStore
import Importers
import SensorKitModel
@testable import StudyRuntime
@testable import StudyWorlds

/// A protocol replayed over a recorded store: MyHeartCounts CSV fixtures written from the
/// published column lists (MyHeartCounts-iOS) are imported, a Lua protocol computes
/// daily summaries over them with `sensorium run --recording`'s machinery, and the test
/// computes the same summaries itself, from the values it wrote.
final class RecordedProtocolTests: XCTestCase {
    /// SRDevice descriptions as MyHeartCounts writes them (quoted: they hold commas).
    static let phone = "\"<SRDevice: 0x2834; name = iPhone; model = iPhone; systemName = iOS; systemVersion = 17.4; productType = iPhone15,2>\""
    static let watch = "\"<SRDevice: 0x2835; name = Apple Watch; model = Watch; systemName = watchOS; systemVersion = 10.4; productType = Watch6,1>\""
    /// 2024-11-20 00:00 Europe/Berlin.
    static let t0 = 1_732_057_200.0
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// The local calendar day of `t` in Berlin, as `time.day` writes it.
    var dayNames: [Int: String] = [:]
    func localDay(_ t: Double) -> String {
        let offset = Double(Self.berlin.secondsFromGMT(for: Date(timeIntervalSince1970: t)))
        let day = Int(((t + offset) / 86_400).rounded(.down))
        if let name = dayNames[day] { return name }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        let name = f.string(from: Date(timeIntervalSince1970: Double(day) * 86_400))
        dayNames[day] = name
        return name
    }

    /// Per local day: count and sum (or count and mean) of a value.
    struct Daily: Equatable { var count = 0; var sum = 0.0 }

    func testAProtocolComputesTheSameDailySummariesAsTheTest() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("RecordedProtocolTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("mhc"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var rng: UInt64 = 0x5EED
        func next() -> UInt64 {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return rng >> 33
        }
        // Three days (from 20:00 the evening before, so the first hours fall on another local
        // day, until 23:00 on the third day, so that all is past the holding period when the
        // replay ends at midnight a day later).
        let from = Self.t0 - 4 * 3_600, to = Self.t0 + 3 * 86_400 - 3_600
        var steps: [String: Daily] = [:], heart: [String: Daily] = [:], motion: [String: Daily] = [:]

        var ped = "start,end,steps,distance,floorsUp,floorsDown,currentPace,currentCadence,avgActivePace,device\n"
        var t = from
        while t < to {
            let n = Int(next() % 300)
            ped += "\(t),\(t + 150),\(n),\(Double(n) * 0.7),\(n % 3),0,,,,\(Self.phone)\n"
            steps[localDay(t), default: Daily()].count += 1
            steps[localDay(t), default: Daily()].sum += Double(n)
            t += 150
        }
        var hr = "timestamp,value,confidence,device\n"
        t = from + 30
        while t < to {
            let bpm = 50 + Double(next() % 9_000) / 100
            hr += "\(t),\(bpm),\(next() % 4),\(Self.watch)\n"
            heart[localDay(t), default: Daily()].count += 1
            heart[localDay(t), default: Daily()].sum += bpm
            t += 60
        }
        // Accelerometer: a 10-second write batch at 50 Hz every 20 minutes.
        var accel = "timestamp,identifier,x,y,z,device\n"
        var batch: UInt64 = 1
        t = from
        while t < to {
            for i in 0..<500 {
                let ti = (t + Double(i) * 0.02 + 0.005)
                let x = Double(Int(next() % 2_001) - 1_000) / 1_000, y = Double(Int(next() % 2_001) - 1_000) / 1_000
                let z = -0.98 + Double(next() % 100) / 1_000
                accel += "\(ti),\(batch),\(x),\(y),\(z),\(Self.phone)\n"
                motion[localDay(ti), default: Daily()].count += 1
                motion[localDay(ti), default: Daily()].sum += (x * x + y * y + z * z).squareRoot()
            }
            batch += 1
            t += 1_200
        }
        let mhc = dir.appendingPathComponent("mhc")
        try ped.write(to: mhc.appendingPathComponent("pedometer_1.csv"), atomically: true, encoding: .utf8)
        try hr.write(to: mhc.appendingPathComponent("heartRate_1.csv"), atomically: true, encoding: .utf8)
        try accel.write(to: mhc.appendingPathComponent("accelerometer_1.csv"), atomically: true, encoding: .utf8)
        let storePath = dir.appendingPathComponent("study.sqlite").path
        let store = try RecordedStore(path: storePath)
        let stats = try store.importData(ImportRequest(format: .mhcCSV, sources: [mhc.path], participant: "p1", timeZone: "Europe/Berlin",
                                                       progressBar: false))
        let written: Int = [steps, heart, motion].map { d in d.values.map(\.count).reduce(0, +) }.reduce(0, +)
        XCTAssertEqual(stats.rowsStored, written)
        try store.close()

        let entitlements = [Sensor.pedometerData, .heartRate, .accelerometer].map { "\"\($0.info.entitlement)\"" }.joined(separator: ", ")
        let protocolText = """
        study {
          id = "recorded-daily", title = "Daily summaries of a recording", usage = "Summarises recorded data.",
          privacy_policy = "https://example.org/privacy",
          entitlements = { \(entitlements) },
          sensors = {
            pedometerData = { detail = "Counts steps." }, heartRate = { detail = "Heart rate." },
            accelerometer = { detail = "Motion." },
          },
        }
        local readers = {}
        for _, name in ipairs { "pedometerData", "heartRate", "accelerometer" } do readers[name] = sensorkit.reader(name) end
        sensorkit.requestAuthorization({ "pedometerData", "heartRate", "accelerometer" }, function(err)
          for _, r in pairs(readers) do r:startRecording() end
        end)
        -- At the end of the replay, everything is past the holding period: one line per sensor and local day.
        schedule.at(time.studyEnd() - 60, function(now)
          local function each(name, field, how)
            for _, device in ipairs(readers[name]:devices()) do
              local set = readers[name]:samples { device = device, from = time.studyStart() - days(1), to = now - days(1) }
              local groups = set:byDay()
              for _, g in ipairs(groups[how](groups, field)) do
                print(string.format("%s %s %d %.17g", name, g.key, g.count, g.value))
              end
            end
          end
          each("pedometerData", "numberOfSteps", "sum")
          each("heartRate", "heartRate", "mean")
          each("accelerometer", "magnitude", "mean")
        end)
        """
        let protocolPath = dir.appendingPathComponent("protocol.lua").path
        try protocolText.write(toFile: protocolPath, atomically: true, encoding: .utf8)
        var options = StudyOptions(protocolPath: protocolPath, moduleDirectories: [dir.path])
        options.recordingPath = storePath
        // No scenario: replaying a recording adds no simulated duplicate deliveries on top
        // of the recorded data (duplicateRate defaults to 0 there, contract §7.4), so counts are exact.
        options.limits.timeLimitMilliseconds = 0
        let runner = StudyRunner(options: options)
        final class Collector: @unchecked Sendable { var text = "" }
        let out = Collector()
        try runner.run { out.text += $0 }

        var got: [String: [String: (Int, Double)]] = [:]
        for line in out.text.split(separator: "\n") where !line.hasPrefix("[") {
            let f = line.split(separator: " ")
            guard f.count == 4, let n = Int(f[2]), let v = Double(f[3]) else { XCTFail("unexpected line: \(line)"); continue }
            got[String(f[0]), default: [:]][String(f[1])] = (n, v)
        }
        func check(_ sensor: String, _ want: [String: Daily], mean: Bool) {
            let g = got[sensor] ?? [:]
            XCTAssertEqual(Set(g.keys), Set(want.keys), "\(sensor): local days")
            XCTAssertEqual(want.count, 4, "\(sensor): the evening before and three days")
            for (day, w) in want {
                guard let (n, v) = g[day] else { continue }
                XCTAssertEqual(n, w.count, "\(sensor) \(day): samples")
                let expected = mean ? w.sum / Double(w.count) : w.sum
                XCTAssertEqual(v, expected, accuracy: 1e-9 * max(1, abs(expected)), "\(sensor) \(day)")
            }
        }
        check("pedometerData", steps, mean: false)
        check("heartRate", heart, mean: true)
        check("accelerometer", motion, mean: true)
    }
}
