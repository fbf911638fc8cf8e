import ArgumentParser
import Foundation
@_spi(CommandLine) import Sensorium
import Simulator
import Importers
import SensorKitModel
import StudyRuntime
import StudyWorlds

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

    @OptionGroup var world: WorldOptions

    @Option(parsing: .unconditional, help: "Seed of the simulated world (default: the scenario's, else 1).")
    var seed: Int64?

    @Option(help: "Only these sensors, comma-separated (default: every sensor the simulator produces).")
    var sensors: String?

    @Flag(help: "No progress bar (there is none either when stderr is not a terminal).")
    var quiet = false

    func run() throws {
        // The runner reads the scenario exactly as `run` does; no protocol is executed.
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-export-\(getpid()).lua")
        try "-- export\n".write(to: tmp, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: tmp) }
        var configuration = StudyConfiguration()
        world.apply(to: &configuration)
        configuration.seed = seed
        let session = StudySession(Study(.file(tmp.path, moduleDirectories: []), world: .simulated(scenario: world.scenario),
                                         configuration: configuration))
        let runs: [ParticipantRun]
        do {
            runs = try session.prepare(output: { _ in })
        } catch let e as ScenarioError {
            printError(e.description)
            throw ExitCode(1)
        }
        guard let first = runs.first else { throw CommandError("the scenario has no participants") }
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
        let target = URL(fileURLWithPath: into)
        let estimate = ExportCommand.estimatedBytes(sensors: sensors, participants: runs.count, days: first.settings.days)
        let free = ExportCommand.freeBytes(near: target)
        printError("export: up to about \(ExportCommand.size(estimate)) for \(runs.count) participant(s) × \(first.settings.days) day(s) × \(sensors.count) sensor(s)"
                   + (free.map { " (\(ExportCommand.size($0)) free)" } ?? "")
                   + (sensors.contains(.accelerometer) || sensors.contains(.rotationRate) ? "; the 50 Hz motion sensors are most of it (--sensors picks fewer)" : ""))
        if let free, estimate > free {
            printError("export: not started: \(into) has \(ExportCommand.size(free)) free, the export needs about \(ExportCommand.size(estimate)); choose fewer --sensors, --days or --participants")
            throw ExitCode(1)
        }
        let existed = FileManager.default.fileExists(atPath: target.path)
        let began = DispatchTime.now().uptimeNanoseconds
        // One step per participant × device × sensor stream, as the exporter visits them.
        let total = runs.reduce(0) { n, run in
            n + first.source.devices(participant: run.setup.id).reduce(0) { m, d in m + sensors.filter { $0.deviceKinds.contains(d.kind) }.count }
        }
        // Streams are written on several threads: the bar and the list of files written are kept under a lock.
        let progress = StreamProgress(bar: ProgressBar(unit: "streams", enabled: CohortOptions.showProgress(quiet: quiet)), total: total)
        let stats: NativeFormat.ExportStats
        do {
            stats = try NativeFormat.export(study, source: first.source, to: target) { file in
                progress.step(file)
            }
        } catch {
            progress.bar.finish()
            let written = progress.files
            // Remove what this export wrote: the whole folder if it made it, else its files.
            if existed {
                for file in written + ["manifest.json"] { try? FileManager.default.removeItem(at: target.appendingPathComponent(file)) }
            } else {
                try? FileManager.default.removeItem(at: target)
            }
            let reason = ExportCommand.isDiskFull(error) ? "the disk is full" : (FileErrors.describe(error) ?? "\(error)")
            printError("export failed: \(reason) (writing \(written.last.map { target.appendingPathComponent($0).path } ?? target.path)); what it wrote was removed")
            throw ExitCode(1)
        }
        progress.bar.finish()
        print(String(format: "exported %d participant(s), %d day(s): %d files, %d rows in %.1f s to %@",
                     runs.count, first.settings.days, stats.files, stats.rows,
                     Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9, into))
    }

    /// An upper estimate of an export's size: every continuous stream at its nominal rate on
    /// every device kind that records it, about 12 bytes per column and 40 per row.
    static func estimatedBytes(sensors: [Sensor], participants: Int, days: Int) -> Int64 {
        var perDay = 0.0
        for s in sensors {
            let rows = s.info.cadence.nominalPeriod.map { 86_400 / max($0, 0.001) } ?? 200
            perDay += rows * Double(s.deviceKinds.count) * (40 + 12 * Double(s.info.columnFields.count))
        }
        return Int64(min(perDay * Double(participants) * Double(days), 9e18))
    }

    /// Free bytes on the file system holding `url` (or its nearest existing parent).
    static func freeBytes(near url: URL) -> Int64? {
        var dir = url
        while !FileManager.default.fileExists(atPath: dir.path) && dir.path != "/" { dir.deleteLastPathComponent() }
        return (try? FileManager.default.attributesOfFileSystem(forPath: dir.path))?[.systemFreeSize].flatMap { ($0 as? NSNumber)?.int64Value }
    }

    /// "1.2 GB", "340 MB", "12 kB".
    static func size(_ bytes: Int64) -> String {
        let b = Double(bytes)
        if b >= 1e9 { return String(format: "%.1f GB", b / 1e9) }
        if b >= 1e6 { return String(format: "%.0f MB", b / 1e6) }
        return String(format: "%.0f kB", max(b / 1e3, 1))
    }

    /// Whether `error` is the disk (or quota) running out (ENOSPC, EDQUOT, Cocoa 640).
    static func isDiskFull(_ error: Error) -> Bool {
        let ns = error as NSError
        if ns.domain == NSCocoaErrorDomain && ns.code == NSFileWriteOutOfSpaceError { return true }
        if ns.domain == NSPOSIXErrorDomain && (ns.code == Int(ENOSPC) || ns.code == Int(EDQUOT)) { return true }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? Error { return isDiskFull(underlying) }
        return "\(error)".contains("No space left on device")
    }
}

/// The export's progress bar, shared by the threads that write streams.
private final class StreamProgress: @unchecked Sendable {
    let bar: ProgressBar
    let total: Int
    private let lock = NSLock()
    private var done = 0
    private var started: [String] = []

    /// The files started so far, in the order they were started.
    var files: [String] {
        lock.lock()
        defer { lock.unlock() }
        return started
    }

    init(bar: ProgressBar, total: Int) {
        self.bar = bar
        self.total = total
    }

    /// One more stream started (`file`); safe from any thread.
    func step(_ file: String) {
        lock.lock()
        defer { lock.unlock() }
        bar.update(done: done, total: total, label: file)
        started.append(file)
        done += 1
    }
}
