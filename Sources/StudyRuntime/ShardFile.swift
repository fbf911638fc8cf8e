import Foundation
import StudyReport

/// What `run --shard i/n --out DIR` leaves besides the shard's own tables: `DIR/shard.json`,
/// everything `sensorium merge` needs to write exactly what one process running the whole
/// cohort would have written — the participants' printed output, every table with its
/// declaration and typed rows, the findings — and the fingerprint that shows the shards
/// belong to one run.
public struct ShardFile: Codable, Sendable {
    public static let fileName = "shard.json"
    public static let formatName = "sensorium-shard-1"

    public var format = ShardFile.formatName
    /// Digest of `fingerprintParts`.
    public var fingerprint: String
    /// Digest per part (protocol, stdlib and modules, scenario, recording, seed, flags).
    public var fingerprintParts: [String: String]
    public var shard: Int
    public var shardCount: Int
    /// The shard's participants, in order.
    public var participants: [String]
    /// What the participants printed, in order.
    public var output: String
    public var tables: [TableRecord]
    public var findings: [Finding]
    /// The shard's charts, data coverage and run-report facts (for the merged index.html).
    public var charts: [Chart]?
    public var coverage: DataCoverage?
    public var page: RunReportPage.Facts?

    /// One report table as recorded in a shard file.
    public struct TableRecord: Codable, Sendable {
        public var name: String
        public var declaredColumns: [String]?
        public var formats: [String: String]
        public var rows: [[String: Cell]]
    }

    /// A typed report cell (`{"i": 3}`, `{"d": 0.5}`, `{"s": "x"}`, `{"b": true}`, `{}` for null);
    /// doubles keep every bit (NaN and infinities as the strings "nan", "inf", "-inf").
    public struct Cell: Codable, Sendable {
        var i: Int64?
        var d: String?
        var s: String?
        var b: Bool?

        init(_ v: ReportValue) {
            switch v {
            case .null: break
            case .int(let x): i = x
            case .double(let x): d = x.isNaN ? "nan" : x.isInfinite ? (x > 0 ? "inf" : "-inf") : x.description
            case .text(let x): s = x
            case .bool(let x): b = x
            }
        }

        var value: ReportValue {
            if let i { return .int(i) }
            if let d { return .double(d == "nan" ? .nan : d == "inf" ? .infinity : d == "-inf" ? -.infinity : Double(d) ?? .nan) }
            if let s { return .text(s) }
            if let b { return .bool(b) }
            return .null
        }
    }

    /// A shard's file. `fingerprint` is the run's digest and `fingerprintParts` its digest per
    /// part (see `Fingerprint` in `StudyWorlds`, which knows the files a run reads).
    public init(fingerprint: String, fingerprintParts: [String: String], shard: Shard, participants: [String], output: String,
                report: ReportBook, findings: [Finding], page: RunReportPage.Facts? = nil) {
        self.fingerprint = fingerprint
        self.fingerprintParts = fingerprintParts
        self.shard = shard.index
        shardCount = shard.count
        self.participants = participants
        self.output = output
        // The findings table is made anew by the merge from every shard's findings.
        tables = report.tables.filter { findings.isEmpty || $0.name != ReportBook.findingsTable }.map { t in
            TableRecord(name: t.name, declaredColumns: t.declaredColumns, formats: t.formats,
                        rows: t.rows.map { $0.mapValues(Cell.init) })
        }
        self.findings = findings
        charts = report.charts
        coverage = report.coverage
        self.page = page
    }

    /// The shard's tables as a report book.
    public func reportBook() throws -> ReportBook {
        let book = ReportBook()
        for t in tables {
            try book.declare(t.name, columns: t.declaredColumns, formats: t.formats)
            for row in t.rows { try book.add(t.name, row: row.mapValues(\.value)) }
        }
        book.charts = charts ?? []
        book.coverage = coverage ?? DataCoverage()
        return book
    }

    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        try encoder.encode(self).write(to: directory.appendingPathComponent(ShardFile.fileName), options: .atomic)
    }

    /// Reads `directory/shard.json`; throws `MergeError` naming the directory.
    public static func read(from directory: String) throws -> ShardFile {
        let path = (directory as NSString).appendingPathComponent(fileName)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MergeError(message: "\(directory): no \(fileName) (not the --out folder of a finished `sensorium run --shard` run)")
        }
        let file: ShardFile
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do { file = try decoder.decode(ShardFile.self, from: data) } catch {
            throw MergeError(message: "\(path): not a readable shard file (\(error))")
        }
        guard file.format == formatName else {
            throw MergeError(message: "\(path): format '\(file.format)', expected '\(formatName)'")
        }
        return file
    }
}

/// Shards that cannot be merged (different fingerprints, missing or duplicate shards, unreadable files).
public struct MergeError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// `sensorium merge`: shards joined into what one process would have written.
public struct ShardMerge {
    public let report = ReportBook()
    public private(set) var output = ""
    public private(set) var findings: [Finding] = []
    public private(set) var participants = 0
    /// The run report's facts (the first shard's; every shard of a run has the same).
    public private(set) var page: RunReportPage.Facts?

    /// Reads and checks the shard folders (one fingerprint, shards 1…n each exactly once),
    /// then joins them in shard order. Throws `MergeError` naming the offending folders.
    public init(directories: [String]) throws {
        guard !directories.isEmpty else { throw MergeError(message: "no shard folders given") }
        let files = try directories.map { ($0, try ShardFile.read(from: $0)) }
        let (firstDir, first) = files[0]
        for (dir, f) in files.dropFirst() where f.fingerprint != first.fingerprint || f.shardCount != first.shardCount {
            let differing = Set(f.fingerprintParts.keys).union(first.fingerprintParts.keys)
                .filter { f.fingerprintParts[$0] != first.fingerprintParts[$0] }.sorted()
            throw MergeError(message: "\(dir) and \(firstDir) are shards of different runs (they differ in: \(differing.joined(separator: ", "))); "
                + "run every shard with the same protocol, stdlib, scenario, seed and flags")
        }
        var byIndex: [Int: String] = [:]
        for (dir, f) in files {
            if let other = byIndex[f.shard] {
                throw MergeError(message: "shard \(f.shard)/\(f.shardCount) given twice: \(other) and \(dir)")
            }
            byIndex[f.shard] = dir
        }
        let missing = (1...first.shardCount).filter { byIndex[$0] == nil }
        if !missing.isEmpty {
            throw MergeError(message: "missing shard\(missing.count == 1 ? "" : "s") \(missing.map { "\($0)/\(first.shardCount)" }.joined(separator: ", ")) "
                + "(given: \(files.map { "\($0.1.shard)/\($0.1.shardCount) in \($0.0)" }.joined(separator: ", ")))")
        }
        for (dir, f) in files.sorted(by: { $0.1.shard < $1.1.shard }) {
            output += f.output
            do { try report.append(try f.reportBook(), participant: f.participants.first ?? dir) } catch let e as ReportError {
                throw MergeError(message: "\(dir): \(e.message)")
            }
            findings += f.findings
            participants += f.participants.count
            if page == nil { page = f.page }
        }
        if !findings.isEmpty { try report.addFindings(findings) }
    }

    /// What one process would have printed: the participants' output, then the tables.
    public var stdout: String { output + report.renderText() }
}
