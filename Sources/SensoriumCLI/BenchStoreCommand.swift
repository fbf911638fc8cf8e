import ArgumentParser
import Foundation

struct BenchStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Export and import rows/s of 50 Hz accelerometer (native format and MyDataHelps JSON: a simulated participant-week of phone and watch; MyHeartCounts CSV: a participant-day and -week; a MyHeartCounts tree of many uploads), each compressed import (.gz, .zstd) against the same files plain, bytes per stored sample, decode speed, and a stored week summarised vs the simulator; ends with one line of every rate."
    )

    @Option(help: "Days of the long runs (native and MyDataHelps export, the MyHeartCounts 'week'): 1 by default, a few minutes on 2 cores and about a minute on 16; 7 for the participant-week figures.")
    var days: Int = 1

    @Option(help: "Only these parts, comma-separated: native, mdh, mhc, uploads (default: all).")
    var parts: String?

    @Option(help: "Work in this folder and keep its files (default: a temporary folder, removed).")
    var keep: String?

    func validate() throws { try FlagCheck.positive(days, "--days") }

    func run() throws {
        try StoreBenchmark.run(weekDays: days, directory: keep.map { URL(fileURLWithPath: $0) },
                                 parts: Set((parts ?? "").split(separator: ",").map { String($0) })) { line in
            FileHandle.standardOutput.write((line + "\n").data(using: .utf8)!)
        }
    }
}
