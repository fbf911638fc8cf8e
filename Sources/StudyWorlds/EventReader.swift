import Foundation
import Simulator
import SensorKitModel
import StudyRuntime

/// Turns a scenario participant's events into backend and model events, once
/// the study start and time zone are known. Times are "YYYY-MM-DD HH:MM" (local),
/// "day N HH:MM" (N counts study days from 1), or seconds.
struct EventReader {
    let file: String
    let start: Double
    /// The end of the study run: events that begin later are left out (`read` says so).
    let end: Double
    /// The end of the study the scenario describes (its own `days`; later than `end` when
    /// `--days` shortens the run): event times must lie from `start` to here.
    let declaredEnd: Double
    let timeZone: TimeZone

    /// An event time, within the study the scenario describes (from its start to its end, both included).
    func time(_ v: ScenarioField?, _ path: String) throws -> Double {
        guard let v else { throw ScenarioError(file: file, path: path, message: "missing time") }
        let t = try parsedTime(v, path)
        let end = max(self.end, declaredEnd)
        guard t.isFinite, t >= start, t <= end else {
            let shown = InputLimits.instant.contains(t) ? LocalTime.minuteLabel(t, timeZone) : InputRange.text(t)
            throw ScenarioError(file: file, path: path, message: "\(shown) is outside the study (from \(LocalTime.minuteLabel(start, timeZone)) to \(LocalTime.minuteLabel(end, timeZone)) \(timeZone.identifier))")
        }
        return t
    }

    private func parsedTime(_ v: ScenarioField, _ path: String) throws -> Double {
        if let d = v.doubleValue { return d }
        guard let s = v.stringValue else { throw ScenarioError(file: file, path: path, message: "expected a time, got \(v.typeName)") }
        if s.hasPrefix("day ") {
            guard let t = LocalTime.parse(s, timeZone, studyStart: start) else {
                throw ScenarioError(file: file, path: path, message: "expected \"day N HH:MM\" with N from 1, got \(InputLimits.quoted(s))")
            }
            return t
        }
        guard let t = LocalTime.parse(s, timeZone) else {
            throw ScenarioError(file: file, path: path, message: "expected \"YYYY-MM-DD HH:MM\", \"day N HH:MM\" or seconds, got \(InputLimits.quoted(s))")
        }
        return t
    }

    func sensor(_ v: ScenarioField?, _ path: String) throws -> Sensor {
        guard let s = v?.stringValue, let sensor = Sensor(name: s) else {
            let hint = v?.stringValue.map(SensorCatalogue.sensorHint(for:)) ?? ""
            throw ScenarioError(file: file, path: path, message: "expected a sensor name\(hint)")
        }
        return sensor
    }

    /// One event → (timeline events for the simulator, model events for SensorKit state),
    /// or nothing and a note when the event begins after the run's end (a run shortened by `--days`).
    func read(_ t: ScenarioEvent) throws -> (timeline: [TimelineEvent], model: [ModelEvent], leftOut: String?) {
        let path = t.path
        let (timeline, model) = try readEvent(t, path: path)
        let begins = timeline.map(\.begins) + model.map(\.begins)
        if let first = begins.min(), first > end {
            return ([], [], "\(file): \(path) at \(LocalTime.minuteLabel(first, timeZone)) begins after the run's end (\(LocalTime.minuteLabel(end, timeZone))); left out")
        }
        return (timeline, model, nil)
    }

    private func readEvent(_ t: ScenarioEvent, path: String) throws -> ([TimelineEvent], [ModelEvent]) {
        let kinds = ["revoke", "grant", "delete", "offWrist", "phoneOff", "watchOff", "reboot", "travel", "clockJump", "locked"]
        let present = kinds.filter { t[$0] != nil }
        guard present.count == 1, let kind = present.first else {
            throw ScenarioError(file: file, path: path, message: "an event needs exactly one of \(kinds.joined(separator: ", "))")
        }
        switch kind {
        case "revoke": return ([], [.revoke(try sensor(t["revoke"], "\(path).revoke"), at: try time(t["at"], "\(path).at"))])
        case "grant": return ([], [.grant(try sensor(t["grant"], "\(path).grant"), at: try time(t["at"], "\(path).at"))])
        case "delete":
            let from = try time(t["from"], "\(path).from"), to = try time(t["to"], "\(path).to")
            guard from < to else { throw ScenarioError(file: file, path: path, message: "`from` must be before `to`") }
            // `at` (when the participant deletes) defaults to `to`; a malformed `at` is an error, not the default.
            let at = t["at"] != nil ? try time(t["at"], "\(path).at") : to
            return ([], [.delete(try sensor(t["delete"], "\(path).delete"), from: from, to: to, at: at)])
        case "offWrist", "phoneOff", "watchOff", "locked":
            let from = try time(t["from"], "\(path).from"), to = try time(t["to"], "\(path).to")
            guard from < to else { throw ScenarioError(file: file, path: path, message: "`from` must be before `to`") }
            switch kind {
            case "offWrist": return ([.watchOffWrist(from: from, to: to)], [])
            case "phoneOff": return ([.deviceOff(.phone, from: from, to: to)], [])
            case "watchOff": return ([.deviceOff(.watch, from: from, to: to)], [])
            default: return ([], [.locked(from: from, to: to)])
            }
        case "reboot":
            let kindName = t["reboot"]?.stringValue ?? "phone"
            guard let device = DeviceKind(rawValue: kindName) else { throw ScenarioError(file: file, path: "\(path).reboot", message: "expected \"phone\" or \"watch\"") }
            return ([.reboot(device, at: try time(t["at"], "\(path).at"))], [])
        case "travel":
            guard let zone = t["travel"]?.stringValue, TimeZone(identifier: zone) != nil else {
                throw ScenarioError(file: file, path: "\(path).travel", message: "expected an IANA time zone like \"America/New_York\"")
            }
            let at = try time(t["at"], "\(path).at")
            return ([.travel(at: at, timeZone: zone)], [.travel(at: at, timeZone: zone)])
        default: // clockJump
            guard let v = t["clockJump"], let offset = v.doubleValue ?? v.stringValue.flatMap({ text -> Double? in
                text.hasPrefix("-") ? LocalTime.parseDuration(String(text.dropFirst())).map { -$0 } : LocalTime.parseDuration(text)
            }) else {
                throw ScenarioError(file: file, path: "\(path).clockJump", message: "expected seconds or a duration like \"1h\" or \"-30m\"")
            }
            guard InputLimits.clockJump.contains(offset) else {
                throw ScenarioError(file: file, path: "\(path).clockJump", message: InputLimits.clockJump.refusal(offset))
            }
            return ([], [.wallClockJump(at: try time(t["at"], "\(path).at"), offset: offset)])
        }
    }
}

private extension TimelineEvent {
    /// When the event begins.
    var begins: Double {
        switch self {
        case .watchOffWrist(let from, _), .deviceOff(_, let from, _): from
        case .reboot(_, let at), .travel(let at, _): at
        }
    }
}

private extension ModelEvent {
    /// When the event begins (a deletion: when the participant deletes).
    var begins: Double { time }
}
