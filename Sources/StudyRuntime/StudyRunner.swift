import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel
import StudyReport

/// How to run a protocol: the world flags of `sensorium run`. Flags given here
/// win over the scenario's values, which win over the defaults.
public struct StudyOptions: Sendable {
    public var protocolPath: String
    public var scenarioPath: String?
    /// Folders `require` searches after the stdlib (the protocol's own folder).
    public var moduleDirectories: [String]
    /// Serve the stdlib from this folder instead of the copy built into the library
    /// (development: `SENSORIUM_STDLIB`); nil: the built-in stdlib (`Stdlib.modules`).
    public var stdlibFolder: String?
    public var days: Int?
    public var participants: Int?
    public var seed: Int64?
    public var start: String?
    public var timeZone: String?
    public var limits = LuaLimits()
    /// Replay a recorded study store (`sensorium import`) instead of simulating.
    public var recordingPath: String?
    /// With `recordingPath`: only this participant.
    public var recordingParticipant: String?
    /// Participants run in parallel (each in its own Lua state); output is the same for any value.
    public var jobs = 1
    /// Run only this part of the cohort (`--shard i/n`).
    public var shard: Shard?
    /// A failed `expect` stops the participant's run with an error instead of recording a finding.
    public var failFast = false
    /// The protocol's source text, run under the chunk name `protocolPath` instead of reading
    /// that file (see `RunSettings.protocolSource`).
    public var protocolSource: String?
    /// The embedder's registrations, run in every participant's state (`RunSettings.extensions`).
    public var extensions: [@Sendable (LuaState) throws -> Void] = []

    public init(protocolPath: String, scenarioPath: String? = nil, moduleDirectories: [String] = []) {
        self.protocolPath = protocolPath
        self.scenarioPath = scenarioPath
        self.moduleDirectories = moduleDirectories
    }
}

/// Runs a protocol for every participant of a cohort in virtual time and collects the
/// reports. Where the samples come from (a scenario's simulated world, a recorded store) is
/// the `planner`'s business (the wiring layer, `StudyWorlds`); the runner runs its plan.
/// Each participant runs in its own Lua state, so one participant's globals never leak into
/// another's; with `options.jobs > 1` participants run in parallel on worker threads, and
/// what they print and report is still emitted in participant order, byte for byte as with one job.
public final class StudyRunner {
    public let options: StudyOptions
    /// Turns `options` into the cohort's plan.
    public let planner: any CohortPlanner
    public let report = ReportBook()
    public private(set) var manifest: StudyManifest?
    /// Things the user should know about the run (a recording's unknown authorization…).
    public private(set) var warnings: [String] = []
    /// Called with the plan's announcements (a replay's span) before any participant runs.
    public var announce: (([String]) -> Void)?
    /// Failed `expect` checks of every participant, and the runs an error stopped, in
    /// participant order (empty with `failFast`).
    public private(set) var findings: [Finding] = []
    /// The participants whose run an error stopped (without `failFast`), in participant order:
    /// the others ran on; each is also a finding.
    public private(set) var failures: [RunError] = []
    /// Ids of the participants this run covers (after `--shard`), in order; set by `run`.
    public private(set) var participantIDs: [String] = []
    /// Called on the calling thread after each participant's output is emitted: (done, total).
    public var progress: ((Int, Int) -> Void)?

    /// What the run report says about the run ("Source: simulated world", "Seed: 1", …), set by `run` and `prepare`.
    public private(set) var runFacts: [String] = []

    public init(options: StudyOptions, planner: any CohortPlanner) {
        self.options = options
        self.planner = planner
    }

    /// The HTML run report of the finished run (see `RunReportPage`).
    public func htmlReport() -> String { RunReportPage(book: report, facts: pageFacts).render() }

    /// What the run report says besides the report book.
    public var pageFacts: RunReportPage.Facts {
        RunReportPage.Facts(study: manifest.map { RunReportPage.StudySummary($0.resolved()) }, settings: runFacts, warnings: warnings)
    }

    /// Runs the study; writes script output through `output` in participant order.
    /// A participant's `RunError` stops that participant only: it becomes a finding (its
    /// message, virtual time and traceback) and is listed in `failures`, and the others run.
    /// An error of the protocol's top level (`RunError.inTopLevel`) is thrown as before.
    /// With `failFast` the first one (in participant order) is thrown instead, after the
    /// output of the participants before it and that participant's own output up to the error.
    /// The `findings` table, when there are findings, is added to `report` last.
    public func run(output: @escaping (String) -> Void) throws {
        let plan = try makePlan()
        participantIDs = plan.setups.map(\.id)
        try CohortExecutor(plan: plan, jobs: max(1, options.jobs)).run(output: output) { outcome in
            output(outcome.output)
            try report.append(outcome.report, participant: outcome.participant)
            findings += outcome.findings
            if manifest == nil { manifest = outcome.manifest }
            if let error = outcome.error {
                // An error of the protocol's top level is the protocol's (every participant
                // would meet it): it ends the run, as does any error under --fail-fast.
                guard let stopped = error as? RunError, !stopped.inTopLevel, !options.failFast else { throw error }
                failures.append(stopped)
                findings.append(stopped.finding)
            }
        } progress: { [progress] done, total in progress?(done, total) }
        if !findings.isEmpty { try report.addFindings(findings) }
    }

    /// Everything needed to start any participant's run on any thread (after `--shard`).
    func makePlan() throws -> CohortPlan {
        var plan = try planner.plan(options)
        plan.settings.protocolSource = options.protocolSource
        plan.settings.extensions = options.extensions
        warnings = plan.warnings
        runFacts = plan.facts
        announce?(plan.announcements)
        if let shard = options.shard { plan.setups = shard.part(of: plan.setups) }
        return plan
    }

    /// The participants' runs, set up but not started, all reporting into `report`
    /// (for `check`, `export`, the REPL and tests; `run` uses worker-local reports).
    public func prepare(output: @escaping (String) -> Void) throws -> [ParticipantRun] {
        let plan = try makePlan()
        let world = try plan.world.open(fresh: false)
        return try plan.setups.map { try plan.makeRun($0, world: world, report: report, output: output) }
    }
}
