import Foundation
import LuaHost
import SensorKitModel
import StudyReport
import StudyRuntime

/// One participant of a study opened for interactive use — a notebook, a prompt, a test:
/// the participant's Lua state with the study API (the stdlib, the study's registrations),
/// in virtual time that moves only when asked. `Study.openParticipants` makes them; the
/// command line's `repl` (and the Jupyter kernel behind `repl --machine`) are built on it.
public final class StudyParticipantSession {
    /// The runtime's participant behind the session: Lua state, model, clock, event loop.
    let run: ParticipantRun
    /// Where every participant of the study reports (the rows of all of them).
    let book: ReportBook

    init(run: ParticipantRun, book: ReportBook) {
        self.run = run
        self.book = book
    }

    /// The participant's id.
    public var id: String { run.setup.id }

    /// The participant's Lua state (for `LuaRepl`'s completion, `functionInfo`, globals).
    /// Code run here directly does not deliver what it queues: use `execute`.
    public var state: LuaState { run.state }

    /// The participant's virtual time: seconds since 1970.
    public var now: Double { run.clock.now }

    /// The participant's time zone now (it follows travel).
    public var timeZone: TimeZone { run.clock.timeZone }

    /// The study's first instant and its end (seconds since 1970).
    public var start: Double { run.settings.start }
    /// The end of the study's last day (seconds since 1970); `advance` may go past it.
    public var end: Double { run.settings.end }
    /// The study's length in days.
    public var days: Int { run.settings.days }
    /// The participant's SensorKit time now (`SRAbsoluteTime`: seconds since the device's
    /// boot reference, not wall time).
    public var absoluteTime: Double { run.model.clock.current().rawValue }

    /// Every sensor of the catalogue, in catalogue order, with this participant's
    /// authorization and recording now (what the REPL's `:sensors` lists).
    public var sensors: [ParticipantSensor] {
        Sensor.allCases.map { s in
            ParticipantSensor(name: s.rawValue, authorization: run.model.status(s).name,
                              isRecording: run.model.recording.isActive(s, at: run.clock.now),
                              deviceKinds: s.info.deviceKinds.map(\.rawValue), cadence: s.info.cadence.summary)
        }
    }

    /// What the recording holds for this participant, one entry per stored sensor and device
    /// (devices phone first, sensors by name), or nil in a simulated world: what `:sensors`
    /// adds in a replay. Throws `StudyError` when the store's index cannot be read.
    public func recordedStreams() throws -> [RecordedStream]? {
        try studyErrors {
            try run.source.streamSummaries(participant: id).map { summaries in
                summaries.map { RecordedStream(sensor: $0.sensor.rawValue, deviceKind: $0.device.kind.rawValue, deviceModel: $0.device.model,
                                               samples: $0.rows, firstWrite: $0.firstWrite, lastWrite: $0.lastWrite) }
            }
        }
    }

    /// The participant now: devices, the sensors authorization was decided for or that
    /// record, and the events queued (what the REPL's `:status` shows).
    public var status: ParticipantStatus {
        ParticipantStatus(participant: id, time: now,
                          devices: run.source.devices(participant: id).map { "\($0.model) (\($0.productType))" },
                          sensors: sensors.filter { $0.authorization != SRAuthorizationStatus.notDetermined.name || $0.isRecording },
                          queuedEvents: run.loop.count)
    }

    /// The charts drawn so far by every participant opened with this one, in drawing order.
    public var charts: [StudyChart] { run.report.charts.map(StudyChart.init) }

    /// Declares a study that entitles and describes every sensor, for experiments without
    /// a protocol (the REPL without one); a `study{}` run afterwards replaces it.
    public func allowEverySensor() {
        run.model.study = .permissive
    }

    /// Runs the protocol's top level (its declarations, readers, schedules), then what it
    /// queued for now. Throws `StudyError` with the message `sensorium run` prints.
    public func runProtocol() throws {
        try studyErrors {
            try run.runTopLevel()
            try run.drain(until: run.clock.now)
        }
    }

    /// Runs `code` as a chunk named `chunkName` in the participant's state, then delivers
    /// what it queued for now (delegate callbacks), and returns the chunk's values. Throws
    /// `StudyError` (the Lua error with its traceback) when the chunk or a callback fails.
    public func execute(_ code: String, chunkName: String = "=input") throws -> [LuaValue] {
        try studyErrors {
            let values = try state.execute(code, chunkName: chunkName)
            try run.drain(until: run.clock.now)
            return values
        }
    }

    /// Moves virtual time forward to `time`, running every schedule and callback due on the
    /// way (an earlier time changes nothing). Throws `StudyError` when one fails.
    public func advance(to time: Double) throws {
        try studyErrors { try run.drain(until: max(time, run.clock.now)) }
    }

    /// The report tables so far, of every participant opened with this one, as
    /// `sensorium run` prints them ("" when nothing was reported).
    public var reportText: String { book.renderText() }

    /// `body`'s errors as `StudyError`s with the command line's message.
    private func studyErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as StudyError { throw e } catch { throw StudyError(StudySession.message(of: error)) }
    }
}

extension Study {
    /// Opens every participant of the study for interactive use: each set up (state, model,
    /// world) with nothing run, not even the protocol (`runProtocol`). What they print goes
    /// to `output`; they report into one book (`reportText`). `announce` gets what the world
    /// says about itself before any participant is opened (a replay's span), and `warn` each
    /// of its warnings (a flag or scenario setting a replay ignores, an unknown time zone…),
    /// as `run` gives them. Throws `StudyError` when the world cannot be made.
    public func openParticipants(output: @escaping (String) -> Void = { _ in }, announce: (([String]) -> Void)? = nil,
                                 warn: ((String) -> Void)? = nil) throws -> [StudyParticipantSession] {
        let session = StudySession(self)
        session.announce = announce
        let runs: [ParticipantRun]
        do { runs = try session.prepare(output: output) } catch { throw StudyError(StudySession.message(of: error)) }
        guard let runner = session.runner else { return [] }
        if let warn { runner.warnings.forEach(warn) }
        return runs.map { StudyParticipantSession(run: $0, book: runner.report) }
    }
}

/// One sensor of the catalogue as a participant has it now.
public struct ParticipantSensor: Sendable, Equatable {
    /// The sensor's name (`"ambientLightSensor"`).
    public var name: String
    /// `"notDetermined"`, `"authorized"` or `"denied"`.
    public var authorization: String
    /// Whether the sensor records now (some reader started recording and has not stopped).
    public var isRecording: Bool
    /// The kinds of device that have the sensor (`"phone"`, `"watch"`).
    public var deviceKinds: [String]
    /// How often it produces samples, in words (`"1 Hz while the watch is worn"`).
    public var cadence: String
}

/// The samples a recording holds of one sensor on one device of a participant.
public struct RecordedStream: Sendable, Equatable {
    /// The sensor's name (`"heartRate"`).
    public var sensor: String
    /// `"phone"` or `"watch"`.
    public var deviceKind: String
    /// The device's model as recorded (`"iPhone"`, `"Watch"`).
    public var deviceModel: String
    /// Samples stored.
    public var samples: Int
    /// The first and last write time of a stored sample (seconds since 1970); nil without samples.
    public var firstWrite: Double?
    public var lastWrite: Double?
}

/// A participant's state at one instant: what the REPL's `:status` prints.
public struct ParticipantStatus: Sendable, Equatable {
    /// The participant's id.
    public var participant: String
    /// The participant's virtual time (seconds since 1970).
    public var time: Double
    /// The participant's devices, each as `model (productType)` (`"iPhone (iPhone17,1)"`).
    public var devices: [String]
    /// The sensors whose authorization was decided or that record, in catalogue order.
    public var sensors: [ParticipantSensor]
    /// Events waiting in the participant's virtual time (schedules, deliveries).
    public var queuedEvents: Int
}

/// A chart a protocol drew (`plot.*`); equal when their data are.
public struct StudyChart: Sendable, Equatable {
    /// The chart as the report holds it.
    let chart: Chart

    init(_ chart: Chart) { self.chart = chart }

    /// The chart's name (`StudyResult.write(to:)` writes it as an SVG file named after it).
    public var name: String { chart.name }
    /// The chart as a standalone SVG document (rendered when asked for).
    public var svg: String { ChartSVG.render(chart) }
}
