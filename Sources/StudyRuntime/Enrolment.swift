@_spi(Bindings) import LuaHost
import SensorKitModel

/// How a protocol enrols its participant: `study { enrol = "auto" | "manual" }`.
///
/// Automatic (the default): the sensors declared in `study{ sensors = … }` get one reader
/// each (the `sensors` table `study` returns and sets as a global), and once the
/// protocol's top level has run, the runtime asks for all of them in one consent sheet
/// and starts recording each sensor whenever it is granted (also after a re-grant in
/// Settings). A protocol enrols by hand when it says `enrol = "manual"`, or when its top
/// level calls `sensorkit.requestAuthorization` itself; then nothing is asked or recorded
/// for it, and the `sensors` readers are plain readers.
enum EnrolmentMode: String {
    case auto, manual

    /// The mode a `study{}` table asks for. Throws (a Lua error at the protocol's line)
    /// for a value other than "auto" or "manual".
    static func declared(in table: LuaTable) throws -> EnrolmentMode {
        guard let value = table["enrol"], !value.isNil else { return .auto }
        guard let text = value.stringValue, let mode = EnrolmentMode(rawValue: text) else {
            throw LuaScriptError("study.enrol must be \"auto\" (the default: ask for the declared sensors and record them on grant) "
                + "or \"manual\" (the protocol asks and records itself), got \(value.stringValue.map { "\"\($0)\"" } ?? value.typeName)")
        }
        return mode
    }
}

/// A participant run's enrolment state.
struct Enrolment {
    var mode: EnrolmentMode = .auto
    /// The readers of the declared sensors, in sensor-name order (held strongly by the
    /// `sensors` table; here weakly).
    var readers: [WeakReader] = []
    /// The protocol called `sensorkit.requestAuthorization` during its top level.
    var askedByHand = false
}

extension Bindings {
    /// The sensors a manifest means to use (`ResolvedStudy.sensorsInUse`: a malformed detail
    /// counts, so the protocol meets the 8197 a phone would give) that the simulated phone
    /// supports, in name order.
    func declaredSensors(_ study: ResolvedStudy) -> [Sensor] {
        guard run.model.switches.platform.isSensorKitAvailable else { return [] }
        return study.sensorsInUse.filter { run.model.switches.supports($0) }
    }

    /// Makes one reader per declared sensor and returns them as a table keyed by sensor
    /// name (`sensors.ambientLightSensor`). Stack: pushes nothing (the table is a value).
    func enrolmentReaders(_ call: LuaCall, _ sensors: [Sensor]) throws -> LuaValue {
        var table: [String: LuaValue] = [:]
        run.enrolment.readers = []
        for sensor in sensors {
            let reader = try call.state.withStackGuard {
                let reader = try makeReader(call, sensor: sensor, stream: .samples, byRuntime: true)   // pushes the reader
                table[sensor.rawValue] = .reference(call.reference(-1))
                return reader
            }
            run.enrolment.readers.append(WeakReader(reader))
        }
        return .dictionary(table)
    }

    /// After the top level: asks for the declared sensors in one sheet and marks their
    /// readers to record on grant, unless the protocol enrols by hand. A failed request is
    /// logged as a warning (there is no completion to hand it to).
    func enrolAutomatically() throws {
        guard run.studyDeclared, run.enrolment.mode == .auto, !run.enrolment.askedByHand else { return }
        let readers = run.enrolment.readers.compactMap(\.reader)
        guard !readers.isEmpty else { return }
        for r in readers { r.recordsOnGrant = true }
        try requestAuthorization(Set(readers.map(\.sensor)), completion: nil) { [unowned self] error in
            self.run.log("warn", "enrolment: \(error)")
        }
    }

    /// What an enrolled reader does when its sensor's status changes, before its delegate
    /// hears of it: on a grant it starts recording (the outcome reaches the delegate as
    /// `willStartRecording` or `startRecordingFailedWithError`, and a failure is logged);
    /// a denial is logged.
    func enrolledStatusChanged(_ r: Reader, to status: SRAuthorizationStatus) throws {
        switch status {
        case .authorized:
            let outcome = run.model.startRecording(r.sensor, stream: r.stream)
            if case .failed(let e) = outcome { run.log("warn", "\(r.sensor.rawValue): cannot record: \(e)") }
            try deliverRecording(r, outcome, "startRecording", success: "willStartRecording", failure: "startRecordingFailedWithError")
        case .denied:
            run.log("warn", "\(r.sensor.rawValue) is denied: not recorded")
        case .notDetermined:
            break
        }
    }
}
