/// A loosely typed value for a switch, as a scenario file (Lua) gives it.
public indirect enum SwitchValue: Sendable, Hashable, CustomStringConvertible {
    case number(Double)
    case string(String)
    case bool(Bool)
    /// A table keyed by name (per-sensor maps, `{ mode = "cfAligned", offset = 0 }`).
    case table([String: SwitchValue])

    public var description: String {
        switch self {
        case .number(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .string(let s): "\"\(s)\""
        case .bool(let b): String(b)
        case .table(let t): "{ " + t.keys.sorted().map { "\($0) = \(t[$0]!)" }.joined(separator: ", ") + " }"
        }
    }
}

/// A switch could not be set: names the knob and what it accepts.
public struct SwitchError: Error, Sendable, Hashable, CustomStringConvertible {
    public var knob: String
    public var message: String
    /// What the knob accepts, e.g. `"\"clamp\" or \"strictDoc\""`.
    public var allowed: String
    public var suggestions: [String]

    public init(knob: String, message: String, allowed: String, suggestions: [String] = []) {
        self.knob = knob
        self.message = message
        self.allowed = allowed
        self.suggestions = suggestions
    }

    public var description: String {
        var s = "switch '\(knob)': \(message)"
        if !allowed.isEmpty { s += "; expected \(allowed)" }
        return s + Suggestions.didYouMean(suggestions)
    }
}

/// Documentation of one knob (for `sensorium` help output and error messages).
public struct KnobDescription: Sendable, Hashable {
    public var name: String
    public var allowed: String
    public var defaultValue: String
    /// The reference section that motivates it.
    public var section: String
    public var summary: String

    public init(name: String, allowed: String, defaultValue: String, section: String, summary: String) {
        self.name = name
        self.allowed = allowed
        self.defaultValue = defaultValue
        self.section = section
        self.summary = summary
    }
}

/// Every behavioural switch of the SensorKit model (contract §14.2, plus contract §1, §2.3 and
/// §5.6), with the defaults of docs/sensorkit-contract.md §14.2. Switches that only shape
/// generated data (report windows, write batches) are the simulator's
/// (`SimulationSettings.switchKnobs` in SensorBackends).
///
/// Scenario files set knobs by name through `set(name:value:)`. Durations accept
/// seconds or text with a unit (`"24h"`, `"7.5d"`, `"90m"`, `"30s"`); error codes
/// accept numbers or names (`"dataInaccessible"`); per-sensor maps accept a number
/// (all sensors), a table `{ faceMetrics = "7.5d" }`, or a dotted name
/// (`"holdingPeriod.faceMetrics"`).
public struct WorldSwitches: Sendable, Hashable {
    /// contract §8.1: how a range that overlaps the holding period is treated.
    public enum HoldingMode: String, Sendable, Hashable, CaseIterable {
        /// `to' = min(to, now − hold)` — what shipping apps observe (default).
        case clamp
        /// The documented wording: overlap ⇒ zero results.
        case strictDoc
    }

    /// contract §6.2 item 8: which stored data a newly recording app may read.
    public enum PriorDataVisibility: String, Sendable, Hashable, CaseIterable {
        /// Everything written while *anyone* recorded (within retention) — default.
        case sevenDaysIfSensorActive
        /// Only what was written after the app's own first `startRecording()`.
        case sinceOwnStartRecording
    }

    /// contract §7.5: a fetch request without a device.
    public enum NilDeviceMode: String, Sendable, Hashable, CaseIterable {
        /// Use the current device (the phone) and write it back into the request — default.
        case docCurrentDevice
        /// Complete at once with zero results (one decompiled build).
        case decompiledEmpty
    }

    /// contract §5.2 step 3: how "nothing new to ask" is reported.
    public enum AlreadyAnsweredError: String, Sendable, Hashable, CaseIterable {
        /// `promptDeclined` (4) with underlying 8201 — default.
        case nested
        /// 8201 at top level (older builds, contract §15 #2).
        case flat
    }

    /// contract §7.6: a second fetch on a reader whose fetch is still running.
    public enum ConcurrentFetchPolicy: String, Sendable, Hashable, CaseIterable {
        /// Fail fast with 8194 — default.
        case fail
        case queue
    }

    /// contract §5.6: what a missing entitlement does in `requestAuthorization`.
    public enum MissingEntitlementMode: String, Sendable, Hashable, CaseIterable {
        /// Error `invalidEntitlement` (0) — default.
        case error
        /// The app is terminated (strict reading of the entitlement page).
        case terminate
    }

    /// contract §1: where the app runs.
    public enum Platform: String, Sendable, Hashable, CaseIterable {
        case iPhone
        /// SensorKit.framework absent: availability probe false, touching the API traps (contract trap T6).
        case iPad
        /// Calls are silently ignored: no callbacks at all (contract trap T30).
        case catalyst
        case visionOS

        /// `Bundle(identifier: "com.apple.SensorKit") != nil`.
        public var isSensorKitAvailable: Bool { self != .iPad }
        /// True where every call is a silent no-op.
        public var ignoresCalls: Bool { self == .catalyst || self == .visionOS }
    }

    public var holdingMode: HoldingMode = .clamp
    /// contract §8.1: seconds of holding per sensor; 86 400, faceMetrics 648 000 (7.5 d).
    public var holdingPeriod: [Sensor: Double] = WorldSwitches.perSensor(86_400, faceMetrics: 648_000)
    /// contract §8.2: seconds of retention per sensor; 604 800, faceMetrics 1 209 600.
    public var retention: [Sensor: Double] = WorldSwitches.perSensor(604_800, faceMetrics: 1_209_600)
    /// contract §8.2: seconds deletion records are kept (60 d).
    public var tombstoneRetention: Double = 5_184_000
    /// Simulator: seconds between age-limit purges (tombstones are written per purge). 0 = continuous, no tombstones.
    public var agePurgeInterval: Double = 3_600
    /// contract §5.4, §6.2 item 6: when the last stakeholder stops, delete what is stored (`noInterestedClients`).
    public var purgeWhenNoInterestedClients: Bool = false
    public var priorDataVisibility: PriorDataVisibility = .sevenDaysIfSensorActive
    public var nilDeviceMode: NilDeviceMode = .docCurrentDevice
    public var alreadyAnsweredError: AlreadyAnsweredError = .nested
    public var epochMode: EpochMode = .deviceEpoch
    /// contract §7.4: fraction of results delivered twice (deterministic from the seed).
    public var duplicateRate: Double = 0.01
    /// contract §7.4: seconds of out-of-order jitter inside array results, per sensor (0 = sorted).
    public var outOfOrderJitter: [Sensor: Double] = WorldSwitches.perSensor(0)
    /// contract §7.2: error code of a fetch while the device is locked.
    public var lockedFetchError: SRErrorCode = .dataInaccessible
    /// contract §9.1: error code of `fetchDevices` when not authorized.
    public var fetchDevicesDeniedError: SRErrorCode = .connectionNotFound
    public var concurrentFetchPolicy: ConcurrentFetchPolicy = .fail
    /// contract §4.3: seconds between a watch writing a record and the phone storing it.
    public var watchSyncLag: Double = 3_600
    public var missingEntitlementMode: MissingEntitlementMode = .error
    /// contract §2.3: treat a missing `NSSensorKitPrivacyPolicyURL` as an error (8197).
    public var strictPrivacyPolicy: Bool = false
    public var platform: Platform = .iPhone
    /// contract §14.1: OS version of the simulated phone (gates sensors by first OS).
    public var osVersion: OSVersion = OSVersion(26, 1)
    /// contract §5.1: the system-wide "Research Sensor & Usage Data" switch; off ⇒ every status reads denied.
    public var researchDataCollectionEnabled: Bool = true

    public init() {}

    /// A map with `value` for every sensor, and `faceMetrics` overridden when given.
    public static func perSensor(_ value: Double, faceMetrics: Double? = nil) -> [Sensor: Double] {
        var m: [Sensor: Double] = [:]
        for s in Sensor.allCases { m[s] = value }
        if let fm = faceMetrics { m[.faceMetrics] = fm }
        return m
    }

    /// Holding period of `sensor` in seconds.
    public func hold(_ sensor: Sensor) -> Double { holdingPeriod[sensor] ?? 86_400 }
    /// Retention of `sensor` in seconds.
    public func retentionPeriod(_ sensor: Sensor) -> Double { retention[sensor] ?? 604_800 }

    // MARK: Knobs by name

    public static let knobs: [KnobDescription] = [
        KnobDescription(name: "holdingMode", allowed: "\"clamp\" or \"strictDoc\"", defaultValue: "clamp", section: "contract §8.1",
                        summary: "overlap with the holding period: clamp `to` to now − hold, or return nothing"),
        KnobDescription(name: "holdingPeriod", allowed: "seconds, per sensor", defaultValue: "24h; faceMetrics 7.5d",
                        section: "contract §8.1", summary: "how long new data is held before apps can read it"),
        KnobDescription(name: "retention", allowed: "seconds, per sensor", defaultValue: "7d; faceMetrics 14d",
                        section: "contract §8.2", summary: "how long data stays readable after the hold"),
        KnobDescription(name: "tombstoneRetention", allowed: "seconds", defaultValue: "60d", section: "contract §8.2",
                        summary: "how long deletion records are kept"),
        KnobDescription(name: "agePurgeInterval", allowed: "seconds (0 = continuous, no ageLimit records)",
                        defaultValue: "1h", section: "contract §8.2", summary: "period of the age-limit purge"),
        KnobDescription(name: "purgeWhenNoInterestedClients", allowed: "true or false", defaultValue: "false",
                        section: "contract §5.4", summary: "delete stored data when the last stakeholder stops"),
        KnobDescription(name: "priorDataVisibility", allowed: "\"sevenDaysIfSensorActive\" or \"sinceOwnStartRecording\"",
                        defaultValue: "sevenDaysIfSensorActive", section: "contract §6.2", summary: "which prior data a new app sees"),
        KnobDescription(name: "nilDeviceMode", allowed: "\"docCurrentDevice\" or \"decompiledEmpty\"",
                        defaultValue: "docCurrentDevice", section: "contract §7.5", summary: "fetch without a device"),
        KnobDescription(name: "alreadyAnsweredError", allowed: "\"nested\" or \"flat\"", defaultValue: "nested",
                        section: "contract §5.2", summary: "4 wrapping 8201, or 8201 at top level"),
        KnobDescription(name: "epochMode", allowed: "\"deviceEpoch\", \"cfAligned\" or { mode = \"cfAligned\", offset = s }",
                        defaultValue: "deviceEpoch", section: "contract §4.4", summary: "where SR time 0 lies"),
        KnobDescription(name: "duplicateRate", allowed: "a number in 0…1", defaultValue: "0.01", section: "contract §7.4",
                        summary: "fraction of results delivered twice"),
        KnobDescription(name: "outOfOrderJitter", allowed: "seconds, per sensor", defaultValue: "0", section: "contract §7.4",
                        summary: "element order jitter inside array results"),
        KnobDescription(name: "lockedFetchError", allowed: "an error code or name", defaultValue: "2 dataInaccessible",
                        section: "contract §7.2", summary: "error of a fetch while the device is locked"),
        KnobDescription(name: "fetchDevicesDeniedError", allowed: "an error code or name", defaultValue: "8193",
                        section: "contract §9.1", summary: "error of fetchDevices when not authorized"),
        KnobDescription(name: "concurrentFetchPolicy", allowed: "\"fail\" or \"queue\"", defaultValue: "fail",
                        section: "contract §7.6", summary: "a second fetch on a busy reader"),
        KnobDescription(name: "watchSyncLag", allowed: "seconds", defaultValue: "1h", section: "contract §4.3",
                        summary: "delay before watch records reach the phone"),
        KnobDescription(name: "missingEntitlementMode", allowed: "\"error\" or \"terminate\"", defaultValue: "error",
                        section: "contract §5.6", summary: "requestAuthorization with a sensor lacking its entitlement"),
        KnobDescription(name: "strictPrivacyPolicy", allowed: "true or false", defaultValue: "false", section: "contract §2.3",
                        summary: "a missing privacy policy URL is an 8197 error"),
        KnobDescription(name: "platform", allowed: "\"iPhone\", \"iPad\", \"catalyst\" or \"visionOS\"", defaultValue: "iPhone",
                        section: "contract §1", summary: "where the app runs"),
        KnobDescription(name: "osVersion", allowed: "a version such as \"17.4\"", defaultValue: "26.1", section: "contract §14.1",
                        summary: "OS version of the simulated phone"),
        KnobDescription(name: "researchDataCollectionEnabled", allowed: "true or false", defaultValue: "true",
                        section: "contract §5.1", summary: "system-wide Research Sensor & Usage Data switch"),
    ]

    /// Sets the knob `name` (optionally `"knob.sensorName"` for per-sensor knobs) from a loose value.
    /// Throws a `SwitchError` naming the knob and the values it accepts; for an unknown name,
    /// its suggestions come from these knobs and `otherKnobs` (the simulator's own switches).
    public mutating func set(name: String, value: SwitchValue, otherKnobs: [String] = []) throws {
        var knob = name, sensorPart: String?
        if let dot = name.firstIndex(of: ".") {
            knob = String(name[..<dot])
            sensorPart = String(name[name.index(after: dot)...])
        }
        guard let doc = WorldSwitches.knobs.first(where: { $0.name == knob }) else {
            throw SwitchError(knob: name, message: "no such switch", allowed: "",
                              suggestions: Suggestions.closest(to: knob, among: WorldSwitches.knobs.map(\.name) + otherKnobs))
        }
        func fail(_ message: String) -> SwitchError { SwitchError(knob: name, message: message, allowed: doc.allowed) }
        func perSensor(_ map: inout [Sensor: Double], _ range: ClosedRange<Double> = 0...WorldSwitches.longestDuration) throws {
            try WorldSwitches.setPerSensorSeconds(&map, name: name, value: value, allowed: doc.allowed, range: range)
        }
        if sensorPart != nil && !["holdingPeriod", "retention", "outOfOrderJitter"].contains(knob) {
            throw fail("is not a per-sensor switch")
        }
        func choice<E: RawRepresentable & CaseIterable>(_: E.Type) throws -> E where E.RawValue == String {
            guard case .string(let s) = value else { throw fail("cannot use \(value)") }
            if let e = E(rawValue: s) ?? E.allCases.first(where: { $0.rawValue.lowercased() == s.lowercased() }) { return e }
            throw SwitchError(knob: name, message: "unknown value \"\(s)\"", allowed: doc.allowed,
                              suggestions: Suggestions.closest(to: s, among: E.allCases.map(\.rawValue)))
        }
        func seconds(_ range: ClosedRange<Double> = 0...WorldSwitches.longestDuration) throws -> Double {
            guard let d = WorldSwitches.seconds(value), range.contains(d) else {
                throw fail("cannot use \(value) (from \(WorldSwitches.durationText(range.lowerBound)) to \(WorldSwitches.durationText(range.upperBound)))")
            }
            return d
        }
        func bool() throws -> Bool {
            switch value {
            case .bool(let b): return b
            case .string(let s) where ["true", "false"].contains(s.lowercased()): return s.lowercased() == "true"
            default: throw fail("cannot use \(value)")
            }
        }
        func code() throws -> SRErrorCode {
            switch value {
            case .number(let d) where d == d.rounded() && abs(d) < 1e9: return SRErrorCode(Int(d))
            case .string(let s):
                if let c = SRErrorCode(name: s) { return c }
                throw SwitchError(knob: name, message: "unknown error code \"\(s)\"", allowed: doc.allowed,
                                  suggestions: Suggestions.closest(to: s, among: SRErrorCode.known.compactMap(\.name)))
            default: throw fail("cannot use \(value)")
            }
        }
        switch knob {
        case "holdingMode": holdingMode = try choice(HoldingMode.self)
        case "holdingPeriod": try perSensor(&holdingPeriod)
        case "retention": try perSensor(&retention)
        case "tombstoneRetention": tombstoneRetention = try seconds()
        case "agePurgeInterval":
            // 0 purges continuously; a positive interval of at least a minute bounds the purge records.
            if WorldSwitches.seconds(value) == 0 { agePurgeInterval = 0 } else { agePurgeInterval = try seconds(60...WorldSwitches.longestDuration) }
        case "purgeWhenNoInterestedClients": purgeWhenNoInterestedClients = try bool()
        case "priorDataVisibility": priorDataVisibility = try choice(PriorDataVisibility.self)
        case "nilDeviceMode": nilDeviceMode = try choice(NilDeviceMode.self)
        case "alreadyAnsweredError": alreadyAnsweredError = try choice(AlreadyAnsweredError.self)
        case "epochMode":
            switch value {
            case .string(let s) where s.lowercased() == "deviceepoch": epochMode = .deviceEpoch
            case .string(let s) where s.lowercased() == "cfaligned": epochMode = .cfAligned(offset: 0)
            case .table(let t):
                let offset = try t["offset"].map { v -> Double in
                    guard let d = WorldSwitches.seconds(v), abs(d) <= 100 * 366 * 86_400 else { throw fail("offset cannot be \(v) (at most 100 years either way)") }
                    return d
                } ?? 0
                let mode: String?
                switch t["mode"] {
                case .string(let s)?: mode = s.lowercased()
                case nil: mode = nil
                default: throw fail("cannot use \(value)")
                }
                if mode == "deviceepoch" && t["offset"] == nil {
                    epochMode = .deviceEpoch
                } else if mode == "cfaligned" || mode == nil {
                    epochMode = .cfAligned(offset: offset)
                } else {
                    throw fail("cannot use \(value)")
                }
            default: throw fail("cannot use \(value)")
            }
        case "duplicateRate":
            guard case .number(let d) = value, d >= 0, d <= 1 else { throw fail("cannot use \(value)") }
            duplicateRate = d
        case "outOfOrderJitter": try perSensor(&outOfOrderJitter, 0...86_400)
        case "lockedFetchError": lockedFetchError = try code()
        case "fetchDevicesDeniedError": fetchDevicesDeniedError = try code()
        case "concurrentFetchPolicy": concurrentFetchPolicy = try choice(ConcurrentFetchPolicy.self)
        case "watchSyncLag": watchSyncLag = try seconds(0...30 * 86_400)
        case "missingEntitlementMode": missingEntitlementMode = try choice(MissingEntitlementMode.self)
        case "strictPrivacyPolicy": strictPrivacyPolicy = try bool()
        case "platform": platform = try choice(Platform.self)
        case "osVersion":
            let text: String
            switch value {
            case .string(let s): text = s
            case .number(let d): text = String(d)
            default: throw fail("cannot use \(value)")
            }
            guard let v = OSVersion(text) else { throw fail("cannot use \(value)") }
            osVersion = v
        case "researchDataCollectionEnabled": researchDataCollectionEnabled = try bool()
        default: throw fail("no such switch")
        }
    }

    /// Sets a per-sensor seconds switch in `map` from `name` (`"knob"` or `"knob.sensorName"`) and
    /// `value`: a number or duration for every sensor, a table by sensor name, or with a dotted
    /// name one sensor's value. Values failing `check` and unknown sensors throw a `SwitchError`
    /// (`allowed` says what the knob accepts); on error `map` is unchanged.
    public static func setPerSensorSeconds(_ map: inout [Sensor: Double], name: String, value: SwitchValue, allowed: String,
                                           range: ClosedRange<Double> = 0...WorldSwitches.longestDuration) throws {
        let parts = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let knob = parts[0], sensorPart = parts.count > 1 ? parts[1] : nil
        func parse(_ v: SwitchValue, _ label: String) throws -> Double {
            guard let d = WorldSwitches.seconds(v), range.contains(d) else {
                throw SwitchError(knob: label, message: "cannot use \(v) (from \(WorldSwitches.durationText(range.lowerBound)) to \(WorldSwitches.durationText(range.upperBound)))", allowed: allowed)
            }
            return d
        }
        func sensor(_ n: String) throws -> Sensor {
            switch SensorCatalogue.sensor(named: n) {
            case .success(let s): return s
            case .failure(let e):
                throw SwitchError(knob: "\(knob).\(n)", message: "unknown sensor '\(n)'", allowed: "a sensor name",
                                  suggestions: e.suggestions)
            }
        }
        if let sp = sensorPart {
            map[try sensor(sp)] = try parse(value, name)
            return
        }
        switch value {
        case .table(let t):
            var updated = map
            for key in t.keys.sorted() { updated[try sensor(key)] = try parse(t[key]!, "\(knob).\(key)") }
            map = updated
        default:
            let d = try parse(value, name)
            for s in Sensor.allCases { map[s] = d }
        }
    }

    /// The longest duration a switch takes: ten years (holding, retention, tombstones).
    public static let longestDuration: Double = 3_660 * 86_400

    /// Seconds as a switch value would say them: "60s", "1d", "3660d".
    static func durationText(_ d: Double) -> String {
        if d == 0 { return "0" }
        if d.truncatingRemainder(dividingBy: 86_400) == 0 { return "\(Int(d / 86_400))d" }
        if d.truncatingRemainder(dividingBy: 60) == 0 && d < 3_600 { return "\(Int(d / 60))m" }
        return d.rounded() == d && abs(d) < 1e15 ? "\(Int64(d))s" : "\(d)s"
    }

    /// Sets several knobs, in key order, stopping at the first error.
    public mutating func set(_ values: [String: SwitchValue]) throws {
        for key in values.keys.sorted() { try set(name: key, value: values[key]!) }
    }

    /// Parses seconds from a number or from a duration (`DurationText`): `"90"`, `"30s"`, `"15m"`, `"24h"`, `"7.5d"`, `"2w"`.
    public static func seconds(_ value: SwitchValue) -> Double? {
        switch value {
        case .number(let d): return d.isFinite ? d : nil
        case .string(let raw): return DurationText.seconds(raw)
        default: return nil
        }
    }
}

/// `s` without leading and trailing spaces and tabs.
func trimmed(_ s: String) -> String {
    var sub = Substring(s)
    while let c = sub.first, c == " " || c == "\t" || c == "\n" { sub = sub.dropFirst() }
    while let c = sub.last, c == " " || c == "\t" || c == "\n" { sub = sub.dropLast() }
    return String(sub)
}

extension WorldSwitches {
    /// Whether the simulated phone's OS knows `sensor` (contract §3.1 "OS", trap T26): a sensor newer
    /// than `osVersion` does not exist there, and `SRSensorReader(sensor:)` with a sensor
    /// the OS does not know raises an exception (contract §3.1 "Unknown sensor strings").
    public func supports(_ sensor: Sensor) -> Bool { sensor.firstOS <= osVersion }
}
