import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel
import StudyReport

extension Bindings {
    /// `report.finding(where, message)`, called by stdlib/expect.lua when a check fails:
    /// `where` is the `"file:line: "` prefix of the protocol line that made the check.
    /// Records a `Finding` at the current virtual time and returns true; returns false
    /// under `--fail-fast` (then expect.lua raises the message as an error).
    func findingFunction() -> (String, LuaFunction) {
        ("finding", { [unowned self] call in
            guard !self.run.settings.failFast else {
                call.push(false)
                return 1
            }
            var location = try call.string(1)
            if location.hasSuffix(": ") { location.removeLast(2) }
            let message = try call.string(2)
            self.run.findings.append(Finding(participant: self.run.setup.id,
                                             time: LocalTime.minuteLabel(self.run.clock.now, self.run.clock.timeZone),
                                             location: location, message: message))
            call.push(true)
            return 1
        })
    }
}
