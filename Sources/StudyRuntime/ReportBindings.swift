import LuaHost
import SensorKitModel

/// The `report` module: rows and table declarations into the run's `ReportBook`.
extension Bindings {
    func reportFunctions() -> [(String, LuaFunction)] {
        [
            ("row", { [unowned self] call in
                let name = try call.string(1)
                let table = try call.table(2)
                var row: [String: ReportValue] = ["participant": .text(self.run.setup.id)]
                for e in table.entries {
                    guard let key = e.key.stringValue else { throw LuaScriptError("report.row: column names must be strings") }
                    row[key] = try Bindings.reportValue(e.value, column: key)
                }
                do { try self.run.report.add(name, row: row) } catch let e as ReportError { throw LuaScriptError("report.row: \(e.message)") }
                return 0
            }),
            ("table", { [unowned self] call in
                let name = try call.string(1)
                let options = call.isNil(2) ? LuaTable() : try call.table(2)
                let columns = options["columns"]?.tableValue?.arrayValue?.compactMap(\.stringValue)
                var formats: [String: String] = [:]
                for (k, v) in options["formats"]?.tableValue?.dictionaryValue ?? [:] {
                    guard let f = v.stringValue, ReportBook.isNumberFormat(f) else {
                        throw LuaScriptError("report.table: format for '\(k)' must be one number conversion like \"%.1f\" or \"%5d\" (width and precision up to 99)")
                    }
                    formats[k] = f
                }
                do { try self.run.report.declare(name, columns: columns.map { ["participant"] + $0.filter { $0 != "participant" } }, formats: formats) }
                catch let e as ReportError { throw LuaScriptError("report.table: \(e.message)") }
                return 0
            }),
        ]
    }

    static func reportValue(_ v: LuaValue, column: String) throws -> ReportValue {
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
