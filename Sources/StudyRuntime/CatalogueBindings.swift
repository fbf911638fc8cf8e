@_spi(Bindings) import LuaHost
import SensorKitModel

extension Bindings {
    /// `sensorkit.info(name)`: a sensor's catalogue entry as a table — identifier,
    /// entitlement, usage key, devices, result shape, first OS, cadence (text and nominal
    /// period in seconds) and its fields with type, unit and meaning.
    func catalogueFunctions() -> [(String, LuaFunction)] {
        [("info", { [unowned self] call in
            let info = try self.sensor(call, 1).info
            let fields: [LuaValue] = info.fields.map { f in
                var entry: [String: LuaValue] = ["name": .string(f.name), "type": .string(f.type.kindName),
                                                 "optional": .boolean(f.isOptional), "summary": .string(f.summary)]
                if let unit = f.unit { entry["unit"] = .string(unit) }
                if let since = f.since { entry["since"] = .string(since.description) }
                Self.addValues(of: f.type, to: &entry)
                if case .structured(let structure) = f.type { Self.addStructure(structure, to: &entry) }
                return .dictionary(entry)
            }
            var table: [String: LuaValue] = [
                "name": .string(info.sensor.rawValue), "identifier": .string(info.sensor.identifier),
                "entitlement": .string(info.entitlement), "usageKey": .string(info.usageKey),
                "devices": .array(info.deviceKinds.map { .string($0.rawValue) }), "shape": .string(info.shape.rawValue),
                "since": .string(info.firstOS.description), "cadence": .string(info.cadence.summary), "fields": .array(fields),
            ]
            if let period = info.cadence.nominalPeriod { table["nominalPeriod"] = .number(period) }
            if let window = info.window { table["window"] = .string(window.text(rowTime: info.rowTimeField?.name)) }
            call.push(.dictionary(table))
            return 1
        })]
    }

    /// `values`: an enumeration's or option set's names → raw numbers (nothing for other types).
    static func addValues(of type: FieldType, to entry: inout [String: LuaValue]) {
        let cases = type.namedValues
        guard !cases.isEmpty else { return }
        entry["values"] = .dictionary(Dictionary(uniqueKeysWithValues: cases.map { ($0.name, LuaValue.integer($0.rawValue)) }))
    }

    /// A structured field's `shape` (its form as text, `"{category: [{bundleIdentifier?, usageTime s, …}]}"`),
    /// `structure` (the form as a table, `form(_:)`) and `subfields` (the sub-fields of one
    /// entry, reached through lists and keyed tables, or nothing for a list of numbers).
    static func addStructure(_ structure: Structure, to entry: inout [String: LuaValue]) {
        entry["shape"] = .string(structure.text)
        entry["structure"] = form(structure)
        if let fields = structure.entryFields { entry["subfields"] = .array(fields.map(subField)) }
    }

    /// One form as a table: `{ type = "table", subfields = {...} }` for a table of named
    /// sub-fields, `{ type = "list", element = form }`, `{ type = "map", key = "category",
    /// keys = {...}?, element = form }`, or a scalar `{ type = "double", unit = "mm", values? }`.
    static func form(_ structure: Structure) -> LuaValue { .dictionary(formEntries(structure)) }

    /// The entries of `form(structure)`'s table.
    static func formEntries(_ structure: Structure) -> [String: LuaValue] {
        var t: [String: LuaValue] = [:]
        switch structure {
        case .record(let fields):
            t["type"] = .string("table")
            t["subfields"] = .array(fields.map(subField))
        case .list(let element):
            t["type"] = .string("list")
            t["element"] = form(element)
        case .keyed(let key, let keys, let element):
            t["type"] = .string("map")
            t["key"] = .string(key)
            if let keys { t["keys"] = .array(keys.map { .string($0) }) }
            t["element"] = form(element)
        case .scalar(let type, let unit):
            t["type"] = .string(type.kindName)
            if let unit { t["unit"] = .string(unit) }
            addValues(of: type, to: &t)
        }
        return t
    }

    /// A sub-field: its form's table plus `name` and `optional`.
    static func subField(_ f: SubField) -> LuaValue {
        var t = formEntries(f.form)
        t["name"] = .string(f.name)
        t["optional"] = .boolean(f.isOptional)
        return .dictionary(t)
    }
}
