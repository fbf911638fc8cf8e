import ArgumentParser
import Foundation
import StudyRuntime
import StudyReport

/// `sensorium merge`: joins the shards of one cohort run into what one process would have written.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Join the --out folders of `sensorium run --shard i/n` into one run's output.",
        discussion: """
        Prints what `sensorium run` over the whole cohort prints and writes its tables (CSV and \
        JSON) into --into. Refuses shards of different runs (protocol, stdlib, scenario, seed or \
        flags differ), missing shards and shards given twice, naming them. Exits 1 when the \
        shards recorded findings (failed expect checks), like the run would have.
        """
    )

    @Argument(help: "The shards' --out folders (any order).")
    var shards: [String]

    @Option(help: "Folder to write the merged tables, charts and run report (index.html) into.")
    var into: String

    func run() throws {
        let merge: ShardMerge
        do {
            merge = try ShardMerge(directories: shards)
        } catch let e as MergeError {
            printError("merge: " + e.message)
            throw ExitCode(1)
        }
        let output = OutputBuffer()
        output.write(merge.stdout)
        output.flush()
        try merge.report.write(to: URL(fileURLWithPath: into))
        if let page = merge.page {
            try Data(RunReportPage(book: merge.report, facts: page).render().utf8)
                .write(to: URL(fileURLWithPath: into).appendingPathComponent("index.html"), options: .atomic)
        }
        try reportFindings(merge.findings.map { ($0.participant, $0.isStoppedRun, $0.description) })
    }
}
