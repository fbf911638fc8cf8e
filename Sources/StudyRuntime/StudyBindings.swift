@_spi(Bindings) import LuaHost
import SensorKitModel

/// `study{…}`: the protocol's manifest, read into the model's `StudyManifest`.
extension Bindings {
    /// Records the manifest (`enrol` is the runtime's, not SensorKit's, and is left out of
    /// it), makes one reader per declared sensor, and returns them as a table keyed by
    /// sensor name, also set as the global `sensors` (see `Enrolment`). Throws for a
    /// non-table argument or a bad `enrol` value.
    func study(_ call: LuaCall) throws -> Int32 {
        let table = try call.table(1)
        let manifest = StudyManifest(table: Bindings.declaredEntries(table).filter { $0.key != "enrol" })
        run.manifest = manifest   // before anything can fail: `check` reports the declaration beside the error
        let mode = try EnrolmentMode.declared(in: table)
        if run.refusesUnknownStudyNames { try refuseUnknownNames(call, manifest) }
        run.model.study = manifest.resolved()
        run.studyDeclared = true
        run.enrolment.mode = mode
        let readers = try enrolmentReaders(call, declaredSensors(run.model.study))
        call.push(readers)
        let sensors = call.reference(-1)
        // `sensors.X` for a sensor study{} did not declare is an error, not a silent nil.
        if let guardSensors { try run.state.call(guardSensors, [.reference(sensors)], results: 0) }
        run.state.setGlobal("sensors", .reference(sensors))
        return 1
    }

    /// Raises the errors `sensorium check` reports for names SensorKit does not know (a
    /// misspelt sensor), in check's words: `protocol.lua:6: error[unknown-sensor] …`. When
    /// `study{}` is called from the protocol file itself the lines name the key's line there;
    /// otherwise (a helper module, the REPL) Lua's position of the call comes first.
    func refuseUnknownNames(_ call: LuaCall, _ manifest: StudyManifest) throws {
        let refused = manifest.refusedNames()
        guard !refused.isEmpty else { return }
        let script = run.settings.protocolPath
        let fromScript = call.scriptPosition().map { $0.hasPrefix(script + ":") } ?? false
        let source = fromScript ? ManifestDiagnostics.sourceLines(script) : []
        if fromScript, ManifestDiagnostics.studyLine(in: source) != nil {
            let lines = refused.map { ManifestDiagnostics.text($0, script: script, source: source) }
            // A LuaError is raised as it is, without Lua's position of the call in front.
            throw LuaError(kind: .runtime, message: lines.joined(separator: "\n"))
        }
        throw LuaScriptError(refused.map(\.descriptionWithHint).joined(separator: "\n"))
    }

    /// `sensors[key]` for a key study{} did not declare (the runtime prelude's `sensors`
    /// guard calls it): the error message, naming the declared sensors and the closest.
    /// `entitled`: the sensors the study's entitlements allow (the advice names only what is missing).
    static func undeclaredSensorMessage(_ key: LuaValue, declared: [String], entitled: Set<Sensor> = []) -> String {
        let names = declared.sorted()
        let list = names.isEmpty ? "study{} declares no sensors" : "study{} declares " + names.joined(separator: ", ")
        guard let name = key.stringValue else {
            return "sensors[\(key.typeName)]: the sensors table is keyed by sensor name (\(list))"
        }
        var advice = ""
        if let sensor = Sensor(name: name) {
            advice = "; to use it, add \(sensor.rawValue) = { detail = \"…\" } to study{}'s sensors"
                + (entitled.contains(sensor) ? " (its entitlement '\(sensor.info.entitlement)' is there)" : " and '\(sensor.info.entitlement)' to its entitlements")
        } else {
            var close = Suggestions.closest(to: name, among: names, limit: 1)
            if close.isEmpty { close = SensorCatalogue.sensorSuggestions(for: name).prefix(1).map { $0 } }
            advice = Suggestions.didYouMean(close)
        }
        return "sensors.\(name): \(Sensor(name: name) == nil ? "no such sensor" : "not declared"); \(list)\(advice)"
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

