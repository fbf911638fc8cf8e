import Foundation
import Simulator
import StudyStore
import SensorKitModel
import StudyRuntime

/// The wiring between the worlds and the runtime: turns a run's options into a cohort plan —
/// a scenario (or none: a cohort drawn from the seed) into a simulated world, a recorded
/// store (`--recording`) into a replay under the same SensorKit rules.
public struct WorldPlanner: CohortPlanner {
    public init() {}

    /// The plan for `options`: a replay when `recordingPath` is set, else a simulation.
    /// Throws `ScenarioError` naming the file (or flag) and field that cannot be used.
    public func plan(_ options: StudyOptions) throws -> CohortPlan {
        try options.recordingPath.map { try planRecorded($0, options) } ?? planSimulated(options)
    }

    /// The report page's lines about the run's settings.
    static func facts(_ s: RunSettings, source: String, timeZone: TimeZone) -> [String] {
        // Only the protocol's folder and file: the page must not depend on where the run was started.
        let file = URL(fileURLWithPath: s.protocolPath)
        return ["Protocol: \(file.deletingLastPathComponent().lastPathComponent)/\(file.lastPathComponent)", "Source: \(source)", "Seed: \(s.seed)",
         "Study days: \(s.days) from \(LocalTime.minuteLabel(s.start, timeZone))"]
    }

    /// A simulated cohort: the scenario's participants, cut or filled up to `--participants`.
    func planSimulated(_ options: StudyOptions) throws -> CohortPlan {
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
            for written in p.events {
                let event = try reader.read(written)
                person.timeline += event.timeline
                person.modelEvents += event.model
                if let note = event.leftOut { notes.append(note) }
            }
            people.append(person)
        }
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
                                      failFast: options.failFast, stdlibFolder: options.stdlibFolder)
        return CohortPlan(settings: runSettings, setups: setups, world: SimulatedWorld(source: source),
                          facts: WorldPlanner.facts(runSettings, source: "simulated world", timeZone: zone), warnings: notes)
    }

    /// A recorded study replayed under the same rules: the virtual clock spans the recording
    /// (from local midnight of its first day until the last samples are past the holding
    /// period), devices and time zones come from the data, recorded recording intervals and
    /// deletion records enter each participant's model, and authorization follows the recorded
    /// timeline (unknown: authorized, with a warning). The scenario, if any, gives only switches.
    func planRecorded(_ path: String, _ options: StudyOptions) throws -> CohortPlan {
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
        let runSettings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                      start: start, days: days, seed: seed, limits: options.limits, switches: switches,
                                      failFast: options.failFast, stdlibFolder: options.stdlibFolder)
        let setups = recorded.participants.map {
            ParticipantSetup(id: $0.id, timeZone: $0.timeZone, consent: recorded.consentPolicy(participant: $0.id, at: start))
        }
        return CohortPlan(settings: runSettings, setups: setups,
                          world: RecordedWorld(path: path, participant: options.recordingParticipant, opened: recorded),
                          facts: WorldPlanner.facts(runSettings, source: "recorded store \(URL(fileURLWithPath: path).lastPathComponent)", timeZone: first.timeZone),
                          warnings: recorded.warnings + WorldPlanner.replayNotes(options, scenario: scenario, switches: switches, days: days,
                                                                                  sensors: Set(recorded.participants.flatMap(\.sensors))),
                          announcements: [WorldPlanner.replaySpan(start: start, days: days, zone: first.timeZone, chosen: options.days != nil,
                                                                  hold: hold)])
    }
}

extension WorldPlanner {
    /// "replay: 5 days, 2023-11-06 00:00 to 2023-11-11 00:00 (UTC): the recorded days, …".
    static func replaySpan(start: Double, days: Int, zone: TimeZone, chosen: Bool, hold: Double) -> String {
        let end = start + Double(days) * 86_400
        let why = chosen ? "chosen with --days"
            : "the recorded days, \(NumberText.plain(hold / 3600)) h for the last to pass the hold, and one day for a morning schedule to see it; --start and --days choose another span"
        return "replay: \(days) days, \(LocalTime.minuteLabel(start, zone)) to \(LocalTime.minuteLabel(end, zone)) (\(zone.identifier)): \(why)"
    }

    /// What a replay does not take from the flags and the scenario, and the data SensorKit's
    /// retention keeps from a late fetch, said as warnings rather than silently.
    static func replayNotes(_ options: StudyOptions, scenario: Scenario, switches: WorldSwitches, days: Int, sensors: Set<Sensor>) -> [String] {
        var notes: [String] = []
        if let zone = options.timeZone {
            notes.append("--timezone \(zone) is ignored in a replay: each participant keeps the time zone the recording holds")
        }
        let file = options.scenarioPath ?? "scenario"
        var ignored: [String] = []
        if scenario.timeZone != nil { ignored.append("timezone") }
        if scenario.start != nil { ignored.append("start") }
        if scenario.days != nil { ignored.append("days") }
        if scenario.participantCount != nil || !scenario.participants.isEmpty { ignored.append("participants") }
        if !ignored.isEmpty {
            notes.append("\(file): \(ignored.joined(separator: ", ")) ignored in a replay (the recording gives them; use --start and --days to choose the span); only seed and switches apply")
        }
        let shortest = sensors.map { switches.retentionPeriod($0) }.min() ?? 604_800
        if Double(days) * 86_400 > shortest {
            let kept = shortest.truncatingRemainder(dividingBy: 86_400) == 0 ? "\(Int(shortest / 86_400)) days" : "\(Int(shortest)) s"
            notes.append("the replay spans \(days) days but SensorKit keeps data \(kept) (retention, contract §8.2): a fetch late in the study returns only the last \(kept); fetch as the study goes (e.g. daily) to see all of it")
        }
        return notes
    }
}

extension StudyRunner {
    public static let defaultStart = "2026-03-02"
    public static let defaultDays = 14
    public static let defaultParticipants = 3

    /// A runner whose cohort comes from `options`' scenario, or its recording (`WorldPlanner`).
    public convenience init(options: StudyOptions) {
        self.init(options: options, planner: WorldPlanner())
    }
}

/// A scenario's simulated world: the simulator is a pure function of the seed, so every
/// worker shares it; a fresh view has a day-story memo of its own (bounded in stories, so a
/// worker's memory does not grow with the participants it has run).
struct SimulatedWorld: CohortWorld, WorkerWorld {
    let simulated: SimulatedSource

    init(source: SimulatedSource) { simulated = source }

    var source: any SampleSource { simulated }
    func open(fresh: Bool) -> any WorkerWorld { fresh ? SimulatedWorld(source: simulated.withPrivateStoryCache()) : self }
    /// A simulated participant starts with nothing recorded and no authorization changes.
    func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange] { [] }
}

/// A recorded store replayed. `opened` is the study the plan was made from; workers that
/// must not share it open their own (one SQLite connection each).
struct RecordedWorld: CohortWorld {
    let path: String
    let participant: String?
    let opened: RecordedStudy

    func open(fresh: Bool) throws -> any WorkerWorld {
        ReplayWorker(study: fresh ? try RecordedStudy(path: path, participant: participant) : opened)
    }
}

/// One worker's view of a recorded store.
struct ReplayWorker: WorkerWorld {
    let study: RecordedStudy
    let source: any SampleSource

    init(study: RecordedStudy) {
        self.study = study
        source = study.source
    }

    /// The recorded recording intervals and deletions enter the model; the recorded
    /// authorization timeline comes back as changes to schedule.
    func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange] {
        study.prepare(&model, participant: id)
    }
}
