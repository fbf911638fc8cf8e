import Foundation
import SensorKitModel
import StudyStore
import GRDB

/// The input formats `sensorium import` reads.
public enum ImportFormat: String, Sendable, CaseIterable {
    /// Sensorium's own folder format (docs/native-format.md).
    case native
    /// A MyHeartCounts upload tree (`users/<uid>/SensorKit/…`, `…/liveHealthSamples/…`):
    /// CSV, FHIR Observation and PPG uploads, zstd-compressed or not; participants from the tree.
    case mhc
    /// MyHeartCounts per-sensor CSV files of one participant (`--participant`).
    case mhcCSV = "mhc-csv"
    /// MyDataHelps SensorKit JSON export tree (`.json` / `.json.gz` / `.json.zstd` / `.json.zst`).
    case mdhJSON = "mdh-json"
}

/// One import: what to read and how.
public struct ImportRequest: Sendable {
    public var format: ImportFormat
    /// Files or folders.
    public var sources: [String]
    /// mhc-csv: the participant the files belong to (required). native and mdh-json: import only this participant.
    public var participant: String?
    /// IANA time zone for participants the input does not place (mhc-csv, mdh-json).
    public var timeZone: String?
    /// Draw a progress bar (nil: only when stderr is a terminal).
    public var progressBar: Bool?
    /// How many files are opened (and decompressing) ahead of the one read: this machine's
    /// (`ReadAhead.forThisMachine`) unless set. What is stored does not depend on it.
    package var readAhead: ReadAhead = .forThisMachine

    public init(format: ImportFormat, sources: [String], participant: String? = nil, timeZone: String? = nil,
                progressBar: Bool? = nil) {
        self.format = format
        self.sources = sources
        self.participant = participant
        self.timeZone = timeZone
        self.progressBar = progressBar
    }
}

extension RecordedStore {
    /// Imports `request` in one transaction: everything lands, or nothing does (the error
    /// names the file, line or JSON path, field and what was expected). Exact duplicates
    /// are dropped and counted; importing the same files again changes nothing.
    /// SQLite failures are thrown as `StoreFormatError`s in the user's terms (`userFacing`).
    @discardableResult
    public func importData(_ request: ImportRequest) throws -> ImportStats {
        // The decoders' rings kept from file to file go back to the system with the import.
        defer { ZstdRings.shared.drain() }
        do {
            return try runImport(request)
        } catch let e as DatabaseError {
            throw RecordedStore.userFacing(e, path: path)
        }
    }

    private func runImport(_ request: ImportRequest) throws -> ImportStats {
        if let z = request.timeZone, TimeZone(identifier: z) == nil {
            throw ImportError(file: "--timezone", "unknown time zone '\(z)': expected an IANA name such as Europe/Berlin")
        }
        guard !request.sources.isEmpty else { throw ImportError(file: "(none)", "no input files or folders given") }
        var planning = ImportStats()
        var mhcFiles: [String] = []
        var mdhJobs: [MDHFormat.FileJob] = []
        var mhcPlan = MHCTree.Plan()
        var total: Int64 = 0
        switch request.format {
        case .native:
            for s in request.sources { total += RecordedStore.bytes(under: s) }
        case .mhc:
            mhcPlan = try MHCTree.collect(request.sources, participant: request.participant, stats: &planning)
            if mhcPlan.isEmpty {
                throw ImportError(file: request.sources[0], (request.participant.map { "nothing was imported: no uploads for participant '\($0)'" }
                                  ?? "nothing was imported: no SensorKit uploads found (users/<uid>/SensorKit/<sensor id>/*.csv.zstd, users/<uid>/liveHealthSamples/<sensor id>_*.json.zstd)")
                                  + planning.notReadText)
            }
            for f in mhcPlan.paths { total += RecordedStore.bytes(under: f) }
        case .mhcCSV:
            guard let p = request.participant, !p.isEmpty else {
                throw ImportError(file: request.sources[0], "MyHeartCounts CSV files do not name their participant: pass --participant ID")
            }
            mhcFiles = try RecordedStore.files(request.sources, suffixes: [".csv", ".csv.gz", ".csv.zstd", ".csv.zst"])
            for f in mhcFiles { total += RecordedStore.bytes(under: f) }
        case .mdhJSON:
            mdhJobs = try MDHFormat.collect(request.sources, participant: request.participant, stats: &planning)
            if mdhJobs.isEmpty {
                throw ImportError(file: request.sources[0], request.participant.map { "no files for participant '\($0)'" } ?? "no .json, .json.gz or .json.zstd sample files found")
            }
            for j in mdhJobs { total += RecordedStore.bytes(under: j.path) }
        }
        let progress = ImportProgress(totalBytes: total, enabled: request.progressBar)
        let (_, stats) = try importing(progress: progress) { session in
            for w in planning.warnings { session.stats.warn(w) }
            session.stats.notRead = planning.notRead
            session.stats.bytes = total
            switch request.format {
            case .native:
                for s in request.sources {
                    try NativeFormat.importFolder(s, session: session, participantFilter: request.participant, progress: progress,
                                                  readAhead: request.readAhead)
                }
            case .mhc:
                for p in mhcPlan.participants {
                    try session.addParticipant(RecordedParticipant(id: p, timeZone: request.timeZone ?? "UTC",
                                                                    timeZoneKnown: request.timeZone != nil))
                    let csv = mhcPlan.csv.filter { $0.participant == p }
                    try MHCFormat.importFiles(csv.map(\.path), participant: p,
                                              folderSensors: Dictionary(csv.map { ($0.path, $0.sensor) }, uniquingKeysWith: { a, _ in a }),
                                              session: session, progress: progress, readAhead: request.readAhead)
                    try session.flushAll()
                    for job in mhcPlan.fhir where job.participant == p {
                        progress.beginFile(job.path)
                        session.stats.files += 1
                        try MHCFHIR.importFile(job, session: session)
                    }
                    for job in mhcPlan.ppg where job.participant == p {
                        progress.beginFile(job.path)
                        session.stats.files += 1
                        try MHCPPG.importFile(job, session: session)
                    }
                    try session.flushAll()
                }
                if request.timeZone == nil { session.stats.warn("MyHeartCounts uploads carry no time zone: UTC assumed (use --timezone)") }
            case .mhcCSV:
                let p = request.participant!
                try session.addParticipant(RecordedParticipant(id: p, timeZone: request.timeZone ?? "UTC",
                                                                timeZoneKnown: request.timeZone != nil))
                if request.timeZone == nil { session.stats.warn("participant '\(p)': no time zone given, UTC assumed (use --timezone)") }
                try MHCFormat.importFiles(mhcFiles, participant: p, session: session, progress: progress, readAhead: request.readAhead)
            case .mdhJSON:
                var seen = Set<String>()
                for j in mdhJobs where seen.insert(j.participant).inserted {
                    try session.addParticipant(RecordedParticipant(id: j.participant, timeZone: request.timeZone ?? "UTC",
                                                                    timeZoneKnown: request.timeZone != nil))
                }
                if request.timeZone == nil {
                    // The query windows in the file names carry the exporting phone's UTC offset then: a hint, not a zone.
                    let offsets = Set(mdhJobs.compactMap { MDHItemTimes.windowOffset(fileName: URL(fileURLWithPath: $0.path).lastPathComponent) }).sorted()
                    let hint = offsets.isEmpty ? "" : "; the files' query windows are stamped with UTC offset\(offsets.count == 1 ? "" : "s") "
                        + offsets.joined(separator: ", ") + " (the exporting phone's, then): give the zone that has it, as an IANA name (--timezone America/Chicago)"
                    session.stats.warn("MyDataHelps exports carry no time zone: UTC assumed (use --timezone)" + hint)
                }
                try MDHFormat.importFiles(mdhJobs, session: session, progress: progress, readAhead: request.readAhead)
            }
            // Nothing read is an error (the transaction stores nothing), naming what was skipped.
            let stats = session.stats
            if stats.rowsRead == 0 && (request.format != .native || stats.metadataAdded == 0) {
                throw ImportError(file: request.sources[0], "nothing was imported: the input holds no samples" + stats.notReadText)
            }
        }
        return stats
    }

    /// Files under `sources` (folders walked recursively, sorted) whose names end in one of `suffixes`.
    static func files(_ sources: [String], suffixes: [String]) throws -> [String] {
        let fm = FileManager.default
        var out: [String] = []
        for s in sources {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: s, isDirectory: &isDir) else { throw ImportError(file: s, "no such file or folder") }
            if !isDir.boolValue { out.append(s); continue }
            let found = (fm.enumerator(atPath: s)?.compactMap { $0 as? String } ?? [])
                .filter { f in suffixes.contains { f.hasSuffix($0) } }.sorted()
            if found.isEmpty { throw ImportError(file: s, "no \(suffixes.joined(separator: " or ")) files in this folder") }
            out += found.map { s + "/" + $0 }
        }
        return out
    }

    package static func bytes(under path: String) -> Int64 {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDir) else { return 0 }
        if !isDir.boolValue { return ((try? fm.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0 }
        var total: Int64 = 0
        for f in fm.enumerator(atPath: path)?.compactMap({ $0 as? String }) ?? [] {
            total += ((try? fm.attributesOfItem(atPath: path + "/" + f))?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return total
    }
}

/// The `form:` lines of the summary that more than one importer writes.
enum ImportForm {
    /// An enumeration field written as SpeziSensorKit's `unknown<N>` for a raw value N the
    /// catalogue has no name for (a case newer than it): stored as N, SensorKit's own raw value.
    static func unnamedRawValue(_ sensor: Sensor, field: String, raw: Int64) -> String {
        "\(sensor.rawValue) \(field) unknown<\(raw)>: raw value \(raw), which the catalogue has no name for (stored as \(raw))"
    }
}
