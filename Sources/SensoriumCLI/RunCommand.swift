import ArgumentParser
import Foundation
import Sensorium

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a study protocol in virtual time (or a plain Lua script).",
        discussion: """
        A folder runs its protocol.lua with its scenario.lua, as a protocol. A file that \
        declares study{...} runs as a protocol too; any other file (or a folder without a \
        scenario.lua) runs once as a plain script, unless a world flag such as --days \
        makes it a protocol.
        """
    )

    @Argument(help: "A protocol folder (protocol.lua + scenario.lua), or a .lua file.")
    var path: String

    @Argument(help: "Arguments passed to a plain script as `...` (after `--` when they start with a dash).")
    var arguments: [String] = []

    @OptionGroup var world: WorldOptions

    @Option(help: "Write every report table as CSV and JSON, every chart as SVG, and the run report index.html into this folder.")
    var out: String?

    @OptionGroup var recorded: RecordingOptions

    @OptionGroup var cohort: CohortOptions

    @OptionGroup var lua: LuaOptions

    func run() throws {
        let script = try resolveScript(path)
        let output = OutputBuffer()
        let dirs = moduleDirectories(of: script)
        let studyFlags = world.anyGiven || out != nil || recorded.recording != nil || cohort.shard != nil
        let folderWithScenario = script != path && defaultScenario(beside: script) != nil
        guard studyFlags || folderWithScenario || isProtocol(script) else {
            try runPlainScript(script, dirs: dirs, output: output)
            return
        }
        var configuration = StudyConfiguration()
        world.apply(to: &configuration)
        configuration.stdlibFolder = stdlibOverride()
        configuration.seed = lua.seedGiven ? lua.seed : nil
        configuration.memoryLimitBytes = lua.limits.memoryBytes
        configuration.timeLimitMilliseconds = lua.limits.timeLimitMilliseconds
        configuration.instructionBudget = lua.limits.instructionBudget
        configuration.jobs = try cohort.jobCount(memoryLimitMiB: lua.memoryLimitMiB)
        configuration.failFast = cohort.failFast
        let scenario = world.scenario ?? defaultScenario(beside: script)
        let studyWorld = recorded.world(scenario: scenario)
        if let text = cohort.shard {
            guard let shard = StudyShard(parsing: text) else { throw ValidationError("--shard: expected i/n with 1 ≤ i ≤ n (like 3/10), got '\(text)'") }
            guard out != nil else { throw ValidationError("--shard needs --out DIR (the folder `sensorium merge` reads)") }
            configuration.shard = shard
        }
        // The module folder as typed (relative below the current folder): messages name it so.
        let study = Study(.file(script, moduleDirectories: dirs), world: studyWorld, configuration: configuration)
        let bar = ProgressBar(unit: "participants", enabled: cohort.showProgress)
        let result: StudyResult
        do {
            result = try study.run(output: { text in
                output.write(text)
                if bar.clear() { output.flush() }   // printed lines appear where the bar was
            }, announce: { lines in for line in lines { printError(line) } },
               progress: { done, total in bar.update(done: done, total: total) })
            bar.finish()
        } catch let error as StudyError {
            bar.finish()
            output.flush()
            printError(error.message)
            throw ExitCode(1)
        }
        for w in result.warnings { printError("warning: " + w) }
        output.write(result.reportText)
        output.flush()
        if let out { try result.write(to: out) }
        for failure in result.failures { printError(failure) }
        try reportFindings(result.findings.map { ($0.participant, $0.isStoppedRun, $0.description) })
    }

    /// A script without `study{}`, through the embedding API's `LuaScript`.
    func runPlainScript(_ script: String, dirs: [String], output: OutputBuffer) throws {
        var configuration = StudyConfiguration()
        configuration.stdlibFolder = stdlibOverride()
        configuration.seed = lua.seed
        configuration.memoryLimitBytes = lua.limits.memoryBytes
        configuration.timeLimitMilliseconds = lua.limits.timeLimitMilliseconds
        configuration.instructionBudget = lua.limits.instructionBudget
        do {
            let reported = try LuaScript(file: script, moduleDirectories: dirs)
                .run(arguments: arguments, configuration: configuration) { output.write(bytes: $0) }
            output.write(reported)
            output.flush()
        } catch let error as StudyError {
            output.flush()
            printError(error.message)
            throw ExitCode(1)
        }
    }
}

/// Lists failed expectations and runs an error stopped (each its participant, whether an
/// error stopped the run, its line) on stderr and fails the command when there are any.
func reportFindings(_ findings: [(participant: String, isStoppedRun: Bool, description: String)]) throws {
    guard !findings.isEmpty else { return }
    let stopped = findings.filter(\.isStoppedRun).map(\.participant)
    for f in findings { printError("finding: " + f.description) }
    let people = Set(findings.map(\.participant)).count
    let checks = findings.count - stopped.count
    var summary = "\(checks) finding\(checks == 1 ? "" : "s") (failed expect checks)"
    if !stopped.isEmpty {
        summary += " and \(stopped.count) run\(stopped.count == 1 ? "" : "s") stopped by an error (\(stopped.joined(separator: ", ")))"
    }
    printError(summary + " in \(people) participant\(people == 1 ? "" : "s"); they are the `findings` table (use --fail-fast to stop at the first one)")
    throw ExitCode(1)
}

/// A script is a protocol when it declares a study: calls `study {…}` or `study(…)`, as a
/// statement or for its value (`local readers = study {…}`), not a field (`t.study {…}`).
func isProtocol(_ path: String) -> Bool {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
    return text.range(of: "(^|[^.:_[:alnum:]])study\\s*[({]", options: .regularExpression) != nil
}

func defaultScenario(beside script: String) -> String? {
    let candidate = URL(fileURLWithPath: script).deletingLastPathComponent().appendingPathComponent("scenario.lua").path
    return FileManager.default.fileExists(atPath: candidate) ? relativeIfBelowCurrent(candidate) : nil
}

/// Where `require` finds a script's own modules: its folder (relative when below the current one).
func moduleDirectories(of script: String) -> [String] {
    [relativeIfBelowCurrent(URL(fileURLWithPath: script).deletingLastPathComponent().path)]
}

/// A folder means its protocol.lua (the path returned differs from the one given); a
/// missing file is a clear error.
func resolveScript(_ path: String) throws -> String {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
        throw CommandError("\(path): no such file or folder")
    }
    if isDir.boolValue {
        let file = (path.hasSuffix("/") ? String(path.dropLast()) : path) + "/protocol.lua"
        guard FileManager.default.fileExists(atPath: file) else {
            throw CommandError("\(path) is a folder without protocol.lua")
        }
        return file
    }
    return path
}
