import ArgumentParser
import Foundation
@_spi(Bindings) import LuaHost
import Sensorium

/// `sensorium bench cohort`: participants per second of a protocol over a simulated cohort
/// with one job and with N, the speed-up, and a check that both wrote the same bytes.
struct BenchCohort: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohort",
        abstract: "Participants per second of a cohort run with --jobs 1 and --jobs N, and the speed-up."
    )

    @Argument(help: "The protocol folder (default: protocols/data_quality).")
    var path: String = "protocols/data_quality"

    @Option(help: "Participants (the scenario's, filled up with generated ones).")
    var participants: Int = 100

    @Option(help: "Study length in days.")
    var days: Int = 14

    @Option(help: "Jobs of the parallel run (default: the number of cores).")
    var jobs: Int?

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
        var results: [(jobs: Int, seconds: Double, output: String)] = []
        for j in [1, n] {
            study.configuration.jobs = j
            let start = DispatchTime.now().uptimeNanoseconds
            let result: StudyResult
            do { result = try study.run() } catch let e as StudyError {
                throw CommandError("the protocol failed: \(e.message)")
            }
            let secs = seconds(since: start)
            let output = result.output + result.reportText
            results.append((j, secs, output))
            print("  --jobs \(j):".padding(toLength: 14, withPad: " ", startingAt: 0)
                  + String(format: "%8.2f s  %7.2f participants/s  %6.1f ms/participant", secs, Double(participants) / secs,
                           secs / Double(participants) * 1000))
        }
        let speedUp = results[0].seconds / results[1].seconds
        print(String(format: "  speed-up --jobs %d vs --jobs 1: %.2f×", n, speedUp))
        let perThousand = results[1].seconds / Double(participants) * 1000
        print(String(format: "  1,000 participants at --jobs %d: about %.0f s", n, perThousand))
        print("  output identical: \(results[0].output == results[1].output ? "yes" : "NO") (\(results[0].output.utf8.count) bytes)")
        if results[0].output != results[1].output { throw ExitCode(1) }
    }
}
