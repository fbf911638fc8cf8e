import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// MyHeartCounts' FHIR uploads (`users/<uid>/liveHealthSamples/<sensor id>_<UUID>.json.zstd`)
/// and PPG binary files, built from the producer's examples (mhc-spec §2, §4.6).
final class MHCFHIRTests: XCTestCase {
    static let defs = "https://bdh.stanford.edu/fhir/defs/"

    static func device(_ model: String, _ systemName: String, _ productType: String) -> String {
        let d = defs + "SensorKit/sourceDevice"
        return """
        {"extension":[{"valueString":"\(model)","url":"\(d)/model"},{"valueString":"\(model)","url":"\(d)/name"},\
        {"valueString":"\(systemName)","url":"\(d)/systemName"},{"valueString":"26.2","url":"\(d)/systemVersion"},\
        {"valueString":"\(productType)","url":"\(d)/productType"}],"url":"\(d)"}
        """
    }

    /// The bookkeeping extensions every Observation carries (time zone, enrollment, source revision, device).
    static func bookkeeping(watch: Bool) -> String {
        let e = "https://myheartcounts.stanford.edu/fhir/StructureDefinition/study-enrollment", r = defs + "sourceRevision"
        return """
        {"valueString":"America/Los_Angeles","url":"\(defs)sampleUploadTimeZone"},\
        {"extension":[{"valueString":"5B8F4E2A-0C1D-4E3F-9A8B-7C6D5E4F3A2B","url":"\(e)/study-id"},{"url":"\(e)/study-revision","valueInteger":7}],"url":"\(e)"},\
        {"extension":[{"extension":[{"valueString":"My Heart Counts","url":"\(r)/source/name"},{"valueString":"edu.stanford.MyHeartCounts","url":"\(r)/source/bundleIdentifier"}],"url":"\(r)/source"},\
        {"valueString":"4.0.0 (412)","url":"\(r)/version"},{"valueString":"26.2.0","url":"\(r)/OSVersion"}],"url":"\(r)"},\
        \(watch ? device("Apple Watch", "watchOS", "Watch7,3") : device("iPhone", "iOS", "iPhone16,1"))
        """
    }

    static func code(_ id: String, _ display: String) -> String {
        "\"code\":{\"coding\":[{\"code\":\"com.apple.SensorKit.\(id)\",\"system\":\"https://developer.apple.com/documentation/sensorkit\",\"display\":\"\(display)\"}]}"
    }

    static func head(_ uuid: String) -> String {
        "\"resourceType\":\"Observation\",\"id\":\"\(uuid)\",\"identifier\":[{\"id\":\"\(uuid)\"}],\"status\":\"final\",\"issued\":\"2026-01-02T16:26:40.123456001-08:00\""
    }

    static func component(_ code: String, _ value: String?) -> String {
        "{\"code\":{\"coding\":[{\"code\":\"\(code)\",\"system\":\"https://spezi.stanford.edu\"}]}" + (value.map { ",\"valueString\":\"\($0)\"" } ?? "") + "}"
    }

    static let start = "2026-01-01T10:14:47.440668820999996-08:00", end = "2026-01-01T11:14:47.690668820999996-08:00"

    static func onWristPeriod(value: String = "\"valueBoolean\":true,", wrist: String = "left", start: String = start) -> String {
        """
        {\(head("3F2A9C4E-1B7D-4E60-8A21-5C9D0E7F1A2B")),\(code("onWristState", "On-Wrist State")),\
        "effectivePeriod":{"start":"\(start)","end":"\(end)"},\(value)\
        "component":[\(component("watchWristLocation", wrist)),\(component("watchCrownOrientation", "right"))],\
        "extension":[\(bookkeeping(watch: true))]}
        """
    }

    static let onWristInstant = """
        {\(head("4F2A9C4E-1B7D-4E60-8A21-5C9D0E7F1A2B")),\(code("onWristState", "On-Wrist State")),\
        "effectiveInstant":"2026-01-01T20:00:00.5Z","valueBoolean":false,\
        "component":[\(component("watchWristLocation", "right")),\(component("watchCrownOrientation", nil))],\
        "extension":[\(bookkeeping(watch: true))]}
        """

    static func visit(category: String = "work") -> String {
        let v = defs + "SensorKit/Visits/"
        return """
        {\(head("C0FFEE00-1234-4567-89AB-CDEF01234567")),\(code("visits", "Visits")),\
        "effectivePeriod":{"start":"2026-01-01T09:14:47.690668820999996-08:00","end":"2026-01-01T11:14:47.690668820999996-08:00"},\
        "valueString":"6BA7B810-9DAD-41D1-80B4-00C04FD430C8","extension":[\
        {"url":"\(v)sensorKitTimestamp","valueDateTime":"2026-01-01T11:14:47.690668820999996-08:00"},\
        {"url":"\(v)locationId","valueUuid":"urn:uuid:6ba7b810-9dad-41d1-80b4-00c04fd430c8"},\
        {"valueQuantity":{"code":"m","system":"http://unitsofmeasure.org","unit":"m","value":1523.75},"url":"\(v)distanceFromHome"},\
        {"url":"\(v)arrivalRangeStart","valueDateTime":"2026-01-01T09:14:47.690668820999996-08:00"},\
        {"url":"\(v)arrivalRangeEnd","valueDateTime":"2026-01-01T09:29:47.690668820999996-08:00"},\
        {"url":"\(v)departureRangeStart","valueDateTime":"2026-01-01T11:04:47.690668820999996-08:00"},\
        {"url":"\(v)departureRangeEnd","valueDateTime":"2026-01-01T11:14:47.690668820999996-08:00"},\
        {"valueString":"\(category)","url":"\(v)locationCategory"},\(bookkeeping(watch: false))]}
        """
    }

    static let deviceUsage: String = {
        let u = defs + "SensorKit/DeviceUsage/"
        let q = { (x: String) in "{\"code\":\"s\",\"system\":\"http://unitsofmeasure.org\",\"unit\":\"s\",\"value\":\(x)}" }
        return """
        {\(head("0D9E8F7A-6B5C-4D3E-A2F1-0E9D8C7B6A5F")),\(code("deviceUsageReport", "Device Usage Report")),\
        "effectivePeriod":{"start":"2026-01-01T11:14:47.690668820999996-08:00","end":"2026-01-01T11:29:47.690668820999996-08:00"},\
        "valueQuantity":\(q("372.5")),"extension":[\
        {"url":"\(u)totalScreenWakes","valueInteger":6},{"url":"\(u)totalUnlocks","valueInteger":4},\
        {"valueQuantity":\(q("372.5")),"url":"\(u)totalUnlockDuration"},{"valueString":"1.0","url":"\(u)version"},\
        {"extension":[{"valueString":"SRDeviceUsageCategoryHealthAndFitness","url":"\(u)appUsage/category"},\
        {"url":"\(u)appUsage/bundleIdentifier"},{"url":"\(u)appUsage/relativeStartTime","valueDecimal":12.5},\
        {"valueQuantity":\(q("95.25")),"url":"\(u)appUsage/usageTime"},\
        {"valueString":"7F3A2C1B-9D8E-4F60-A1B2-C3D4E5F60718","url":"\(u)appUsage/reportApplicationIdentifier"},\
        {"extension":[{"valueString":"E1D2C3B4-A596-4788-9A0B-1C2D3E4F5061","url":"\(u)appUsage/textInputSession/identifier"},\
        {"valueQuantity":\(q("8.5")),"url":"\(u)appUsage/textInputSession/duration"},\
        {"url":"\(u)appUsage/textInputSession/type","valueInteger":1}],"url":"\(u)appUsage/textInputSession"},\
        {"valueString":"com.apple.supplemental.example","url":"\(u)appUsage/supplementalCategory"}],"url":"\(u)appUsage"},\
        {"extension":[{"valueString":"SRDeviceUsageCategorySocialNetworking","url":"\(u)notificationUsage/category"},\
        {"valueString":"com.apple.MobileSMS","url":"\(u)notificationUsage/bundleIdentifier"},\
        {"url":"\(u)notificationUsage/event","valueInteger":1}],"url":"\(u)notificationUsage"},\
        {"extension":[{"valueString":"SRDeviceUsageCategoryNews","url":"\(u)webUsage/category"},\
        {"valueQuantity":\(q("41")),"url":"\(u)webUsage/totalUsageTime"}],"url":"\(u)webUsage"},\
        {"url":"https://example.org/unheard-of","valueInteger":1},\
        \(bookkeeping(watch: false))],"note":[{"text":"not from the producer"}]}
        """
    }()

    static let ecg: String = {
        let hk = """
        "code":{"coding":[{"code":"HKElectrocardiogram","system":"http://developer.apple.com/documentation/healthkit","display":"Electrocardiogram"},\
        {"code":"131328","system":"urn:oid:2.16.840.1.113883.6.24","display":"MDC_ECG_ELEC_POTL"}]}
        """
        func comp(_ data: String) -> String {
            "{\(hk),\"valueSampledData\":{\"origin\":{\"code\":\"uV\",\"system\":\"http://unitsofmeasure.org\",\"unit\":\"uV\",\"value\":0},\"period\":1.953125,\"dimensions\":1,\"data\":\"\(data)\"}}"
        }
        return """
        {\(head("5E6F7A8B-9C0D-4E1F-A203-B4C5D6E7F809")),\
        "category":[{"coding":[{"code":"procedure","system":"http://terminology.hl7.org/CodeSystem/observation-category","display":"Procedure"}]}],\
        "code":{"coding":[{"code":"com.apple.SensorKit.ECG","system":"https://developer.apple.com/documentation/sensorkit","display":"ECG"},\
        {"code":"HKElectrocardiogram","system":"http://developer.apple.com/documentation/healthkit","display":"Electrocardiogram"}]},\
        "effectivePeriod":{"start":"2026-01-01T11:14:47.690668820999996-08:00","end":"2026-01-01T11:14:48.690668820999996-08:00"},\
        "component":[\(comp("-12.346 3.500 210.000")),\(comp("200.000 -0.000 17.250"))],\
        "extension":[\(bookkeeping(watch: true))]}
        """
    }()

    // MARK: Helpers

    /// Writes `users/u1/liveHealthSamples/<name>` (zstd-compressed when the name ends in .zstd); returns the tree root.
    @discardableResult
    func upload(_ root: URL, _ name: String, _ text: String) throws -> String {
        let folder = root.appendingPathComponent("users/u1/liveHealthSamples")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let bytes = Array(text.utf8)
        let data = name.hasSuffix(".zstd") ? try ZstdCompressor.compress(bytes) : bytes
        try Data(data).write(to: folder.appendingPathComponent(name))
        return root.path
    }

    func store(_ dir: URL) throws -> RecordedStore { try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path) }

    func importTree(_ store: RecordedStore, _ root: URL) throws -> ImportStats {
        try store.importData(ImportRequest(format: .mhc, sources: [root.path], progressBar: false))
    }

    func rows(_ store: RecordedStore, _ sensor: Sensor, file: StaticString = #filePath, line: UInt = #line) throws -> (SRDevice, SampleBatch) {
        let rec = try store.source()
        let devices = rec.devices(participant: "u1").filter { rec.sensors(participant: "u1", device: $0).contains(sensor) }
        guard let d = devices.first else { XCTFail("no \(sensor) stream", file: file, line: line); throw ImportError(file: "", "none") }
        return (d, try rec.samples(participant: "u1", sensor: sensor, device: d, writtenAfter: -1e10, through: 1e10))
    }

    func iso(_ s: String) -> Double { ISODate.parse(s)! }

    func present(_ b: SampleBatch, _ name: String) -> [Bool] {
        let c = b.column(name)!
        return c.present ?? [Bool](repeating: true, count: c.count)
    }

    func values(_ b: SampleBatch, _ name: String) -> [FieldValue] {
        guard case .value(let v)? = b.column(name)?.data else { XCTFail("no value column \(name)"); return [] }
        return v
    }

    func refusal(_ name: String, _ text: String) throws -> String {
        let dir = try recordedTempDir(self)
        try upload(dir, name, text)
        do {
            _ = try importTree(try store(dir), dir)
            XCTFail("accepted: \(text.prefix(60))")
            return ""
        } catch { return "\(error)" }
    }

    // MARK: Tests

    func testDatesWithManyFractionDigits() {
        XCTAssertEqual(ISODate.parse("2026-01-01T11:14:47.690668820999996-08:00")!, 1_767_294_887.690668821, accuracy: 1e-6)
        XCTAssertEqual(ISODate.parse("2026-01-01T11:14:47.6906688209999961234567-08:00")!, 1_767_294_887.690668821, accuracy: 1e-6)
        XCTAssertEqual(ISODate.parse("2026-01-01T19:14:47Z")!, 1_767_294_887)
        XCTAssertNil(ISODate.parse("2026-01-01T19:14:47.Z"))
    }

    func testOnWristState() throws {
        let dir = try recordedTempDir(self)
        try upload(dir, "com.apple.SensorKit.onWristState_8D1C0B5E-0000-4000-8000-000000000001.json.zstd",
                   "[\(Self.onWristPeriod()),\(Self.onWristInstant)]")
        let s = try store(dir)
        let stats = try importTree(s, dir)
        XCTAssertEqual(stats.files, 1)
        XCTAssertEqual(stats.rowsStored, 2)
        XCTAssertEqual(stats.notUnderstood, [:])
        XCTAssertTrue(stats.notes.contains { $0.contains("America/Los_Angeles") }, "\(stats.notes)")
        let (d, b) = try rows(s, .onWristState)
        XCTAssertEqual(d, SRDevice(name: "Apple Watch", model: "Apple Watch", systemName: "watchOS", systemVersion: "26.2", productType: "Watch7,3", kind: .watch))
        XCTAssertEqual(b.count, 2)
        let end = iso(Self.end), start = iso(Self.start), instant = iso("2026-01-01T20:00:00.5Z")
        XCTAssertEqual(b.writeTimes.array, [end, instant])
        XCTAssertEqual(b.times, [end, instant])
        guard case .bool(let on)? = b.column("onWrist")?.data else { return XCTFail("onWrist") }
        XCTAssertEqual(on, [true, false])
        XCTAssertEqual(recInts(b, "wristLocation"), [0, 1])
        XCTAssertEqual(recInts(b, "crownOrientation")[0], 1)
        XCTAssertEqual(present(b, "crownOrientation"), [true, false], "a component without a value: unknown")
        XCTAssertEqual(recDoubles(b, "onWristDate")[0], end)
        XCTAssertEqual(recDoubles(b, "offWristDate")[0], start)
        XCTAssertEqual(present(b, "onWristDate"), [true, false], "an instant does not say which date it was")
        XCTAssertEqual(present(b, "offWristDate"), [true, false])
    }

    /// An on-wrist observation without a date is skipped and said so, and is not counted again
    /// among those whose wrist or crown is unknown (only stored ones are).
    func testASkippedOnWristObservationIsCountedOnce() throws {
        let dir = try recordedTempDir(self)
        let undated = Self.onWristPeriod()
            .replacingOccurrences(of: "\"effectivePeriod\":{\"start\":\"\(Self.start)\",\"end\":\"\(Self.end)\"},", with: "")
            .replacingOccurrences(of: "\"component\":[\(Self.component("watchWristLocation", "left")),\(Self.component("watchCrownOrientation", "right"))],", with: "")
        XCTAssertFalse(undated.contains("effectivePeriod") || undated.contains("component"), undated)
        try upload(dir, "com.apple.SensorKit.onWristState_8D1C0B5E-0000-4000-8000-000000000009.json.zstd", "[\(Self.onWristPeriod()),\(undated)]")
        let stats = try importTree(try store(dir), dir)
        XCTAssertEqual(stats.rowsStored, 1)
        XCTAssertEqual(stats.warnings.filter { $0.contains("1 on-wrist observation(s) without effectivePeriod or effectiveInstant skipped") }.count, 1, "\(stats.warnings)")
        XCTAssertEqual(stats.warnings.filter { $0.contains("wrist location unknown") }, [], "the skipped one is not counted as stored with its wrist unknown")
    }

    func testVisits() throws {
        let dir = try recordedTempDir(self)
        try upload(dir, "com.apple.SensorKit.visits_8D1C0B5E-0000-4000-8000-000000000002.json", "[\(Self.visit())]")
        let s = try store(dir)
        let stats = try importTree(s, dir)
        XCTAssertEqual(stats.rowsStored, 1)
        XCTAssertEqual(stats.notUnderstood, [:])
        let (d, b) = try rows(s, .visits)
        XCTAssertEqual(d.kind, .phone)
        XCTAssertEqual(d.productType, "iPhone16,1")
        XCTAssertEqual(b.writeTimes.array, [iso("2026-01-01T11:14:47.690668820999996-08:00")])
        XCTAssertEqual(b.times, [iso("2026-01-01T09:14:47.690668820999996-08:00")])
        XCTAssertEqual(recDoubles(b, "distanceFromHome"), [1523.75])
        XCTAssertEqual(recDoubles(b, "arrivalEnd"), [iso("2026-01-01T09:29:47.690668820999996-08:00")])
        XCTAssertEqual(recDoubles(b, "departureStart"), [iso("2026-01-01T11:04:47.690668820999996-08:00")])
        XCTAssertEqual(recDoubles(b, "departureEnd"), [iso("2026-01-01T11:14:47.690668820999996-08:00")])
        XCTAssertEqual(recInts(b, "locationCategory"), [2], "work")
        XCTAssertEqual(b.column("identifier")?.data, .string(["6BA7B810-9DAD-41D1-80B4-00C04FD430C8"]))
    }

    func testDeviceUsageReport() throws {
        let dir = try recordedTempDir(self)
        try upload(dir, "com.apple.SensorKit.deviceUsageReport_8D1C0B5E-0000-4000-8000-000000000003.json.zstd", "[\(Self.deviceUsage)]")
        let s = try store(dir)
        let stats = try importTree(s, dir)
        XCTAssertEqual(stats.rowsStored, 1)
        XCTAssertEqual(stats.notUnderstood, ["deviceUsageReport FHIR: https://example.org/unheard-of": 1,
                                             "deviceUsageReport FHIR: note": 1])
        let (_, b) = try rows(s, .deviceUsageReport)
        let start = iso("2026-01-01T11:14:47.690668820999996-08:00")
        XCTAssertEqual(b.writeTimes.array, [start], "the fetch timestamp")
        XCTAssertEqual(recDoubles(b, "duration")[0], 900, accuracy: 1e-6)
        XCTAssertEqual(recInts(b, "totalScreenWakes"), [6])
        XCTAssertEqual(recInts(b, "totalUnlocks"), [4])
        XCTAssertEqual(recDoubles(b, "totalUnlockDuration"), [372.5])
        XCTAssertEqual(b.column("version")?.data, .string(["1.0"]))
        XCTAssertEqual(values(b, "applicationUsageByCategory"), [.object([("SRDeviceUsageCategoryHealthAndFitness", .array([.object([
            ("bundleIdentifier", .null), ("usageTime", .double(95.25)), ("reportApplicationIdentifier", .string("7F3A2C1B-9D8E-4F60-A1B2-C3D4E5F60718")),
            ("textInputSessions", .array([.object([("duration", .double(8.5)), ("sessionType", .int(1)),
                                                   ("sessionIdentifier", .string("E1D2C3B4-A596-4788-9A0B-1C2D3E4F5061"))])])),
            ("supplementalCategories", .array([.string("com.apple.supplemental.example")])), ("relativeStartTime", .double(12.5)),
        ])]))])])
        XCTAssertEqual(values(b, "notificationUsageByCategory"), [.object([("SRDeviceUsageCategorySocialNetworking", .array([
            .object([("bundleIdentifier", .string("com.apple.MobileSMS")), ("event", .int(1))])]))])])
        XCTAssertEqual(values(b, "webUsageByCategory"), [.object([("SRDeviceUsageCategoryNews", .array([.object([("totalUsageTime", .double(41))])]))])])
        let field = Sensor.deviceUsageReport.info.field("applicationUsageByCategory")!
        if case .structured(let form) = field.type { XCTAssertNil(form.problem(in: values(b, "applicationUsageByCategory")[0])) }
    }

    func testElectrocardiogram() throws {
        let dir = try recordedTempDir(self)
        try upload(dir, "com.apple.SensorKit.ECG_8D1C0B5E-0000-4000-8000-000000000004.json.zstd", "[\(Self.ecg)]")
        let s = try store(dir)
        let stats = try importTree(s, dir)
        XCTAssertEqual(stats.rowsStored, 2)
        XCTAssertEqual(stats.notUnderstood, [:])
        let (d, b) = try rows(s, .electrocardiogram)
        XCTAssertEqual(d.kind, .watch)
        let end = iso("2026-01-01T11:14:48.690668820999996-08:00")
        XCTAssertEqual(b.writeTimes.array, [end, end])
        XCTAssertEqual(b.times[1], end)
        XCTAssertEqual(b.times[0], end - 3 * 1.953125 / 1000, accuracy: 1e-9)
        XCTAssertEqual(recDoubles(b, "frequency"), [512, 512])
        XCTAssertEqual(recInts(b, "sessionState"), [2, 2])
        XCTAssertEqual(b.column("sessionIdentifier")?.data, .string(["5E6F7A8B-9C0D-4E1F-A203-B4C5D6E7F809", "5E6F7A8B-9C0D-4E1F-A203-B4C5D6E7F809"]))
        XCTAssertEqual(present(b, "lead"), [false, false])
        XCTAssertEqual(present(b, "sessionGuidance"), [false, false])
        let v = { (x: Double) in FieldValue.object([("value", .double(x))]) }
        XCTAssertEqual(values(b, "data"), [.array([v(-12.346), v(3.5), v(210)]), .array([v(200), v(-0.0), v(17.25)])])
    }

    /// An ECG whose batches hold more samples than its effectivePeriod spans (rebuilt back to
    /// back before the end, they reach before the start) is stored and named in a warning.
    func testAnECGLongerThanItsPeriodIsNamed() throws {
        let dir = try recordedTempDir(self)
        let long = Array(repeating: "1.000", count: 1_536).joined(separator: " ")   // 3 s at 512 Hz: 2 s before a 1-s period
        try upload(dir, "com.apple.SensorKit.ECG_8D1C0B5E-0000-4000-8000-000000000005.json.zstd",
                   "[\(Self.ecg.replacingOccurrences(of: "-12.346 3.500 210.000", with: long))]")
        let s = try store(dir)
        let stats = try importTree(s, dir)
        XCTAssertEqual(stats.rowsStored, 2)
        XCTAssertEqual(stats.warnings.filter { $0.contains("ECG") }.count, 1, "\(stats.warnings)")
        XCTAssertTrue(stats.warnings.contains { $0.contains("1 ECG observation(s) holding more samples than their effectivePeriod spans (the first: '5E6F7A8B-9C0D-4E1F-A203-B4C5D6E7F809'") },
                      "\(stats.warnings)")
        // The fixture's own ECG (batches inside its period) is not named.
        let plain = try recordedTempDir(self)
        try upload(plain, "com.apple.SensorKit.ECG_8D1C0B5E-0000-4000-8000-000000000004.json.zstd", "[\(Self.ecg)]")
        XCTAssertEqual(try importTree(try store(plain), plain).warnings.filter { $0.contains("ECG") }, [])
    }

    func testBadInputsNameFileElementAndField() throws {
        let name = "com.apple.SensorKit.onWristState_8D1C0B5E-0000-4000-8000-000000000005.json"
        var e = try refusal(name, Self.onWristPeriod())
        XCTAssertTrue(e.contains(name) && e.contains("expected a JSON array of FHIR Observations"), e)
        e = try refusal(name, "[\(Self.onWristInstant),\(Self.onWristPeriod(value: ""))]")
        XCTAssertTrue(e.contains(name) && e.contains("$[1].valueBoolean") && e.contains("valueBoolean, true or false"), e)
        e = try refusal(name, "[\(Self.onWristPeriod(start: "2026-13-01T10:14:47Z"))]")
        XCTAssertTrue(e.contains(name) && e.contains("$[0].effectivePeriod.start") && e.contains("expected an ISO 8601 date"), e)
        e = try refusal(name, "[\(Self.onWristPeriod(wrist: "middle"))]")
        XCTAssertTrue(e.contains(name) && e.contains("$[0].component[0].valueString") && e.contains("watchWristLocation")
                      && e.contains("expected left or right"), e)
        let visits = "com.apple.SensorKit.visits_8D1C0B5E-0000-4000-8000-000000000006.json.zstd"
        e = try refusal(visits, "[\(Self.visit(category: "moon"))]")
        XCTAssertTrue(e.contains(visits) && e.contains("locationCategory") && e.contains("moon"), e)
        e = try refusal(visits, "[\(Self.onWristInstant)]")
        XCTAssertTrue(e.contains("com.apple.SensorKit.onWristState"), e)
        e = try refusal(name, "[1]")
        XCTAssertTrue(e.contains("$[0]") && e.contains("expected a FHIR Observation object"), e)
    }

    func testReuploadUnderANewNameStoresNothingNew() throws {
        let dir = try recordedTempDir(self)
        let text = "[\(Self.onWristPeriod()),\(Self.onWristInstant)]"
        try upload(dir, "com.apple.SensorKit.onWristState_8D1C0B5E-0000-4000-8000-000000000007.json.zstd", text)
        let s = try store(dir)
        XCTAssertEqual(try importTree(s, dir).rowsStored, 2)
        try upload(dir, "com.apple.SensorKit.onWristState_8D1C0B5E-0000-4000-8000-000000000008.json", text)
        let again = try importTree(s, dir)
        XCTAssertEqual(again.rowsRead, 4)
        XCTAssertEqual(again.rowsStored, 0)
        XCTAssertEqual(again.duplicatesDropped, 4)
        XCTAssertEqual(try rows(s, .onWristState).1.count, 2)
    }

    // MARK: PPG

    /// mhc-spec §4.6: two samples written by MyHeartCounts' own encoder.
    static let ppgVector = """
        02eb33ece9b155da41f9ebd7f6a988b2020100000000003a40400113466f7265\
        67726f756e64486561727452617465020a010200000000000068804000000000\
        0068804000000000000060409ae1d7f6a988b20201105369676e616c53617475\
        726174696f6e0100000080b2bd1e3d000000408478603d00000080bbe3aebe00\
        000020da3b4c3d01000000009f06a43f010103010000000000908a4000000000\
        70a38a400000000000002040afe8d7f6a988b20200000001f9ebd7f6a988b202\
        000000000000604000000000a02aef3f00000000801dc13f0000000000aabfbf\
        0000000000000000ffffffffffffffffff01000102c301a9010000
        """

    static var ppgBytes: [UInt8] {
        let h = Array(ppgVector.utf8)
        return stride(from: 0, to: h.count, by: 2).map { UInt8(String(decoding: h[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    func testPPGTestVectorDecodes() throws {
        let bytes = Self.ppgBytes
        XCTAssertEqual(bytes.count, 251)
        let s = try MHCPPG.decode(bytes, file: "vector")
        XCTAssertEqual(s.count, 2)
        XCTAssertEqual(s[0].startDate, 1767294887.6906688)
        XCTAssertEqual(s[0].nanosecondsSinceStart, 1346088365061625)
        XCTAssertEqual(s[0].temperature, 32.453125)
        XCTAssertEqual(s[0].usage, ["ForegroundHeartRate"])
        XCTAssertEqual(s[0].optical.count, 2)
        let o = s[0].optical[0]
        XCTAssertEqual([o.emitter, o.signalIdentifier, o.nanosecondsSinceStart], [10, 0, 1346088365060250])
        XCTAssertEqual(o.activePhotodiodeIndexes, [2])
        XCTAssertEqual([o.nominalWavelength, o.effectiveWavelength, o.samplingFrequency], [525, 525, 128])
        XCTAssertEqual(o.conditions, ["SignalSaturation"])
        XCTAssertEqual(o.noise?.white, 2.7303497191020348e-14)
        XCTAssertEqual(o.noise?.pink, 4.681273814768905e-13)
        XCTAssertEqual(o.noise?.background, -9.205812148138648e-07)
        XCTAssertEqual(o.noise?.backgroundOffset, 2.006131941340375e-13)
        XCTAssertEqual(o.normalizedReflectance, 0.039113014936447144)
        let o2 = s[0].optical[1]
        XCTAssertEqual([o2.emitter, o2.signalIdentifier, o2.nanosecondsSinceStart], [1, 1, 1346088365061167])
        XCTAssertEqual(o2.activePhotodiodeIndexes, [3])
        XCTAssertEqual([o2.nominalWavelength, o2.effectiveWavelength, o2.samplingFrequency], [850, 852.4296875, 8])
        XCTAssertEqual(o2.conditions, [])
        XCTAssertNil(o2.noise)
        XCTAssertNil(o2.normalizedReflectance)
        XCTAssertEqual(s[0].accelerometer, [MHCPPG.Accel(nanosecondsSinceStart: 1346088365061625, samplingFrequency: 128,
                                                         x: 0.9739532470703125, y: 0.1337127685546875, z: -0.123687744140625)])
        XCTAssertEqual(s[1], MHCPPG.Sample(startDate: 0, nanosecondsSinceStart: -1, temperature: nil, usage: ["é"], optical: [], accelerometer: []))

        // Rows of the catalogue's schema (the first sample: the second's start date 0 is not a date).
        let b = try MHCPPG.batch([s[0]], file: "vector")
        XCTAssertEqual(b.times, [1767294887.6906688])
        XCTAssertEqual(b.writeTimes.array[0], 1767294887.6906688 + 1346088.365061625, accuracy: 1e-5)
        XCTAssertEqual(recInts(b, "nanosecondsSinceStart"), [1346088365061625])
        XCTAssertEqual(recDoubles(b, "temperature"), [32.453125])
        XCTAssertEqual(b.column("usage")?.data, .value([.array([.string("foregroundHeartRate")])]))
        for name in ["usage", "opticalSamples", "accelerometerSamples"] {
            guard case .structured(let form) = Sensor.photoplethysmogram.info.field(name)!.type, case .value(let v)? = b.column(name)?.data else {
                XCTFail(name); continue
            }
            XCTAssertNil(form.problem(in: v[0]), name)
        }
        guard case .value(let optical)? = b.column("opticalSamples")?.data, case .array(let list) = optical[0],
              case .object(let first) = list[0] else { return XCTFail("opticalSamples") }
        XCTAssertEqual(first.first { $0.0 == "conditions" }?.1, .array([.string("signalSaturation")]))
        XCTAssertEqual(first.first { $0.0 == "whiteNoise" }?.1, .double(2.7303497191020348e-14))

        // Through the import: the file is named, and so are the sample and field that are not a date.
        let dir = try recordedTempDir(self)
        let folder = dir.appendingPathComponent("users/u1/SensorKit/com.apple.SensorKit.PPG")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(bytes).write(to: folder.appendingPathComponent("5C1D.mhcPPG"))
        do {
            _ = try importTree(try store(dir), dir)
            XCTFail("a start date of 0 was accepted")
        } catch {
            XCTAssertTrue("\(error)".contains("5C1D.mhcPPG") && "\(error)".contains("$[1]") && "\(error)".contains("startDate"), "\(error)")
        }
        // Cut short or with trailing bytes: refused with where.
        XCTAssertThrowsError(try MHCPPG.decode(Array(bytes.dropLast(3)), file: "cut")) { XCTAssertTrue("\($0)".contains("ends early"), "\($0)") }
        XCTAssertThrowsError(try MHCPPG.decode(bytes + [0], file: "long")) { XCTAssertTrue("\($0)".contains("1 more bytes"), "\($0)") }
        for n in 0..<bytes.count { _ = try? MHCPPG.decode(Array(bytes.prefix(n)), file: "cut") }
    }

    func testPPGImportStoresRows() throws {
        // The vector's first sample alone: count 1 and the first sample's bytes (up to sample 2).
        let bytes = Self.ppgBytes
        let second = 251 - 27 // sample 2: 8 + 10 + 1 + 6 (["é"]) + 1 + 1 = 27 bytes
        let one = [UInt8(1)] + Array(bytes[1..<second])
        XCTAssertEqual(try MHCPPG.decode(one, file: "one").count, 1)
        let dir = try recordedTempDir(self)
        let folder = dir.appendingPathComponent("users/u1/SensorKit/com.apple.SensorKit.PPG")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(one).write(to: folder.appendingPathComponent("6D2E.mhcPPG"))
        let s = try store(dir)
        let stats = try importTree(s, dir)
        XCTAssertEqual(stats.rowsStored, 1)
        let (d, b) = try rows(s, .photoplethysmogram)
        XCTAssertEqual(d.kind, .watch)
        XCTAssertEqual(b.times, [1767294887.6906688])
        XCTAssertEqual(recDoubles(b, "temperature"), [32.453125])
    }
}
