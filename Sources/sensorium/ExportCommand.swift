import ArgumentParser
import Foundation
import SensorBackends
import SensorKitModel
import StudyRuntime

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a simulated study in Sensorium's native format (for import and replay).",
        discussion: """
        Takes the same world flags as `run`. Writes every stream the simulator produces over the study span, the participants' time zones and devices, the authorization timeline their consent answers and revocations give, and their deletions (docs/native-format.md).
        """
    )

    @Option(help: "The folder to write (created if needed).")
    var into: String

    @Option(help: "Scenario file (participants, consent, events).")
    var scenario: String?

    @Option(help: "Study length in days (default 14).")
    var days: Int?

    @Option(help: "Number of participants (default: the scenario's, else 3).")
    var participants: Int?

    @Option(help: "Seed of the simulated world (default: the scenario's, else 1).")
    var seed: Int64?

    @Option(help: "First study day, YYYY-MM-DD (default 2026-03-02).")
    var start: String?

    @Option(help: "Time zone of participants without one (IANA name, default UTC).")
    var timezone: String?

    @Option(help: "Only these sensors, comma-separated (default: every sensor the simulator produces).")
    var sensors: String?

    func validate() throws {
        try FlagCheck.world(days: days, participants: participants, start: start, timezone: timezone)
    }

    @Flag(help: "No progress bar (there is none either when stderr is not a terminal).")
    var quiet = false

    func run() throws {
        // The runner reads the scenario exactly as `run` does; no protocol is executed.
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-export-\(getpid()).lua")
        try "-- export\n".write(to: tmp, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: tmp) }
        var options = StudyOptions(protocolPath: tmp.path, scenarioPath: scenario)
        options.days = days
        options.participants = participants
        options.seed = seed
        options.start = start
        options.timeZone = timezone
        let runs: [ParticipantRun]
        do {
            runs = try StudyRunner(options: options).prepare(output: { _ in })
        } catch let e as ScenarioError {
            printError(e.description)
            throw ExitCode(1)
        }
        guard let first = runs.first else { throw ValidationError("the scenario has no participants") }
        let spanStart = first.settings.start, spanEnd = first.settings.end
        var sensors = SimulatedSource.implementedSensors
        if let list = self.sensors {
            sensors = []
            for name in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                switch SensorCatalogue.sensor(named: name) {
                case .success(let s): sensors.append(s)
                case .failure(let e): throw ValidationError("--sensors: \(e)")
                }
            }
        }
        var people: [NativeFormat.Study.Participant] = []
        for run in runs {
            let setup = run.setup
            var auth: [AuthorizationChange] = []
            // The consent sheet answered at the start, then the scenario's revocations and grants.
            for s in sensors {
                switch setup.consent.answer(forGroup: s.authorizationGroup) {
                case .allow: auth.append(AuthorizationChange(sensor: s, at: spanStart, status: .authorized))
                case .deny, .dontEnroll: auth.append(AuthorizationChange(sensor: s, at: spanStart, status: .denied))
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
            people.append(.init(id: setup.id, timeZone: setup.timeZone.identifier, authorization: auth, deletions: deletions))
        }
        let study = NativeFormat.Study(start: spanStart, end: spanEnd, participants: people, sensors: sensors)
        let began = DispatchTime.now().uptimeNanoseconds
        // One step per participant × device × sensor stream, as the exporter visits them.
        let total = runs.reduce(0) { n, run in
            n + first.source.devices(participant: run.setup.id).reduce(0) { m, d in m + sensors.filter { $0.deviceKinds.contains(d.kind) }.count }
        }
        let progress = StreamProgress(bar: ProgressBar(unit: "streams", enabled: CohortOptions.showProgress(quiet: quiet)), total: total)
        // Streams are written on several threads: the bar is advanced under a lock.
        let stats = try NativeFormat.export(study, source: first.source, to: URL(fileURLWithPath: into)) { file in
            progress.step(file)
        }
        progress.bar.finish()
        print(String(format: "exported %d participant(s), %d day(s): %d files, %d rows in %.1f s to %@",
                     runs.count, first.settings.days, stats.files, stats.rows,
                     Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9, into))
    }
}

/// The export's progress bar, shared by the threads that write streams.
private final class StreamProgress: @unchecked Sendable {
    let bar: ProgressBar
    let total: Int
    private let lock = NSLock()
    private var done = 0

    init(bar: ProgressBar, total: Int) {
        self.bar = bar
        self.total = total
    }

    /// One more stream started (`file`); safe from any thread.
    func step(_ file: String) {
        lock.lock()
        defer { lock.unlock() }
        bar.update(done: done, total: total, label: file)
        done += 1
    }
}
