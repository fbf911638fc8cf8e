import Foundation
import LuaHost
import StudyRuntime
import StudyWorlds
import StudyReport

/// One run of a `Study`: its options for the runtime and the runner. Internal: embedders
/// and the command line use `Study.run`, `Study.check`, `Study.openParticipants` and
/// `WorldExport`, which are built on it.
final class StudySession {
    /// The runtime's options, made from the study.
    var options: StudyOptions
    let planner: any CohortPlanner
    /// The runner, once `run` or `prepare` has started.
    private(set) var runner: StudyRunner?
    /// Called with the plan's announcements (a replay's span) before any participant runs.
    var announce: (([String]) -> Void)?
    /// Called after each participant's output: (done, total).
    var progress: ((Int, Int) -> Void)?

    /// The session of `study`: its protocol, world and configuration as runtime options.
    init(_ study: Study) {
        let p = study.protocol
        var options = StudyOptions(protocolPath: p.path, scenarioPath: nil, moduleDirectories: p.moduleDirectories)
        options.protocolSource = p.source
        options.extensions = study.extensions
        let c = study.configuration
        options.days = c.days
        options.participants = c.participants
        options.seed = c.seed
        options.start = c.start
        options.timeZone = c.timeZone
        options.limits = LuaLimits(memoryBytes: c.memoryLimitBytes, timeLimitMilliseconds: c.timeLimitMilliseconds,
                                   instructionBudget: c.instructionBudget)
        options.jobs = max(1, c.jobs)
        options.failFast = c.failFast
        options.stdlibFolder = c.stdlibFolder
        options.shard = c.shard.map { Shard(index: $0.index, count: $0.count) }
        switch study.world {
        case .simulated(let scenario):
            options.scenarioPath = scenario ?? p.scenario
            planner = WorldPlanner()
        case .recorded(let store, let participant, let scenario):
            options.scenarioPath = scenario ?? p.scenario
            options.recordingPath = store
            options.recordingParticipant = participant
            planner = WorldPlanner()
        case .data(let data):
            planner = DataPlanner(data: data)
        }
        self.options = options
    }

    /// Runs the study (see `Study.run`). Errors that stop the whole run come back as
    /// `StudyError`, with the message the command line prints.
    func run(output: ((String) -> Void)?) throws -> StudyResult {
        let runner = StudyRunner(options: options, planner: planner)
        self.runner = runner
        runner.announce = announce
        runner.progress = progress
        let collected = OutputCollector()
        do {
            try runner.run { text in
                collected.text += text
                output?(text)
            }
        } catch let e as StudyError {
            throw e
        } catch {
            throw StudyError(StudySession.message(of: error))
        }
        return StudyResult(output: collected.text, runner: runner, shardFile: shardFile(runner, output: collected.text))
    }

    /// Every participant's run set up and nothing run yet — each a Lua state with the study
    /// API (and the study's registrations), its model, clock and event loop, over the
    /// study's world — for the commands that drive participants themselves: `repl` (and
    /// `repl --machine`, the kernel's), `check`, `luals`, `export` and the benchmarks. The
    /// runner behind them is `runner` afterwards (its report book gathers their rows).
    /// What they print goes to `output`. Throws what the runtime throws (`ScenarioError`,
    /// `RunError`, `LuaError`, …); `message(of:)` makes the command line's message.
    /// Internal: these handles are the runtime's own types, which no public signature shows.
    func prepare(output: @escaping (String) -> Void) throws -> [ParticipantRun] {
        let runner = StudyRunner(options: options, planner: planner)
        self.runner = runner
        runner.announce = announce
        runner.progress = progress
        return try runner.prepare(output: output)
    }

    /// The shard file of a sharded run (`--shard`), which `StudyResult.write(to:)` writes
    /// beside the report for `sensorium merge`; nil when the run is not a shard.
    private func shardFile(_ runner: StudyRunner, output: String) -> ShardFile? {
        guard let shard = options.shard else { return nil }
        return ShardFile(fingerprint: Fingerprint(options: options, shardCount: shard.count), shard: shard,
                         participants: runner.participantIDs, output: output, report: runner.report,
                         findings: runner.findings, page: runner.pageFacts)
    }

    /// An error that stopped the run as the command line prints it.
    static func message(of error: Error) -> String {
        switch error {
        case let e as RunError: e.description
        case let e as ScenarioError: e.description
        case let e as LuaError: e.report()
        case let e as ReportError: e.message
        default: "\(error)"
        }
    }
}

extension Study {
    /// Every participant's run set up, nothing run (`StudySession.prepare`), for `check` and
    /// `WorldExport`; a world that cannot be made throws `StudyError` with the command line's message.
    func prepareRuns(output: @escaping (String) -> Void = { _ in }) throws -> [ParticipantRun] {
        do { return try StudySession(self).prepare(output: output) } catch { throw StudyError(StudySession.message(of: error)) }
    }
}

/// What the participants printed, gathered across the runner's callbacks.
final class OutputCollector {
    var text = ""
}
