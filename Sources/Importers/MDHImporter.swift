import Foundation
import SensorKitModel
import StudyStore

/// MyDataHelps SensorKit JSON export trees (MyDataHelps "SensorKit Export Overview"):
/// `<sample type>/<iPhone|Watch>/<participant id>/<device id>/<*.json | *.json.gz>`, each
/// file a `device` object and a `samples` array of `{timestamp, sample}` items (the
/// sample an object, or an array of elements for array-shaped sensors), with Apple's
/// property names. Read tolerantly: an object or an array of such objects at the top
/// level; fields nobody understood are counted and reported, never a crash.
public enum MDHFormat {
    /// The sensor a sample-type folder (`sensorkit-accelerometer`, `sensorkit-rotation-rate`,
    /// `sensorkit-ambient-light-sensor`, …) stands for.
    public static func sensor(forFolder name: String) -> Sensor? {
        guard name.lowercased().hasPrefix("sensorkit-") else { return nil }
        let key = normalise(String(name.dropFirst("sensorkit-".count)))
        for s in Sensor.allCases {
            let names = [s.rawValue, s.entitlement, s.entitlement.replacingOccurrences(of: "motion-", with: "")]
            if names.contains(where: { normalise($0) == key }) { return s }
        }
        let aliases: [String: Sensor] = [
            "ambientlight": .ambientLightSensor, "als": .ambientLightSensor, "gyroscope": .rotationRate,
            "pedometerdata": .pedometerData, "steps": .pedometerData, "wristdetection": .onWristState,
            "onwriststate": .onWristState, "sirispeechmetrics": .siriSpeechMetrics, "telephonyspeechmetrics": .telephonySpeechMetrics,
            "pressure": .ambientPressure, "heartrate": .heartRate, "ecg": .electrocardiogram, "ppg": .photoplethysmogram,
            "sleep": .sleepSessions, "deviceusagereport": .deviceUsageReport, "messagesusagereport": .messagesUsageReport,
            "phoneusagereport": .phoneUsageReport,
        ]
        return aliases[key]
    }

    static func normalise(_ s: String) -> String { s.lowercased().filter { $0.isLetter || $0.isNumber } }

    static var knownFolders: [String] { Sensor.allCases.map(MDHWriter.folder) }

    // MARK: Walking the tree

    struct FileJob {
        var path: String
        var sensor: Sensor
        var kind: DeviceKind
        var participant: String
        var deviceID: String
    }

    /// Every sample file under `roots`, with what its place in the tree says.
    static func collect(_ roots: [String], participant: String?, stats: inout ImportStats) throws -> [FileJob] {
        let fm = FileManager.default
        var jobs: [FileJob] = []
        func dirs(_ path: String) throws -> [String] {
            try fm.contentsOfDirectory(atPath: path).sorted().filter { !$0.hasPrefix(".") }
        }
        func isDir(_ p: String) -> Bool {
            var d: ObjCBool = false
            return fm.fileExists(atPath: p, isDirectory: &d) && d.boolValue
        }
        func sampleType(_ path: String) throws {
            let name = URL(fileURLWithPath: path).lastPathComponent
            guard let sensor = sensor(forFolder: name) else {
                let suggestion = Suggestions.hint(for: name, among: knownFolders)
                throw ImportError(file: path, "unknown sensor folder '\(name)': expected a SensorKit sample-type folder such as \(knownFolders.prefix(3).joined(separator: ", ")), …\(suggestion)")
            }
            for typeName in try dirs(path) {
                let typePath = path + "/" + typeName
                guard isDir(typePath) else { stats.skip(typePath, "a file where a device-type folder (iPhone, AppleWatch) was expected"); continue }
                let kind: DeviceKind
                switch typeName.lowercased() {
                case "iphone", "phone": kind = .phone
                case "watch", "applewatch", "apple watch": kind = .watch
                default: throw ImportError(file: typePath, "unknown device-type folder '\(typeName)': expected iPhone or AppleWatch (or Watch)")
                }
                for pid in try dirs(typePath) {
                    guard isDir(typePath + "/" + pid) else { stats.skip(typePath + "/" + pid, "a file where a participant folder was expected"); continue }
                    if let only = participant, only != pid { continue }
                    for did in try dirs(typePath + "/" + pid) {
                        let devPath = "\(typePath)/\(pid)/\(did)"
                        guard isDir(devPath) else { stats.skip(devPath, "a file where a device folder was expected"); continue }
                        for f in try dirs(devPath) {
                            let fp = devPath + "/" + f
                            if [".json", ".json.gz", ".json.zstd", ".json.zst"].contains(where: { f.hasSuffix($0) }) {
                                jobs.append(FileJob(path: fp, sensor: sensor, kind: kind, participant: pid, deviceID: did))
                            } else {
                                stats.skip(fp, "not a .json, .json.gz or .json.zstd sample file")
                            }
                        }
                    }
                }
            }
        }
        for root in roots {
            guard isDir(root) else {
                throw ImportError(file: root, "expected a MyDataHelps export folder (holding sensorkit-… folders) or one sensorkit-… folder")
            }
            let name = URL(fileURLWithPath: root).lastPathComponent
            if name.lowercased().hasPrefix("sensorkit-") { try sampleType(root); continue }
            var any = false
            for child in try dirs(root) {
                let p = root + "/" + child
                guard isDir(p) else { stats.skip(p, "a file beside the sample-type folders"); continue }
                if child.lowercased().hasPrefix("sensorkit-") { try sampleType(p); any = true } else {
                    stats.skip(p, "not a sensorkit-… sample-type folder")
                }
            }
            if !any { throw ImportError(file: root, "no sensorkit-… sample-type folder inside (expected <sample type>/<iPhone|Watch>/<participant>/<device>/*.json.gz)") }
        }
        return jobs
    }

    // MARK: Reading files

    /// Imports the files in order, each on two threads (`MDHPipeline`); the open streams are
    /// written out whenever the participant or device changes.
    /// `readAhead`: how many files are opened (and decompressing) ahead of the one read.
    static func importFiles(_ jobs: [FileJob], session: ImportSession, progress: ImportProgress?,
                            readAhead: ReadAhead = .forThisMachine) throws {
        var missing: [MissingField: Int] = [:]
        var lastKey: (String, String) = ("", "")
        let sources = SourcesAhead(jobs.map(\.path), limit: readAhead)
        for (i, job) in jobs.enumerated() {
            if (job.participant, job.deviceID) != lastKey {
                try session.flushAll()
                lastKey = (job.participant, job.deviceID)
            }
            progress?.beginFile(job.path)
            session.stats.files += 1
            let source = try sources.open(i)
            let notes = try MDHPipeline.run(job, session: session, progress: progress, source: source)
            for (k, n) in notes.notUnderstood { session.stats.notUnderstood[k, default: 0] += n }
            for w in notes.warnings { session.stats.warn(w) }
            for (k, n) in notes.missing { missing[k, default: 0] += n }
            if let unit = notes.timestampUnit { session.stats.forms["MyDataHelps item timestamps in \(unit.rawValue) since 1970", default: 0] += 1 }
            if notes.byteOrderMark { session.stats.forms[ByteWindow.byteOrderMarkForm, default: 0] += 1 }
            for form in notes.forms { session.stats.forms[form, default: 0] += 1 }
        }
        for (k, n) in missing.sorted(by: { $0.key.label < $1.key.label }) {
            if k.timedByItem {
                session.stats.note("\(k.label): absent in \(n) sample(s); timed by their item's timestamp (the producers' rule: the sample's date, else the fetch result's time)")
            } else {
                session.stats.warn("\(k.label): missing in \(n) sample(s), stored as missing")
            }
        }
    }

    /// A field missing in samples ("heartRate date"); `timedByItem`: the sample's optional
    /// time, so the sample was timed by its item's timestamp (not stored as missing).
    struct MissingField: Hashable, Sendable {
        var label: String
        var timedByItem: Bool
    }

    /// The kind of device a file's `device` object describes by its own fields (a watch when
    /// its model, systemName or productType says watch or watchOS; a phone when they say
    /// iPhone or iOS); nil when they say neither, or both.
    static func describedKind(_ o: [String: FieldValue]) -> DeviceKind? {
        let words = ["model", "systemName", "productType"].compactMap { o[$0]?.stringValue?.lowercased() }
        let watch = words.contains { $0.contains("watch") }
        let phone = words.contains { $0.contains("iphone") || $0 == "ios" }
        return watch == phone ? nil : (watch ? .watch : .phone)
    }

    /// A warning when the `device` object of the file of `job` describes another kind of
    /// device than its device-type folder (`iPhone/`, `AppleWatch/`) says: the folder decides
    /// what it is stored as (the export's tree is how MyDataHelps sorts devices), and the
    /// disagreement is named. Nil when they agree or the object does not say.
    static func kindMismatch(_ v: FieldValue, job: FileJob) -> String? {
        guard let o = v.objectValue, let described = describedKind(o), described != job.kind else { return nil }
        let fields = ["model", "systemName", "productType"].compactMap { k in o[k]?.stringValue.map { "\(k) '\(ImportError.excerpt($0))'" } }
        let folder = URL(fileURLWithPath: job.path).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().lastPathComponent
        return "\(job.path): the device object describes a \(described.rawValue) (\(fields.joined(separator: ", "))), but the file is in the "
            + "device-type folder '\(folder)' (a \(job.kind.rawValue)): stored as the folder says, a \(job.kind.rawValue) with the object's fields"
    }

    /// The keys of a file's `device` object that are not SRDevice's (`serial`): the summary
    /// names them as not understood.
    static func unknownDeviceKeys(_ v: FieldValue) -> [String] {
        let known: Set<String> = ["name", "model", "systemName", "systemVersion", "productType"]
        return (v.objectValue?.keys).map { $0.filter { !known.contains($0) }.sorted() } ?? []
    }

    static func deviceFrom(_ v: FieldValue, job: FileJob, reader: JSONReader) throws -> SRDevice {
        guard let o = v.objectValue else { throw reader.error("expected the device as an object (systemVersion, systemName, model, name)") }
        func s(_ k: String) -> String? { o[k]?.stringValue }
        return SRDevice(name: s("name") ?? job.deviceID, model: s("model") ?? (job.kind == .watch ? "Watch" : "iPhone"),
                        systemName: s("systemName") ?? "", systemVersion: s("systemVersion") ?? "",
                        productType: s("productType") ?? job.deviceID, kind: job.kind)
    }
}

/// Turns one `{timestamp, sample}` item into rows of a sensor's schema, by Apple's property
/// names (`FieldSchema.appleName` paths such as `acceleration.x`).
struct SampleMapper {
    let sensor: Sensor
    let fields: [FieldSchema]
    let paths: [[String]]
    let rowTime: FieldSchema?
    let rowTimePath: [String]
    let knownTop: Set<String>
    /// Every path of the schema and the objects on the way (`chromaticity`, `chromaticity.x`):
    /// a key below a known object that is none of them is reported as not understood.
    let knownPaths: Set<String>
    /// The objects on the way only (`chromaticity`): a field's own value may be an object
    /// (a `{value, unit}` measurement) that `append` reads whole.
    let objectPaths: Set<String>
    /// The file's unit of item timestamps (decided by its first item).
    let itemTimes: MDHItemTimes

    init(sensor: Sensor, itemTimes: MDHItemTimes) {
        self.sensor = sensor
        self.itemTimes = itemTimes
        fields = sensor.info.columnFields
        paths = fields.map { $0.appleName.split(separator: ".").map(String.init) }
        rowTime = sensor.info.rowTimeField
        rowTimePath = rowTime.map { $0.appleName.split(separator: ".").map(String.init) } ?? []
        var top = Set(paths.compactMap(\.first))
        if let f = rowTimePath.first { top.insert(f) }
        knownTop = top
        var known = Set<String>(), objects = Set<String>()
        for path in paths + [rowTimePath] where !path.isEmpty {
            for depth in 1...path.count {
                known.insert(path.prefix(depth).joined(separator: "."))
                if depth < path.count { objects.insert(path.prefix(depth).joined(separator: ".")) }
            }
        }
        // A DateInterval's `duration` (Foundation encodes start and duration) is its end − start: known, not stored twice.
        for o in objects where o.hasSuffix("DateInterval") { known.insert(o + ".duration") }
        knownPaths = known
        objectPaths = objects.subtracting(paths.map { $0.joined(separator: ".") })
    }

    /// Counts the keys inside `o` (the object at schema path `prefix`, itself known) that no
    /// schema path names (`chromaticity.z`), and those inside known objects below it.
    private func countUnknownKeys(in o: [(String, FieldValue)], at prefix: String, into notUnderstood: inout [String: Int]) {
        for (k, v) in o {
            let path = prefix + "." + k
            guard knownPaths.contains(path) else {
                notUnderstood["\(sensor.rawValue) sample: \(ImportError.excerpt(path))", default: 0] += 1
                continue
            }
            if objectPaths.contains(path), case .object(let inner) = v { countUnknownKeys(in: inner, at: path, into: &notUnderstood) }
        }
    }

    /// Adds the rows of `item`; returns how many. Counts fields nobody understood in
    /// `notUnderstood` and missing ones in `missing`, and adds the forms met that the summary
    /// names (`ImportForm`) to `forms`; throws an `ImportError` naming `file`, `line` and the
    /// JSON path of what was not as expected.
    func add(_ item: FieldValue, path: String, file: String, line: Int, into b: StreamBuffer, notUnderstood: inout [String: Int],
             missing: inout [MDHFormat.MissingField: Int], forms: inout Set<String>) throws -> Int {
        do {
            return try addItem(item, path: path, file: file, into: b, notUnderstood: &notUnderstood, missing: &missing, forms: &forms)
        } catch var e as ImportError {
            if e.line == nil { e.line = line }
            throw e
        }
    }

    private func addItem(_ item: FieldValue, path: String, file: String, into b: StreamBuffer, notUnderstood: inout [String: Int],
                         missing: inout [MDHFormat.MissingField: Int], forms: inout Set<String>) throws -> Int {
        guard case .object(let pairs) = item else {
            throw ImportError(file: file, jsonPath: path, "expected a sample item as an object {\"timestamp\": …, \"sample\": …}")
        }
        var writeValue: FieldValue? = nil
        var sample: FieldValue? = nil
        for (k, v) in pairs {
            switch k {
            case "timestamp": writeValue = v
            case "sample": sample = v
            default: notUnderstood["\(sensor.rawValue) item: \(ImportError.excerpt(k))", default: 0] += 1
            }
        }
        guard let wv = writeValue else {
            throw ImportError(file: file, jsonPath: path, field: "timestamp", "expected the fetch result's timestamp (the write time)")
        }
        let w = try itemTimes.seconds(wv, file: file, path: path + ".timestamp")
        guard let sample else {
            throw ImportError(file: file, jsonPath: path, field: "sample", "expected a sample object (or an array of them)")
        }
        switch sample {
        case .array(let elements):
            for (i, e) in elements.enumerated() {
                try addElement(e, write: w, path: "\(path).sample[\(i)]", file: file, into: b, notUnderstood: &notUnderstood, missing: &missing,
                               forms: &forms)
            }
            return elements.count
        default:
            try addElement(sample, write: w, path: path + ".sample", file: file, into: b, notUnderstood: &notUnderstood, missing: &missing,
                           forms: &forms)
            return 1
        }
    }

    private func lookup(_ o: [(String, FieldValue)], _ path: [String]) -> FieldValue? {
        var cur: [(String, FieldValue)] = o
        for (i, key) in path.enumerated() {
            guard let v = cur.first(where: { $0.0 == key })?.1 else { return nil }
            if i == path.count - 1 { return v }
            guard case .object(let next) = v else { return nil }
            cur = next
        }
        return nil
    }

    private func addElement(_ e: FieldValue, write w: Double, path: String, file: String, into b: StreamBuffer,
                            notUnderstood: inout [String: Int], missing: inout [MDHFormat.MissingField: Int], forms: inout Set<String>) throws {
        guard case .object(let o) = e else {
            throw ImportError(file: file, jsonPath: path, "expected a sample object with Apple's property names")
        }
        for (k, v) in o {
            guard knownTop.contains(k) else {
                notUnderstood["\(sensor.rawValue) sample: \(ImportError.excerpt(k))", default: 0] += 1
                continue
            }
            if objectPaths.contains(k), case .object(let inner) = v { countUnknownKeys(in: inner, at: k, into: &notUnderstood) }
        }
        // The sample's own time; without one, the producers' rule for an optional time (heart
        // rate's `date`: SpeziSensorKit HeartRate.swift L26) is the fetch result's timestamp.
        // A sample whose required time is missing is refused: a time is never made up.
        var t = w
        if let rf = rowTime {
            if let v = lookup(o, rowTimePath), v != .null {
                t = try date(v, file: file, path: path + "." + rf.appleName, field: rf.name)
            } else if rf.isOptional {
                missing[MDHFormat.MissingField(label: "\(sensor.rawValue) \(rf.appleName)", timedByItem: true), default: 0] += 1
            } else {
                throw ImportError(file: file, jsonPath: path, field: rf.appleName,
                                  "expected the sample's time '\(rf.appleName)' (\(rf.summary)); a sample without its time cannot be stored")
            }
        }
        b.noteWrite(w)
        b.writeTimes.append(w)
        b.times.append(t)
        for (i, f) in fields.enumerated() {
            let c = b.columns[i]
            guard let v = lookup(o, paths[i]), v != .null else {
                c.appendMissing()
                if !f.isOptional { missing[MDHFormat.MissingField(label: "\(sensor.rawValue) \(f.appleName)", timedByItem: false), default: 0] += 1 }
                continue
            }
            try append(v, to: c, field: f, file: file, path: path + "." + f.appleName, forms: &forms)
        }
    }

    private func append(_ v: FieldValue, to c: ColumnBuilder, field f: FieldSchema, file: String, path: String, forms: inout Set<String>) throws {
        func bad(_ expected: String) -> ImportError {
            ImportError(file: file, jsonPath: path, field: f.name, "expected \(expected), found \(JSONWriter.excerpt(v))")
        }
        switch f.type {
        case .date:
            c.appendDouble(try date(v, file: file, path: path, field: f.name))
        case .double, .duration, .absoluteTime:
            guard let x = measurement(v) else { throw bad("a number") }
            guard x.isFinite else { throw bad("a finite number") }
            c.appendDouble(x)
        case .int:
            guard let x = v.number, x == x.rounded(), abs(x) < 9.2e18 else { throw bad("a whole number") }
            c.appendInt(Int64(x))
        case .enumeration:
            // A raw value must be one of the type's cases (an unknown one would be stored as a lie).
            if let x = v.number {
                guard let raw = Int64(exactly: x), f.type.accepts(raw: raw) else { throw bad("one of \(f.type.allowedRaw)") }
                c.appendInt(raw)
                return
            }
            if let s = v.stringValue, let raw = f.type.rawValue(forProducerName: s) { c.appendInt(raw); return }
            // SpeziSensorKit's text for a raw value it has no name for: SensorKit's own value, named in the summary.
            if let s = v.stringValue, let raw = FieldType.producerUnknownRaw(s) {
                c.appendInt(raw)
                forms.insert(ImportForm.unnamedRawValue(sensor, field: f.name, raw: raw))
                return
            }
            throw bad("one of \(f.type.namedValues.map(\.name).joined(separator: ", ")) in any case, unknown<N> (N a whole number, 0 or more) or a raw value (\(f.type.allowedRaw))")
        case .optionSet:
            if let x = v.number {
                guard let raw = Int64(exactly: x), f.type.accepts(raw: raw) else { throw bad(f.type.allowedRaw) }
                c.appendInt(raw)
                return
            }
            var names: [String] = []
            if let s = v.stringValue { names = s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            else if let a = v.arrayItems { names = a.compactMap(\.stringValue) }
            else { throw bad("option names or a raw value") }
            var raw: Int64 = 0
            for n in names where !n.isEmpty {
                guard let bit = f.type.rawValue(forProducerName: n) else { throw bad("option names \(f.type.namedValues.map(\.name).joined(separator: ", "))") }
                raw |= bit
            }
            c.appendInt(raw)
        case .bool:
            switch v {
            case .bool(let x): c.appendBool(x)
            case .int(let x) where x == 0 || x == 1: c.appendBool(x == 1)
            default: throw bad("true or false")
            }
        case .string:
            switch v {
            case .string(let s): c.appendString(s)
            case .int(let i): c.appendString(String(i))
            default: throw bad("a string")
            }
        case .structured:
            c.appendValue(v)
        }
    }

    /// A number, or a Measurement written as `{value, unit}`.
    private func measurement(_ v: FieldValue) -> Double? {
        if let x = v.number { return x }
        if let o = v.objectValue, let x = o["value"]?.number { return x }
        return nil
    }

    /// A wall-clock date: Unix seconds (plausibility checked) or ISO 8601 text.
    func date(_ v: FieldValue, file: String, path: String, field: String) throws -> Double {
        switch v {
        case .int, .double:
            let t = v.number!
            if let problem = Plausible.problem(t) { throw ImportError(file: file, jsonPath: path, field: field, problem) }
            return t
        case .string(let s):
            guard let t = ISODate.parse(s) else {
                throw ImportError(file: file, jsonPath: path, field: field, "expected a date (seconds since 1970 or ISO 8601 like 2024-11-21T12:00:00.125Z), found \"\(ImportError.excerpt(s))\"")
            }
            if let problem = Plausible.problem(t) { throw ImportError(file: file, jsonPath: path, field: field, problem) }
            return t
        default:
            throw ImportError(file: file, jsonPath: path, field: field, "expected a date (seconds since 1970 or ISO 8601 text)")
        }
    }
}

/// How one MyDataHelps file writes its items' `timestamp` (the fetch result's time): integer
/// milliseconds since 1970 in real exports (a real row: `"timestamp":1699471879000`), seconds
/// in some tools' copies. Decided once per file, by its first item: the reading that falls in
/// the query window its name gives (`2023-11-07T155131-0600_2023-11-08T152527-0600.json.gz`,
/// two days' slack either side), else the one that is a plausible date. Every later item of
/// the file must be in the same unit; ISO 8601 text is read as it is.
final class MDHItemTimes {
    enum Unit: String { case seconds, milliseconds }
    let file: String
    /// The query window of the file's name, Unix seconds; nil when its name holds none.
    let window: (from: Double, to: Double)?
    private(set) var unit: Unit?

    init(file: String) {
        self.file = file
        window = MDHItemTimes.queryWindow(fileName: URL(fileURLWithPath: file).lastPathComponent)
    }

    /// What a timestamp is divided by to give seconds.
    var divisor: Double { unit == .milliseconds ? 1000 : 1 }

    /// The item timestamp `v` in seconds since 1970; decides the file's unit on first use.
    /// Throws naming the item's JSON path when `v` is not a date in the file's unit.
    func seconds(_ v: FieldValue, file: String, path: String) throws -> Double {
        switch v {
        case .int, .double:
            let t = v.number!
            guard let unit else { return try decide(t, path: path) }
            let s = t / divisor
            if Plausible.problem(s) == nil { return s }
            throw ImportError(file: file, jsonPath: path, field: "timestamp",
                              "\(Plausible.format(t)) is not a date in \(unit.rawValue) since 1970, the unit of this file's items (decided by its first item\(windowText)); expected a whole file in one unit")
        case .string(let text):
            guard let t = ISODate.parse(text) else {
                throw ImportError(file: file, jsonPath: path, field: "timestamp",
                                  "expected the fetch result's time (milliseconds or seconds since 1970, or ISO 8601 text), found \"\(ImportError.excerpt(text))\"")
            }
            if let problem = Plausible.problem(t) { throw ImportError(file: file, jsonPath: path, field: "timestamp", problem) }
            return t
        default:
            throw ImportError(file: file, jsonPath: path, field: "timestamp",
                              "expected the fetch result's time (milliseconds or seconds since 1970, or ISO 8601 text)")
        }
    }

    private var windowText: String {
        guard let w = window else { return "" }
        return " and the query window in its name, \(Plausible.format(w.from))–\(Plausible.format(w.to)) s"
    }

    private func decide(_ t: Double, path: String) throws -> Double {
        let readings: [(Unit, Double)] = [(.milliseconds, t / 1000), (.seconds, t)]
        let plausible = readings.filter { Plausible.problem($0.1) == nil }
        let slack = 2 * 86_400.0
        let chosen = window.flatMap { w in plausible.first { $0.1 >= w.from - slack && $0.1 <= w.to + slack } } ?? plausible.first
        guard let (unit, seconds) = chosen else {
            throw ImportError(file: file, jsonPath: path, field: "timestamp",
                              "\(Plausible.format(t)) is a date neither in milliseconds nor in seconds since 1970 (expected 2015–2100)")
        }
        self.unit = unit
        return seconds
    }

    /// The UTC offset (`-0600`) the query window of a MyDataHelps file name is stamped with, or nil.
    static func windowOffset(fileName: String) -> String? {
        guard queryWindow(fileName: fileName) != nil else { return nil }
        return String(decoding: Array(fileName.utf8)[17..<22], as: UTF8.self)
    }

    /// The query window of a MyDataHelps file name: two times `YYYY-MM-DDTHHMMSS±HHMM` joined
    /// by `_` (the extension and anything after the second time ignored). Nil for other names.
    static func queryWindow(fileName: String) -> (from: Double, to: Double)? {
        let parts = fileName.split(separator: "_", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        func time(_ s: Substring) -> Double? {
            // 2023-11-07T155131-0600 → 2023-11-07T15:51:31-06:00
            let u = Array(s.utf8.prefix(22))
            guard u.count == 22, u[10] == UInt8(ascii: "T"), u[17] == UInt8(ascii: "-") || u[17] == UInt8(ascii: "+") else { return nil }
            let c = u.map { Character(UnicodeScalar($0)) }
            let iso = String(c[0..<13]) + ":" + String(c[13..<15]) + ":" + String(c[15..<17]) + String(c[17..<20]) + ":" + String(c[20..<22])
            return ISODate.parse(iso)
        }
        guard let a = time(parts[0]), let b = time(parts[1]), a <= b else { return nil }
        return (a, b)
    }
}

/// ISO 8601 dates (`2024-11-21T12:00:00Z`, `…12:00:00.125+01:00`, space instead of T) → Unix seconds.
enum ISODate {
    static func parse(_ s: String) -> Double? {
        let u = Array(s.utf8)
        func num(_ from: Int, _ n: Int) -> Int? {
            guard from + n <= u.count else { return nil }
            var v = 0
            for i in from..<(from + n) {
                let d = Int(u[i]) - 48
                guard d >= 0 && d <= 9 else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard u.count >= 19, let y = num(0, 4), u[4] == 45, let mo = num(5, 2), u[7] == 45, let d = num(8, 2),
              u[10] == 84 || u[10] == 32, let h = num(11, 2), u[13] == 58, let mi = num(14, 2), u[16] == 58, let se = num(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, se < 61 else { return nil }
        var i = 19
        var frac = 0.0
        if i < u.count && (u[i] == 46 || u[i] == 44) {
            i += 1
            var digits = 0
            var m = 0
            while i < u.count, u[i] >= 48, u[i] <= 57 {
                if digits < 15 { m = m * 10 + Int(u[i] - 48); digits += 1 }
                i += 1
            }
            if digits == 0 { return nil }
            frac = Double(m) / Foundation.pow(10.0, Double(digits))
        }
        var offset = 0
        if i < u.count {
            if u[i] == 90 { i += 1 } else if u[i] == 43 || u[i] == 45 {
                let sign = u[i] == 45 ? -1 : 1
                guard let oh = num(i + 1, 2) else { return nil }
                var j = i + 3
                if j < u.count && u[j] == 58 { j += 1 }
                let om = num(j, 2) ?? 0
                if num(j, 2) != nil { j += 2 }
                offset = sign * (oh * 3600 + om * 60)
                i = j
            } else { return nil }
        }
        guard i == u.count else { return nil }
        // Days from civil (Howard Hinnant).
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let mp = (mo + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return Double(days * 86_400 + h * 3600 + mi * 60 + se - offset) + frac
    }
}
