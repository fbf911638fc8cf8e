import Foundation
import StudyRuntime
import StudyReport

/// What a study's run produced, as Swift values: the participants' printed output, the
/// report tables with their rows, the findings, the warnings, and the report rendered as
/// the command line prints it.
public struct StudyResult {
    /// What the participants printed (`print`, `log`), in participant order.
    public var output: String
    /// The report's tables in the order the protocol first used them; the `findings`
    /// table last when there are findings.
    public var tables: [ResultTable]
    /// Failed `expect` checks and runs an error stopped, in participant order.
    public var findings: [StudyFinding]
    /// Things the user should know about the run (a recording's unknown authorization…).
    public var warnings: [String]
    /// The ids of the participants that ran, in order.
    public var participants: [String]
    /// The run's report book (`write(to:)`, `reportText`).
    let book: ReportBook
    /// Participants an error stopped, each as the command line prints it (participant,
    /// time, the error with its traceback); they are also among `findings`.
    public var failures: [String]
    /// What the run report says about the run (for `htmlReport`).
    let pageFacts: RunReportPage.Facts
    /// A sharded run's shard file, written by `write(to:)`.
    let shardFile: ShardFile?

    init(output: String, runner: StudyRunner, shardFile: ShardFile?) {
        self.output = output
        book = runner.report
        tables = runner.report.tables.map { ResultTable($0, book: runner.report) }
        findings = runner.findings.map(StudyFinding.init)
        warnings = runner.warnings
        participants = runner.participantIDs
        failures = runner.failures.map(\.description)
        pageFacts = runner.pageFacts
        self.shardFile = shardFile
    }

    /// The HTML run report (`index.html` of `sensorium run --out`), rendered when asked for.
    public var htmlReport: String { RunReportPage(book: book, facts: pageFacts).render() }

    /// The table named `name`, or nil.
    public func table(_ name: String) -> ResultTable? { tables.first { $0.name == name } }

    /// Every table as aligned text, as `sensorium run` prints it after the output.
    public var reportText: String { book.renderText() }

    /// Writes what `sensorium run --out FOLDER` writes: each table as CSV and JSON, each
    /// chart as SVG, and `index.html`; for a shard (`StudyConfiguration.shard`) also the
    /// shard file `sensorium merge` reads. Creates the folder.
    public func write(to folder: String) throws {
        let url = URL(fileURLWithPath: folder)
        try book.write(to: url)
        try Data(htmlReport.utf8).write(to: url.appendingPathComponent("index.html"), options: .atomic)
        try shardFile?.write(to: url)
    }
}

/// One report table: its columns in output order and its rows.
public struct ResultTable: Sendable {
    /// The table's name (`report.table(name, …)`).
    public var name: String
    /// Columns in output order (declared ones first, else `participant` then by name).
    public var columns: [String]
    /// The rows in the order the protocol added them (participant order across participants).
    public var rows: [ResultRow]
    /// The table as aligned text, as the report prints it.
    public let text: String

    init(_ table: ReportBook.Table, book: ReportBook) {
        name = table.name
        columns = table.columns
        rows = table.rows.map { ResultRow(values: $0.mapValues(ResultValue.init)) }
        text = book.renderText(table)
    }

    /// The rows decoded as `T` (a `Decodable` struct whose properties are named like the
    /// columns; a missing or null cell decodes as nil for an optional property). Throws
    /// `DecodingError` naming the row's property that does not fit.
    public func decodeRows<T: Decodable>(as type: T.Type = T.self) throws -> [T] {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try rows.map { row in
            let object = row.values.compactMapValues(\.jsonObject)
            return try decoder.decode(T.self, from: JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        }
    }
}

/// One row of a report table: its cells by column (a column the row did not set is absent).
public struct ResultRow: Sendable, Equatable {
    /// The row's cells by column name.
    public var values: [String: ResultValue]

    /// The cell of `column`; `.null` when the row has none.
    public subscript(column: String) -> ResultValue { values[column] ?? .null }
}

/// One cell of a report table.
public enum ResultValue: Sendable, Equatable, CustomStringConvertible {
    /// No value (`nil`, or a column the row did not set).
    case null
    /// A boolean.
    case bool(Bool)
    /// A Lua integer.
    case integer(Int64)
    /// A Lua float.
    case number(Double)
    /// A string.
    case text(String)

    init(_ value: ReportValue) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .integer(i)
        case .double(let d): self = .number(d)
        case .text(let s): self = .text(s)
        }
    }

    /// A number cell (integer or float) as a `Double`; nil otherwise.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// A text cell's text; nil otherwise.
    public var textValue: String? { if case .text(let s) = self { s } else { nil } }

    /// The cell as the report's text shows it (numbers with at most 3 decimals).
    public var description: String {
        switch self {
        case .null: ReportBook.format(.null)
        case .bool(let b): ReportBook.format(.bool(b))
        case .integer(let i): ReportBook.format(.int(i))
        case .number(let d): ReportBook.format(.double(d))
        case .text(let s): s
        }
    }

    /// The value for `JSONSerialization` (non-finite numbers as the decoder's strings).
    var jsonObject: Any? {
        switch self {
        case .null: Optional<Any>.none
        case .bool(let b): b
        case .integer(let i): i
        case .number(let d): d.isFinite ? d : d.isNaN ? "nan" : d > 0 ? "inf" : "-inf"
        case .text(let s): s
        }
    }
}

/// A failed `expect` check, or a run an error stopped (`isStoppedRun`).
public struct StudyFinding: Sendable, Equatable, CustomStringConvertible {
    /// The participant's id.
    public var participant: String
    /// Virtual local time, `YYYY-MM-DD HH:MM`.
    public var time: String
    /// `file:line` of the protocol line that made the check (empty for a stopped run).
    public var location: String
    /// What failed (`expected …`, or `run stopped: …` with the error and its traceback).
    public var message: String
    /// Whether an error stopped the participant's run (the message says which).
    public var isStoppedRun: Bool

    init(_ finding: Finding) {
        participant = finding.participant
        time = finding.time
        location = finding.location
        message = finding.message
        isStoppedRun = finding.isStoppedRun
    }

    /// `[P1 2026-03-05 08:00] protocol.lua:42: expected …`, as the command line shows it.
    public var description: String { "[\(participant) \(time)] \(location.isEmpty ? "" : location + ": ")\(message)" }
}
