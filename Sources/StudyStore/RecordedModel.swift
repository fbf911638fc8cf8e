import Foundation
import SensorKitModel

/// A participant of a recorded study.
public struct RecordedParticipant: Sendable, Hashable {
    public var id: String
    /// IANA time-zone name of the participant's home.
    public var timeZone: String
    /// False when the data did not say (the importer used a default such as UTC).
    public var timeZoneKnown: Bool

    public init(id: String, timeZone: String, timeZoneKnown: Bool = true) {
        self.id = id
        self.timeZone = timeZone
        self.timeZoneKnown = timeZoneKnown
    }
}

/// A write-time range `(after, through]` (Unix seconds) during which `stakeholder` recorded
/// `sensor` (on `device`, or on every device when nil).
public struct RecordingInterval: Sendable, Hashable {
    public var sensor: Sensor
    public var device: SRDevice?
    public var after: Double
    public var through: Double
    /// Who recorded: `"studyApp"`, `"system"`, another app's bundle id…
    public var stakeholder: String

    public init(sensor: Sensor, device: SRDevice? = nil, after: Double, through: Double, stakeholder: String = "studyApp") {
        self.sensor = sensor
        self.device = device
        self.after = after
        self.through = through
        self.stakeholder = stakeholder
    }
}

/// What an import did.
public struct ImportStats: Sendable, Hashable {
    public var files = 0
    public var bytes: Int64 = 0
    /// Rows read from the input (before duplicate removal).
    public var rowsRead = 0
    /// Rows added to the store.
    public var rowsStored = 0
    /// Exact duplicates inside the input (Apple reports some samples twice), dropped.
    public var duplicatesInInput = 0
    /// Rows already in the store (re-imported files), dropped.
    public var duplicatesAlreadyStored = 0
    public var chunks = 0
    public var participants: Set<String> = []
    /// Metadata records (devices, recording intervals, authorization, deletions) added.
    public var metadataAdded = 0
    /// Input fields the importer did not understand: "file kind: field path" → count.
    public var notUnderstood: [String: Int] = [:]
    /// Things the user should know (defaults taken, fields missing…), each once.
    public var warnings: [String] = []
    /// How the input was written where producers differ ("MyDataHelps item timestamps in
    /// milliseconds", "zstd-compressed") → files.
    public var forms: [String: Int] = [:]
    /// Facts about the data that are not problems (samples timed by a producer's rule), each once.
    public var notes: [String] = []
    /// Files and folders under the sources that were not read, with why (path → reason).
    public var notRead: [String: String] = [:]
    /// The row counts of each stream: participant, sensor and device.
    public var byStream: [StreamLabel: StreamCounts] = [:]

    /// A participant, a sensor and the device its rows came from, as the summary names them
    /// (a device is one participant's: the counts of two participants' phones are never added up).
    public struct StreamLabel: Sendable, Hashable, Comparable {
        public var participant: String
        public var sensor: Sensor
        /// The device's kind, product type (or model) and system ("watch Watch7,2 watchOS 10.4"):
        /// a watch before and after a watchOS update in the middle of a study is two devices.
        public var device: String
        public init(participant: String, sensor: Sensor, device: SRDevice) {
            self.participant = participant
            self.sensor = sensor
            let product = device.productType.isEmpty ? device.model : device.productType
            let system = [device.systemName, device.systemVersion].filter { !$0.isEmpty }.joined(separator: " ")
            self.device = "\(device.kind.rawValue) \(product)" + (system.isEmpty ? "" : " \(system)")
        }
        public static func < (a: StreamLabel, b: StreamLabel) -> Bool {
            (a.participant, a.sensor.rawValue, a.device) < (b.participant, b.sensor.rawValue, b.device)
        }
    }

    /// Rows of one stream: read, stored, the duplicates dropped (as in `ImportStats`) and the
    /// rows refused, by reason.
    public struct StreamCounts: Sendable, Hashable {
        public var rowsRead = 0
        public var rowsStored = 0
        public var duplicatesInInput = 0
        public var duplicatesAlreadyStored = 0
        public var refused: [String: Int] = [:]
        public init() {}
    }

    public init() {}

    public var duplicatesDropped: Int { duplicatesInInput + duplicatesAlreadyStored }

    /// Rows refused (not stored), all streams.
    public var rowsRefused: Int { byStream.values.reduce(0) { $0 + $1.refused.values.reduce(0, +) } }

    /// The counts of each sensor, its devices and participants added up.
    public var bySensor: [Sensor: StreamCounts] {
        var out: [Sensor: StreamCounts] = [:]
        for (label, c) in byStream {
            var t = out[label.sensor, default: .init()]
            t.rowsRead += c.rowsRead
            t.rowsStored += c.rowsStored
            t.duplicatesInInput += c.duplicatesInInput
            t.duplicatesAlreadyStored += c.duplicatesAlreadyStored
            for (k, n) in c.refused { t.refused[k, default: 0] += n }
            out[label.sensor] = t
        }
        return out
    }

    /// "; not read: PATH (why); …" for an error message (the first five), or "".
    package var notReadText: String {
        guard !notRead.isEmpty else { return "" }
        var text = "; not read: " + notRead.sorted { $0.key < $1.key }.prefix(5).map { "\($0.key) (\($0.value))" }.joined(separator: "; ")
        if notRead.count > 5 { text += "; … \(notRead.count - 5) more" }
        return text
    }

    package mutating func warn(_ text: String) { if !warnings.contains(text) { warnings.append(text) } }
    package mutating func note(_ text: String) { if !notes.contains(text) { notes.append(text) } }
    public mutating func skip(_ path: String, _ why: String) { notRead[path] = why }

    /// The summary for the terminal: totals, then per participant, sensor and device the rows
    /// read and stored, duplicates dropped and rows refused with why, then every file not
    /// read with why, the forms met, notes and warnings.
    public func report(seconds: Double? = nil) -> String {
        var lines: [String] = []
        var head = "imported \(files) file(s), \(rowsRead) rows read, \(rowsStored) stored in \(chunks) chunk(s)"
        if let s = seconds, s > 0 { head += String(format: " in %.2f s (%.2f M rows/s)", s, Double(rowsRead) / s / 1e6) }
        lines.append(head)
        lines.append("duplicates dropped: \(duplicatesDropped) (\(duplicatesInInput) exact duplicates in the input, \(duplicatesAlreadyStored) already stored)")
        if rowsRefused > 0 { lines.append("rows refused (not stored): \(rowsRefused)") }
        // A participant id and a device's product type come from the input: quoted as excerpts.
        func stream(_ label: StreamLabel) -> String { "\(label.sensor.rawValue) \(ImportError.excerpt(label.device))" }
        let who = byStream.keys.map { ImportError.excerpt($0.participant).count }.max() ?? 0
        let width = byStream.keys.map { stream($0).count }.max() ?? 0
        for (label, c) in byStream.sorted(by: { $0.key < $1.key }) {
            let name = ImportError.excerpt(label.participant).padding(toLength: who, withPad: " ", startingAt: 0) + "  "
                + stream(label).padding(toLength: width, withPad: " ", startingAt: 0)
            var line = "  \(name)  \(c.rowsRead) read, \(c.rowsStored) stored, duplicates: \(c.duplicatesInInput) in the input, \(c.duplicatesAlreadyStored) already stored"
            let refused = c.refused.values.reduce(0, +)
            if refused > 0 {
                line += ", refused: \(refused) (" + c.refused.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: "; ") + ")"
            }
            lines.append(line)
        }
        if metadataAdded > 0 { lines.append("metadata records added: \(metadataAdded)") }
        for (form, n) in forms.sorted(by: { $0.key < $1.key }) { lines.append("form: \(form): \(n) file(s)") }
        for (path, why) in notRead.sorted(by: { $0.key < $1.key }) { lines.append("not read: \(path): \(why)") }
        for (k, n) in notUnderstood.sorted(by: { $0.key < $1.key }) { lines.append("not understood (kept out): \(k) ×\(n)") }
        for n in notes { lines.append("note: \(n)") }
        for w in warnings { lines.append("warning: \(w)") }
        return lines.joined(separator: "\n")
    }
}

/// Bad input: the file, where in it (line or JSON path), the column or field, and what was expected.
public struct ImportError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var jsonPath: String?
    public var field: String?
    public var message: String

    public init(file: String, line: Int? = nil, jsonPath: String? = nil, field: String? = nil, _ message: String) {
        self.file = file
        self.line = line
        self.jsonPath = jsonPath.map(ImportError.printable)
        self.field = field.map(ImportError.printable)
        self.message = ImportError.printable(message)
    }

    /// How many characters of input text a message quotes at most (`excerpt`).
    package static let excerptLimit = 100

    /// `text` (input quoted by a message: a field, a value, a device's name) as a message
    /// quotes it: whole when it has at most `limit` characters; else its first `limit`
    /// characters, then "… (N bytes)" giving the whole text's UTF-8 length. Every message
    /// that quotes input goes through it, so that no message is megabytes long.
    package static func excerpt(_ text: String, limit: Int = excerptLimit) -> String {
        guard text.utf8.count > limit, text.count > limit else { return text }
        return String(text.prefix(limit)) + "… (\(text.utf8.count) bytes)"
    }

    /// `text` with its control characters (C0, DEL, C1: bytes of a binary file read as text)
    /// written as `\u{1B}` escapes: an error message never prints them to a terminal.
    package static func printable(_ text: String) -> String {
        func isControl(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (u.value >= 0x7F && u.value <= 0x9F) }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            if isControl(u) {
                out.append(contentsOf: "\\u{\(String(u.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(u)
            }
        }
        return String(out)
    }

    public var description: String {
        var where_ = ImportError.printable(file)
        if let line { where_ += ":\(line)" }
        if let jsonPath { where_ += " at \(jsonPath)" }
        if let field { where_ += ", column '\(field)'" }
        return "\(where_): \(message)"
    }
}

/// Plausible wall-clock dates for SensorKit data (Unix seconds): 2015-01-01 … 2100-01-01.
package enum Plausible {
    package static let earliest = 1_420_070_400.0
    package static let latest = 4_102_444_800.0

    /// nil when `t` is a plausible Unix time in seconds; otherwise what is wrong with it.
    package static func problem(_ t: Double) -> String? {
        if t >= earliest && t <= latest { return nil }
        if !t.isFinite { return "expected a date in seconds since 1970, got \(t)" }
        if t / 1000 >= earliest && t / 1000 <= latest {
            return "\(format(t)) looks like milliseconds since 1970 (as seconds it is in the year \(year(t))); expected seconds since 1970 such as \(format((t / 1000).rounded(.down))).\(Int(t.truncatingRemainder(dividingBy: 1000)))"
        }
        if t / 1e6 >= earliest && t / 1e6 <= latest {
            return "\(format(t)) looks like microseconds since 1970; expected seconds since 1970"
        }
        if t + cfAbsoluteTimeIntervalSince1970 >= earliest && t + cfAbsoluteTimeIntervalSince1970 <= latest {
            return "\(format(t)) is an implausible date (\(year(t)) as seconds since 1970); it looks like seconds since 2001-01-01 (CFAbsoluteTime): expected seconds since 1970"
        }
        return "\(format(t)) is an implausible date (year \(year(t)) as seconds since 1970); expected seconds since 1970 between 2015 and 2100"
    }

    package static func year(_ t: Double) -> String {
        guard t.isFinite, abs(t) < 1e15 else { return "far beyond 9999" }
        let y = 1970 + t / 31_556_952
        return String(Int(y.rounded(.down)))
    }

    package static func format(_ t: Double) -> String {
        if t == t.rounded(), abs(t) < 1e17 { return String(Int64(t)) }
        return "\(t)"
    }
}

/// GRDB also exports a `Column`: inside this module the name means the sample column.
package typealias Column = SensorKitModel.Column
