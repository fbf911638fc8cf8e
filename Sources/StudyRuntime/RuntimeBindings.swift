import LuaHost
import SensorKitModel

/// The Swift side of the prelude's `time` and `log` modules (`__runtime`).
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

    /// The time argument at `index` of `time.day`/`time.startOfDay` (the clock's now when
    /// absent); a time the calendar cannot place (NaN, ±inf, beyond the years 1 to 9999:
    /// `LocalTime.rangeProblem`) is an argument error naming the value.
    func calendarTime(_ call: LuaCall, _ index: Int32) throws -> Double {
        guard let t = try call.optionalDouble(index) else { return run.model.clock.wallNow }
        if let problem = LocalTime.rangeProblem(t) { throw LuaArgumentError(index: index, message: "expected a time: \(problem)") }
        return t
    }

    func runtimeFunctions() -> [(String, LuaFunction)] {
        [
            ("undeclared_sensor", { call in
                let declared = try call.table(2)
                call.push(Bindings.undeclaredSensorMessage(call.value(1), declared: (declared.arrayValue ?? []).compactMap(\.stringValue)))
                return 1
            }),
            ("log", { [unowned self] call in
                let level = try call.string(1)
                let text = try call.string(2)
                self.run.log(level, text)
                return 0
            }),
            ("timezone", { [unowned self] call in
                call.push(self.run.clock.timeZone.identifier)
                return 1
            }),
            ("day", { [unowned self] call in
                call.push(LocalTime.dayLabel(try self.calendarTime(call, 1), self.run.clock.timeZone))
                return 1
            }),
            ("start_of_day", { [unowned self] call in
                call.push(LocalTime.startOfDay(try self.calendarTime(call, 1), self.run.clock.timeZone))
                return 1
            }),
            ("duration", { [unowned self] call in
                call.push(try self.duration(call, 1))
                return 1
            }),
            ("parse", { [unowned self] call in
                call.push(try self.when(call, 1))
                return 1
            }),
            ("study_start", { [unowned self] call in
                call.push(self.run.settings.start)
                return 1
            }),
            ("study_end", { [unowned self] call in
                call.push(self.run.settings.end)
                return 1
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
