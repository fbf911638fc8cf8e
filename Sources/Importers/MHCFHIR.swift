import Foundation
import GRDB
import SensorKitModel
import StudyStore

/// MyHeartCounts' FHIR uploads: `users/<uid>/liveHealthSamples/<sensor id>_<UUID>.json.zstd`,
/// a JSON array of FHIR R4 Observations (MyHeartCounts-iOS `MyHeartCountsStandard+HealthKit.swift`
/// L172–194; one file per fetch batch of 100 or more observations). The mapping, with the
/// producer's lines, is in `docs/importing.md` ("MyHeartCounts FHIR Observations and PPG").
///
/// Times (the producer uploads no SensorKit write time except for visits):
/// - on-wrist: written at the latest change it reports, `effectivePeriod.end` or
///   `effectiveInstant`; no own date (times = the write time). Without `effective[x]` the
///   observation has no date at all and is skipped (counted in a warning).
/// - visits: written at the `…/Visits/sensorKitTimestamp` extension (the fetch result's
///   time); own time `arrivalStart`.
/// - device usage: written at `effectivePeriod.start`, which is the fetch result's
///   timestamp (`DeviceUsage+FHIR.swift` L53–56); `duration` = end − start.
/// - ECG: one row per component (one SensorKit batch); all rows written at
///   `effectivePeriod.end` (the start of the last batch, the latest date uploaded); the last
///   batch's date is that end, earlier batches lie back to back before it (voltages × period).
enum MHCFHIR {
    /// The sensors MyHeartCounts uploads as FHIR Observations (`SensorKitDataFetcher.swift` L244–257).
    static let sensors: Set<Sensor> = [.onWristState, .visits, .deviceUsageReport, .electrocardiogram]

    static let sensorKitSystem = "https://developer.apple.com/documentation/sensorkit"
    static let defs = "https://bdh.stanford.edu/fhir/defs/"
    static let sourceDeviceURL = defs + "SensorKit/sourceDevice"
    static let timeZoneURL = defs + "sampleUploadTimeZone"
    static let enrollmentURL = "https://myheartcounts.stanford.edu/fhir/StructureDefinition/study-enrollment"
    static let sourceRevisionURL = defs + "sourceRevision"
    static let visitsBase = defs + "SensorKit/Visits/"
    static let usageBase = defs + "SensorKit/DeviceUsage/"

    /// Imports one Observation array.
    static func importFile(_ job: MHCTree.FHIRJob, session: ImportSession) throws {
        let reader = JSONReader(file: job.path, source: try openByteSource(job.path))
        let first = try reader.peek()
        guard first == UInt8(ascii: "[") else {
            let found = first == nil ? "an empty file" : first == UInt8(ascii: "{") ? "an object" : "something else"
            throw reader.error("expected a JSON array of FHIR Observations (MyHeartCounts' liveHealthSamples upload), found \(found)")
        }
        let file = FHIRFile(job: job, session: session)
        try reader.array { i in try file.add(try reader.value(), index: i) }
        guard try reader.atEnd() else { throw reader.error("expected the end of the file after the array of Observations") }
        if reader.window.byteOrderMarkSkipped { session.stats.forms[ByteWindow.byteOrderMarkForm, default: 0] += 1 }
        try file.finish()
    }
}

/// One FHIR upload being read: rows by device, and what was not understood.
private final class FHIRFile {
    let job: MHCTree.FHIRJob
    let session: ImportSession
    var file: String { job.path }
    var sensor: Sensor { job.sensor }
    var rows: [SRDevice: FHIRRows] = [:]
    var deviceOrder: [SRDevice] = []
    var notUnderstood: [String: Int] = [:]
    var zones: Set<String> = []
    var noDate = 0, instantOnly = 0, unknownWrist = 0, unknownCrown = 0, noDevice = 0, droppedCategories = 0
    /// ECG observations whose batches, rebuilt back to back before effectivePeriod.end (the
    /// last batch's date: MyHeartCounts' session duration is the last batch's offset), reach
    /// more than a second before effectivePeriod.start (the session's start): more samples than
    /// the period holds. The first such one's id or path. (Batches that begin after the start
    /// are what a session whose begin state precedes its first batch gives.)
    var ecgSpanMismatches = 0, firstECGSpanMismatch = ""

    init(job: MHCTree.FHIRJob, session: ImportSession) {
        self.job = job
        self.session = session
    }

    func unknown(_ what: String) { notUnderstood["\(sensor.rawValue) FHIR: \(ImportError.excerpt(what))", default: 0] += 1 }

    func fail(_ path: String, _ field: String, _ message: String) -> ImportError {
        ImportError(file: file, jsonPath: path, field: field, message)
    }

    static func show(_ v: FieldValue?) -> String {
        guard let v else { return "nothing" }
        return JSONWriter.excerpt(v)
    }

    // MARK: Elements

    func add(_ v: FieldValue, index i: Int) throws {
        let path = "$[\(i)]"
        guard case .object(let pairs) = v else { throw fail(path, "resourceType", "expected a FHIR Observation object, found \(Self.show(v))") }
        var o: [String: FieldValue] = [:]
        for (k, x) in pairs where o[k] == nil { o[k] = x }
        guard o["resourceType"]?.stringValue == "Observation" else {
            throw fail(path + ".resourceType", "resourceType", "expected \"Observation\", found \(Self.show(o["resourceType"]))")
        }
        try checkCode(o["code"], path: path + ".code")
        var exts = try FHIRExtensions(o["extension"], path: path + ".extension", file: file)
        let device = try bookkeeping(&exts)
        var known: Set<String> = ["resourceType", "id", "identifier", "status", "code", "issued", "extension"]
        let row: FHIRRow?
        switch sensor {
        case .onWristState:
            known.formUnion(["effectivePeriod", "effectiveInstant", "valueBoolean", "component"])
            row = try onWrist(o, path: path)
        case .visits:
            known.formUnion(["effectivePeriod", "valueString"])
            row = try visit(o, &exts, path: path)
        case .deviceUsageReport:
            known.formUnion(["effectivePeriod", "valueQuantity"])
            row = try deviceUsage(o, &exts, path: path)
        default:
            known.formUnion(["effectivePeriod", "component", "category"])
            row = nil
            try ecg(o, path: path, device: device)
        }
        for k in o.keys.sorted() where !known.contains(k) { unknown(k) }
        for url in exts.remaining { unknown(url) }
        if let row { rowsFor(device).add(row) }
    }

    func rowsFor(_ device: SRDevice) -> FHIRRows {
        if let r = rows[device] { return r }
        let r = FHIRRows(sensor: sensor)
        rows[device] = r
        deviceOrder.append(device)
        return r
    }

    /// The SensorKit coding must name the file's sensor.
    func checkCode(_ v: FieldValue?, path: String) throws {
        let codings = v?.objectValue?["coding"]?.arrayItems ?? []
        let sk = codings.compactMap(\.objectValue).first { $0["system"]?.stringValue == MHCFHIR.sensorKitSystem }
        guard let code = sk?["code"]?.stringValue else {
            throw fail(path, "code", "expected code.coding with system \(MHCFHIR.sensorKitSystem) and code \(sensor.identifier)")
        }
        guard code == sensor.identifier else {
            throw fail(path, "code", "the file's name says \(sensor.identifier), but the Observation's SensorKit code is \(code)")
        }
    }

    /// The bookkeeping extensions: the device (sourceDevice), the upload's zone name; study
    /// enrollment and the app's source revision are understood and not stored.
    func bookkeeping(_ exts: inout FHIRExtensions) throws -> SRDevice {
        for z in exts.take(MHCFHIR.timeZoneURL) { if let s = z.o["valueString"]?.stringValue { zones.insert(s) } }
        _ = exts.take(MHCFHIR.enrollmentURL)
        _ = exts.take(MHCFHIR.sourceRevisionURL)
        var values: [String: String] = [:]
        if let d = exts.take(MHCFHIR.sourceDeviceURL).first {
            for c in try d.children(file: file) {
                let key = c.url.hasPrefix(MHCFHIR.sourceDeviceURL + "/") ? String(c.url.dropFirst(MHCFHIR.sourceDeviceURL.count + 1)) : c.url
                if ["model", "name", "systemName", "systemVersion", "productType"].contains(key), let s = c.o["valueString"]?.stringValue {
                    values[key] = s
                } else {
                    unknown(c.url)
                }
            }
        }
        if values.isEmpty {
            noDevice += 1
            return MHCFormat.unnamedDevice(sensor.deviceKinds.contains(.watch) ? .watch : .phone)
        }
        let model = values["model"] ?? ""
        return MHCFormat.device(name: values["name"] ?? model, model: model, systemName: values["systemName"] ?? "",
                                systemVersion: values["systemVersion"] ?? "", productType: values["productType"] ?? "")
    }

    // MARK: Values

    func date(_ v: FieldValue?, path: String, field: String) throws -> Double {
        guard let v else { throw fail(path, field, "expected an ISO 8601 date such as 2026-01-01T11:14:47.69-08:00, found nothing") }
        guard let s = v.stringValue, let t = ISODate.parse(s) else {
            throw fail(path, field, "expected an ISO 8601 date such as 2026-01-01T11:14:47.69-08:00, found \(Self.show(v))")
        }
        if let p = Plausible.problem(t) { throw fail(path, field, p) }
        return t
    }

    func period(_ v: FieldValue?, path: String) throws -> (Double, Double) {
        guard let o = v?.objectValue else { throw fail(path, "effectivePeriod", "expected effectivePeriod {start, end}, found \(Self.show(v))") }
        let s = try date(o["start"], path: path + ".start", field: "effectivePeriod.start")
        let e = try date(o["end"], path: path + ".end", field: "effectivePeriod.end")
        guard e >= s else { throw fail(path + ".end", "effectivePeriod.end", "expected an end no earlier than the start") }
        return (s, e)
    }

    /// A finite number, or a Quantity's `value`.
    func number(_ v: FieldValue?, path: String, field: String, what: String) throws -> Double {
        let x = v?.number ?? v?.objectValue?["value"]?.number
        guard let x, x.isFinite else { throw fail(path, field, "expected \(what), found \(Self.show(v))") }
        return x
    }

    func integer(_ v: FieldValue?, path: String, field: String, what: String) throws -> Int64 {
        guard case .int(let x)? = v else { throw fail(path, field, "expected \(what), found \(Self.show(v))") }
        return x
    }

    func string(_ v: FieldValue?, path: String, field: String, what: String) throws -> String {
        guard let s = v?.stringValue else { throw fail(path, field, "expected \(what), found \(Self.show(v))") }
        return s
    }

    // MARK: On-wrist (OnWristEvent+FHIR.swift L15–102)

    func onWrist(_ o: [String: FieldValue], path: String) throws -> FHIRRow? {
        guard case .bool(let on)? = o["valueBoolean"] else {
            throw fail(path + ".valueBoolean", "valueBoolean", "expected valueBoolean, true or false (whether the watch is worn), found \(Self.show(o["valueBoolean"]))")
        }
        var cells: [String: FieldValue] = ["onWrist": .bool(on)]
        var sawWrist = false, sawCrown = false
        // Counted only for an observation that is stored (one without a date is skipped, and said so apart).
        var wristUnknown = false, crownUnknown = false
        if let comps = o["component"] {
            guard let items = comps.arrayItems else { throw fail(path + ".component", "component", "expected an array of components") }
            for (k, c) in items.enumerated() {
                let cp = "\(path).component[\(k)]"
                guard let co = c.objectValue else { throw fail(cp, "component", "expected a component object") }
                let code = co["code"]?.objectValue?["coding"]?.arrayItems?.first?.objectValue?["code"]?.stringValue
                let field: String
                switch code {
                case "watchWristLocation": field = "wristLocation"; sawWrist = true
                case "watchCrownOrientation": field = "crownOrientation"; sawCrown = true
                default: unknown("component \(code ?? "without a code")"); continue
                }
                for key in co.keys.sorted() where key != "code" && key != "valueString" { unknown("component \(key)") }
                guard let vs = co["valueString"] else {
                    if field == "wristLocation" { wristUnknown = true } else { crownUnknown = true }
                    continue
                }
                guard let s = vs.stringValue, s == "left" || s == "right" else {
                    throw fail(cp + ".valueString", code ?? field, "expected left or right, found \(Self.show(vs))")
                }
                cells[field] = .int(s == "left" ? 0 : 1)
            }
        }
        if !sawWrist { wristUnknown = true }
        if !sawCrown { crownUnknown = true }
        let write: Double
        if let p = o["effectivePeriod"] {
            let (s, e) = try period(p, path: path + ".effectivePeriod")
            write = e
            // The latest change is the one valueBoolean reports (SpeziSensorKit OnWrist.swift L43–53).
            cells[on ? "onWristDate" : "offWristDate"] = .double(e)
            cells[on ? "offWristDate" : "onWristDate"] = .double(s)
        } else if let inst = o["effectiveInstant"] {
            write = try date(inst, path: path + ".effectiveInstant", field: "effectiveInstant")
            instantOnly += 1
        } else {
            noDate += 1
            return nil
        }
        if wristUnknown { unknownWrist += 1 }
        if crownUnknown { unknownCrown += 1 }
        return FHIRRow(write: write, time: write, cells: cells)
    }

    // MARK: Visits (Visit+FHIR.swift L16–133)

    func visit(_ o: [String: FieldValue], _ exts: inout FHIRExtensions, path: String) throws -> FHIRRow {
        func ext(_ name: String) -> FHIRExtension? { exts.take(MHCFHIR.visitsBase + name).first }
        func required(_ name: String) throws -> FHIRExtension {
            guard let e = ext(name) else { throw fail(path + ".extension", name, "expected the extension \(MHCFHIR.visitsBase)\(name)") }
            return e
        }
        func dateExt(_ name: String) throws -> Double {
            let e = try required(name)
            return try date(e.o["valueDateTime"], path: e.path + ".valueDateTime", field: name)
        }
        let write = try dateExt("sensorKitTimestamp")
        let locationId = ext("locationId")
        let distance = try required("distanceFromHome")
        let d = try number(distance.o["valueQuantity"], path: distance.path + ".valueQuantity", field: "distanceFromHome", what: "a distance in metres")
        let arrivalStart = try dateExt("arrivalRangeStart"), arrivalEnd = try dateExt("arrivalRangeEnd")
        let departureStart = try dateExt("departureRangeStart"), departureEnd = try dateExt("departureRangeEnd")
        if let p = o["effectivePeriod"] { _ = try period(p, path: path + ".effectivePeriod") }
        let cat = try required("locationCategory")
        let catName = try string(cat.o["valueString"], path: cat.path + ".valueString", field: "locationCategory", what: "a location category")
        let type = Sensor.visits.info.field("locationCategory")!.type
        guard let raw = type.rawValue(forProducerName: catName) else {
            throw fail(cat.path + ".valueString", "locationCategory", "expected one of \(type.namedValues.map(\.name).joined(separator: ", ")), found \"\(ImportError.excerpt(catName))\"")
        }
        var identifier = o["valueString"]?.stringValue
        if identifier == nil, let u = locationId?.o["valueUuid"]?.stringValue {
            identifier = (u.hasPrefix("urn:uuid:") ? String(u.dropFirst(9)) : u).uppercased()
        }
        guard let identifier else { throw fail(path + ".valueString", "valueString", "expected the visit's location identifier (valueString)") }
        return FHIRRow(write: write, time: arrivalStart, cells: [
            "distanceFromHome": .double(d), "arrivalEnd": .double(arrivalEnd), "departureStart": .double(departureStart),
            "departureEnd": .double(departureEnd), "locationCategory": .int(raw), "identifier": .string(identifier),
        ])
    }

    // MARK: Device usage (DeviceUsage+FHIR.swift L16–209)

    func deviceUsage(_ o: [String: FieldValue], _ exts: inout FHIRExtensions, path: String) throws -> FHIRRow {
        let (start, end) = try period(o["effectivePeriod"], path: path + ".effectivePeriod")
        func required(_ name: String) throws -> FHIRExtension {
            guard let e = exts.take(MHCFHIR.usageBase + name).first else {
                throw fail(path + ".extension", name, "expected the extension \(MHCFHIR.usageBase)\(name)")
            }
            return e
        }
        let wakes = try required("totalScreenWakes"), unlocks = try required("totalUnlocks")
        var cells: [String: FieldValue] = [
            "duration": .double(end - start),
            "totalScreenWakes": .int(try integer(wakes.o["valueInteger"], path: wakes.path + ".valueInteger", field: "totalScreenWakes", what: "a whole number")),
            "totalUnlocks": .int(try integer(unlocks.o["valueInteger"], path: unlocks.path + ".valueInteger", field: "totalUnlocks", what: "a whole number")),
        ]
        if let e = exts.take(MHCFHIR.usageBase + "totalUnlockDuration").first {
            cells["totalUnlockDuration"] = .double(try number(e.o["valueQuantity"], path: e.path + ".valueQuantity", field: "totalUnlockDuration", what: "a duration in seconds"))
        } else {
            cells["totalUnlockDuration"] = .double(try number(o["valueQuantity"], path: path + ".valueQuantity", field: "totalUnlockDuration", what: "a duration in seconds"))
        }
        if let e = exts.take(MHCFHIR.usageBase + "version").first {
            cells["version"] = .string(try string(e.o["valueString"], path: e.path + ".valueString", field: "version", what: "a version string"))
        }
        let textTypes = SensorCatalogue.textInputSessionTypes, events = SensorCatalogue.notificationEvents
        cells["applicationUsageByCategory"] = try byCategory(exts.take(MHCFHIR.usageBase + "appUsage"), "appUsage") { e, sub in
            let tis = try sub.all("textInputSession").map { s -> FieldValue in
                var ss = try FHIRSub(s, file: file, unknown: unknown)
                let type = try integer(ss.value("type", "valueInteger"), path: ss.path("type"), field: "textInputSession.type", what: "a session type (1–4)")
                guard textTypes.contains(where: { $0.rawValue == type }) else { throw fail(ss.path("type"), "textInputSession.type", "expected a session type \(textTypes.map(\.description).joined(separator: ", ")), found \(type)") }
                let r: FieldValue = .object([
                    ("duration", .double(try number(ss.value("duration", "valueQuantity"), path: ss.path("duration"), field: "textInputSession.duration", what: "a duration in seconds"))),
                    ("sessionType", .int(type)),
                    ("sessionIdentifier", .string(try string(ss.value("identifier", "valueString"), path: ss.path("identifier"), field: "textInputSession.identifier", what: "a string"))),
                ])
                ss.finish()
                return r
            }
            let supplemental = try sub.all("supplementalCategory").map { s -> FieldValue in
                .string(try string(s.o["valueString"], path: s.path, field: "supplementalCategory", what: "a string"))
            }
            return .object([
                ("bundleIdentifier", sub.value("bundleIdentifier", "valueString") ?? .null),
                ("usageTime", .double(try number(sub.value("usageTime", "valueQuantity"), path: sub.path("usageTime"), field: "appUsage.usageTime", what: "a duration in seconds"))),
                ("reportApplicationIdentifier", .string(try string(sub.value("reportApplicationIdentifier", "valueString"), path: sub.path("reportApplicationIdentifier"), field: "appUsage.reportApplicationIdentifier", what: "a string"))),
                ("textInputSessions", .array(tis)),
                ("supplementalCategories", .array(supplemental)),
                ("relativeStartTime", .double(try number(sub.value("relativeStartTime", "valueDecimal"), path: sub.path("relativeStartTime"), field: "appUsage.relativeStartTime", what: "a number of seconds"))),
            ])
        }
        cells["notificationUsageByCategory"] = try byCategory(exts.take(MHCFHIR.usageBase + "notificationUsage"), "notificationUsage") { e, sub in
            let event = try integer(sub.value("event", "valueInteger"), path: sub.path("event"), field: "notificationUsage.event", what: "a notification event (0–16)")
            guard events.contains(where: { $0.rawValue == event }) else {
                throw fail(sub.path("event"), "notificationUsage.event", "expected a notification event (0–16), found \(event)")
            }
            return .object([("bundleIdentifier", sub.value("bundleIdentifier", "valueString") ?? .null), ("event", .int(event))])
        }
        cells["webUsageByCategory"] = try byCategory(exts.take(MHCFHIR.usageBase + "webUsage"), "webUsage") { e, sub in
            .object([("totalUsageTime", .double(try number(sub.value("totalUsageTime", "valueQuantity"), path: sub.path("totalUsageTime"), field: "webUsage.totalUsageTime", what: "a duration in seconds")))])
        }
        return FHIRRow(write: start, time: start, cells: cells)
    }

    /// Repeated usage extensions → `{category: [entry]}` in the catalogue's category order.
    func byCategory(_ list: [FHIRExtension], _ name: String,
                    _ entry: (FHIRExtension, inout FHIRSub) throws -> FieldValue) throws -> FieldValue {
        var by: [String: [FieldValue]] = [:]
        for e in list {
            var sub = try FHIRSub(e, file: file, unknown: unknown)
            let category = try string(sub.value("category", "valueString"), path: sub.path("category"), field: "\(name).category", what: "a category (SRDeviceUsageCategory…)")
            let v = try entry(e, &sub)
            sub.finish()
            guard SensorCatalogue.deviceUsageCategories.contains(category) else {
                unknown("\(name) category \(category)")
                droppedCategories += 1
                continue
            }
            by[category, default: []].append(v)
        }
        return .object(SensorCatalogue.deviceUsageCategories.compactMap { c in by[c].map { (c, .array($0)) } })
    }

    // MARK: ECG (ECG+FHIR.swift L15–112)

    func ecg(_ o: [String: FieldValue], path: String, device: SRDevice) throws {
        let (start, end) = try period(o["effectivePeriod"], path: path + ".effectivePeriod")
        guard let comps = o["component"]?.arrayItems, !comps.isEmpty else {
            throw fail(path + ".component", "component", "expected an array of components, one per ECG batch (valueSampledData)")
        }
        var batches: [(period: Double, values: [FieldValue])] = []
        for (k, c) in comps.enumerated() {
            let cp = "\(path).component[\(k)]"
            guard let co = c.objectValue, let sd = co["valueSampledData"]?.objectValue else {
                throw fail(cp + ".valueSampledData", "valueSampledData", "expected a component with valueSampledData")
            }
            for key in co.keys.sorted() where key != "code" && key != "valueSampledData" { unknown("component \(key)") }
            let sp = cp + ".valueSampledData"
            for key in sd.keys.sorted() where !["origin", "period", "dimensions", "data", "factor"].contains(key) { unknown("valueSampledData \(key)") }
            let origin = sd["origin"]?.objectValue
            if let unit = origin?["code"]?.stringValue ?? origin?["unit"]?.stringValue, unit != "uV" {
                throw fail(sp + ".origin", "origin", "expected voltages in microvolts (uV), found \(unit)")
            }
            let base = origin?["value"]?.number ?? 0
            let factor = sd["factor"]?.number ?? 1
            let ms = try number(sd["period"], path: sp + ".period", field: "period", what: "the milliseconds between samples")
            guard ms > 0 else { throw fail(sp + ".period", "period", "expected a period of more than 0 ms, found \(ms)") }
            if let dim = sd["dimensions"], dim != .int(1) { throw fail(sp + ".dimensions", "dimensions", "expected 1, found \(Self.show(dim))") }
            let text = try string(sd["data"], path: sp + ".data", field: "data", what: "voltages separated by spaces")
            var values: [FieldValue] = []
            for part in text.split(separator: " ") {
                guard let x = Double(part), x.isFinite else {
                    throw fail(sp + ".data", "data", "expected voltages (µV) separated by spaces, found '\(ImportError.excerpt(String(part)))'")
                }
                values.append(.object([("value", .double(base + factor * x))]))
            }
            batches.append((ms, values))
        }
        // The last batch starts at effectivePeriod.end; the others lie back to back before it.
        var dates = [Double](repeating: end, count: batches.count)
        var t = end
        for k in stride(from: batches.count - 2, through: 0, by: -1) {
            t -= Double(batches[k].values.count) * batches[k].period / 1000
            dates[k] = t
        }
        let id = o["id"]?.stringValue
        if let first = dates.first, first < start - 1 {
            if ecgSpanMismatches == 0 {
                let utc = { (t: Double) in LocalTime.wallLabel(t, "%Y-%m-%d %H:%M:%S UTC") }
                firstECGSpanMismatch = "\(id.map { "'\(ImportError.excerpt($0))'" } ?? path): batches rebuilt from \(utc(first)), "
                    + "effectivePeriod from \(utc(start))"
            }
            ecgSpanMismatches += 1
        }
        let r = rowsFor(device)
        for (k, b) in batches.enumerated() {
            var cells: [String: FieldValue] = ["frequency": .double(1000 / b.period), "sessionState": .int(2), "data": .array(b.values)]
            if let id { cells["sessionIdentifier"] = .string(id) }
            r.add(FHIRRow(write: end, time: dates[k], cells: cells))
        }
    }

    // MARK: End of file

    func finish() throws {
        let p = job.participant
        for d in deviceOrder { if let r = rows[d] { try session.append(participant: p, device: d, r.batch()) } }
        for (k, n) in notUnderstood { session.stats.notUnderstood[k, default: 0] += n }
        session.stats.forms["MyHeartCounts FHIR Observations (\(sensor.rawValue))", default: 0] += 1
        let name = URL(fileURLWithPath: file).lastPathComponent
        if noDate > 0 {
            session.stats.warn("\(name): \(noDate) on-wrist observation(s) without effectivePeriod or effectiveInstant skipped: they carry no date (MyHeartCounts uploads no fetch time for on-wrist)")
        }
        if instantOnly > 0 {
            session.stats.note("onWristState: \(instantOnly) observation(s) in \(name) carry one date (effectiveInstant) without saying whether it was onWristDate or offWristDate: it is the write time, both dates stored as missing")
        }
        if sensor == .onWristState, unknownWrist + unknownCrown > 0 {
            session.stats.warn("\(name): wrist location unknown in \(unknownWrist), crown orientation unknown in \(unknownCrown) on-wrist observation(s) (a component without a value): stored as missing")
        }
        if ecgSpanMismatches > 0 {
            session.stats.warn("\(name): \(ecgSpanMismatches) ECG observation(s) holding more samples than their effectivePeriod spans (the first: \(firstECGSpanMismatch)): "
                + "their batch dates, rebuilt back to back before effectivePeriod.end, reach before its start; check the upload")
        }
        if noDevice > 0 {
            session.stats.warn("\(name): \(noDevice) observation(s) without the sourceDevice extension: stored under a generic \(sensor.deviceKinds.contains(.watch) ? "Apple Watch" : "iPhone")")
        }
        if droppedCategories > 0 {
            session.stats.warn("\(name): \(droppedCategories) usage entries of a category the catalogue does not know were not stored")
        }
        if sensor == .electrocardiogram {
            session.stats.note("electrocardiogram (MyHeartCounts FHIR): lead, sessionGuidance and each voltage's flags are not uploaded, stored as missing; sessionState is active (only the active session's batches are uploaded); sessionIdentifier is the Observation's id; batch dates are rebuilt back to back before effectivePeriod.end")
        }
        if !zones.isEmpty {
            let row = try Row.fetchOne(session.db, sql: "SELECT timeZone, timeZoneKnown FROM participant WHERE id = ?", arguments: [p])
            let known: Bool = row?["timeZoneKnown"] ?? false
            let zone: String = row?["timeZone"] ?? "UTC"
            let named = zones.sorted().joined(separator: ", ")
            if !known {
                session.stats.note("participant '\(p)': the FHIR uploads name the time zone \(named) (sampleUploadTimeZone); the store keeps \(zone): pass --timezone to set it")
            } else if !zones.contains(zone) {
                session.stats.note("participant '\(p)': the FHIR uploads name the time zone \(named) (sampleUploadTimeZone), the participant's is \(zone)")
            }
        }
    }
}

/// One row: write time, own time, and column values by name (missing when absent).
private struct FHIRRow {
    var write: Double
    var time: Double
    var cells: [String: FieldValue]
}

/// Rows of one stream in the catalogue's columns.
private final class FHIRRows {
    let sensor: Sensor
    let fields: [FieldSchema]
    let columns: [ColumnBuilder]
    var writes: [Double] = []
    var times: [Double] = []

    init(sensor: Sensor) {
        self.sensor = sensor
        fields = sensor.info.columnFields
        columns = fields.map { ColumnBuilder(name: $0.name, kind: $0.type.columnKind) }
    }

    func add(_ row: FHIRRow) {
        writes.append(row.write)
        times.append(row.time)
        for (f, c) in zip(fields, columns) {
            switch (c.kind, row.cells[f.name]) {
            case (.double, let v?) where v.number != nil: c.appendDouble(v.number!)
            case (.int, .int(let x)?): c.appendInt(x)
            case (.bool, .bool(let x)?): c.appendBool(x)
            case (.string, .string(let x)?): c.appendString(x)
            case (.value, let v?) where v != .null: c.appendValue(v)
            default: c.appendMissing()
            }
        }
    }

    func batch() -> SampleBatch {
        SampleBatch(sensor: sensor, writeTimes: writes, times: times, columns: columns.map { $0.take() })
    }
}

/// One extension: its absolute url, its members and its JSON path.
private struct FHIRExtension {
    var url: String
    var o: [String: FieldValue]
    var path: String

    func children(file: String) throws -> [FHIRExtension] {
        try FHIRExtensions.list(o["extension"], path: path + ".extension", file: file)
    }
}

/// An Observation's extensions by url; `take` hands out the ones a mapping reads.
private struct FHIRExtensions {
    var byURL: [String: [FHIRExtension]] = [:]

    init(_ v: FieldValue?, path: String, file: String) throws {
        for e in try Self.list(v, path: path, file: file) { byURL[e.url, default: []].append(e) }
    }

    static func list(_ v: FieldValue?, path: String, file: String) throws -> [FHIRExtension] {
        guard let v else { return [] }
        guard let items = v.arrayItems else { throw ImportError(file: file, jsonPath: path, field: "extension", "expected an array of extensions") }
        return try items.enumerated().map { k, e in
            guard let o = e.objectValue, let url = o["url"]?.stringValue else {
                throw ImportError(file: file, jsonPath: "\(path)[\(k)]", field: "url", "expected an extension object with a url")
            }
            return FHIRExtension(url: url, o: o, path: "\(path)[\(k)]")
        }
    }

    mutating func take(_ url: String) -> [FHIRExtension] { byURL.removeValue(forKey: url) ?? [] }

    /// The urls nobody took.
    var remaining: [String] { byURL.keys.sorted() }
}

/// The sub-extensions of one repeated usage extension (`…/appUsage/usageTime`).
private struct FHIRSub {
    let base: String
    var subs: FHIRExtensions
    let unknown: (String) -> Void

    init(_ e: FHIRExtension, file: String, unknown: @escaping (String) -> Void) throws {
        base = e.url + "/"
        subs = FHIRExtensions()
        self.unknown = unknown
        for c in try e.children(file: file) { subs.byURL[c.url, default: []].append(c) }
    }

    /// The value member `key` of sub-extension `name` (nil when absent or without a value).
    func value(_ name: String, _ key: String) -> FieldValue? { subs.byURL[base + name]?.first?.o[key] }
    func path(_ name: String) -> String { subs.byURL[base + name]?.first.map { $0.path } ?? "(missing \(name))" }
    func all(_ name: String) -> [FHIRExtension] { subs.byURL[base + name] ?? [] }

    /// Counts sub-extensions the mapping does not read.
    mutating func finish() {
        for url in subs.remaining where !url.hasPrefix(base) || url.dropFirst(base.count).contains("/") { unknown(url) }
        let known: Set<String> = ["category", "bundleIdentifier", "relativeStartTime", "usageTime", "reportApplicationIdentifier",
                                  "textInputSession", "supplementalCategory", "event", "totalUsageTime", "identifier", "duration", "type"]
        for url in subs.remaining where url.hasPrefix(base) && !url.dropFirst(base.count).contains("/") {
            if !known.contains(String(url.dropFirst(base.count))) { unknown(url) }
        }
    }
}

extension FHIRExtensions {
    init() {}
}

/// MyHeartCounts' PPG uploads: the producer's binary `.mhcPPG` files (mhc-spec §4;
/// MyHeartCountsShared `PPGSample+BinaryCodable.swift` L15–134): one `Array<PPGSample>`,
/// LEB128 varints without ZigZag, little-endian doubles, Bool-tagged optionals, strings as
/// a varint count and one varint per UTF-8 byte. One row per PPGSample: own time its
/// `startDate`, written at `startDate + nanosecondsSinceStart·1e-9` (the sample's own
/// moment; the file carries no write time).
enum MHCPPG {
    struct Optical: Equatable {
        var emitter: Int64, activePhotodiodeIndexes: [Int64], signalIdentifier: Int64
        var nominalWavelength: Double, effectiveWavelength: Double, samplingFrequency: Double
        var nanosecondsSinceStart: Int64, conditions: [String]
        var noise: (white: Double, pink: Double, background: Double, backgroundOffset: Double)?
        var normalizedReflectance: Double?
        static func == (a: Optical, b: Optical) -> Bool {
            a.emitter == b.emitter && a.activePhotodiodeIndexes == b.activePhotodiodeIndexes && a.signalIdentifier == b.signalIdentifier
                && a.nominalWavelength == b.nominalWavelength && a.effectiveWavelength == b.effectiveWavelength
                && a.samplingFrequency == b.samplingFrequency && a.nanosecondsSinceStart == b.nanosecondsSinceStart
                && a.conditions == b.conditions && a.normalizedReflectance == b.normalizedReflectance
                && a.noise.map { [$0.white, $0.pink, $0.background, $0.backgroundOffset] } == b.noise.map { [$0.white, $0.pink, $0.background, $0.backgroundOffset] }
        }
    }
    struct Accel: Equatable { var nanosecondsSinceStart: Int64, samplingFrequency: Double, x: Double, y: Double, z: Double }
    struct Sample: Equatable {
        var startDate: Double, nanosecondsSinceStart: Int64, temperature: Double?, usage: [String]
        var optical: [Optical], accelerometer: [Accel]
    }

    /// A reader of the binary encoding; errors name the byte offset and the field.
    struct Reader {
        let bytes: [UInt8]
        let file: String
        var at = 0
        var path = "$"

        func fail(_ field: String, _ message: String) -> ImportError {
            ImportError(file: file, jsonPath: path, field: field, "\(message) (at byte \(at) of \(bytes.count))")
        }
        mutating func byte(_ field: String) throws -> UInt8 {
            guard at < bytes.count else { throw fail(field, "the file ends early: expected more bytes (is it cut short?)") }
            defer { at += 1 }
            return bytes[at]
        }
        mutating func varint(_ field: String) throws -> UInt64 {
            var r: UInt64 = 0, shift: UInt64 = 0
            while true {
                let c = try byte(field)
                guard shift < 64 else { throw fail(field, "expected a varint of at most 10 bytes") }
                r |= UInt64(c & 0x7F) << shift
                shift += 7
                if c & 0x80 == 0 { return r }
            }
        }
        mutating func int(_ field: String) throws -> Int64 { Int64(bitPattern: try varint(field)) }
        mutating func count(_ field: String) throws -> Int {
            let n = try varint(field)
            guard n <= UInt64(bytes.count - at) else { throw fail(field, "expected a count of elements that fits the file, found \(n)") }
            return Int(n)
        }
        mutating func double(_ field: String) throws -> Double {
            guard at + 8 <= bytes.count else { throw fail(field, "the file ends early: expected an 8-byte number") }
            var bits: UInt64 = 0
            for k in 0..<8 { bits |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
            at += 8
            return Double(bitPattern: bits)
        }
        mutating func flag(_ field: String) throws -> Bool {
            let b = try byte(field)
            guard b <= 1 else { at -= 1; throw fail(field, "expected an optional's tag 0 or 1, found \(b)") }
            return b == 1
        }
        mutating func string(_ field: String) throws -> String {
            let n = try count(field)
            var u: [UInt8] = []
            u.reserveCapacity(n)
            for _ in 0..<n {
                let v = try varint(field)
                guard v <= 0xFF else { throw fail(field, "expected a UTF-8 byte, found \(v)") }
                u.append(UInt8(v))
            }
            guard let s = String(validating: u, as: UTF8.self) else { throw fail(field, "expected UTF-8 text") }
            return s
        }
        mutating func strings(_ field: String) throws -> [String] { try (0..<count(field)).map { _ in try string(field) } }
    }

    /// Decodes a whole file (no trailing bytes allowed).
    static func decode(_ bytes: [UInt8], file: String) throws -> [Sample] {
        var r = Reader(bytes: bytes, file: file)
        let n = try r.count("samples")
        var out: [Sample] = []
        for i in 0..<n {
            r.path = "$[\(i)]"
            let start = try r.double("startDate")
            let ns = try r.int("nanosecondsSinceStart")
            let temp = try r.flag("temperature") ? try r.double("temperature") : nil
            let usage = try r.strings("usage")
            var optical: [Optical] = []
            for k in 0..<(try r.count("opticalSamples")) {
                r.path = "$[\(i)].opticalSamples[\(k)]"
                let emitter = try r.int("emitter")
                let pds = try (0..<r.count("activePhotodiodeIndexes")).map { _ in try r.int("activePhotodiodeIndexes") }
                let sig = try r.int("signalIdentifier")
                let nominal = try r.double("nominalWavelength"), effective = try r.double("effectiveWavelength")
                let freq = try r.double("samplingFrequency")
                let ons = try r.int("nanosecondsSinceStart")
                let conditions = try r.strings("conditions")
                var noise: (Double, Double, Double, Double)? = nil
                if try r.flag("noiseTerms") {
                    noise = (try r.double("whiteNoise"), try r.double("pinkNoise"), try r.double("backgroundNoise"), try r.double("backgroundNoiseOffset"))
                }
                let refl = try r.flag("normalizedReflectance") ? try r.double("normalizedReflectance") : nil
                optical.append(Optical(emitter: emitter, activePhotodiodeIndexes: pds.sorted(), signalIdentifier: sig, nominalWavelength: nominal,
                                       effectiveWavelength: effective, samplingFrequency: freq, nanosecondsSinceStart: ons,
                                       conditions: conditions, noise: noise, normalizedReflectance: refl))
            }
            r.path = "$[\(i)]"
            var accel: [Accel] = []
            for k in 0..<(try r.count("accelerometerSamples")) {
                r.path = "$[\(i)].accelerometerSamples[\(k)]"
                accel.append(Accel(nanosecondsSinceStart: try r.int("nanosecondsSinceStart"), samplingFrequency: try r.double("samplingFrequency"),
                                   x: try r.double("x"), y: try r.double("y"), z: try r.double("z")))
            }
            out.append(Sample(startDate: start, nanosecondsSinceStart: ns, temperature: temp, usage: usage, optical: optical, accelerometer: accel))
        }
        r.path = "$"
        guard r.at == bytes.count else { throw r.fail("samples", "expected the end of the file after \(n) samples, found \(bytes.count - r.at) more bytes") }
        return out
    }

    /// Apple's raw values (`ForegroundHeartRate`) in the catalogue's spelling (`foregroundHeartRate`); others kept.
    static func catalogueName(_ s: String, _ names: [String]) -> String {
        names.first { $0.caseInsensitiveCompare(s) == .orderedSame } ?? s
    }

    /// The rows of decoded samples (plausible start dates required).
    static func batch(_ samples: [Sample], file: String) throws -> SampleBatch {
        var writes: [Double] = [], times: [Double] = []
        var ns: [Int64] = [], usage: [FieldValue] = [], optical: [FieldValue] = [], accel: [FieldValue] = []
        var temp: [Double] = [], present: [Bool] = []
        for (i, s) in samples.enumerated() {
            if let p = Plausible.problem(s.startDate) { throw ImportError(file: file, jsonPath: "$[\(i)]", field: "startDate", p) }
            times.append(s.startDate)
            writes.append(s.startDate + Double(s.nanosecondsSinceStart) * 1e-9)
            ns.append(s.nanosecondsSinceStart)
            usage.append(.array(s.usage.map { .string(catalogueName($0, SensorCatalogue.ppgUsages)) }))
            optical.append(.array(s.optical.map { o in
                let opt = { (x: Double?) in x.map(FieldValue.double) ?? .null }
                return .object([
                    ("emitter", .int(o.emitter)), ("activePhotodiodeIndexes", .array(o.activePhotodiodeIndexes.map(FieldValue.int))),
                    ("signalIdentifier", .int(o.signalIdentifier)), ("nominalWavelength", .double(o.nominalWavelength)),
                    ("effectiveWavelength", .double(o.effectiveWavelength)), ("samplingFrequency", .double(o.samplingFrequency)),
                    ("nanosecondsSinceStart", .int(o.nanosecondsSinceStart)), ("normalizedReflectance", opt(o.normalizedReflectance)),
                    ("whiteNoise", opt(o.noise?.white)), ("pinkNoise", opt(o.noise?.pink)), ("backgroundNoise", opt(o.noise?.background)),
                    ("backgroundNoiseOffset", opt(o.noise?.backgroundOffset)),
                    ("conditions", .array(o.conditions.map { .string(catalogueName($0, SensorCatalogue.ppgOpticalConditions)) })),
                ])
            }))
            accel.append(.array(s.accelerometer.map { a in
                .object([("nanosecondsSinceStart", .int(a.nanosecondsSinceStart)), ("samplingFrequency", .double(a.samplingFrequency)),
                         ("x", .double(a.x)), ("y", .double(a.y)), ("z", .double(a.z))])
            }))
            temp.append(s.temperature ?? .nan)
            present.append(s.temperature != nil)
        }
        let columns: [SensorKitModel.Column] = Sensor.photoplethysmogram.info.columnFields.map { f in
            switch f.name {
            case "nanosecondsSinceStart": Column(name: f.name, data: .int(ns))
            case "usage": Column(name: f.name, data: .value(usage))
            case "opticalSamples": Column(name: f.name, data: .value(optical))
            case "accelerometerSamples": Column(name: f.name, data: .value(accel))
            case "temperature": Column(name: f.name, data: .double(temp), present: present.allSatisfy { $0 } ? nil : present)
            default: Column(name: f.name, data: ColumnData.value([FieldValue](repeating: .null, count: samples.count)),
                            present: [Bool](repeating: false, count: samples.count))
            }
        }
        return SampleBatch(sensor: .photoplethysmogram, writeTimes: writes, times: times, columns: columns)
    }

    static func importFile(_ job: MHCTree.PPGJob, session: ImportSession) throws {
        let source = try openByteSource(job.path)
        var bytes: [UInt8] = []
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = try source.read(into: buffer, count: 1 << 16)
            if n == 0 { break }
            bytes += UnsafeRawBufferPointer(start: buffer, count: n)
        }
        let samples = try decode(bytes, file: job.path)
        let b = try batch(samples, file: job.path)
        // Every column of the catalogue's schema has its counterpart in the file; the
        // producer's order of activePhotodiodeIndexes (a Set) is not kept: stored ascending.
        let device = MHCFormat.unnamedDevice(.watch)
        session.stats.note("photoplethysmogram (MyHeartCounts .mhcPPG): the files name no device, stored under a generic 'Apple Watch'; activePhotodiodeIndexes stored ascending (the producer writes a Set)")
        session.stats.forms["MyHeartCounts PPG binary files", default: 0] += 1
        try session.append(participant: job.participant, device: device, b)
    }
}
