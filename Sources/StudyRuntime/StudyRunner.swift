import Foundation
import LuaHost
import SensorBackends
import SensorKitModel

/// How to run a protocol: the world flags of `sensorium run`. Flags given here
/// win over the scenario's values, which win over the defaults.
public struct StudyOptions: Sendable {
    public var protocolPath: String
    public var scenarioPath: String?
    public var moduleDirectories: [String]
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

    public init(protocolPath: String, scenarioPath: String? = nil, moduleDirectories: [String] = []) {
        self.protocolPath = protocolPath
        self.scenarioPath = scenarioPath
        self.moduleDirectories = moduleDirectories
    }
}

/// Runs a protocol for every participant of a scenario in virtual time and
/// collects the reports. Each participant runs in its own Lua state, so one
/// participant's globals never leak into another's; with `options.jobs > 1`
/// participants run in parallel on worker threads, and what they print and
/// report is still emitted in participant order, byte for byte as with one job.
public final class StudyRunner {
    public static let defaultStart = "2026-03-02"
    public static let defaultDays = 14
    public static let defaultParticipants = 3

    public let options: StudyOptions
    public let report = ReportBook()
    public private(set) var manifest: StudyManifest?
    /// Things the user should know about the run (a recording's unknown authorization…).
    public private(set) var warnings: [String] = []
    /// Failed `expect` checks of every participant, in participant order (empty with `failFast`).
    public private(set) var findings: [Finding] = []
    /// Ids of the participants this run covers (after `--shard`), in order; set by `run`.
    public private(set) var participantIDs: [String] = []
    /// Called on the calling thread after each participant's output is emitted: (done, total).
    public var progress: ((Int, Int) -> Void)?

    /// What the run report says about the run ("Source: simulated world", "Seed: 1", …), set by `prepare`.
    public private(set) var runFacts: [String] = []

    public init(options: StudyOptions) { self.options = options }

    /// The HTML run report of the finished run (see `RunReportPage`).
    public func htmlReport() -> String { RunReportPage(book: report, facts: pageFacts).render() }

    /// What the run report says besides the report book.
    public var pageFacts: RunReportPage.Facts {
        RunReportPage.Facts(study: manifest.map { RunReportPage.StudySummary($0.resolved()) }, settings: runFacts, warnings: warnings)
    }

    /// The report page's lines about the run's settings.
    static func facts(_ s: RunSettings, source: String, timeZone: TimeZone) -> [String] {
        // Only the protocol's folder and file: the page must not depend on where the run was started.
        let file = URL(fileURLWithPath: s.protocolPath)
        return ["Protocol: \(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)", "Source: \(source)", "Seed: \(s.seed)",
         "Study days: \(s.days) from \(LocalTime.minuteLabel(s.start, timeZone))"]
    }

    /// Runs the study; writes script output through `output` in participant order.
    /// Throws the first participant's `RunError` (in participant order) after emitting the
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
            if let error = outcome.error { throw error }
        } progress: { [progress] done, total in progress?(done, total) }
        if !findings.isEmpty { try report.addFindings(findings) }
    }

    /// Everything needed to start any participant's run on any thread (after `--shard`).
    func makePlan() throws -> CohortPlan {
        var plan = try options.recordingPath.map { try planRecorded($0) } ?? planSimulated()
        if let shard = options.shard { plan.setups = shard.part(of: plan.setups) }
        return plan
    }

    /// The participants' runs, set up but not started, all reporting into `report`
    /// (for `check`, `export`, the REPL and tests; `run` uses worker-local reports).
    public func prepare(output: @escaping (String) -> Void) throws -> [ParticipantRun] {
        let plan = try makePlan()
        let world = try plan.world.open()
        return try plan.setups.map { try plan.makeRun($0, world: world, report: report, output: output) }
    }

    /// A simulated cohort: the scenario's participants, cut or filled up to `--participants`.
    func planSimulated() throws -> CohortPlan {
        let scenario = try options.scenarioPath.map { try Scenario.load($0) } ?? Scenario()
        let seed = options.seed ?? scenario.seed ?? 1
        let zoneName = options.timeZone ?? scenario.timeZone ?? "UTC"
        guard let zone = TimeZone(identifier: zoneName) else {
            throw ScenarioError(file: "--timezone", path: "", message: "unknown time zone '\(zoneName)' (use an IANA name like Europe/Berlin)")
        }
        let startText = options.start ?? scenario.start ?? StudyRunner.defaultStart
        guard let start = LocalTime.parse(startText, zone) else {
            throw ScenarioError(file: "--start", path: "", message: "expected a date like 2026-03-02, got '\(startText)'")
        }
        if let problem = LocalTime.startProblem(start) { throw ScenarioError(file: options.start != nil ? "--start" : (options.scenarioPath ?? "scenario"), path: options.start != nil ? "" : "start", message: problem) }
        let days = options.days ?? scenario.days ?? StudyRunner.defaultDays
        guard InputLimits.days.contains(Double(days)) else { throw ScenarioError(file: "--days", path: "", message: InputLimits.days.refusal(Double(days))) }
        var switches = WorldSwitches()
        try switches.set(scenario.switches)

        // Every participant the scenario describes is read (so a malformed event is reported even
        // when `--participants` leaves its participant out); then the cohort is cut or filled up.
        struct Person {
            var participant: ScenarioParticipant
            var timeZone: TimeZone
            var timeline: [TimelineEvent] = []
            var modelEvents: [ModelEvent] = []
        }
        var people: [Person] = []
        var notes: [String] = []
        for p in scenario.participants {
            let tz = p.timeZone.flatMap { TimeZone(identifier: $0) } ?? zone
            let declaredDays = scenario.days ?? StudyRunner.defaultDays
            let reader = EventReader(file: options.scenarioPath ?? "scenario", start: start, end: start + Double(days) * 86_400,
                                     declaredEnd: start + Double(max(days, declaredDays)) * 86_400, timeZone: tz)
            var person = Person(participant: p, timeZone: tz)
            for (table, path) in zip(p.events, p.eventPaths) {
                let event = try reader.read(table, path: path)
                person.timeline += event.timeline
                person.modelEvents += event.model
                if let note = event.leftOut { notes.append(note) }
            }
            people.append(person)
        }
        warnings = notes
        let wanted = options.participants ?? (people.isEmpty ? (scenario.participantCount ?? StudyRunner.defaultParticipants) : people.count)
        guard InputLimits.participants.contains(Double(wanted)) else {
            throw ScenarioError(file: "--participants", path: "", message: InputLimits.participants.refusal(Double(wanted)))
        }
        if people.count > wanted { people = Array(people.prefix(wanted)) }
        while people.count < wanted {
            people.append(Person(participant: ScenarioParticipant(id: String(format: "P%d", people.count + 1)), timeZone: zone))
        }

        var descriptions: [ParticipantDescription] = []
        var setups: [ParticipantSetup] = []
        for person in people {
            let p = person.participant
            descriptions.append(ParticipantDescription(id: p.id, timeZone: person.timeZone.identifier, watch: p.watch ? .defaultWatch : nil,
                                                       profile: p.profile, events: person.timeline))
            setups.append(ParticipantSetup(id: p.id, timeZone: person.timeZone, consent: p.consent, events: person.modelEvents))
        }
        var settings = scenario.simulation
        settings.watchSyncLag = switches.watchSyncLag
        let source: SimulatedSource
        do {
            source = try SimulatedSource(seed: UInt64(bitPattern: seed), participants: descriptions, settings: settings)
        } catch let e as SimulationError {
            let index = people.firstIndex { $0.participant.id == e.participant }.map { "participants[\($0 + 1)]" } ?? "participants"
            throw ScenarioError(file: options.scenarioPath ?? "scenario", path: index, message: e.message)
        }
        let runSettings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                      start: start, days: days, seed: seed, limits: options.limits, switches: switches,
                                      failFast: options.failFast)
        runFacts = StudyRunner.facts(runSettings, source: "simulated world", timeZone: zone)
        return CohortPlan(settings: runSettings, setups: setups, world: .simulated(source))
    }

    /// A recorded study replayed under the same rules: the virtual clock spans the recording
    /// (from local midnight of its first day until the last samples are past the holding
    /// period), devices and time zones come from the data, recorded recording intervals and
    /// deletion records enter each participant's model, and authorization follows the recorded
    /// timeline (unknown: authorized, with a warning). The scenario, if any, gives only switches.
    func planRecorded(_ path: String) throws -> CohortPlan {
        let recorded: RecordedStudy
        do {
            recorded = try RecordedStudy(path: path, participant: options.recordingParticipant)
        } catch let e as ImportError {
            throw ScenarioError(file: "--recording", path: "", message: e.description)
        }
        let scenario = try options.scenarioPath.map { try Scenario.load($0) } ?? Scenario()
        var switches = WorldSwitches()
        // Recorded data already holds the duplicates SensorKit delivered: add none of our
        // own unless the scenario asks for them.
        switches.duplicateRate = 0
        try switches.set(scenario.switches)
        let seed = options.seed ?? scenario.seed ?? 1
        guard let first = recorded.participants.first, let dataStart = recorded.start(in: first.timeZone) else {
            throw ScenarioError(file: path, path: "", message: "the recording holds no samples")
        }
        var start = dataStart
        if let text = options.start {
            guard let s = LocalTime.parse(text, first.timeZone) else {
                throw ScenarioError(file: "--start", path: "", message: "expected a date like 2026-03-02, got '\(text)'")
            }
            start = s
        }
        let hold = Sensor.allCases.filter { s in recorded.participants.contains { $0.sensors.contains(s) } }.map { switches.hold($0) }.max() ?? 86_400
        let days = options.days ?? recorded.days(in: first.timeZone, hold: hold) ?? StudyRunner.defaultDays
        warnings = recorded.warnings
        let runSettings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                      start: start, days: days, seed: seed, limits: options.limits, switches: switches,
                                      failFast: options.failFast)
        runFacts = StudyRunner.facts(runSettings, source: "recorded store \(URL(fileURLWithPath: path).lastPathComponent)", timeZone: first.timeZone)
        let setups = recorded.participants.map {
            ParticipantSetup(id: $0.id, timeZone: $0.timeZone, consent: recorded.consentPolicy(participant: $0.id, at: start))
        }
        return CohortPlan(settings: runSettings, setups: setups, world: .recorded(path: path, participant: options.recordingParticipant, opened: recorded))
    }
}
