import ArgumentParser
import Foundation
import SensorBackends

struct BenchStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Import rows/s of a 50 Hz accelerometer MyHeartCounts CSV (a participant-day and -week), and a stored week summarised vs the simulator."
    )

    @Option(help: "Days in the 'week' run.")
    var days: Int = 7

    @Option(help: "Work in this folder and keep its files (default: a temporary folder, removed).")
    var keep: String?

    func validate() throws { try FlagCheck.positive(days, "--days") }

    func run() throws {
        try StoreBenchmark.run(weekDays: days, directory: keep.map { URL(fileURLWithPath: $0) }) { line in
            FileHandle.standardOutput.write((line + "\n").data(using: .utf8)!)
        }
    }
}
