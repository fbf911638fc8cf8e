import Foundation
@_spi(Bindings) import LuaHost
import Simulator
import SensorKitModel
import StudyRuntime

/// A study scenario: who takes part, on which devices, how they answer the
/// consent sheet, and what happens to them. Written as Lua data (a file that
/// returns a table), read in the sandbox. Everything left out has a default,
/// so an empty scenario is a plausible cohort drawn from the seed.
public struct Scenario: Sendable {
    public var days: Int?
    public var start: String?
    public var timeZone: String?
    public var seed: Int64?
    public var participantCount: Int?
    public var participants: [ScenarioParticipant] = []
    /// The model's switches (`WorldSwitches`); the simulator's own (`SimulationSettings.switchTable`)
    /// are applied to `simulation` when the scenario is read.
    public var switches: [String: SwitchValue] = [:]
    public var simulation = SimulationSettings()

    public init() {}
}

/// One participant as the scenario describes them. Times stay text until the study start is known.
public struct ScenarioParticipant: Sendable {
    public var id: String
    public var timeZone: String?
    public var watch = true
    public var profile = ParticipantProfile()
    public var consent = ConsentPolicy.allowAll
    public var events: [ScenarioEvent] = []

    public init(id: String) { self.id = id }
}

/// One event of a scenario participant as written: its fields by name, times still as
/// written (`EventReader` resolves them once the study start and time zone are known).
public struct ScenarioEvent: Sendable, Equatable {
    public var fields: [String: ScenarioField]
    /// Where the event stands in the scenario (`participants[1].events[2]`), for errors.
    public var path: String

    public init(fields: [String: ScenarioField], path: String) {
        self.fields = fields
        self.path = path
    }

    public subscript(name: String) -> ScenarioField? { fields[name] }
}

/// A field of a scenario event as written in the file.
public enum ScenarioField: Sendable, Equatable {
    case number(Double)
    case text(String)
    case flag(Bool)
    /// Any other value (a table, a function…): only its type's name is kept, for errors.
    case other(typeName: String)

    /// The number, when the field is one.
    public var doubleValue: Double? { if case .number(let d) = self { d } else { nil } }
    /// The text, when the field is text.
    public var stringValue: String? { if case .text(let s) = self { s } else { nil } }
    /// Lua's name for the written value's type.
    public var typeName: String {
        switch self {
        case .number: "number"
        case .text: "string"
        case .flag: "boolean"
        case .other(let name): name
        }
    }
}

extension ScenarioField {
    /// A Lua value as a field (integers become doubles, as Lua's arithmetic sees them).
    init(_ v: LuaValue) {
        if let d = v.doubleValue { self = .number(d) }
        else if let s = v.stringValue { self = .text(s) }
        else if let b = v.boolValue { self = .flag(b) }
        else { self = .other(typeName: v.typeName) }
    }
}

/// A scenario that cannot be read: names the file and the field, and what was expected.
public struct ScenarioError: Error, CustomStringConvertible {
    public var file: String
    public var path: String
    public var message: String
    public var description: String {
        if path.isEmpty { return message.hasPrefix(file + ":") ? message : "\(file): \(message)" }   // a Lua error names the file itself
        return "\(file): \(path): \(message)"
    }
}

extension Scenario {
    /// Reads a scenario file (sandboxed Lua returning a table).
    public static func load(_ path: String) throws -> Scenario {
        let state = try LuaState(limits: LuaLimits(memoryBytes: 64 << 20, timeLimitMilliseconds: 5000), sandbox: SandboxOptions())
        let values: [LuaValue]
        do {
            values = try state.executeFile(path)
        } catch let e as LuaError {
            throw ScenarioError(file: path, path: "", message: e.report())
        }
        guard let table = values.first?.tableValue else {
            throw ScenarioError(file: path, path: "", message: "a scenario must return a table (`return { participants = { … } }`), got \(values.first?.typeName ?? "nothing")")
        }
        return try Scenario(table: table, file: path)
    }

    static let topKeys: Set<String> = ["days", "start", "timezone", "seed", "participants", "switches", "simulation"]
    static let participantKeys: Set<String> = ["id", "timezone", "watch", "profile", "consent", "events"]

    init(table: LuaTable, file: String) throws {
        self.init()
        func fail(_ path: String, _ message: String) -> ScenarioError { ScenarioError(file: file, path: path, message: message) }
        try Scenario.checkKeys(table, Scenario.topKeys, path: "", fail)
        if let v = table["days"], !v.isNil {
            days = Int(try Scenario.number(v, InputLimits.days, path: "days", fail))
        }
        if let v = table["start"], !v.isNil {
            guard let s = v.stringValue, let t = LocalTime.parse(s, TimeZone(identifier: "UTC")!) else { throw fail("start", "expected a date like \"2026-03-02\", got \(Scenario.describe(v))") }
            if let problem = LocalTime.startProblem(t) { throw fail("start", problem) }
            start = s
        }
        if let v = table["timezone"], !v.isNil {
            guard let s = v.stringValue, TimeZone(identifier: s) != nil else { throw fail("timezone", "expected an IANA time zone like \"Europe/Berlin\", got \(v.stringValue.map { "\"\($0)\"" } ?? v.typeName)") }
            timeZone = s
        }
        if let v = table["seed"], !v.isNil {
            guard let s = v.integerValue else { throw fail("seed", "expected an integer") }
            seed = s
        }
        if let v = table["switches"], !v.isNil {
            guard let t = v.tableValue else { throw fail("switches", "expected a table of switch = value") }
            for e in t.entries {
                guard let k = e.key.stringValue else { throw fail("switches", "switch names must be strings") }
                switches[k] = try Scenario.switchValue(e.value, path: "switches.\(k)", fail)
            }
            // The simulator's own switches (generators) go to its settings; the rest are the model's.
            var probe = WorldSwitches()
            let simulatorKnobs = SimulationSettings.switchTable.map(\.name)
            for k in switches.keys.sorted() {
                do {
                    if SimulationSettings.isSwitch(k) {
                        try simulation.set(name: k, value: switches[k]!)
                    } else {
                        try probe.set(name: k, value: switches[k]!, otherKnobs: simulatorKnobs)
                    }
                } catch { throw fail("switches.\(k)", "\(error)") }
            }
            switches = switches.filter { !SimulationSettings.isSwitch($0.key) }
        }
        if let v = table["simulation"], !v.isNil {
            guard let t = v.tableValue else { throw fail("simulation", "expected a table") }
            for e in t.entries {
                guard let k = e.key.stringValue else { throw fail("simulation", "expected name = number entries") }
                guard let range = InputLimits.simulation[k] else {
                    throw fail("simulation.\(k)", "unknown setting; the watch sync lag is switches.watchSyncLag (known: \(InputLimits.simulation.keys.sorted().joined(separator: ", ")))")
                }
                let n = try Scenario.number(e.value, range, path: "simulation.\(k)", fail)
                switch k {
                case "writeBatchSeconds": simulation.writeBatchSeconds = n
                case "reportWindow": simulation.reportWindow = n
                default: simulation.ambientLightPeriod = n
                }
            }
        }
        switch table["participants"] {
        case nil, .nil?: break
        case let v? where v.typeName == "number":
            participantCount = Int(try Scenario.number(v, InputLimits.participants, path: "participants", fail))
        case .table(let list)?:
            guard let items = list.arrayValue else { throw fail("participants", "expected a list of participant tables") }
            guard !items.isEmpty else { throw fail("participants", "an empty list; list at least one participant, or give a number (\(InputLimits.participants.allowed))") }
            guard items.count <= Int(InputLimits.participants.high) else { throw fail("participants", "\(items.count) participants; at most \(Int(InputLimits.participants.high))") }
            for (i, item) in items.enumerated() {
                let path = "participants[\(i + 1)]"
                guard let t = item.tableValue else { throw fail(path, "expected a table, got \(item.typeName)") }
                participants.append(try Scenario.participant(t, index: i, path: path, fail))
            }
            let ids = participants.map(\.id)
            if Set(ids).count != ids.count { throw fail("participants", "participant ids must be unique") }
        case let v?:
            throw fail("participants", "expected a number or a list of participants, got \(v.typeName)")
        }
    }

    /// A number from the scenario within `range`; throws naming the path, the value and the range.
    static func number(_ v: LuaValue, _ range: InputRange, path: String, _ fail: (String, String) -> ScenarioError) throws -> Double {
        guard let d = v.doubleValue else { throw fail(path, "expected a number (\(range.allowed)), got \(describe(v))") }
        guard range.contains(d) else { throw fail(path, range.refusal(d)) }
        return d
    }

    /// A value as an error message shows it: strings quoted and cut, numbers as written, else the type.
    static func describe(_ v: LuaValue) -> String {
        if let s = v.stringValue, v.typeName == "string" { return InputLimits.quoted(s) }
        if let d = v.doubleValue { return InputRange.text(d) }
        return v.typeName
    }

    static func checkKeys(_ t: LuaTable, _ known: Set<String>, path: String, _ fail: (String, String) -> ScenarioError) throws {
        for e in t.entries {
            guard let k = e.key.stringValue, known.contains(k) else {
                let name = e.key.stringValue ?? e.key.typeName
                let hint = Suggestions.hint(for: name, among: known.sorted())
                throw fail(path.isEmpty ? name : "\(path).\(name)", "unknown field\(hint) (known: \(known.sorted().joined(separator: ", ")))")
            }
        }
    }

    static func switchValue(_ v: LuaValue, path: String, _ fail: (String, String) -> ScenarioError) throws -> SwitchValue {
        switch v {
        case .integer(let i): return .number(Double(i))
        case .number(let d): return .number(d)
        case .string(let s): return .string(s)
        case .boolean(let b): return .bool(b)
        case .table(let t):
            var out: [String: SwitchValue] = [:]
            for e in t.entries {
                guard let k = e.key.stringValue else { throw fail(path, "keys must be strings") }
                out[k] = try switchValue(e.value, path: "\(path).\(k)", fail)
            }
            return .table(out)
        default: throw fail(path, "unsupported value \(v.typeName)")
        }
    }

    static func participant(_ t: LuaTable, index: Int, path: String, _ fail: (String, String) -> ScenarioError) throws -> ScenarioParticipant {
        try checkKeys(t, participantKeys, path: path, fail)
        var p = ScenarioParticipant(id: String(format: "P%d", index + 1))
        if let v = t["id"], !v.isNil {
            guard let id = v.stringValue, v.typeName == "string" else { throw fail("\(path).id", "expected a text id, got \(describe(v))") }
            if let problem = InputLimits.participantIdProblem(id) { throw fail("\(path).id", problem) }
            p.id = id
        }
        if let v = t["timezone"], !v.isNil {
            guard let s = v.stringValue, TimeZone(identifier: s) != nil else { throw fail("\(path).timezone", "expected an IANA time zone like \"Europe/Berlin\"") }
            p.timeZone = s
        }
        if let v = t["watch"], !v.isNil {
            guard let b = v.boolValue else { throw fail("\(path).watch", "expected true or false") }
            p.watch = b
        }
        switch t["profile"] {
        case nil, .nil?: break
        case .string(let s)?:
            guard let preset = ProfilePreset(rawValue: s) else {
                throw fail("\(path).profile", "unknown profile '\(s)' (known: \(ProfilePreset.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            p.profile = ParticipantProfile(preset: preset)
        case .table(let pt)?:
            p.profile = try profile(pt, path: "\(path).profile", fail)
        case let v?:
            throw fail("\(path).profile", "expected a profile name or table, got \(v.typeName)")
        }
        if let v = t["consent"], !v.isNil {
            guard let ct = v.tableValue else { throw fail("\(path).consent", "expected a table like { default = \"allow\", heartRate = \"deny\" }") }
            var policy = ConsentPolicy.allowAll
            for e in ct.entries {
                let key = e.key.stringValue ?? "?"
                guard let text = e.value.stringValue, let answer = ConsentAnswer(rawValue: text) else {
                    throw fail("\(path).consent.\(key)", "expected one of \(ConsentAnswer.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if key == "default" { policy.defaultAnswer = answer; continue }
                guard let sensor = Sensor(name: key) else {
                    throw fail("\(path).consent.\(key)", "unknown sensor\(SensorCatalogue.sensorHint(for: key))")
                }
                policy.answers[sensor] = answer
            }
            p.consent = policy
        }
        if let v = t["events"], !v.isNil {
            guard let items = v.tableValue?.arrayValue else { throw fail("\(path).events", "expected a list of event tables") }
            for (i, item) in items.enumerated() {
                guard let et = item.tableValue else { throw fail("\(path).events[\(i + 1)]", "expected a table") }
                p.events.append(ScenarioEvent(fields: et.dictionaryValue.mapValues(ScenarioField.init), path: "\(path).events[\(i + 1)]"))
            }
        }
        return p
    }

    static func profile(_ t: LuaTable, path: String, _ fail: (String, String) -> ScenarioError) throws -> ParticipantProfile {
        var prof = ParticipantProfile()
        for e in t.entries {
            guard let k = e.key.stringValue else { throw fail(path, "field names must be strings") }
            let v = e.value
            func number() throws -> Double {
                try Scenario.number(v, InputLimits.profile[k]!, path: "\(path).\(k)", fail)
            }
            func named<T: RawRepresentable & CaseIterable>(_: T.Type) throws -> T where T.RawValue == String {
                guard let s = v.stringValue, let x = T(rawValue: s) else {
                    throw fail("\(path).\(k)", "expected one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return x
            }
            switch k {
            case "preset": prof.preset = try named(ProfilePreset.self)
            case "chronotype": prof.chronotype = try named(Chronotype.self)
            case "activity": prof.activity = try named(ActivityLevel.self)
            case "screenTime": prof.screenTime = try named(ScreenTimeLevel.self)
            case "commute": prof.commute = try named(CommuteMode.self)
            case "dailySteps": prof.dailySteps = try number()
            case "sleepNeedHours": prof.sleepNeedHours = try number()
            case "midSleepFreeDays": prof.midSleepFreeDays = try number()
            case "screenHoursPerDay": prof.screenHoursPerDay = try number()
            case "pickupsPerDay": prof.pickupsPerDay = try number()
            case "restingHeartRate": prof.restingHeartRate = try number()
            case "age": prof.age = try number()
            case "typingWordsPerMinute": prof.typingWordsPerMinute = try number()
            case "wearsWatchToSleep":
                guard let b = v.boolValue else { throw fail("\(path).\(k)", "expected true or false") }
                prof.wearsWatchToSleep = b
            default:
                throw fail("\(path).\(k)", "unknown profile field (known: preset, chronotype, activity, screenTime, commute, dailySteps, sleepNeedHours, midSleepFreeDays, screenHoursPerDay, pickupsPerDay, restingHeartRate, age, typingWordsPerMinute, wearsWatchToSleep)")
            }
        }
        return prof
    }
}
