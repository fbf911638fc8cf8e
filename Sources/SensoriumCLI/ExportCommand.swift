import ArgumentParser
import Foundation
import Sensorium

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
        // The world exactly as `run` reads it; no protocol is executed.
        var configuration = StudyConfiguration()
        world.apply(to: &configuration)
        configuration.seed = seed
        let export: WorldExport
        do {
            export = try WorldExport(scenario: world.scenario, configuration: configuration)
        } catch let e as StudyError {
            printError(e.message)
            throw ExitCode(1)
        }
        guard !export.participants.isEmpty else { throw CommandError("the scenario has no participants") }
        if let list = self.sensors {
            do {
                try export.select(sensors: list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            } catch let e as StudyError {
                throw ValidationError("--sensors: \(e.message)")
            }
        }
        let target = URL(fileURLWithPath: into)
        let estimate = export.estimatedBytes
        let free = ExportCommand.freeBytes(near: target)
        let participants = export.participants.count, days = export.days
        printError("export: up to about \(ExportCommand.size(estimate)) for \(participants) participant(s) × \(days) day(s) × \(export.sensors.count) sensor(s)"
                   + (free.map { " (\(ExportCommand.size($0)) free)" } ?? "")
                   + (export.sensors.contains("accelerometer") || export.sensors.contains("rotationRate") ? "; the 50 Hz motion sensors are most of it (--sensors picks fewer)" : ""))
        if let free, estimate > free {
            printError("export: not started: \(into) has \(ExportCommand.size(free)) free, the export needs about \(ExportCommand.size(estimate)); choose fewer --sensors, --days or --participants")
            throw ExitCode(1)
        }
        let existed = FileManager.default.fileExists(atPath: target.path)
        let began = DispatchTime.now().uptimeNanoseconds
        // Streams are written on several threads: the bar and the list of files written are kept under a lock.
        let progress = StreamProgress(bar: ProgressBar(unit: "streams", enabled: CohortOptions.showProgress(quiet: quiet)), total: export.streamCount)
        let summary: ExportSummary
        do {
            summary = try export.write(to: into) { file in progress.step(file) }
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
                     participants, days, summary.files, summary.rows,
                     Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9, into))
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
