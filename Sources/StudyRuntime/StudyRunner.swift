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

    public init(protocolPath: String, scenarioPath: String? = nil, moduleDirectories: [String] = []) {
        self.protocolPath = protocolPath
        self.scenarioPath = scenarioPath
        self.moduleDirectories = moduleDirectories
    }
}

/// Runs a protocol for every participant of a scenario in virtual time and
/// collects the reports. Participants run one after another, each in its own
/// Lua state, so one participant's globals never leak into another's.
public final class StudyRunner {
    public static let defaultStart = "2026-03-02"
    public static let defaultDays = 14
    public static let defaultParticipants = 3

    public let options: StudyOptions
    public let report = ReportBook()
    public private(set) var manifest: StudyManifest?

    public init(options: StudyOptions) { self.options = options }

    /// Runs the study; writes script output through `output` as it happens.
    public func run(output: @escaping (String) -> Void) throws {
        for run in try prepare(output: output) {
            try run.run()
            if manifest == nil { manifest = run.manifest }
        }
    }

    /// The participants' runs, set up but not started.
    public func prepare(output: @escaping (String) -> Void) throws -> [ParticipantRun] {
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
        let days = options.days ?? scenario.days ?? StudyRunner.defaultDays
        var switches = WorldSwitches()
        try switches.set(scenario.switches)

        var people = scenario.participants
        let wanted = options.participants ?? (people.isEmpty ? (scenario.participantCount ?? StudyRunner.defaultParticipants) : people.count)
        if people.count > wanted { people = Array(people.prefix(wanted)) }
        while people.count < wanted { people.append(ScenarioParticipant(id: String(format: "P%d", people.count + 1))) }

        var descriptions: [ParticipantDescription] = []
        var setups: [ParticipantSetup] = []
        for p in people {
            let tz = p.timeZone.flatMap { TimeZone(identifier: $0) } ?? zone
            let reader = EventReader(file: options.scenarioPath ?? "scenario", start: start, timeZone: tz)
            var timeline: [TimelineEvent] = []
            var modelEvents: [ModelEvent] = []
            for (table, path) in zip(p.events, p.eventPaths) {
                let (t, m) = try reader.read(table, path: path)
                timeline += t
                modelEvents += m
            }
            descriptions.append(ParticipantDescription(id: p.id, timeZone: tz.identifier, watch: p.watch ? .defaultWatch : nil,
                                                       profile: p.profile, events: timeline))
            setups.append(ParticipantSetup(id: p.id, timeZone: tz, consent: p.consent, events: modelEvents))
        }
        var settings = scenario.simulation
        settings.watchSyncLag = switches.watchSyncLag
        let source = try SimulatedSource(seed: UInt64(bitPattern: seed), participants: descriptions, settings: settings)
        let runSettings = RunSettings(protocolPath: options.protocolPath, moduleDirectories: options.moduleDirectories,
                                      start: start, days: days, seed: seed, limits: options.limits, switches: switches)
        return try setups.map { try ParticipantRun(setup: $0, settings: runSettings, source: source, report: report, output: output) }
    }
}
