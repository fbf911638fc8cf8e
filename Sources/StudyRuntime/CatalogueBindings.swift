import LuaHost
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
                // A structured field's shape names its sub-fields with their units ("usageTime s").
                if case .structured(let shape) = f.type { entry["shape"] = .string(shape) }
                let cases = f.type.namedValues
                if !cases.isEmpty {
                    entry["values"] = .dictionary(Dictionary(uniqueKeysWithValues: cases.map { ($0.name, LuaValue.integer($0.rawValue)) }))
                }
                return .dictionary(entry)
            }
            var table: [String: LuaValue] = [
                "name": .string(info.sensor.rawValue), "identifier": .string(info.sensor.identifier),
                "entitlement": .string(info.entitlement), "usageKey": .string(info.usageKey),
                "devices": .array(info.deviceKinds.map { .string($0.rawValue) }), "shape": .string(info.shape.rawValue),
                "since": .string(info.firstOS.description), "cadence": .string(info.cadence.summary), "fields": .array(fields),
            ]
            if let period = info.cadence.nominalPeriod { table["nominalPeriod"] = .number(period) }
            call.push(.dictionary(table))
            return 1
        })]
    }
}
