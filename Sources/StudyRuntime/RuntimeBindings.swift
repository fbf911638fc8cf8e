@_spi(Bindings) import LuaHost
import SensorKitModel

/// The Swift side of the prelude (`__runtime`): `log`, SensorKit's error codes and deletion reasons.
extension Bindings {
    /// `sensorkit.errors`: every named `SRErrorCode`, name → code.
    static var errorCodes: LuaValue {
        .dictionary(Dictionary(uniqueKeysWithValues: SRErrorCode.known.compactMap { code in
            code.name.map { ($0, LuaValue.integer(Int64(code.rawValue))) }
        }))
    }

    /// `sensorkit.deletionReasons`: every `SRDeletionReason` both ways, name → code and
    /// code → name (a deletion record's `reason` is the code, as in SensorKit).
    static var deletionReasons: LuaValue {
        .table(LuaTable(entries: SRDeletionReason.allCases.flatMap { reason -> [(key: LuaValue, value: LuaValue)] in
            [(key: .string(reason.name), value: .integer(Int64(reason.rawValue))),
             (key: .integer(Int64(reason.rawValue)), value: .string(reason.name))]
        }))
    }

    /// What this run's `time` primitives read: the participant's clock and the study's span.
    var timeContext: TimeContext {
        TimeContext(now: { [unowned self] in self.run.model.clock.wallNow },
                    timeZone: { [unowned self] in self.run.clock.timeZone },
                    study: { [unowned self] in (self.run.settings.start, self.run.settings.end) })
    }

    func runtimeFunctions() -> [(String, LuaFunction)] {
        [
            ("undeclared_sensor", { [unowned self] call in
                let declared = try call.table(2)
                call.push(Bindings.undeclaredSensorMessage(call.value(1), declared: (declared.arrayValue ?? []).compactMap(\.stringValue),
                                                           entitled: self.run.model.study.entitledSensors))
                return 1
            }),
            ("log", { [unowned self] call in
                let level = try call.string(1)
                let text = try call.string(2)
                self.run.log(level, text)
                return 0
            }),
            ("error_codes", { call in
                call.push(Bindings.errorCodes)
                return 1
            }),
            ("deletion_reasons", { call in
                call.push(Bindings.deletionReasons)
                return 1
            }),
        ]
    }
}
