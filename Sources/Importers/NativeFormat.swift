import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SensorKitModel
import StudyStore

/// Sensorium's own recorded-study format (docs/native-format.md): a folder with
/// `manifest.json` (participants, time zones, devices, recording intervals, authorization
/// timeline, deletion records, the list of sample files) and one CSV file per
/// (participant, device, sensor) holding `writeTime`, `time` and the sensor's columns.
public enum NativeFormat {
    public static let formatName = "sensorium-native"
    public static let version = 1

    /// What to write besides the samples.
    public struct Study: Sendable {
        public struct Participant: Sendable {
            public var id: String
            public var timeZone: String
            public var recording: [RecordingInterval]
            public var authorization: [AuthorizationChange]
            public var deletions: [DeletionEvent]

            public init(id: String, timeZone: String, recording: [RecordingInterval] = [],
                        authorization: [AuthorizationChange] = [], deletions: [DeletionEvent] = []) {
                self.id = id
                self.timeZone = timeZone
                self.recording = recording
                self.authorization = authorization
                self.deletions = deletions
            }
        }

        /// Write-time span `(start, end]` (Unix seconds) of the samples to write.
        public var start: Double
        public var end: Double
        public var participants: [Participant]
        /// Sensors to write (default: every sensor of the catalogue).
        public var sensors: [Sensor]

        public init(start: Double, end: Double, participants: [Participant], sensors: [Sensor] = Sensor.allCases) {
            self.start = start
            self.end = end
            self.participants = participants
            self.sensors = sensors
        }
    }

    /// Rows written per stream.
    public struct ExportStats: Sendable {
        public var files = 0
        public var rows = 0
    }

    // MARK: Export

    /// Writes `study` with the samples `source` answers, in write-time pieces of at most an
    /// hour, into `directory` (created if needed). Streams without rows get no file. A
    /// recording interval list left empty is written as "recorded over the whole span".
    @discardableResult
    public static func export(_ study: Study, source: any SampleSource, to directory: URL,
                              progress: (@Sendable (String) -> Void)? = nil) throws -> ExportStats {
        let fm = FileManager.default
        try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        var stats = ExportStats()
        var participantsJSON: [FieldValue] = []
        var folders: [String: String] = [:]   // folder (lower-cased) → participant id
        for p in study.participants {
            let folder = safeName(p.id)
            if let other = folders[folder.lowercased()] {
                throw ExportError(message: "participants '\(other)' and '\(p.id)' would share the folder \(directory.appendingPathComponent(folder).path); rename one")
            }
            folders[folder.lowercased()] = p.id
            let devices = source.devices(participant: p.id)
            var deviceIDs: [SRDevice: String] = [:]
            var devicesJSON: [FieldValue] = []
            for d in devices {
                var id = d.kind.rawValue
                var k = 2
                while deviceIDs.values.contains(id) { id = "\(d.kind.rawValue)-\(k)"; k += 1 }
                deviceIDs[d] = id
                devicesJSON.append(.object([
                    ("id", .string(id)), ("kind", .string(d.kind.rawValue)), ("name", .string(d.name)), ("model", .string(d.model)),
                    ("systemName", .string(d.systemName)), ("systemVersion", .string(d.systemVersion)),
                    ("productType", .string(d.productType)),
                ]))
            }
            // Every stream is its own file: they are written on up to one thread per core.
            var jobs: [(device: SRDevice, sensor: Sensor, rel: String)] = []
            for d in devices {
                for sensor in study.sensors where sensor.deviceKinds.contains(d.kind) {
                    jobs.append((d, sensor, "\(folder)/\(deviceIDs[d]!)/\(sensor.rawValue).csv"))
                }
            }
            let streamJobs = jobs
            let written = try inParallel(streamJobs.count) { k in
                let job = streamJobs[k]
                progress?(job.rel)
                return try writeStream(source: source, participant: p.id, device: job.device, sensor: job.sensor,
                                       start: study.start, end: study.end, to: directory.appendingPathComponent(job.rel))
            }
            var streamsJSON: [FieldValue] = []
            var sensorsWritten: [Sensor] = []
            for (job, file) in zip(jobs, written) where file.rows > 0 {
                stats.files += 1
                stats.rows += file.rows
                if !sensorsWritten.contains(job.sensor) { sensorsWritten.append(job.sensor) }
                var entry: [(String, FieldValue)] = [("sensor", .string(job.sensor.rawValue)), ("device", .string(deviceIDs[job.device]!)),
                                                     ("file", .string(job.rel)), ("rows", .int(Int64(file.rows)))]
                if !file.float32.isEmpty { entry.append(("float32", .array(file.float32.map { .string($0) }))) }
                streamsJSON.append(.object(entry))
            }
            let recording = p.recording.isEmpty
                ? sensorsWritten.map { RecordingInterval(sensor: $0, after: study.start, through: study.end) } : p.recording
            func dev(_ d: SRDevice?) -> FieldValue { d.flatMap { deviceIDs[$0] }.map { .string($0) } ?? .null }
            participantsJSON.append(.object([
                ("id", .string(p.id)),
                ("timeZone", .string(p.timeZone)),
                ("devices", .array(devicesJSON)),
                ("recording", .array(recording.map { r in .object([
                    ("sensor", .string(r.sensor.rawValue)), ("device", dev(r.device)), ("after", .double(r.after)),
                    ("through", .double(r.through)), ("stakeholder", .string(r.stakeholder)),
                ]) })),
                ("authorization", .array(p.authorization.map { a in .object([
                    ("sensor", .string(a.sensor.rawValue)), ("at", .double(a.at)), ("status", .string(a.status.name)),
                ]) })),
                ("deletions", .array(p.deletions.map { e in .object([
                    ("sensor", .string(e.sensor.rawValue)), ("device", dev(e.device)), ("after", .double(e.range.after)),
                    ("through", .double(e.range.through)), ("at", .double(e.at)), ("reason", .string(e.reason.name)),
                ]) })),
                ("streams", .array(streamsJSON)),
            ]))
        }
        let manifest = FieldValue.object([
            ("format", .string(formatName)), ("version", .int(Int64(version))),
            ("span", .object([("start", .double(study.start)), ("end", .double(study.end))])),
            ("participants", .array(participantsJSON)),
        ])
        var text = ""
        JSONWriter.write(manifest, into: &text)
        try (text + "\n").write(to: directory.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        return stats
    }

    /// A participant id as one folder name inside the export: letters, digits, `-`, `_` and `.`
    /// kept, the rest `_`, and never `.`-led (so never `.` or `..`) nor empty.
    static func safeName(_ id: String) -> String {
        let kept = String(id.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
        return kept.isEmpty || kept.hasPrefix(".") ? "_" + kept : kept
    }

    /// Whether `path` (a manifest's `file`) stays inside the folder: relative, no `..` part.
    static func staysInside(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains("..")
    }

    /// Runs `body(0..<n)` on up to one thread per core; the results in order, or the first error.
    package static func inParallel<T: Sendable>(_ n: Int, _ body: @Sendable (Int) throws -> T) throws -> [T] {
        let state = ParallelState<T>(n)
        let workers = max(1, min(n, ProcessInfo.processInfo.activeProcessorCount))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                state.lock.lock()
                let k = state.next
                state.next += 1
                let stop = k >= n || state.failure != nil
                state.lock.unlock()
                if stop { return }
                do {
                    let r = try body(k)
                    state.lock.lock()
                    state.results[k] = r
                    state.lock.unlock()
                } catch {
                    state.lock.lock()
                    if state.failure == nil { state.failure = error }
                    state.lock.unlock()
                }
            }
        }
        if let e = state.failure { throw e }
        return state.results.map { $0! }
    }

    /// Work shared by the threads of `inParallel`.
    final class ParallelState<T>: @unchecked Sendable {
        let lock = NSLock()
        var next = 0
        var results: [T?]
        var failure: Error?
        init(_ n: Int) { results = Array(repeating: nil, count: n) }
    }

    /// One stream's file (none when it has no rows): its rows and its `float32` columns.
    ///
    /// A double column whose values in the stream's first batch are all Float32s widened
    /// (CoreMotion's accelerometer and gyroscope) is written as Float32 text (`FileOutput.float32`,
    /// shorter and faster than a double's) and listed in the manifest. When a later value of
    /// such a column is not a Float32, the file is written again with the column as doubles.
    private static func writeStream(source: any SampleSource, participant: String, device: SRDevice, sensor: Sensor,
                                     start: Double, end: Double, to url: URL) throws -> (rows: Int, float32: [String]) {
        var notFloat32 = Set<Int>()
        while true {
            do {
                return try writeStreamOnce(source: source, participant: participant, device: device, sensor: sensor,
                                           start: start, end: end, to: url, notFloat32: notFloat32)
            } catch let e as NotFloat32 {
                notFloat32.insert(e.column)
            }
        }
    }

    /// A value of column `column`, written as Float32 text so far, is not a Float32.
    struct NotFloat32: Error {
        var column: Int
    }

    /// `writeStream`'s one attempt: columns in `notFloat32` are written as doubles.
    private static func writeStreamOnce(source: any SampleSource, participant: String, device: SRDevice, sensor: Sensor,
                                        start: Double, end: Double, to url: URL, notFloat32: Set<Int>) throws -> (rows: Int, float32: [String]) {
        let fields = sensor.info.columnFields
        var out = FileOutput()
        var rows = 0
        var float32 = [Bool](repeating: false, count: fields.count)
        let piece = (sensor.info.cadence.nominalPeriod ?? 60) < 5 ? 3_600.0 : 86_400.0
        var t = start
        while t < end {
            let hi = min(end, t + piece)
            let b = try source.samples(participant: participant, sensor: sensor, device: device, writtenAfter: t, through: hi)
            t = hi
            guard b.count > 0 else { continue }
            if rows == 0 {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try out.open(url.path)
                try out.append("writeTime,time")
                for f in fields { try out.append(","); try out.append(f.name) }
                try out.append("\n")
                float32 = fields.indices.map { !notFloat32.contains($0) && holdsFloat32s(b.column(fields[$0].name)) }
            }
            try writeRows(b, fields: fields, float32: float32, into: &out)
            rows += b.count
        }
        if rows > 0 { try out.close() }
        return (rows, fields.indices.filter { float32[$0] }.map { fields[$0].name })
    }

    /// True when `c` is a double column with a value present and every present value a Float32.
    static func holdsFloat32s(_ c: Column?) -> Bool {
        guard let c, case .double(let v) = c.data else { return false }
        var any = false
        for (i, x) in v.enumerated() where c.present?[i] ?? true {
            guard NumberText.isFloat32(x) else { return false }
            any = true
        }
        return any
    }

    /// The rows of `b` as CSV lines. Numbers (most columns) are formatted from raw buffers
    /// straight into the output; other values through their text. Columns marked in `float32`
    /// are written as Float32 text; throws `NotFloat32` at a value of one that is not a Float32.
    static func writeRows(_ b: SampleBatch, fields: [FieldSchema], float32: [Bool], into out: inout FileOutput) throws {
        let n = b.count
        let cols = fields.map { b.column($0.name) }
        // Numeric columns as bit patterns, column-major; kind 0 double, 1 int, 2 other, 3 absent, 4 Float32.
        let kinds = cols.enumerated().map { k, c -> Int in
            guard let c else { return 3 }
            switch c.data {
            case .double: return float32[k] ? 4 : 0
            case .int, .intRuns: return 1
            default: return 2
            }
        }
        let width = cols.count
        let room = 64 + 48 * width
        let bits = UnsafeMutablePointer<UInt64>.allocate(capacity: max(1, n * width))
        defer { bits.deallocate() }
        for (k, c) in cols.enumerated() {
            switch c?.data {
            case .double(let v)?: v.withUnsafeBytes { UnsafeMutableRawPointer(bits + k * n).copyMemory(from: $0.baseAddress!, byteCount: 8 * n) }
            case .int(let v)?: v.withUnsafeBytes { UnsafeMutableRawPointer(bits + k * n).copyMemory(from: $0.baseAddress!, byteCount: 8 * n) }
            case .intRuns(let v)?: v.forEachRun { rows, x in (bits + k * n + rows.lowerBound).initialize(repeating: UInt64(bitPattern: x), count: rows.count) }
            default: break
            }
        }
        let present = cols.map { $0?.present }
        let anyMissing = present.contains { $0 != nil }
        var writeText = FileOutput.TextCache()
        // Whole numbers repeat down a column (a batch identifier is one per write batch).
        let intText = UnsafeMutablePointer<FileOutput.TextCache>.allocate(capacity: max(width, 1))
        intText.initialize(repeating: FileOutput.TextCache(), count: max(width, 1))
        defer { intText.deallocate() }
        try b.writeTimes.array.withUnsafeBufferPointer { w in
            try b.times.withUnsafeBufferPointer { t in
                for r in 0..<n {
                    try out.reserve(room)
                    out.double(w[r], cache: &writeText)
                    out.byte(UInt8(ascii: ","))
                    if !t[r].isNaN { out.double(t[r]) }
                    for k in 0..<width {
                        out.byte(UInt8(ascii: ","))
                        if anyMissing, let p = present[k], !p[r] { continue }
                        switch kinds[k] {
                        case 4: guard out.float32(Double(bitPattern: bits[k * n + r])) else { throw NotFloat32(column: k) }
                        case 0: out.double(Double(bitPattern: bits[k * n + r]))
                        case 1: out.int(Int64(bitPattern: bits[k * n + r]), cache: &intText[k])
                        case 2:
                            try otherValue(cols[k]!.data, r, into: &out)
                            try out.reserve(room)
                        default: break
                        }
                    }
                    out.byte(UInt8(ascii: "\n"))
                }
            }
        }
    }

    /// A bool, string or nested value as CSV text.
    static func otherValue(_ data: ColumnData, _ r: Int, into out: inout FileOutput) throws {
        switch data {
        case .bool(let v): try out.append(v[r] ? "true" : "false")
        case .string(let v): try out.appendCSV(v[r], alwaysQuoteEmpty: true)
        case .value(let v):
            var s = ""
            JSONWriter.write(v[r], into: &s)
            try out.appendCSV(s, alwaysQuoteEmpty: true)
        case .double(let v): try out.reserve(32); out.double(v[r])
        case .int(let v): try out.reserve(24); out.int(v[r])
        case .intRuns(let v): try out.reserve(24); out.int(v[r])
        }
    }

    // MARK: Import

    /// Imports a native folder (or its manifest.json) into `session`.
    /// `readAhead`: how many stream files are opened (and decompressing) ahead of the one read.
    static func importFolder(_ path: String, session: ImportSession, participantFilter: String?, progress: ImportProgress?,
                             readAhead: ReadAhead = .forThisMachine) throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw ImportError(file: path, "no such file or folder")
        }
        let dir = isDir.boolValue ? URL(fileURLWithPath: path) : URL(fileURLWithPath: path).deletingLastPathComponent()
        let manifestPath = dir.appendingPathComponent("manifest.json").path
        guard FileManager.default.fileExists(atPath: manifestPath) else {
            throw ImportError(file: manifestPath, "missing: a native Sensorium folder holds manifest.json (see docs/native-format.md)")
        }
        let reader = JSONReader(file: manifestPath, source: try FileSource(path: manifestPath))
        let manifest = try reader.value()
        session.stats.files += 1
        func fail(_ jsonPath: String, _ message: String) -> ImportError {
            ImportError(file: manifestPath, jsonPath: jsonPath, message)
        }
        guard case .object(let top) = manifest else { throw fail("$", "expected an object") }
        let topMap = Dictionary(top, uniquingKeysWith: { a, _ in a })
        guard topMap["format"] == .string(formatName) else {
            throw fail("$.format", "expected \"\(formatName)\", found \(topMap["format"].map(describe) ?? "nothing")")
        }
        guard case .int(let v)? = topMap["version"], v == 1 else {
            throw fail("$.version", "expected 1 (this Sensorium reads version 1), found \(topMap["version"].map(describe) ?? "nothing")")
        }
        if case .object(let span)? = topMap["span"] {
            let m = Dictionary(span, uniquingKeysWith: { a, _ in a })
            let s = m["start"]?.number, e = m["end"]?.number
            for (key, x) in [("start", s), ("end", e)] {
                guard let x else { continue }
                guard x.isFinite else { throw fail("$.span.\(key)", "expected a finite number (seconds since 1970), found \(x)") }
                if let problem = Plausible.problem(x) { throw fail("$.span.\(key)", problem) }
            }
            if let s, let e, !(s < e) { throw fail("$.span", "the span must start before it ends (start \(s), end \(e))") }
            if let s { try session.setMeta("spanStart", "\(s)") }
            if let e { try session.setMeta("spanEnd", "\(e)") }
        }
        guard case .array(let people)? = topMap["participants"] else { throw fail("$.participants", "expected an array of participants") }
        var matched = false
        for (pi, pv) in people.enumerated() {
            let pp = "$.participants[\(pi)]"
            guard case .object(let po) = pv else { throw fail(pp, "expected an object") }
            let m = Dictionary(po, uniquingKeysWith: { a, _ in a })
            guard case .string(let id)? = m["id"], !id.isEmpty else { throw fail(pp + ".id", "expected a participant id (a non-empty string)") }
            if let only = participantFilter, only != id { continue }
            matched = true
            guard case .string(let zone)? = m["timeZone"], TimeZone(identifier: zone) != nil else {
                throw fail(pp + ".timeZone", "expected an IANA time zone such as \"Europe/Berlin\", found \(m["timeZone"].map(describe) ?? "nothing")")
            }
            try session.addParticipant(RecordedParticipant(id: id, timeZone: zone))
            var devices: [String: SRDevice] = [:]
            for (di, dv) in (m["devices"]?.arrayItems ?? []).enumerated() {
                let dp = "\(pp).devices[\(di)]"
                guard case .object(let dobj) = dv else { throw fail(dp, "expected an object") }
                let dm = Dictionary(dobj, uniquingKeysWith: { a, _ in a })
                func str(_ k: String) throws -> String {
                    guard case .string(let s)? = dm[k] else { throw fail("\(dp).\(k)", "expected a string") }
                    return s
                }
                guard let kind = DeviceKind(rawValue: try str("kind")) else { throw fail("\(dp).kind", "expected \"phone\" or \"watch\"") }
                let d = SRDevice(name: try str("name"), model: try str("model"), systemName: try str("systemName"),
                                 systemVersion: try str("systemVersion"), productType: try str("productType"), kind: kind)
                devices[try str("id")] = d
                try session.addDevice(participant: id, d)
            }
            func device(_ v: FieldValue?, _ path: String) throws -> SRDevice? {
                switch v {
                case nil, .null?: return nil
                case .string(let s)?:
                    guard let d = devices[s] else { throw fail(path, "unknown device id '\(s)' (devices: \(devices.keys.sorted().joined(separator: ", ")))") }
                    return d
                default: throw fail(path, "expected a device id or null")
                }
            }
            func sensor(_ v: FieldValue?, _ path: String) throws -> Sensor {
                guard case .string(let s)? = v else { throw fail(path, "expected a sensor name") }
                switch SensorCatalogue.sensor(named: s) {
                case .success(let x): return x
                case .failure(let e): throw fail(path, "\(e)")
                }
            }
            func number(_ v: FieldValue?, _ path: String, date: Bool = true) throws -> Double {
                guard let x = v?.number, x.isFinite else { throw fail(path, "expected a finite number (seconds since 1970)") }
                if date, x.isFinite, let problem = Plausible.problem(x) { throw fail(path, problem) }
                return x
            }
            for (i, rv) in (m["recording"]?.arrayItems ?? []).enumerated() {
                let rp = "\(pp).recording[\(i)]"
                guard case .object(let ro) = rv else { throw fail(rp, "expected an object") }
                let rm = Dictionary(ro, uniquingKeysWith: { a, _ in a })
                var stakeholder = "studyApp"
                if case .string(let s)? = rm["stakeholder"] { stakeholder = s }
                let after = try number(rm["after"], rp + ".after"), through = try number(rm["through"], rp + ".through")
                guard after < through else { throw fail(rp, "a recording interval must start before it ends (after \(after), through \(through))") }
                try session.addRecordingInterval(participant: id, RecordingInterval(
                    sensor: try sensor(rm["sensor"], rp + ".sensor"), device: try device(rm["device"], rp + ".device"),
                    after: after, through: through, stakeholder: stakeholder))
            }
            for (i, av) in (m["authorization"]?.arrayItems ?? []).enumerated() {
                let ap = "\(pp).authorization[\(i)]"
                guard case .object(let ao) = av else { throw fail(ap, "expected an object") }
                let am = Dictionary(ao, uniquingKeysWith: { a, _ in a })
                guard case .string(let st)? = am["status"], let status = SRAuthorizationStatus(name: st) else {
                    throw fail(ap + ".status", "expected one of \(SRAuthorizationStatus.allCases.map(\.name).joined(separator: ", "))")
                }
                try session.addAuthorization(participant: id, AuthorizationChange(
                    sensor: try sensor(am["sensor"], ap + ".sensor"), at: try number(am["at"], ap + ".at"), status: status))
            }
            for (i, ev) in (m["deletions"]?.arrayItems ?? []).enumerated() {
                let ep = "\(pp).deletions[\(i)]"
                guard case .object(let eo) = ev else { throw fail(ep, "expected an object") }
                let em = Dictionary(eo, uniquingKeysWith: { a, _ in a })
                guard case .string(let rs)? = em["reason"], let reason = SRDeletionReason(name: rs) else {
                    throw fail(ep + ".reason", "expected one of \(SRDeletionReason.allCases.map(\.name).joined(separator: ", "))")
                }
                try session.addDeletion(participant: id, DeletionEvent(
                    sensor: try sensor(em["sensor"], ep + ".sensor"), device: try device(em["device"], ep + ".device"),
                    range: TimeRange(after: try number(em["after"], ep + ".after", date: false),
                                     through: try number(em["through"], ep + ".through", date: false)),
                    at: try number(em["at"], ep + ".at"), reason: reason))
            }
            // The streams are listed first, so that their files can be opened ahead; a stream
            // the manifest describes wrongly is reported after the streams before it, as when
            // each was imported as soon as it was read.
            var streams: [(path: String, device: SRDevice, sensor: Sensor, float32: Set<String>)] = []
            var listFailure: Error?
            do {
                for (i, sv) in (m["streams"]?.arrayItems ?? []).enumerated() {
                    let sp = "\(pp).streams[\(i)]"
                    guard case .object(let so) = sv else { throw fail(sp, "expected an object") }
                    let sm = Dictionary(so, uniquingKeysWith: { a, _ in a })
                    let s = try sensor(sm["sensor"], sp + ".sensor")
                    guard let d = try device(sm["device"], sp + ".device") else { throw fail(sp + ".device", "expected a device id") }
                    guard s.deviceKinds.contains(d.kind) else {
                        throw fail(sp + ".device", "\(s.rawValue) does not come from a \(d.kind.rawValue) (contract §3.1: \(s.deviceKinds.map(\.rawValue).joined(separator: ", ")))")
                    }
                    guard case .string(let file)? = sm["file"], staysInside(file) else {
                        throw fail(sp + ".file", "expected a file path relative to the folder, without '..'")
                    }
                    var float32 = Set<String>()
                    if let list = sm["float32"] {
                        guard case .array(let names) = list else { throw fail(sp + ".float32", "expected an array of column names") }
                        for (k, nv) in names.enumerated() {
                            guard case .string(let name) = nv, s.info.columnFields.contains(where: { $0.name == name && $0.type.columnKind == .double }) else {
                                let doubles = s.info.columnFields.filter { $0.type.columnKind == .double }.map(\.name)
                                throw fail("\(sp).float32[\(k)]", "expected a number column of \(s.rawValue) (\(doubles.isEmpty ? "it has none" : doubles.joined(separator: ", "))), found \(describe(nv))")
                            }
                            float32.insert(name)
                        }
                    }
                    streams.append((dir.appendingPathComponent(file).path, d, s, float32))
                }
            } catch {
                listFailure = error
            }
            let sources = SourcesAhead(streams.map(\.path), limit: readAhead)
            for (k, stream) in streams.enumerated() {
                try importCSV(stream.path, participant: id, device: stream.device, sensor: stream.sensor, float32: stream.float32,
                              session: session, progress: progress, source: try sources.open(k))
            }
            if let listFailure { throw listFailure }
            try session.flushAll()
        }
        if let only = participantFilter, !matched {
            throw ImportError(file: manifestPath, jsonPath: "$.participants", "no participant '\(only)' (participants: \(people.compactMap { $0.objectValue?["id"]?.stringValue }.joined(separator: ", ")))")
        }
    }

    private static func describe(_ v: FieldValue) -> String {
        JSONWriter.excerpt(v)
    }

    /// One sample file: header `writeTime,time,<columns>`; see docs/native-format.md. Values of
    /// the columns named in `float32` are read as doubles and rounded to Float32s. `source`:
    /// the file opened already (`SourcesAhead`).
    static func importCSV(_ path: String, participant: String, device: SRDevice, sensor: Sensor, float32: Set<String> = [],
                          session: ImportSession, progress: ImportProgress?, source: ByteSource? = nil) throws {
        let csv = CSVReader(path: path, source: try source ?? openByteSource(path))
        progress?.beginFile(path)
        session.stats.files += 1
        guard try csv.nextRecord() else { throw ImportError(file: path, line: 1, "empty file: expected the header line writeTime,time,…") }
        if let problem = csv.headerProblem { throw ImportError(file: path, "not a Sensorium CSV file: \(problem)") }
        let buf = try session.buffer(participant: participant, device: device, sensor: sensor)
        let fields = sensor.info.columnFields
        enum Slot { case write, time, column(Int, FieldSchema) }
        var slots: [Slot] = []
        var seen = Set<String>()
        for i in 0..<csv.fieldCount {
            let name = csv.string(i)
            guard seen.insert(name).inserted else { throw ImportError(file: path, line: 1, field: name, "column named twice in the header") }
            if name == "writeTime" { slots.append(.write); continue }
            if name == "time" { slots.append(.time); continue }
            guard let k = fields.firstIndex(where: { $0.name == name }) else {
                throw ImportError(file: path, line: 1, field: name,
                                  "not a column of \(sensor.rawValue): expected writeTime, time, \(fields.map(\.name).joined(separator: ", "))")
            }
            slots.append(.column(buf.column(name)!, fields[k]))
        }
        guard seen.contains("writeTime") else { throw ImportError(file: path, line: 1, field: "writeTime", "the header has no writeTime column") }
        guard seen.contains("time") else { throw ImportError(file: path, line: 1, field: "time", "the header has no time column") }
        let headerNames = (0..<csv.fieldCount).map { csv.string($0) }
        if NativeNumericPipeline.applies(to: fields) {
            let targets = slots.map { slot -> NativeNumericPipeline.Target in
                switch slot {
                case .write: .writeTime
                case .time: .time
                case .column(let k, let f): .column(k, f)
                }
            }
            let floats = fields.indices.filter { float32.contains(fields[$0].name) }
            try NativeNumericPipeline.run(csv, path: path, names: headerNames, targets: targets, float32: floats, participant: participant,
                                          device: device, sensor: sensor, session: session, progress: progress)
            return
        }
        let absent = buf.columns.indices.filter { ci in !slots.contains { if case .column(ci, _) = $0 { true } else { false } } }
        var rows = 0
        while try csv.nextRecord() {
            guard csv.fieldCount == slots.count else {
                throw ImportError(file: path, line: csv.line, "expected \(slots.count) fields as in the header, found \(csv.fieldCount)")
            }
            var w = 0.0, t = 0.0
            for (i, slot) in slots.enumerated() {
                switch slot {
                case .write:
                    guard let x = NumberParser.double(csv.bytes(i)) else {
                        throw ImportError(file: path, line: csv.line, field: "writeTime", "expected a number (seconds since 1970), found '\(csv.quoted(i))'")
                    }
                    if let problem = Plausible.problem(x) { throw ImportError(file: path, line: csv.line, field: "writeTime", problem) }
                    w = x
                case .time:
                    if csv.isEmpty(i) { t = .nan; continue }
                    guard let x = NumberParser.double(csv.bytes(i)) else {
                        throw ImportError(file: path, line: csv.line, field: "time", "expected a number (seconds since 1970) or nothing, found '\(csv.quoted(i))'")
                    }
                    if x.isFinite, let problem = Plausible.problem(x) { throw ImportError(file: path, line: csv.line, field: "time", problem) }
                    t = x
                case .column(let ci, let f):
                    try parseField(csv, i, into: buf.columns[ci], field: f, path: path, name: headerNames[i], float32: float32.contains(f.name))
                }
            }
            buf.noteWrite(w)
            buf.writeTimes.append(w)
            buf.times.append(t)
            for ci in absent { buf.columns[ci].appendMissing() }
            rows += 1
            if buf.count >= buf.capacity {
                try session.rowsAdded(rows, to: buf)
                progress?.rows += rows
                rows = 0
                progress?.fileProgress(csv.fileBytesRead)
            }
        }
        try session.rowsAdded(rows, to: buf)
        progress?.rows += rows
        progress?.fileProgress(csv.fileBytesRead)
    }

    /// A parsed number field: a double, or a whole number (int, enumeration, option set).
    enum ParsedNumber {
        case double(Double)
        case int(Int64)
    }

    /// Field i of a double or whole-number column: nil when empty (missing). Throws what was
    /// expected (a date field: a plausible date).
    static func numberField(_ csv: CSVReader, _ i: Int, field f: FieldSchema, path: String, name: String) throws -> ParsedNumber? {
        if csv.isEmpty(i) { return nil }
        func bad(_ expected: String) -> ImportError {
            ImportError(file: path, line: csv.line, field: name, "expected \(expected), found '\(csv.quoted(i))'")
        }
        if f.type.columnKind == .double {
            guard let x = NumberParser.double(csv.bytes(i)) else { throw bad("a number") }
            guard x.isFinite else { throw bad("a finite number") }
            if f.type == .date, let problem = Plausible.problem(x) {
                throw ImportError(file: path, line: csv.line, field: name, problem)
            }
            return .double(x)
        }
        if let x = NumberParser.int(csv.bytes(i)) {
            guard f.type.accepts(raw: x) else { throw bad(f.type.allowedRaw) }
            return .int(x)
        }
        if let raw = f.type.rawValue(forName: csv.string(i)) { return .int(raw) }
        let names = f.type.namedValues.map(\.name)
        throw bad(names.isEmpty ? "a whole number" : "a whole number or one of \(names.joined(separator: ", "))")
    }

    /// Field i into column `c`; `float32`: a number is rounded to a Float32 (then widened).
    static func parseField(_ csv: CSVReader, _ i: Int, into c: ColumnBuilder, field f: FieldSchema, path: String, name: String,
                           float32: Bool = false) throws {
        if csv.isEmpty(i) { c.appendMissing(); return }
        func bad(_ expected: String) -> ImportError {
            ImportError(file: path, line: csv.line, field: name, "expected \(expected), found '\(csv.quoted(i))'")
        }
        switch f.type.columnKind {
        case .double, .int:
            switch try numberField(csv, i, field: f, path: path, name: name) {
            case .double(let x)?: c.appendDouble(float32 ? Double(Float(x)) : x)
            case .int(let x)?: c.appendInt(x)
            case nil: c.appendMissing()
            }
        case .bool:
            switch csv.string(i) {
            case "true", "1": c.appendBool(true)
            case "false", "0": c.appendBool(false)
            default: throw bad("true or false")
            }
        case .string:
            c.appendString(try csv.text(i, column: name))
        case .value:
            let text = try csv.text(i, column: name)
            let r = JSONReader(file: path, source: MemorySource(Array(text.utf8)))
            do {
                let v = try r.value()
                guard try r.atEnd() else { throw r.error("unexpected text after the JSON value") }
                c.appendValue(v)
            } catch let e as ImportError {
                throw ImportError(file: path, line: csv.line, field: name, "expected a JSON value: \(e.message) (at \(e.jsonPath ?? "$"))")
            }
        }
    }
}

/// Bytes already in memory.
final class MemorySource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var fileBytesRead: Int64 { Int64(offset) }
    func read(into p: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let n = min(count, bytes.count - offset)
        if n > 0 { bytes.withUnsafeBytes { p.copyMemory(from: $0.baseAddress! + offset, byteCount: n) } }
        offset += n
        return n
    }
}

/// Buffered file writing into a raw buffer: `reserve` room, then `byte`, `double`, `int`.
///
/// Files are written with direct I/O (`O_DIRECT`) where the file system takes it: whole
/// 4 KiB-aligned blocks go from the buffer to the disk without being copied into the page
/// cache, which for a multi-gigabyte export costs about as much CPU as formatting the numbers
/// (and evicts what the cache held). The last partial block is written through the cache
/// (`close`). Where direct I/O is refused (tmpfs, some network file systems), or
/// `directIO` is off, files are written through the cache as usual. The bytes are the same.
package struct FileOutput: ~Copyable {
    private var fd: Int32 = -1
    private var path = ""
    private let capacity = 1 << 20
    /// 4 KiB-aligned (direct I/O needs aligned memory, offsets and lengths).
    private let buffer: UnsafeMutablePointer<UInt8>
    private var count = 0
    /// The open file takes direct I/O: `flush` writes whole blocks and keeps the rest.
    private var direct = false

    /// True while the open file is written with direct I/O (tests).
    package var writesDirectly: Bool { direct }

    /// Direct I/O block: the alignment of the buffer, of every write's length and offset.
    private static let block = 4_096
    /// Off: every file written through the page cache (tests compare both ways).
    @TaskLocal static var directIO = true

    /// Linux's O_DIRECT (Glibc's module map leaves it out: it needs _GNU_SOURCE); 0 where unknown.
    #if os(Linux) && (arch(x86_64) || arch(i386))
    package static let openDirect: Int32 = 0o40000
    #elseif os(Linux) && (arch(arm64) || arch(arm))
    package static let openDirect: Int32 = 0o200000
    #else
    package static let openDirect: Int32 = 0
    #endif

    package init() {
        var p: UnsafeMutableRawPointer?
        precondition(posix_memalign(&p, FileOutput.block, 1 << 20) == 0 && p != nil, "out of memory for a 1 MiB output buffer")
        buffer = p!.bindMemory(to: UInt8.self, capacity: 1 << 20)
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
        free(buffer)
    }

    package mutating func open(_ path: String) throws {
        if fd >= 0 { try close() }
        self.path = path
        direct = false
        count = 0
        if FileOutput.directIO && FileOutput.openDirect != 0 {
            fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | FileOutput.openDirect, 0o644)
            direct = fd >= 0
        }
        if fd < 0 { fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        guard fd >= 0 else { throw ImportError(file: path, "cannot write: \(String(cString: strerror(errno)))") }
    }

    /// Room for `n` more bytes (n ≤ 1 MiB − 4 KiB: direct I/O may keep a partial block), flushing when needed.
    @inline(__always) package mutating func reserve(_ n: Int) throws {
        if count + n > capacity { try flush() }
    }

    /// Call only after `reserve`.
    @inline(__always) package mutating func byte(_ b: UInt8) {
        buffer[count] = b
        count += 1
    }

    /// Shortest round-trip text (`nan`, `inf`, `-inf` for the others) as `Double.description`
    /// writes it; call after `reserve(32)`.
    @inline(__always) package mutating func double(_ d: Double) {
        if let n = NumberText.shortDecimal(d, into: buffer + count) {
            count += n
            return
        }
        text(d.description)
    }

    /// Like `double`, but when `d` is the number `cache` last wrote, its text is copied (write
    /// times: thousands of rows of one write batch share one); call after `reserve(32)`.
    @inline(__always) package mutating func double(_ d: Double, cache: inout TextCache) {
        if d.bitPattern == cache.bits && cache.count > 0 {
            withUnsafeBytes(of: cache.text) { (buffer + count).update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: cache.count) }
            count += cache.count
            return
        }
        let start = count
        double(d)
        let n = count - start
        guard n <= 32 else { cache.count = 0; return }
        cache.bits = d.bitPattern
        cache.count = n
        withUnsafeMutableBytes(of: &cache.text) { $0.baseAddress!.copyMemory(from: buffer + start, byteCount: n) }
    }

    /// Like `int`, but when `v` is the number `cache` last wrote, its text is copied; call
    /// after `reserve(20)`.
    @inline(__always) package mutating func int(_ v: Int64, cache: inout TextCache) {
        if UInt64(bitPattern: v) == cache.bits && cache.count > 0 {
            withUnsafeBytes(of: cache.text) { (buffer + count).update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: cache.count) }
            count += cache.count
            return
        }
        let start = count
        int(v)
        let n = count - start
        cache.bits = UInt64(bitPattern: v)
        cache.count = n
        withUnsafeMutableBytes(of: &cache.text) { $0.baseAddress!.copyMemory(from: buffer + start, byteCount: n) }
    }

    /// The text of the number `FileOutput.double(_:cache:)` or `int(_:cache:)` wrote last
    /// (`count` 0: none).
    package struct TextCache {
        var bits: UInt64 = 0
        var count = 0
        var text: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }

    /// A Float32 widened to a double (`NumberText.isFloat32`) as the shortest text that reads
    /// back to it as a double rounded to a Float32 (`Float.description`'s text); false, nothing
    /// written, for any other number. Call after `reserve(48)`.
    @inline(__always) package mutating func float32(_ d: Double) -> Bool {
        if let n = NumberText.float32(d, into: buffer + count) {
            count += n
            return true
        }
        guard NumberText.isFloat32(d) else { return false }
        // Outside fixed notation (|f| < 1e-4, ≥ 2^25): Float's own text when it reads back
        // through a double, else the double's (exact, so its Float32 is too).
        let start = count
        text(Float(d).description)
        let x = NumberParser.double(UnsafeBufferPointer(start: buffer + start, count: count - start))
        if x.map({ Float($0).bitPattern }) != Float(d).bitPattern {
            count = start
            text(d.description)
        }
        return true
    }

    /// A short text (≤ 40 bytes, room reserved) copied into the buffer.
    @inline(__always) private mutating func text(_ s: String) {
        var s = s
        s.withUTF8 { u in
            (buffer + count).update(from: u.baseAddress!, count: u.count)
            count += u.count
        }
    }

    /// Decimal text; call after `reserve(20)`.
    @inline(__always) package mutating func int(_ v: Int64) {
        var u = v.magnitude
        if v < 0 { byte(UInt8(ascii: "-")) }
        var tmp: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let len = withUnsafeMutableBytes(of: &tmp) { t -> Int in
            var k = 24
            repeat {
                k -= 1
                t[k] = UInt8(48 + u % 10)
                u /= 10
            } while u > 0
            (buffer + count).update(from: t.baseAddress!.assumingMemoryBound(to: UInt8.self) + k, count: 24 - k)
            return 24 - k
        }
        count += len
    }

    package mutating func append(_ s: String) throws {
        var s = s
        try s.withUTF8 { u in try append(bytes: u) }
    }

    package mutating func append(bytes u: UnsafeBufferPointer<UInt8>) throws {
        guard let base = u.baseAddress else { return }
        var done = 0
        while done < u.count {
            if count == capacity { try flush() }
            let k = min(u.count - done, capacity - count)
            (buffer + count).update(from: base + done, count: k)
            count += k
            done += k
        }
    }

    /// A CSV field: quoted when it holds a comma, quote or line break (or is empty and
    /// `alwaysQuoteEmpty`, so that an empty string differs from a missing value).
    package mutating func appendCSV(_ s: String, alwaysQuoteEmpty: Bool) throws {
        if s.isEmpty { if alwaysQuoteEmpty { try append("\"\"") }; return }
        if s.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
            // Quoted, inner quotes doubled (bytes: no Foundation string search per field).
            var q: [UInt8] = [UInt8(ascii: "\"")]
            q.reserveCapacity(s.utf8.count + 8)
            for b in s.utf8 {
                q.append(b)
                if b == UInt8(ascii: "\"") { q.append(b) }
            }
            q.append(UInt8(ascii: "\""))
            try q.withUnsafeBufferPointer { try append(bytes: $0) }
        } else {
            try append(s)
        }
    }

    /// Writes the buffer out; with direct I/O only its whole blocks (the rest moves to the
    /// buffer's start), unless `all`.
    package mutating func flush(all: Bool = false) throws {
        var end = count
        if direct {
            if all {
                try leaveDirectIO()
            } else {
                end = count / FileOutput.block * FileOutput.block
            }
        }
        var done = 0
        while done < end {
            let k = Glibc.write(fd, buffer + done, end - done)
            if k < 0 {
                if errno == EINTR { continue }
                if errno == EINVAL && direct {
                    // Direct I/O refused after all (a file system that takes the flag at open
                    // but not the write): the rest goes through the page cache.
                    try leaveDirectIO()
                    end = count
                    continue
                }
                throw ImportError(file: path, "write failed: \(String(cString: strerror(errno)))")
            }
            done += k
        }
        // Less than a block is left, after at least a block written: the two never overlap.
        if end > 0 && end < count { buffer.update(from: buffer + end, count: count - end) }
        count -= end
    }

    /// Turns direct I/O off for the rest of the file.
    private mutating func leaveDirectIO() throws {
        direct = false
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~FileOutput.openDirect) == 0 else {
            throw ImportError(file: path, "write failed: \(String(cString: strerror(errno)))")
        }
    }

    package mutating func close() throws {
        try flush(all: true)
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}

extension FieldValue {
    var number: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    var arrayItems: [FieldValue]? { if case .array(let a) = self { a } else { nil } }
    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var objectValue: [String: FieldValue]? {
        if case .object(let o) = self { Dictionary(o, uniquingKeysWith: { a, _ in a }) } else { nil }
    }
}

/// An export that cannot be written as asked (names that would share a folder).
public struct ExportError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
