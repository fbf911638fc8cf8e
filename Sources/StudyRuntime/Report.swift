import Foundation
import SensorBackends

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
/// rest sorted), numbers with explicit formats (default: at most 3 decimals,
/// trailing zeros dropped), and NaN as `nan`.
public final class ReportBook {
    public struct Table: Sendable {
        public var name: String
        public var declaredColumns: [String]?
        public var formats: [String: String] = [:]
        public var rows: [[String: ReportValue]] = []
        var seenColumns: Set<String> = []

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

    public init() {}

    /// Declares a table's column order and per-column printf formats (e.g. `"%.1f"`).
    public func declare(_ name: String, columns: [String]?, formats: [String: String]) {
        let i = tableIndex(name)
        if let columns { tables[i].declaredColumns = columns }
        tables[i].formats.merge(formats) { _, new in new }
    }

    public func add(_ name: String, row: [String: ReportValue]) {
        let i = tableIndex(name)
        tables[i].rows.append(row)
        tables[i].seenColumns.formUnion(row.keys)
    }

    public func table(_ name: String) -> Table? { index[name].map { tables[$0] } }

    private func tableIndex(_ name: String) -> Int {
        if let i = index[name] { return i }
        index[name] = tables.count
        tables.append(Table(name: name))
        return tables.count - 1
    }

    // MARK: formatting

    /// A cell as text, with the column's format when one is declared.
    public static func format(_ value: ReportValue, format: String? = nil) -> String {
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
            if let format { return integerConversion(format) ? String(format: longLong(format), Int64(d.rounded())) : String(format: format, d) }
            if abs(d) >= 1e15 { return String(format: "%.6g", d) }
            var s = String(format: "%.3f", d)
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
            return s == "-0" ? "0" : s
        }
    }

    /// Whether a format's conversion is `%d`/`%i` (then given a 64-bit integer, `%lld`).
    static func integerConversion(_ format: String) -> Bool {
        format.range(of: "%[-+ 0#]*[0-9]*[di]", options: .regularExpression) != nil
    }

    /// `%5d` → `%5lld`, so the conversion takes the 64-bit integer it is given.
    static func longLong(_ format: String) -> String {
        format.replacingOccurrences(of: "%([-+ 0#]*[0-9]*)[di]", with: "%$1lld", options: .regularExpression)
    }

    func cell(_ table: Table, _ row: [String: ReportValue], _ column: String) -> String {
        ReportBook.format(row[column] ?? .null, format: table.formats[column])
    }

    /// All tables as aligned text (numbers right-aligned), one block per table.
    public func renderText() -> String {
        var out = ""
        for table in tables {
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
                values.enumerated().map { j, v in
                    let pad = String(repeating: " ", count: widths[j] - v.count)
                    return numeric[j] ? pad + v : v + pad
                }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
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
        for row in table.rows { out += columns.map { quote(cell(table, row, $0)) }.joined(separator: ",") + "\n" }
        return out
    }

    /// One table as a JSON array of objects, keys in column order.
    public func renderJSON(_ table: Table) -> String {
        func json(_ value: ReportValue, _ column: String) -> String {
            switch value {
            case .null: return "null"
            case .bool(let b): return b ? "true" : "false"
            case .text(let s): return ReportBook.jsonString(s)
            case .int, .double:
                let text = ReportBook.format(value, format: table.formats[column])
                return Double(text) != nil && !text.contains("nan") && !text.contains("inf") ? text : (text == "nan" ? "null" : ReportBook.jsonString(text))
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
        var out = ""
        JSONWriter.string(s, into: &out)
        return out
    }

    /// Writes `NAME.csv` and `NAME.json` for every table into `directory`, atomically per file.
    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for table in tables {
            let safe = table.name.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" }
            try Data(renderCSV(table).utf8).write(to: directory.appendingPathComponent(String(safe) + ".csv"), options: .atomic)
            try Data(renderJSON(table).utf8).write(to: directory.appendingPathComponent(String(safe) + ".json"), options: .atomic)
        }
    }
}
