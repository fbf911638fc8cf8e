import Foundation
import SensorKitModel
import StudyStore

/// MyHeartCounts per-sensor CSV (as MyHeartCounts-iOS uploads it, github.com/StanfordBDHG/MyHeartCounts-iOS): one file per upload batch and
/// sensor, a header line, dates as Unix epoch seconds, a trailing `device` column holding
/// the device's description string (wrist temperature: one file per sleep session, no
/// device column).
///
/// MyHeartCounts exports no write times. The importer uses, as the write time of a row:
/// the last sample time of its write batch (rows sharing an `identifier`) for
/// accelerometer and ambient pressure, the end date for pedometer bins, the session's
/// last reading for wrist temperature, and the sample's own time otherwise.
public enum MHCFormat {
    /// The published column lists, in order.
    public static let headers: [(sensor: Sensor, label: String, columns: [String])] = [
        (.accelerometer, "accelerometer", ["timestamp", "identifier", "x", "y", "z", "device"]),
        (.ambientLightSensor, "ambient light", ["timestamp", "lux", "placement", "chromacityX", "chromacityY", "device"]),
        (.ambientPressure, "ambient pressure", ["timestamp", "identifier", "pressure", "temperature", "device"]),
        (.heartRate, "heart rate", ["timestamp", "value", "confidence", "device"]),
        (.pedometerData, "pedometer", ["start", "end", "steps", "distance", "floorsUp", "floorsDown", "currentPace",
                                       "currentCadence", "avgActivePace", "device"]),
        (.wristTemperature, "wrist temperature", ["timestamp", "value", "errorEstimate", "condition"]),
    ]

    /// File-name words that hint at a sensor (used to explain a wrong header).
    static let hints: [(String, Sensor)] = [
        ("accel", .accelerometer), ("light", .ambientLightSensor), ("als", .ambientLightSensor),
        ("pressure", .ambientPressure), ("heart", .heartRate), ("pedometer", .pedometerData), ("step", .pedometerData),
        ("wrist", .wristTemperature), ("temperature", .wristTemperature),
    ]

    /// The catalogue's types of the enumerations MyHeartCounts writes by name.
    static let placementType = Sensor.ambientLightSensor.info.columnFields.first { $0.name == "placement" }!.type
    static let confidenceType = Sensor.heartRate.info.columnFields.first { $0.name == "confidence" }!.type


    /// Which sensor a header belongs to, or a clear error.
    static func classify(_ names: [String], file: String) throws -> Sensor {
        if let h = headers.first(where: { $0.columns == names }) { return h.sensor }
        let lower = URL(fileURLWithPath: file).lastPathComponent.lowercased()
        let hinted = hints.first { lower.contains($0.0) }?.1
        let scored = headers.map { h in (h, zip(h.columns, names).filter { $0 == $1 }.count + Set(h.columns).intersection(names).count) }
        let best = hinted.flatMap { s in headers.first { $0.sensor == s } } ?? scored.max { $0.1 < $1.1 }.flatMap { $0.1 >= 3 ? $0.0 : nil }
        guard let h = best else {
            let all = headers.map { "\($0.label): \($0.columns.joined(separator: ","))" }.joined(separator: "; ")
            throw ImportError(file: file, line: 1, "not a MyHeartCounts SensorKit CSV header (found \(ImportError.excerpt(names.joined(separator: ",")))); expected one of — \(all)")
        }
        let expected = h.columns.joined(separator: ",")
        for (i, want) in h.columns.enumerated() {
            guard i < names.count else {
                throw ImportError(file: file, line: 1, field: want, "wrong header for a MyHeartCounts \(h.label) file: column \(i + 1) '\(want)' is missing (expected header: \(expected))")
            }
            if names[i] != want {
                throw ImportError(file: file, line: 1, field: ImportError.excerpt(names[i]), "wrong header for a MyHeartCounts \(h.label) file: column \(i + 1) is '\(ImportError.excerpt(names[i]))', expected '\(want)' (expected header: \(expected))")
            }
        }
        throw ImportError(file: file, line: 1, field: ImportError.excerpt(names[h.columns.count]),
                          "wrong header for a MyHeartCounts \(h.label) file: unexpected extra column \(h.columns.count + 1) '\(ImportError.excerpt(names[h.columns.count]))' (expected header: \(expected))")
    }

    /// Parses SRDevice's description string (`name: …, model: …, systemName: …,
    /// systemVersion: …, productType: …` in any punctuation); unknown shapes keep the whole
    /// text as the name.
    public static func device(fromDescription text: String) -> SRDevice { parseDevice(text).device }

    /// The keys of the `device` column, in the order MyHeartCounts writes them
    /// (`model=…; name=…; systemName=…; systemVersion=…; productType=…`, SpeziSensorKit
    /// AnchoredFetcher.swift L96–98).
    static let deviceKeys = ["model", "name", "systemName", "systemVersion", "productType"]

    /// `device(fromDescription:)`, and the keys of `deviceKeys` the text does not name (their
    /// fields are empty, the model guessed from the name).
    static func parseDevice(_ text: String) -> (device: SRDevice, unnamed: [String]) {
        var found: [(key: String, keyStart: String.Index, valueStart: String.Index)] = []
        for k in deviceKeys {
            var search = text.startIndex..<text.endIndex
            while let r = text.range(of: k, range: search) {
                search = r.upperBound..<text.endIndex
                // A whole word followed by ':' or '='.
                if r.lowerBound > text.startIndex {
                    let before = text[text.index(before: r.lowerBound)]
                    if before.isLetter || before.isNumber { continue }
                }
                var i = r.upperBound
                while i < text.endIndex && text[i] == " " { i = text.index(after: i) }
                guard i < text.endIndex, text[i] == ":" || text[i] == "=" else { continue }
                i = text.index(after: i)
                found.append((k, r.lowerBound, i))
                break
            }
        }
        var values: [String: String] = [:]
        let sorted = found.sorted { $0.keyStart < $1.keyStart }
        for (n, f) in sorted.enumerated() {
            let end = n + 1 < sorted.count ? sorted[n + 1].keyStart : text.endIndex
            var v = String(text[f.valueStart..<end]).trimmingCharacters(in: .whitespaces)
            while let last = v.last, ",;>)}".contains(last) { v.removeLast(); v = v.trimmingCharacters(in: .whitespaces) }
            if v.hasPrefix("\""), v.hasSuffix("\""), v.count >= 2 { v = String(v.dropFirst().dropLast()) }
            values[f.key] = v
        }
        let name = values["name"] ?? text.trimmingCharacters(in: .whitespaces)
        let model = values["model"] ?? (name.localizedCaseInsensitiveContains("watch") ? "Watch" : "iPhone")
        let device = device(name: name, model: model, systemName: values["systemName"] ?? "", systemVersion: values["systemVersion"] ?? "",
                            productType: values["productType"] ?? "")
        return (device, deviceKeys.filter { values[$0] == nil })
    }

    /// The device of field `i` of the current row of `csv` (a `device` column), its text
    /// checked to be UTF-8, and, when the text does not name every field MyHeartCounts writes,
    /// a warning naming the file and line, the text (an excerpt) and what was made of it
    /// (the caller gives it once per file).
    static func deviceField(_ csv: CSVReader, _ i: Int) throws -> (device: SRDevice, warning: String?) {
        let text = try csv.text(i, column: "device")
        let (device, unnamed) = parseDevice(text)
        guard !unnamed.isEmpty else { return (device, nil) }
        let guessed = unnamed.contains("model") ? ", the model '\(device.model)' guessed from the text" : ""
        let warning = "\(csv.path):\(csv.line): the device column holds '\(ImportError.excerpt(text))', not the form MyHeartCounts writes "
            + "(model=…; name=…; systemName=…; systemVersion=…; productType=…): it names no \(unnamed.joined(separator: ", ")); "
            + "stored as a \(device.kind.rawValue) with \(unnamed.count == 1 ? "that field" : "those fields") empty\(guessed) "
            + "(the file's first such row; later ones not named)"
        return (device, warning)
    }

    /// The device MyHeartCounts describes (SRDevice's fields, as text): a watch when its system
    /// name or model says so, else a phone.
    static func device(name: String, model: String, systemName: String, systemVersion: String, productType: String) -> SRDevice {
        let isWatch = systemName.lowercased().contains("watch") || model.lowercased().contains("watch")
        return SRDevice(name: name, model: model, systemName: systemName, systemVersion: systemVersion,
                        productType: productType, kind: isWatch ? .watch : .phone)
    }

    /// The device of uploads that name none (wrist temperature, PPG, FHIR without
    /// `sourceDevice`): a generic one of the kind, with a warning where it is used.
    static func unnamedDevice(_ kind: DeviceKind) -> SRDevice {
        kind == .watch ? SRDevice(name: "Apple Watch", model: "Watch", systemName: "watchOS", systemVersion: "", productType: "", kind: .watch)
            : SRDevice(name: "iPhone", model: "iPhone", systemName: "iOS", systemVersion: "", productType: "", kind: .phone)
    }

    // MARK: Import

    /// Imports CSV uploads of one participant. `folderSensors`: the sensor an upload tree's
    /// folder names for a file (`SensorKit/<sensor id>/`); its header must be that sensor's.
    /// `readAhead`: how many files are opened (and decompressing) ahead of the one read.
    static func importFiles(_ files: [String], participant: String, folderSensors: [String: Sensor] = [:],
                            session: ImportSession, progress: ImportProgress?, readAhead: ReadAhead = .forThisMachine) throws {
        // Wrist-temperature files name no device: read them last, after the watch is known.
        var classified: [(String, Sensor)] = []
        for f in files {
            // Only the header is read here: a compressed file is decoded on this thread, as
            // far as the header (its import decodes it again, ahead of the parser).
            let csv = CSVReader(path: f, source: try openByteSource(f, readAhead: false))
            guard try csv.nextRecord() else { throw ImportError(file: f, line: 1, "empty file: expected a header line") }
            if let problem = csv.headerProblem { throw ImportError(file: f, "not a MyHeartCounts SensorKit CSV file: \(problem)") }
            if csv.window.byteOrderMarkSkipped { session.stats.forms[ByteWindow.byteOrderMarkForm, default: 0] += 1 }
            let names = (0..<csv.fieldCount).map { csv.string($0).trimmingCharacters(in: .whitespaces) }
            let sensor = try classify(names, file: f)
            if let folder = folderSensors[f], folder != sensor {
                let label = headers.first { $0.sensor == sensor }?.label ?? sensor.rawValue
                throw ImportError(file: f, line: 1, "the folder names \(folder.identifier) (\(folder.rawValue)), but the header is a MyHeartCounts \(label) file's")
            }
            classified.append((f, sensor))
        }
        let ordered = classified.filter { $0.1 != .wristTemperature } + classified.filter { $0.1 == .wristTemperature }
        var lastWatch: SRDevice? = nil
        let sources = SourcesAhead(ordered.map(\.0), limit: readAhead)
        // A batched file's reader starts while the file before it is stored: with small
        // uploads (a piece or two each) reading and storing would otherwise take turns. Its
        // pieces and its error wait for its turn, so what is stored, and when an error stops
        // the import, is as reading one file at a time.
        var started: [Int: Result<MHCBatchedPipeline.Parsing, any Error>] = [:]
        func startReading(_ k: Int) -> Result<MHCBatchedPipeline.Parsing, any Error> {
            if let s = started.removeValue(forKey: k) { return s }
            return Result { MHCBatchedPipeline.start(ordered[k].0, sensor: ordered[k].1, source: try sources.open(k)) }
        }
        defer { for case .success(let parsing) in started.values { parsing.cancel() } }
        for (i, (f, sensor)) in ordered.enumerated() {
            progress?.beginFile(f)
            session.stats.files += 1
            if isBatched(sensor) {
                let parsing = try startReading(i).get()
                if i + 1 < ordered.count, isBatched(ordered[i + 1].1) { started[i + 1] = startReading(i + 1) }
                if let w = try parsing.store(participant: participant, session: session, progress: progress) { lastWatch = w }
                continue
            }
            let source = try sources.open(i)
            if sensor == .wristTemperature {
                try importWristTemperature(f, participant: participant, watch: lastWatch, session: session, progress: progress, source: source)
            } else if let w = try importStream(f, sensor: sensor, participant: participant, session: session, progress: progress, source: source) {
                lastWatch = w
            }
        }
        session.stats.participants.insert(participant)
    }

    /// Sensors read by `MHCBatchedPipeline` (their rows come in write batches).
    static func isBatched(_ sensor: Sensor) -> Bool { sensor == .accelerometer || sensor == .ambientPressure }

    /// Reads one file of an unbatched stream (ambient light, heart rate, pedometer); returns
    /// the last watch seen. Batched streams go through `MHCBatchedPipeline`. `source`: the
    /// file's bytes, when opened already (`SourcesAhead`).
    static func importStream(_ path: String, sensor: Sensor, participant: String, session: ImportSession,
                             progress: ImportProgress?, source: ByteSource? = nil) throws -> SRDevice? {
        let csv = CSVReader(path: path, source: try source ?? openByteSource(path))
        _ = try csv.nextRecord()
        let columns = headers.first { $0.sensor == sensor }!.columns
        let nFields = columns.count
        let deviceField = nFields - 1
        var deviceBytes: [UInt8] = []
        var currentDevice: SRDevice? = nil
        var haveDevice = false
        var lastWatch: SRDevice? = nil
        var buf: StreamBuffer! = nil
        var rowsPending = 0
        /// The forms met that the summary names (`ImportForm`), counted once for the file.
        var forms: Set<String> = []
        /// Whether a device text not in the producer's form was warned of (once per file).
        var warnedDeviceForm = false

        // Column slots in the stream buffer.
        var slot: [Int] = []
        func prepare(_ b: StreamBuffer) {
            slot = columns.map { name -> Int in
                let schemaName: String
                switch (sensor, name) {
                case (_, "chromacityX"): schemaName = "chromaticityX"
                case (_, "chromacityY"): schemaName = "chromaticityY"
                case (.heartRate, "value"): schemaName = "heartRate"
                case (_, "end"): schemaName = "endDate"
                case (_, "steps"): schemaName = "numberOfSteps"
                case (_, "floorsUp"): schemaName = "floorsAscended"
                case (_, "floorsDown"): schemaName = "floorsDescended"
                case (_, "avgActivePace"): schemaName = "averageActivePace"
                default: schemaName = name
                }
                return b.column(schemaName) ?? -1
            }
        }
        func finishPending() throws {
            guard let b = buf else { return }
            try session.rowsAdded(rowsPending, to: b)
            progress?.rows += rowsPending
            rowsPending = 0
        }
        let uptimeSlot: () -> Int? = { buf.column("timestamp") }
        var uptime: Int? = nil

        func fail(_ i: Int, _ expected: String) -> ImportError {
            ImportError(file: path, line: csv.line, field: columns[i], "expected \(expected), found '\(csv.quoted(i))'")
        }
        @inline(__always) func date(_ i: Int) throws -> Double {
            guard let t = NumberParser.double(csv.bytes(i)) else {
                throw fail(i, csv.isEmpty(i) ? "a date in seconds since 1970 (the field is empty)" : "a date in seconds since 1970")
            }
            if !(t >= Plausible.earliest && t <= Plausible.latest) {
                throw ImportError(file: path, line: csv.line, field: columns[i], Plausible.problem(t) ?? "implausible date")
            }
            return t
        }

        while try csv.nextRecord() {
            guard csv.fieldCount == nFields else {
                throw ImportError(file: path, line: csv.line, "expected \(nFields) fields (\(columns.joined(separator: ","))), found \(csv.fieldCount)")
            }
            // Device: resolved only when its text changes.
            let db = csv.bytes(deviceField)
            let sameDevice = haveDevice && db.count == deviceBytes.count
                && deviceBytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, db.baseAddress!, db.count) == 0 }
            if !sameDevice {
                let (d, warning) = try MHCFormat.deviceField(csv, deviceField)
                if let warning, !warnedDeviceForm {
                    session.stats.warn(warning)
                    warnedDeviceForm = true
                }
                if d != currentDevice {
                    try finishPending()
                    buf = try session.buffer(participant: participant, device: d, sensor: sensor)
                    prepare(buf)
                    uptime = uptimeSlot()
                    currentDevice = d
                    haveDevice = true
                    if d.kind == .watch { lastWatch = d }
                }
                deviceBytes = Array(db)
                // The raw field text (with its quotes) lets the reader skip it on later rows.
                if csv.fieldQuoted[deviceField] {
                    csv.expectedTail = [UInt8(ascii: "\"")] + deviceBytes + [UInt8(ascii: "\"")]
                    if deviceBytes.contains(UInt8(ascii: "\"")) { csv.expectedTail = [] }
                } else {
                    csv.expectedTail = deviceBytes
                }
                csv.tailAfter = deviceField
            }
            let b = buf!
            switch sensor {
            case .ambientLightSensor:
                let t = try date(0)
                b.noteWrite(t)
                b.writeTimes.append(t)
                b.times.append(t)
                guard let lux = NumberParser.double(csv.bytes(1)), lux.isFinite, lux >= 0 else { throw fail(1, "a number of lux, 0 or more") }
                b.columns[slot[1]].appendDouble(lux)
                let pb = csv.bytes(2)
                if let raw = NumberParser.int(pb) {
                    guard placementType.accepts(raw: raw) else { throw fail(2, "a placement (\(placementType.allowedRaw))") }
                    b.columns[slot[2]].appendInt(raw)
                } else {
                    let text = try csv.text(2, column: columns[2])
                    if let raw = placementType.rawValue(forProducerName: text) {
                        b.columns[slot[2]].appendInt(raw)
                    } else if let raw = FieldType.producerUnknownRaw(text) {
                        // SpeziSensorKit's text for a raw value it has no name for: SensorKit's own value, named in the summary.
                        b.columns[slot[2]].appendInt(raw)
                        forms.insert(ImportForm.unnamedRawValue(sensor, field: "placement", raw: raw))
                    } else {
                        throw fail(2, "a placement (\(placementType.namedValues.map(\.name).joined(separator: " ")) in any case, or unknown<N> with N a whole number, 0 or more)")
                    }
                }
                for i in 3...4 {
                    guard let v = NumberParser.double(csv.bytes(i)), v.isFinite else { throw fail(i, "a finite number") }
                    b.columns[slot[i]].appendDouble(v)
                }
            case .heartRate:
                let t = try date(0)
                b.noteWrite(t)
                b.writeTimes.append(t)
                b.times.append(t)
                guard let v = NumberParser.double(csv.bytes(1)), v.isFinite, v > 0, v <= 400 else { throw fail(1, "a number of beats per minute, more than 0 and at most 400") }
                b.columns[slot[1]].appendDouble(v)
                if let c = NumberParser.int(csv.bytes(2)), (0...3).contains(c) {
                    b.columns[slot[2]].appendInt(c)
                } else if let c = confidenceType.rawValue(forProducerName: try csv.text(2, column: columns[2])) {
                    b.columns[slot[2]].appendInt(c)
                } else {
                    throw fail(2, "a confidence (0–3 or low, medium, high, highest)")
                }
                if let u = uptime { b.columns[u].appendMissing() }
            case .pedometerData:
                let start = try date(0), end = try date(1)
                b.noteWrite(end)
                b.writeTimes.append(end)
                b.times.append(start)
                b.columns[slot[1]].appendDouble(end)
                guard let steps = NumberParser.int(csv.bytes(2)) else { throw fail(2, "a whole number of steps") }
                b.columns[slot[2]].appendInt(steps)
                for i in 3..<(nFields - 1) {
                    let c = b.columns[slot[i]]
                    if csv.isEmpty(i) { c.appendMissing(); continue }
                    if c.kind == .int {
                        guard let v = NumberParser.int(csv.bytes(i)) else { throw fail(i, "a whole number or nothing") }
                        c.appendInt(v)
                    } else {
                        guard let v = NumberParser.double(csv.bytes(i)), v.isFinite else { throw fail(i, "a finite number or nothing") }
                        c.appendDouble(v)
                    }
                }
            default:
                break
            }
            rowsPending += 1
            if b.count >= b.capacity { try finishPending() }
            if rowsPending & 0xFFFF == 0 { progress?.fileProgress(csv.fileBytesRead) }
        }
        try finishPending()
        progress?.fileProgress(csv.fileBytesRead)
        for form in forms { session.stats.forms[form, default: 0] += 1 }
        return lastWatch
    }

    /// One sleep session: `timestamp, value, errorEstimate, condition` rows → one SRWristTemperatureSession.
    static func importWristTemperature(_ path: String, participant: String, watch: SRDevice?, session: ImportSession,
                                       progress: ImportProgress?, source: ByteSource? = nil) throws {
        let csv = CSVReader(path: path, source: try source ?? openByteSource(path))
        _ = try csv.nextRecord()
        let columns = headers.first { $0.sensor == .wristTemperature }!.columns
        var readings: [FieldValue] = []
        var first = Double.infinity, last = -Double.infinity
        let bits: [String: Int64] = ["offWrist": 1, "onCharger": 2, "inMotion": 4]
        while try csv.nextRecord() {
            guard csv.fieldCount == 4 else {
                throw ImportError(file: path, line: csv.line, "expected 4 fields (\(columns.joined(separator: ","))), found \(csv.fieldCount)")
            }
            guard let t = NumberParser.double(csv.bytes(0)) else {
                throw ImportError(file: path, line: csv.line, field: "timestamp", "expected a date in seconds since 1970, found '\(csv.quoted(0))'")
            }
            if let p = Plausible.problem(t) { throw ImportError(file: path, line: csv.line, field: "timestamp", p) }
            guard let v = NumberParser.double(csv.bytes(1)) else {
                throw ImportError(file: path, line: csv.line, field: "value", "expected a temperature in °C, found '\(csv.quoted(1))'")
            }
            guard let e = NumberParser.double(csv.bytes(2)) else {
                throw ImportError(file: path, line: csv.line, field: "errorEstimate", "expected a number (°C), found '\(csv.quoted(2))'")
            }
            var condition: Int64 = 0
            for part in try csv.text(3, column: "condition").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
                guard let bit = bits[part] else {
                    throw ImportError(file: path, line: csv.line, field: "condition", "expected offWrist, onCharger or inMotion (comma-separated), found '\(ImportError.excerpt(part))'")
                }
                condition |= bit
            }
            readings.append(.object([("timestamp", .double(t)), ("value", .double(v)), ("condition", .int(condition)),
                                     ("errorEstimate", .double(e))]))
            first = min(first, t)
            last = max(last, t)
        }
        progress?.fileProgress(csv.fileBytesRead)
        guard !readings.isEmpty else {
            session.stats.warn("\(path): a wrist-temperature session without readings was skipped")
            return
        }
        var device = watch
        if device == nil {
            device = unnamedDevice(.watch)
            session.stats.warn("wrist temperature: no watch named by the other files, stored under a generic 'Apple Watch'")
        }
        var b = SampleBatch(sensor: .wristTemperature, writeTimes: [last], times: [first], columns: [])
        b.columns = SensorCatalogue.info(.wristTemperature).columnFields.map { f in
            switch f.name {
            case "duration": return Column(name: f.name, data: .double([last - first]))
            case "version": return Column(name: f.name, data: .string([""]), present: [false])
            case "temperatures": return Column(name: f.name, data: .value([.array(readings)]))
            default:
                let c = ColumnBuilder(name: f.name, kind: f.type.columnKind)
                c.appendMissing()
                return c.take()
            }
        }
        try session.append(participant: participant, device: device!, b)
        progress?.rows += 1
    }
}
