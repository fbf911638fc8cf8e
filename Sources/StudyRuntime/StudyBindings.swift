import LuaHost
import SensorKitModel

/// `study{…}`: the protocol's manifest, read into the model's `StudyManifest`.
extension Bindings {
    /// Records the manifest (`enrol` is the runtime's, not SensorKit's, and is left out of
    /// it), makes one reader per declared sensor, and returns them as a table keyed by
    /// sensor name, also set as the global `sensors` (see `Enrolment`). Throws for a
    /// non-table argument or a bad `enrol` value.
    func study(_ call: LuaCall) throws -> Int32 {
        let table = try call.table(1)
        let mode = try EnrolmentMode.declared(in: table)
        let manifest = StudyManifest(table: Bindings.declaredEntries(table).filter { $0.key != "enrol" })
        run.model.study = manifest.resolved()
        run.manifest = manifest
        run.studyDeclared = true
        run.enrolment.mode = mode
        let readers = try enrolmentReaders(call, declaredSensors(run.model.study))
        call.push(readers)
        run.state.setGlobal("sensors", .reference(call.reference(-1)))
        return 1
    }

    static func declared(_ value: LuaValue) -> DeclaredValue {
        switch value {
        case .string(let s): return .string(s)
        case .bytes(let b): return .string(String(decoding: b, as: UTF8.self))
        case .integer(let i): return .number(Double(i))
        case .number(let d): return .number(d)
        case .boolean(let b): return .bool(b)
        case .table(let t):
            if let items = t.arrayValue, !items.isEmpty { return .list(items.map(declared)) }
            return .table(declaredEntries(t))
        default: return .string(value.typeName)
        }
    }

    static func declaredEntries(_ table: LuaTable) -> [DeclaredEntry] {
        table.entries.compactMap { e in
            guard let key = e.key.stringValue else { return nil }
            return DeclaredEntry(key, declared(e.value))
        }
    }
}
