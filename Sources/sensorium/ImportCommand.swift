import ArgumentParser
import Foundation
import SensorBackends

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import recorded SensorKit data into a study store (SQLite).",
        discussion: """
        Formats: native (Sensorium's own folder, docs/native-format.md), mhc-csv (MyHeartCounts per-sensor CSV files, .csv, .csv.gz or .csv.zstd), mdh-json (a MyDataHelps SensorKit export tree, .json, .json.gz or .json.zstd); gzip and zstd files are recognised by their first bytes, whatever their names. The import is one transaction: on any error nothing is stored. Exact duplicates are dropped and counted; importing the same files again changes nothing.
        """
    )

    @Option(help: "Input format.")
    var format: ImportFormat

    @Argument(help: "Files or folders to import.")
    var sources: [String]

    @Option(help: "The study store to create or add to (a .sqlite file).")
    var into: String

    @Option(help: "mhc-csv: the participant the files belong to. native, mdh-json: import only this participant.")
    var participant: String?

    @Option(help: "IANA time zone for participants the input does not place (mhc-csv, mdh-json; default UTC).")
    var timezone: String?

    func validate() throws {
        guard !sources.isEmpty else { throw ValidationError("give at least one file or folder to import") }
    }

    @Flag(help: "No progress bar (there is none either when stderr is not a terminal).")
    var quiet = false

    func run() throws {
        let f = format
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let store = try RecordedStore(path: into)
            let stats = try store.importData(ImportRequest(format: f, sources: sources, participant: participant, timeZone: timezone,
                                                             progressBar: CohortOptions.showProgress(quiet: quiet)))
            try store.checkpoint()
            try store.close()
            print(stats.report(seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
            print("store: \(into)")
        } catch let e as ImportError {
            printError("import failed, nothing was stored: \(e)")
            throw ExitCode(1)
        } catch let e as StoreCorruption {
            printError("\(e)")
            throw ExitCode(1)
        }
    }
}
