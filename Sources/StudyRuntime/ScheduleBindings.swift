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

    /// Queues a call of `fn(now)`; `next` gives the time of the one after (nil: once). Returns
    /// the schedule id. A call due after the study's end never runs (a prompt's clock may go
    /// past the end; a run stops there), and nothing is queued after it.
    func scheduleCall(_ fn: LuaReference, at t: Double, id: Int? = nil, next: ((Double) -> Double?)? = nil) -> Int {
        let eventID = id ?? run.loop.allocateID()
        run.loop.schedule(at: t, id: eventID) { [unowned self] in
            guard t <= self.run.settings.end else { return }
            try self.run.state.call(fn, [.number(self.run.model.clock.wallNow)], results: 0)
            if let next, let t2 = next(t), !self.run.loop.isCancelled(eventID) {
                _ = self.scheduleCall(fn, at: t2, id: eventID, next: next)
            }
        }
        return eventID
    }

    /// Says (in the run's log) that a one-off call asked for at `t` will not run: it is after
    /// the study's end.
    func warnIfAfterTheEnd(_ function: String, _ t: Double) {
        guard t > run.settings.end else { return }
        let zone = run.clock.timeZone
        run.log("warn", "\(function): \(LocalTime.minuteLabel(t, zone)) is after the study's end (\(LocalTime.minuteLabel(run.settings.end, zone))): the call never runs")
    }

    func scheduleFunctions() -> [(String, LuaFunction)] {
        [
            ("at", { [unowned self] call in
                let t = max(try self.when(call, 1), self.run.clock.now)
                let fn = try call.function(2)
                self.warnIfAfterTheEnd("schedule.at", t)
                call.push(self.scheduleCall(fn, at: t))
                return 1
            }),
            ("after", { [unowned self] call in
                let t = self.run.clock.now + max(try self.duration(call, 1), 0)
                let fn = try call.function(2)
                self.warnIfAfterTheEnd("schedule.after", t)
                call.push(self.scheduleCall(fn, at: t))
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
