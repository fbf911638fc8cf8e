import ArgumentParser
import Foundation
import StudyStore
import Importers

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import recorded SensorKit data into a study store (SQLite).",
        discussion: """
        Formats: native (Sensorium's own folder, docs/native-format.md), mhc (a MyHeartCounts \
        upload tree: users/<uid>/SensorKit/<sensor>/*.csv.zstd and users/<uid>/liveHealthSamples/*.json.zstd, \
        one user's folder or the folder above many; participants from the tree), mhc-csv \
        (MyHeartCounts per-sensor CSV files of one participant, .csv, .csv.gz or .csv.zstd), \
        mdh-json (a MyDataHelps SensorKit export tree, .json, .json.gz or .json.zstd); gzip \
        and zstd files are recognised by their first bytes, whatever their names. The import \
        is one transaction: on any error nothing is stored. Exact duplicates are dropped and \
        counted; importing the same files again changes nothing. The summary names, per \
        participant, sensor and device, the rows read, stored and dropped, every form met \
        and every file not read, with why (docs/importing.md).
        """
    )

    @Option(help: "Input format.")
    var format: ImportFormat

    @Argument(help: "Files or folders to import.")
    var sources: [String]

    @Option(help: "The study store to create or add to (a .sqlite file).")
    var into: String

    @Option(help: "mhc-csv: the participant the files belong to. native, mhc, mdh-json: import only this participant.")
    var participant: String?

    @Option(help: "IANA time zone for participants the input does not place (mhc, mhc-csv, mdh-json; default UTC).")
    var timezone: String?

    func validate() throws {
        guard !sources.isEmpty else { throw ValidationError("give at least one file or folder to import") }
    }

    @Flag(help: "No progress bar (there is none either when stderr is not a terminal).")
    var quiet = false

    func run() throws {
        let f = format
        let started = DispatchTime.now().uptimeNanoseconds
        // A store this run creates and then stores nothing in is removed again: a failed import
        // leaves no 1 MB empty store behind. A store that was there before is never removed.
        let created = !FileManager.default.fileExists(atPath: into)
        var store: RecordedStore?
        do {
            let opened = try RecordedStore(path: into)
            store = opened
            let stats = try opened.importData(ImportRequest(format: f, sources: sources, participant: participant, timeZone: timezone,
                                                            progressBar: CohortOptions.showProgress(quiet: quiet)))
            try opened.checkpoint()
            try opened.close()
            print(stats.report(seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
            if created && stats.rowsStored == 0 && stats.metadataAdded == 0 {
                ImportCommand.removeStore(into)
                print("store: none written (the sources hold nothing to store)")
            } else {
                print("store: \(into)")
            }
        } catch {
            try? store?.close()
            if created { ImportCommand.removeStore(into) }
            switch error {
            case let e as ImportError:
                printError("import failed, nothing was stored: \(e)")
                throw ExitCode(1)
            case let e as StoreCorruption:
                printError("\(e)")
                throw ExitCode(1)
            default:
                throw error
            }
        }
    }

    /// Removes the store file at `path` and SQLite's files beside it (`-wal`, `-shm`, `-journal`).
    static func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
