import ArgumentParser
import Foundation
@_spi(Bindings) import LuaHost
import Sensorium

/// `sensorium bench cohort`: participants per second of a protocol over a simulated cohort
/// with one job and with N (or, with `--curve`, every power of two up to N), the speed-ups,
/// a check that every run wrote the same bytes, and (with `--processes`) the same cohort
/// run as N separate `sensorium run --shard i/N --jobs 1` processes, which is what one
/// process with `--jobs N` should come close to.
struct BenchCohort: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohort",
        abstract: "Participants per second of a cohort run with --jobs 1 and --jobs N, and the speed-up.",
        discussion: """
            --curve also runs every power of two between 1 and N; --processes also runs the \
            cohort as N processes of `sensorium run --shard i/N --jobs 1` at once and compares \
            one process of --jobs N with them. CPU seconds are user + system of all threads \
            (system time apart): more CPU for the same work at more jobs is what the jobs \
            lose to each other.
            """
    )

    @Argument(help: "The protocol folder (default: protocols/data_quality).")
    var path: String = "protocols/data_quality"

    @Option(help: "Participants (the scenario's, filled up with generated ones).")
    var participants: Int = 100

    @Option(help: "Study length in days.")
    var days: Int = 14

    @Option(help: "Jobs of the parallel run (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "Run every power of two of jobs up to N, not only 1 and N.")
    var curve = false

    @Flag(help: "Also run the cohort as N shard processes with --jobs 1 each, all at once.")
    var processes = false

    func validate() throws {
        try FlagCheck.positive(participants, "--participants")
        try FlagCheck.positive(days, "--days")
    }

    func run() throws {
        let script = try resolveScript(path)
        let dirs = moduleDirectories(of: script)
        var configuration = StudyConfiguration()
        configuration.stdlibFolder = stdlibOverride()
        configuration.participants = participants
        configuration.days = days
        configuration.timeLimitMilliseconds = 0
        var study = Study(.file(script, moduleDirectories: dirs), world: .simulated(scenario: defaultScenario(beside: script)), configuration: configuration)
        let n = try CohortOptions.jobCount(jobs, memoryLimitMiB: LuaLimits().memoryBytes >> 20)
        print("sensorium bench cohort: \(script), \(participants) participants × \(days) days, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print("  (a shared or busy machine lowers both rates and the speed-up; compare ratios from one run)")
        var results: [CohortTiming] = []
        for j in BenchCohort.jobSeries(upTo: n, curve: curve) {
            study.configuration.jobs = j
            let before = CPUTime.ofThisProcess()
            let start = DispatchTime.now().uptimeNanoseconds
            let result: StudyResult
            do { result = try study.run() } catch let e as StudyError {
                throw CommandError("the protocol failed: \(e.message)")
            }
            let timing = CohortTiming(jobs: j, seconds: seconds(since: start), cpu: CPUTime.ofThisProcess() - before,
                                      output: result.output + result.reportText)
            results.append(timing)
            print(timing.line(participants: participants, base: results[0]))
        }
        let last = results[results.count - 1]
        print(String(format: "  speed-up --jobs %d vs --jobs 1: %.2f×", last.jobs, results[0].seconds / last.seconds))
        let perThousand = last.seconds / Double(participants) * 1000
        print(String(format: "  1,000 participants at --jobs %d: about %.0f s", last.jobs, perThousand))
        let identical = results.allSatisfy { $0.output == results[0].output }
        print("  output identical: \(identical ? "yes" : "NO") (\(results[0].output.utf8.count) bytes)")
        if processes { try compareWithProcesses(script: script, jobs: n, inProcess: last.jobs == n ? last : nil) }
        if !identical { throw ExitCode(1) }
    }

    /// 1 and `n`, or with `curve` 1, 2, 4, … below `n`, then `n`.
    static func jobSeries(upTo n: Int, curve: Bool) -> [Int] {
        guard n > 1 else { return [1] }
        guard curve else { return [1, n] }
        var series = [1]
        var j = 2
        while j < n { series.append(j); j *= 2 }
        return series + [n]
    }

    /// Runs the cohort as `jobs` shard processes of this executable at once (each `--jobs 1`,
    /// writing its `--out` folder into a temporary folder) and prints the time against one
    /// process with `--jobs N` (`inProcess`, run before).
    private func compareWithProcesses(script: String, jobs: Int, inProcess: CohortTiming?) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-bench-cohort-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let command = SelfCommand.current()
        let before = CPUTime.ofChildren()
        let start = DispatchTime.now().uptimeNanoseconds
        var children: [Process] = []
        for i in 1...jobs {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst()) + [
                "run", script, "--participants", "\(participants)", "--days", "\(days)", "--time-limit", "0",
                "--jobs", "1", "--shard", "\(i)/\(jobs)", "--out", folder.appendingPathComponent("\(i)").path, "--quiet",
            ]
            if let stdlib = stdlibOverride() { process.environment = ProcessInfo.processInfo.environment.merging(["SENSORIUM_STDLIB": stdlib]) { $1 } }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            children.append(process)
        }
        for child in children { child.waitUntilExit() }
        let secs = seconds(since: start)
        let cpu = CPUTime.ofChildren() - before
        // A shard that ran to its end wrote its shard file; it exits 1 when its participants
        // have findings (as `run` does), which is output, not a failure.
        let failed = children.indices.filter { i in
            children[i].terminationStatus > 1
                || !FileManager.default.fileExists(atPath: folder.appendingPathComponent("\(i + 1)/shard.json").path)
        }.count
        print(String(format: "  %d processes × --jobs 1 (--shard i/%d, each also writes --out): %8.2f s  CPU %7.2f s (system %5.2f)",
                     jobs, jobs, secs, cpu.total, cpu.system))
        if failed > 0 { throw CommandError("\(failed) of \(jobs) shard processes failed (run one by hand: \(command.joined(separator: " ")) run \(script) --shard 1/\(jobs) --out DIR)") }
        if let one = inProcess {
            print(String(format: "  one process --jobs %d / %d processes: %.2f wall, %.2f CPU (1.00 = no loss inside one process)",
                         jobs, jobs, one.seconds / secs, one.cpu.total / cpu.total))
        }
    }
}

/// One timed cohort run.
struct CohortTiming {
    var jobs: Int
    var seconds: Double
    var cpu: CPUTime
    var output: String

    /// "--jobs 4:  12.3 s  32.5 participants/s  30.8 ms/participant  speed-up 3.90  CPU 47.1 s (system 0.4)".
    func line(participants: Int, base: CohortTiming) -> String {
        "  --jobs \(jobs):".padding(toLength: 14, withPad: " ", startingAt: 0)
            + String(format: "%8.2f s  %7.2f participants/s  %6.1f ms/participant  speed-up %5.2f  CPU %7.2f s (system %5.2f)",
                     seconds, Double(participants) / seconds, seconds / Double(participants) * 1000, base.seconds / seconds,
                     cpu.total, cpu.system)
    }
}
