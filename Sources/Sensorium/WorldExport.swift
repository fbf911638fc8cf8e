import Foundation
import Importers
import SensorKitModel
import Simulator
import StudyRuntime

/// A simulated world written in Sensorium's native format (`docs/native-format.md`), for
/// `sensorium import` and replay: every stream the simulator produces over the study span,
/// the participants' time zones and devices, the authorization timeline their consent
/// answers and the scenario's revocations and grants give, and their deletions. No protocol
/// runs. `sensorium export` is built on it.
public final class WorldExport {
    /// Every participant's run set up (their setups, and the world's one source).
    let runs: [ParticipantRun]
    /// The sensors to write, in catalogue order as selected.
    private var selected: [Sensor] = SimulatedSource.implementedSensors

    /// The simulated world of `scenario` (nil: a default cohort drawn from the seed) under
    /// `configuration` (days, participants, seed, start, time zone). Throws `StudyError`
    /// naming the file and field when the world cannot be made.
    public init(scenario: String? = nil, configuration: StudyConfiguration = StudyConfiguration()) throws {
        let study = Study(.source("-- export\n", name: "export.lua"), world: .simulated(scenario: scenario), configuration: configuration)
        runs = try study.prepareRuns()
    }

    /// The participants' ids, in scenario order (empty when the scenario has none).
    public var participants: [String] { runs.map(\.setup.id) }

    /// The study's length in days.
    public var days: Int { runs.first?.settings.days ?? 0 }

    /// The sensors the export writes (default: every sensor the simulator produces).
    public var sensors: [String] { selected.map(\.rawValue) }

    /// Writes only the sensors named (SensorKit names such as `"accelerometer"`). Throws
    /// `StudyError` for a name the catalogue does not know, with the closest names.
    public func select(sensors names: [String]) throws {
        selected = try names.map { name in
            switch SensorCatalogue.sensor(named: name) {
            case .success(let s): return s
            case .failure(let e): throw StudyError("\(e)")
            }
        }
    }

    /// The streams the export writes, one per participant × device × sensor the device has:
    /// the steps `write`'s progress reports.
    public var streamCount: Int {
        guard let source = runs.first?.source else { return 0 }
        return runs.reduce(0) { n, run in
            n + source.devices(participant: run.setup.id).reduce(0) { m, d in m + selected.filter { $0.deviceKinds.contains(d.kind) }.count }
        }
    }

    /// An upper estimate of the export's size in bytes: every continuous stream at its nominal
    /// rate on every device kind that records it, about 12 bytes per column and 40 per row.
    public var estimatedBytes: Int64 {
        var perDay = 0.0
        for s in selected {
            let rows = s.info.cadence.nominalPeriod.map { 86_400 / max($0, 0.001) } ?? 200
            perDay += rows * Double(s.deviceKinds.count) * (40 + 12 * Double(s.info.columnFields.count))
        }
        return Int64(min(perDay * Double(runs.count) * Double(days), 9e18))
    }

    /// Writes the export into `folder` (created if needed). `progress` gets each stream's file
    /// as it starts, from the threads that write streams (several at once). Throws the file
    /// system's error as it is (a full disk is `ENOSPC`); what was written stays.
    public func write(to folder: String, progress: (@Sendable (String) -> Void)? = nil) throws -> ExportSummary {
        guard let first = runs.first else { throw StudyError("the scenario has no participants") }
        let stats = try NativeFormat.export(nativeStudy(start: first.settings.start, end: first.settings.end), source: first.source,
                                            to: URL(fileURLWithPath: folder), progress: progress)
        return ExportSummary(files: stats.files, rows: stats.rows)
    }

    /// The manifest's study: the span, each participant's time zone, authorization changes
    /// (the consent sheet answered at `start`, then revocations and grants) and deletions.
    func nativeStudy(start: Double, end: Double) -> NativeFormat.Study {
        let sensors = selected
        let people = runs.map { run -> NativeFormat.Study.Participant in
            let setup = run.setup
            var auth: [AuthorizationChange] = []
            for s in sensors {
                switch setup.consent.answer(forGroup: s.authorizationGroup) {
                case .allow: auth.append(AuthorizationChange(sensor: s, at: start, status: .authorized))
                case .deny, .dontEnroll: auth.append(AuthorizationChange(sensor: s, at: start, status: .denied))
                case .cancel: break
                }
            }
            var deletions: [DeletionEvent] = []
            for e in setup.events {
                switch e {
                case .revoke(let s, let at):
                    for g in s.authorizationGroup where sensors.contains(g) { auth.append(AuthorizationChange(sensor: g, at: at, status: .denied)) }
                case .grant(let s, let at):
                    for g in s.authorizationGroup where sensors.contains(g) { auth.append(AuthorizationChange(sensor: g, at: at, status: .authorized)) }
                case .delete(let s, let from, let to, let at):
                    deletions.append(DeletionEvent(sensor: s, range: TimeRange(after: from, through: to), at: at))
                default: break
                }
            }
            auth.sort { ($0.at, $0.sensor.rawValue) < ($1.at, $1.sensor.rawValue) }
            return .init(id: setup.id, timeZone: setup.timeZone.identifier, authorization: auth, deletions: deletions)
        }
        return NativeFormat.Study(start: start, end: end, participants: people, sensors: sensors)
    }
}

/// What `WorldExport.write` wrote.
public struct ExportSummary: Sendable, Equatable {
    /// Stream files written (one per participant × device × sensor; `manifest.json` aside).
    public var files: Int
    /// Sample rows written, over every stream.
    public var rows: Int
}
