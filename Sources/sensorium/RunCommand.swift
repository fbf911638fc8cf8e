import ArgumentParser
import Foundation
import LuaHost
import StudyRuntime
import StudyWorlds

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a study protocol in virtual time (or a plain Lua script).",
        discussion: """
        A folder runs its protocol.lua with its scenario.lua. A file that declares
        study{...} runs as a protocol too; any other file runs once as a plain script.
        """
    )

    @Argument(help: "A protocol folder (protocol.lua + scenario.lua), or a .lua file.")
    var path: String

    @Argument(help: "Arguments passed to a plain script as `...` (after `--` when they start with a dash).")
    var arguments: [String] = []

    @OptionGroup var world: WorldOptions

    @Option(help: "Write every report table as CSV and JSON, every chart as SVG, and the run report index.html into this folder.")
    var out: String?

    @Option(help: "Replay a recorded study store (made by `sensorium import`) instead of simulating.")
    var recording: String?

    @Option(help: "With --recording: only this participant.")
    var participant: String?

    @OptionGroup var cohort: CohortOptions

    @OptionGroup var lua: LuaOptions

    func validate() throws {
        if participant != nil && recording == nil { throw ValidationError("--participant needs --recording (use --participants N for a simulated cohort)") }
    }

    func run() throws {
        let script = try resolveScript(path)
        let output = OutputBuffer()
        let scriptDir = URL(fileURLWithPath: script).deletingLastPathComponent().path
        var dirs: [String] = []
        dirs.append(relativeIfBelowCurrent(scriptDir))
        let studyFlags = world.anyGiven || out != nil || recording != nil || cohort.shard != nil
        guard studyFlags || isProtocol(script) else {
            try runPlainScript(script, dirs: dirs, output: output)
            return
        }
        var options = StudyOptions(protocolPath: script, scenarioPath: defaultScenario(beside: script), moduleDirectories: dirs)
        world.apply(to: &options)
        options.stdlibFolder = stdlibOverride()
        options.seed = lua.seedGiven ? lua.seed : nil
        options.limits = lua.limits
        options.recordingPath = recording
        options.recordingParticipant = participant
        options.jobs = try cohort.jobCount(memoryLimitMiB: lua.memoryLimitMiB)
        options.failFast = cohort.failFast
        if let text = cohort.shard {
            guard let shard = Shard(parsing: text) else { throw ValidationError("--shard: expected i/n with 1 ≤ i ≤ n (like 3/10), got '\(text)'") }
            guard out != nil else { throw ValidationError("--shard needs --out DIR (the folder `sensorium merge` reads)") }
            options.shard = shard
        }
        let runner = StudyRunner(options: options)
        runner.announce = { lines in for line in lines { printError(line) } }
        let bar = ProgressBar(unit: "participants", enabled: cohort.showProgress)
        runner.progress = { done, total in bar.update(done: done, total: total) }
        var printed = ""
        let keepPrinted = options.shard != nil
        do {
            try runner.run { text in
                if keepPrinted { printed += text }
                output.write(text)
                if bar.clear() { output.flush() }   // printed lines appear where the bar was
            }
            bar.finish()
        } catch let error as RunError {
            bar.finish()
            output.flush()
            printError(error.description)
            throw ExitCode(1)
        } catch let error as ScenarioError {
            bar.finish()
            output.flush()
            printError(error.description)
            throw ExitCode(1)
        } catch let error as LuaError {
            bar.finish()
            output.flush()
            printError(error.report())
            throw ExitCode(1)
        } catch let error as ReportError {
            bar.finish()
            output.flush()
            printError(error.message)
            throw ExitCode(1)
        }
        for w in runner.warnings { printError("warning: " + w) }
        output.write(runner.report.renderText())
        output.flush()
        if let out {
            try runner.report.write(to: URL(fileURLWithPath: out))
            try Data(runner.htmlReport().utf8).write(to: URL(fileURLWithPath: out).appendingPathComponent("index.html"), options: .atomic)
            if let shard = options.shard {
                try ShardFile(fingerprint: Fingerprint(options: options, shardCount: shard.count), shard: shard,
                              participants: runner.participantIDs, output: printed, report: runner.report,
                              findings: runner.findings, page: runner.pageFacts).write(to: URL(fileURLWithPath: out))
            }
        }
        for failure in runner.failures { printError(failure.description) }
        try reportFindings(runner.findings)
    }

    func runPlainScript(_ script: String, dirs: [String], output: OutputBuffer) throws {
        do {
            let state = try LuaState(limits: lua.limits, sandbox: Stdlib.sandbox(folder: stdlibOverride(), moduleDirectories: dirs, seed: lua.seed))
            state.output = { output.write($0) }
            state.outputBytes = { output.write(bytes: $0) }       // print's bytes unchanged, as lua5.4's
            let plain = PlainScript()
            try plain.install(in: state)
            try state.executeFile(script, arguments: arguments.map { .string($0) })
            output.write(plain.report.renderText())
            output.flush()
        } catch let error as LuaError {
            output.flush()
            printError(error.report())
            throw ExitCode(1)
        }
    }
}

/// Lists failed expectations and runs an error stopped on stderr and fails the command when
/// there are any.
func reportFindings(_ findings: [Finding]) throws {
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

/// A script is a protocol when it declares a study (`study {` or `study(`).
func isProtocol(_ path: String) -> Bool {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
    return text.range(of: "(^|\\n)\\s*study\\s*[({]", options: .regularExpression) != nil
}

func defaultScenario(beside script: String) -> String? {
    let candidate = URL(fileURLWithPath: script).deletingLastPathComponent().appendingPathComponent("scenario.lua").path
    return FileManager.default.fileExists(atPath: candidate) ? relativeIfBelowCurrent(candidate) : nil
}

/// A folder means its protocol.lua; a missing file is a clear error.
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
