@_spi(Bindings) import LuaHost
import SensorKitModel

/// The `schedule` module and the time/duration arguments it shares with `time`.
extension Bindings {
    /// A time argument of the participant's run (`TimeBindings.time`).
    func when(_ call: LuaCall, _ index: Int32) throws -> Double {
        try TimeBindings.time(call, index, timeZone: run.clock.timeZone, studyStart: run.settings.start)
    }

    /// A duration argument (`TimeBindings.duration`).
    func duration(_ call: LuaCall, _ index: Int32) throws -> Double { try TimeBindings.duration(call, index) }

    /// Queues a call of `fn(now)`; `repeatEvery` re-queues it (nil: once). Returns the schedule id.
    func scheduleCall(_ fn: LuaReference, at t: Double, id: Int? = nil, next: ((Double) -> Double?)? = nil) -> Int {
        let eventID = id ?? run.loop.allocateID()
        run.loop.schedule(at: t, id: eventID) { [unowned self] in
            try self.run.state.call(fn, [.number(self.run.model.clock.wallNow)], results: 0)
            if let next, let t2 = next(t), !self.run.loop.isCancelled(eventID) {
                _ = self.scheduleCall(fn, at: t2, id: eventID, next: next)
            }
        }
        return eventID
    }

    func scheduleFunctions() -> [(String, LuaFunction)] {
        [
            ("at", { [unowned self] call in
                let t = try self.when(call, 1)
                call.push(self.scheduleCall(try call.function(2), at: max(t, self.run.clock.now)))
                return 1
            }),
            ("after", { [unowned self] call in
                let d = try self.duration(call, 1)
                call.push(self.scheduleCall(try call.function(2), at: self.run.clock.now + max(d, 0)))
                return 1
            }),
            ("every", { [unowned self] call in
                let d = try self.duration(call, 1)
                guard InputLimits.scheduleInterval.contains(d) else {
                    throw LuaArgumentError(index: 1, message: "interval: \(InputLimits.scheduleInterval.refusal(d))")
                }
                let fn = try call.function(2)
                call.push(self.scheduleCall(fn, at: self.run.clock.now + d, next: { $0 + d }))
                return 1
            }),
            ("daily", { [unowned self] call in
                let text = try call.string(1)
                let parts = text.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 2, (0..<24).contains(parts[0]), (0..<60).contains(parts[1]) else {
                    throw LuaArgumentError(index: 1, message: "expected local time \"HH:MM\", got \"\(text)\"")
                }
                let fn = try call.function(2)
                let tz = self.run.clock.timeZone
                let now = self.run.clock.now
                var first = LocalTime.time(onDayOf: now, hour: parts[0], minute: parts[1], tz)
                if first < now { first = LocalTime.time(onDayOf: LocalTime.nextDay(now, tz), hour: parts[0], minute: parts[1], tz) }
                call.push(self.scheduleCall(fn, at: first, next: { [unowned self] t in
                    let zone = self.run.clock.timeZone      // local time follows the participant's travel
                    return LocalTime.time(onDayOf: LocalTime.nextDay(t, zone), hour: parts[0], minute: parts[1], zone)
                }))
                return 1
            }),
            ("cancel", { [unowned self] call in
                self.run.loop.cancel(Int(try call.integer(1)))
                return 0
            }),
        ]
    }
}
