import Foundation
import LuaHost
import StudyRuntime
import StudyWorlds
import StudyReport

/// One run of a `Study`: its options for the runtime and the runner. Embedders use
/// `Study.run`; the command line reaches the extras it needs (announcements, progress,
/// shards, the report book for `--out` and merge files) through `@_spi(CommandLine)`.
@_spi(CommandLine)
public final class StudySession {
    /// The runtime's options, made from the study (the command line adds `shard`).
    public var options: StudyOptions
    let planner: any CohortPlanner
    /// The runner, once `run` has started.
    public private(set) var runner: StudyRunner?
    /// Called with the plan's announcements (a replay's span) before any participant runs.
    public var announce: (([String]) -> Void)?
    /// Called after each participant's output: (done, total).
    public var progress: ((Int, Int) -> Void)?

    /// The session of `study`: its protocol, world and configuration as runtime options.
    public init(_ study: Study) {
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
    public func run(output: ((String) -> Void)?) throws -> StudyResult {
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
        return StudyResult(output: collected.text, runner: runner)
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

/// What the participants printed, gathered across the runner's callbacks.
final class OutputCollector {
    var text = ""
}
