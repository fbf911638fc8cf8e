import Foundation
import JSONText
import SensorKitModel

/// One cell of a report table.
public enum ReportValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case text(String)
}

/// The named tables a protocol reports, rendered as text, CSV and JSON.
///
/// Output is deterministic by construction: tables print in order of first
/// use, columns in their declared order (else `participant` first, then the
/// rest sorted). Numbers take the column's declared format; otherwise a whole
/// number prints as an integer whatever its type (`3600.0` as `3600`), and the
/// aligned text shows at most 3 decimals (trailing zeros dropped) while the
/// CSV and JSON files keep every digit (the shortest text that reads back as
/// the same double). NaN and infinities are `nan`, `inf`, `-inf` in text and
/// CSV and `null` in JSON (standard JSON has no such numbers).
public final class ReportBook {
    public struct Table: Sendable {
        public var name: String
        public var declaredColumns: [String]?
        public var formats: [String: String] = [:]
        public var rows: [[String: ReportValue]] = []
        var seenColumns: Set<String> = []
        /// The only columns a row may have (the declared ones and `participant`); nil: any
        /// (a table never declared with columns, or declared `open`).
        var checkedColumns: Set<String>?

        /// Columns in output order.
        public var columns: [String] {
            if let declaredColumns {
                let extra = seenColumns.subtracting(declaredColumns).sorted()
                return declaredColumns + extra
            }
            var rest = seenColumns.sorted()
            if let i = rest.firstIndex(of: "participant") {
                rest.remove(at: i)
                return ["participant"] + rest
            }
            return rest
        }
    }

    public private(set) var tables: [Table] = []
    private var index: [String: Int] = [:]
    /// Charts drawn with the stdlib `plot` module (see `ReportBook.addChart`), in order of first use.
    public package(set) var charts: [Chart] = []
    /// Who took part and what data the protocol received (for the HTML run report).
    public package(set) var coverage = DataCoverage()

    public init() {}

    /// Declares a table's column order and per-column printf formats (e.g. `"%.1f"`).
    /// Throws `ReportError` for a name that cannot be a file name or would share one with another table.
    /// Rows of a table declared with `columns` may hold only those columns (and
    /// `participant`), unless it is declared `open`: `add` refuses any other.
    public func declare(_ name: String, columns: [String]?, formats: [String: String], open: Bool = false) throws {
        let i = try tableIndex(name)
        if let columns {
            tables[i].declaredColumns = columns
            tables[i].checkedColumns = open ? nil : Set(columns + ["participant"])
        }
        tables[i].formats.merge(formats) { _, new in new }
    }

    /// Throws `ReportError` for a name that cannot be a file name or would share one with another table,
    /// and for a row with a column its table's declaration does not list (naming the table, the
    /// column, the declared columns and the closest of them).
    public func add(_ name: String, row: [String: ReportValue]) throws {
        let i = try tableIndex(name)
        if let allowed = tables[i].checkedColumns, let unknown = row.keys.sorted().first(where: { !allowed.contains($0) }) {
            let declared = (tables[i].declaredColumns ?? []).filter { $0 != "participant" }
            throw ReportError(message: "report table '\(name)' has no column '\(unknown)' (declared: \(declared.joined(separator: ", ")))"
                              + Suggestions.didYouMean(Suggestions.closest(to: unknown, among: declared)))
        }
        tables[i].rows.append(row)
        tables[i].seenColumns.formUnion(row.keys)
    }

    public func table(_ name: String) -> Table? { index[name].map { tables[$0] } }

    /// Adds `other`'s tables (declarations, then rows), charts and data coverage after this book's, as if the code that
    /// filled `other` had reported into this book: tables new to this book come last in
    /// `other`'s order, a declaration in `other` wins, rows are appended. Appending the
    /// participants' books in participant order gives what one shared book would hold.
    /// Throws `ReportError` (naming `participant`) when a table name collides with another's file.
    public func append(_ other: ReportBook, participant: String) throws {
        for table in other.tables {
            let i: Int
            do { i = try tableIndex(table.name) } catch let e as ReportError {
                throw ReportError(message: "participant \(participant): report.table: \(e.message)")
            }
            if let columns = table.declaredColumns { tables[i].declaredColumns = columns }
            tables[i].formats.merge(table.formats) { _, new in new }
            tables[i].rows += table.rows
            tables[i].seenColumns.formUnion(table.seenColumns)
        }
        for chart in other.charts {
            do { try addChart(chart) } catch let e as ReportError {
                throw ReportError(message: "participant \(participant): plot: \(e.message)")
            }
        }
        coverage.merge(other.coverage)
    }

    /// The name of the table that lists failed `expect` checks.
    public static let findingsTable = "findings"

    /// Adds `findings` as rows of the `findings` table (participant, time, location, message).
    public func addFindings(_ findings: [Finding]) throws {
        try declare(ReportBook.findingsTable, columns: ["participant", "time", "location", "message"], formats: [:])
        for f in findings {
            try add(ReportBook.findingsTable, row: ["participant": .text(f.participant), "time": .text(f.time),
                                                    "location": .text(f.location), "message": .text(f.message)])
        }
    }

    private var fileNames: [String: String] = [:]   // lower-cased file name → table name

    private func tableIndex(_ name: String) throws -> Int {
        if let i = index[name] { return i }
        guard !name.isEmpty, name.utf8.count <= ReportBook.maxNameBytes else {
            throw ReportError(message: "report table names must be 1 to \(ReportBook.maxNameBytes) bytes long, got \(name.utf8.count)")
        }
        let file = ReportBook.fileName(name)
        if let other = fileNames[file.lowercased()] {
            throw ReportError(message: "report tables '\(other)' and '\(name)' would both be written to \(file).csv; rename one")
        }
        fileNames[file.lowercased()] = name
        index[name] = tables.count
        tables.append(Table(name: name))
        return tables.count - 1
    }

    /// Longest table name (bytes): a file name must stay under the usual 255-byte limit.
    public static let maxNameBytes = 200

    /// The file name (without extension) a table is written to: letters, digits, `_` and `-` kept, the rest `_`.
    public static func fileName(_ table: String) -> String {
        String(table.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" })
    }

    // MARK: formatting

    /// A cell as text, with the column's format when one is declared. Without a format, a
    /// double holding a whole number within Int64 prints as that integer (no `.0`, no
    /// exponent; `-0` as `0`), the same text as an integer cell, on every path. Other
    /// doubles: with `exact`, all their digits (shortest round-trip text); otherwise at
    /// most 3 decimals (for reading on a terminal; magnitudes below 0.0005 show 3
    /// significant digits instead of rounding to 0, beyond 1e15 6 significant digits).
    public static func format(_ value: ReportValue, format: String? = nil, exact: Bool = false) -> String {
        switch value {
        case .null: return ""
        case .bool(let b): return b ? "true" : "false"
        case .text(let s): return s
        case .int(let i):
            if let format { return integerConversion(format) ? String(format: longLong(format), i) : String(format: format, Double(i)) }
            return String(i)
        case .double(let d):
            if d.isNaN { return "nan" }
            if d.isInfinite { return d > 0 ? "inf" : "-inf" }
            if let format {
                guard integerConversion(format) else { return String(format: format, d) }
                // Outside Int64 the integer conversion prints the rounded double instead of trapping.
                if let i = Int64(exactly: d.rounded()) { return String(format: longLong(format), i) }
                return String(format: wholeDouble(format), d)
            }
            // One rule for every report path: a whole number prints as the integer it is,
            // whatever its Lua type (3600.0 as 3600, 2^53 in all its digits).
            if let whole = Int64(exactly: d) { return String(whole) }
            if exact { return shortest(d) }
            if abs(d) >= 1e15 { return String(format: "%.6g", d) }
            if d != 0, abs(d) < 0.0005 { return String(format: "%.3g", d) }   // not rounded to 0
            var s = String(format: "%.3f", d)
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
            return s == "-0" ? "0" : s
        }
    }

    /// The shortest text that reads back as `d` (`0.1`, `3.141592653589793e-05`, `9.007199254740992e+15`);
    /// whole numbers without `.0`, and `-0` as `0`. `d` must be finite.
    public static func shortest(_ d: Double) -> String {
        if d == 0 { return "0" }
        var s = d.description
        if s.hasSuffix(".0") { s.removeLast(2) }
        return s
    }

    /// `%5d` → `%5.0f`: the integer conversion applied to a double too large for Int64.
    static func wholeDouble(_ format: String) -> String {
        format.replacingOccurrences(of: "%([-+ 0#]*[0-9]*)[di]", with: "%$1.0f", options: .regularExpression)
    }

    /// Whether `text` is a number as JSON writes it (`-12`, `0.5`, `1e-05`; no `+`, `.5`, `inf`).
    static func isJSONNumber(_ text: Substring) -> Bool {
        text.range(of: "^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?$", options: .regularExpression) != nil
    }

    /// A printf number format a report column may declare: one `%f`, `%e`, `%g`, `%d` or `%i`
    /// conversion with width and precision up to 99, and text without `%` around it.
    public static func isNumberFormat(_ f: String) -> Bool {
        f.utf8.count <= 100 && f.range(of: "^[^%]*%[-+ 0#]*[0-9]{0,2}(\\.[0-9]{1,2})?[fegdi][^%]*$", options: .regularExpression) != nil
    }

    /// Whether a format's conversion is `%d`/`%i` (then given a 64-bit integer, `%lld`).
    static func integerConversion(_ format: String) -> Bool {
        format.range(of: "%[-+ 0#]*[0-9]*[di]", options: .regularExpression) != nil
    }

    /// `%5d` → `%5lld`, so the conversion takes the 64-bit integer it is given.
    static func longLong(_ format: String) -> String {
        format.replacingOccurrences(of: "%([-+ 0#]*[0-9]*)[di]", with: "%$1lld", options: .regularExpression)
    }

    func cell(_ table: Table, _ row: [String: ReportValue], _ column: String, exact: Bool = false) -> String {
        ReportBook.format(row[column] ?? .null, format: table.formats[column], exact: exact)
    }

    /// All tables as aligned text (numbers right-aligned), one block per table.
    public func renderText() -> String {
        tables.map(renderText).joined()
    }

    /// One table as aligned text: its `== name (n rows) ==` line, the header, a rule, the
    /// rows and a blank line.
    public func renderText(_ table: Table) -> String {
        var out = ""
        do {
            let columns = table.columns
            let cells = table.rows.map { row in columns.map { cell(table, row, $0) } }
            var widths = columns.map { $0.count }
            for r in cells { for (j, c) in r.enumerated() { widths[j] = max(widths[j], c.count) } }
            let numeric = columns.map { c in
                table.rows.allSatisfy { row in
                    switch row[c] ?? .null {
                    case .int, .double, .null: true
                    default: false
                    }
                }
            }
            func line(_ values: [String]) -> String {
                var text = values.enumerated().map { j, v in
                    let pad = String(repeating: " ", count: widths[j] - v.count)
                    return numeric[j] ? pad + v : v + pad
                }.joined(separator: "  ")
                while text.last?.isWhitespace == true { text.removeLast() }   // linear, unlike a `\\s+$` regex
                return text
            }
            out += "== \(table.name) (\(table.rows.count) rows) ==\n"
            out += line(columns) + "\n"
            out += line(widths.map { String(repeating: "-", count: $0) }) + "\n"
            for r in cells { out += line(r) + "\n" }
            out += "\n"
        }
        return out
    }

    /// One table as CSV (RFC 4180 quoting, `\n` line ends).
    public func renderCSV(_ table: Table) -> String {
        func quote(_ s: String) -> String {
            s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
        }
        let columns = table.columns
        var out = columns.map(quote).joined(separator: ",") + "\n"
        for row in table.rows { out += columns.map { quote(cell(table, row, $0, exact: true)) }.joined(separator: ",") + "\n" }
        return out
    }

    /// One table as a JSON array of objects, keys in column order. NaN and infinities are
    /// `null`; a formatted number stays a JSON number when the format gives one (spaces and
    /// a leading `+` dropped), else it is the formatted string (`"7 h"`).
    public func renderJSON(_ table: Table) -> String {
        func json(_ value: ReportValue, _ column: String) -> String {
            switch value {
            case .null: return "null"
            case .bool(let b): return b ? "true" : "false"
            case .text(let s): return ReportBook.jsonString(s)
            case .double(let d) where !d.isFinite: return "null"
            case .int, .double:
                let text = ReportBook.format(value, format: table.formats[column], exact: true)
                var number = Substring(text).drop { $0 == " " }
                while number.last == " " { number.removeLast() }
                if number.first == "+" { number = number.dropFirst() }
                return ReportBook.isJSONNumber(number) ? String(number) : ReportBook.jsonString(text)
            }
        }
        let columns = table.columns
        let rows = table.rows.map { row in
            "  {" + columns.map { ReportBook.jsonString($0) + ": " + json(row[$0] ?? .null, $0) }.joined(separator: ", ") + "}"
        }
        return "[\n" + rows.joined(separator: ",\n") + (rows.isEmpty ? "]\n" : "\n]\n")
    }

    /// A JSON string literal (quotes, backslashes and control characters escaped).
    public static func jsonString(_ s: String) -> String {
        JSONText.string(s)
    }

    /// Writes `NAME.csv` and `NAME.json` for every table and `NAME.svg` for every chart into `directory`, atomically per file.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for table in tables {
            let safe = ReportBook.fileName(table.name)
            try Data(renderCSV(table).utf8).write(to: directory.appendingPathComponent(safe + ".csv"), options: .atomic)
            try Data(renderJSON(table).utf8).write(to: directory.appendingPathComponent(safe + ".json"), options: .atomic)
        }
        let scales = sharedScales()
        for chart in charts {
            try Data(svg(chart, scales: scales).utf8).write(to: directory.appendingPathComponent(ReportBook.fileName(chart.name) + ".svg"), options: .atomic)
        }
    }
}

/// A report table that cannot be kept (its name is unusable or collides with another's file).
public struct ReportError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
