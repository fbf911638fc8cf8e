@_spi(Bindings) import LuaHost
import SensorKitModel
import StudyReport

/// A table `report.table` declared, as Lua sees it: `t:row{…}` adds a row to it.
final class ReportTable {
    let name: String
    let columns: [String]
    init(name: String, columns: [String]) {
        self.name = name
        self.columns = columns
    }
}

/// The `report` module (the global, and `require "report"`: one table): rows and table
/// declarations into a `ReportBook`, which checks rows against declared columns. A
/// participant's run reports with its `participant` column; a plain script without one.
final class ReportModule {
    let book: ReportBook
    /// The value of every row's `participant` column; nil: no such column (a plain script).
    let participant: String?
    /// The `ReportTable` type `report.table` returns: `t:row(values)`, `t.name`, `t.columns`.
    let tableClass = LuaClass<ReportTable>("ReportTable")

    init(book: ReportBook, participant: String?) {
        self.book = book
        self.participant = participant
        tableClass.describe = { "ReportTable(\($0.name))" }
        tableClass.property("name", get: { t, call in call.push(t.name) })
        tableClass.property("columns", get: { t, call in call.push(.array(t.columns.map { .string($0) })) })
        tableClass.method("row") { [unowned self] t, call in
            try self.addRow(to: t.name, values: try call.table(2), function: "row")
            return 0
        }
    }

    /// `report.row(name, values)` and `report.table(name, spec)` (which returns a `ReportTable`).
    func functions() -> [(String, LuaFunction)] {
        [
            ("row", { [unowned self] call in
                try self.addRow(to: try call.string(1), values: try call.table(2), function: "report.row")
                return 0
            }),
            ("table", { [unowned self] call in
                let name = try call.string(1)
                let table = try self.declare(name, options: call.isNil(2) ? LuaTable() : try call.table(2))
                call.push(table, as: self.tableClass)
                return 1
            }),
        ]
    }

    /// Declares table `name` from `report.table`'s spec: `columns` (output order), `formats`
    /// (printf number conversions by column) and `open` (rows may hold other columns too).
    func declare(_ name: String, options: LuaTable) throws -> ReportTable {
        let columns = options["columns"]?.tableValue?.arrayValue?.compactMap(\.stringValue)
        var formats: [String: String] = [:]
        for (k, v) in options["formats"]?.tableValue?.dictionaryValue ?? [:] {
            guard let f = v.stringValue, ReportBook.isNumberFormat(f) else {
                throw LuaScriptError("report.table: format for '\(k)' must be one number conversion like \"%.1f\" or \"%5d\" (width and precision up to 99)")
            }
            formats[k] = f
        }
        let open: Bool                              // Lua truth: anything but nil and false
        switch options["open"] { case nil, .nil?, .boolean(false)?: open = false; default: open = true }
        let lead = participant == nil ? [] : ["participant"]
        let declared = columns.map { lead + $0.filter { $0 != "participant" } }
        do { try book.declare(name, columns: declared, formats: formats, open: open) }
        catch let e as ReportError { throw LuaScriptError("report.table: \(e.message)") }
        return ReportTable(name: name, columns: columns ?? [])
    }

    /// Adds the row `values` (column = value) to table `name`, with the participant column;
    /// `function` names the caller in errors.
    func addRow(to name: String, values: LuaTable, function: String) throws {
        var row: [String: ReportValue] = [:]
        if let participant { row["participant"] = .text(participant) }
        for e in values.entries {
            guard let key = e.key.stringValue else { throw LuaScriptError("\(function): column names must be strings") }
            row[key] = try ReportModule.value(e.value, column: key)
        }
        do { try book.add(name, row: row) } catch let e as ReportError { throw LuaScriptError("\(function): \(e.message)") }
    }

    /// A cell from a Lua value: nil, a boolean, a number or a string.
    static func value(_ v: LuaValue, column: String) throws -> ReportValue {
        switch v {
        case .nil: return .null
        case .boolean(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .number(let d): return .double(d)
        case .string(let s): return .text(s)
        case .bytes(let b): return .text(String(decoding: b, as: UTF8.self))
        default: throw LuaScriptError("report.row: column '\(column)' holds a \(v.typeName); report numbers, strings or booleans")
        }
    }
}
