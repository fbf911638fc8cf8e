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

/// Documentation of one switch, made from its `SwitchEntry` (`SwitchSet.knobs`): for
/// `sensorium switches`, docs/lua-api.md and error messages.
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

    /// The switch as docs/lua-api.md lists it (`### scenario.switches`):
    /// ``- `holdingMode` (`"clamp"`): a range overlapping …``.
    public var markdownLine: String { "- `\(name)` (\(defaultValue)): \(summary)" }
}

/// Every behavioural switch of the SensorKit model (contract §14.2, plus contract §1, §2.3 and
/// §5.6), with the defaults of docs/sensorkit-contract.md §14.2. Switches that only shape
/// generated data (report windows, write batches) are the simulator's
/// (`SimulationSettings.switchTable` in Simulator). Each switch is one entry of
/// `switchTable`; its default is the property's initial value below.
///
/// Scenario files set knobs by name through `set(name:value:)`. Durations accept
/// seconds or text with a unit (`"24h"`, `"7.5d"`, `"90m"`, `"30s"`); error codes
/// accept numbers or names (`"dataInaccessible"`); per-sensor maps accept a number
/// (all sensors), a table `{ faceMetrics = "7.5d" }`, or a dotted name
/// (`"holdingPeriod.faceMetrics"`).
public struct WorldSwitches: SwitchSet, Hashable {
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

    // MARK: The switches, by name

    /// Every switch of the model, one entry each (`SwitchSet`): setting by name, the checks,
    /// `knobs`, `sensorium switches` and the list in docs/lua-api.md come from here.
    public static let switchTable: [SwitchEntry<WorldSwitches>] = [
        .choice("holdingMode", \.holdingMode, section: "contract §8.1",
                summary: "a range overlapping the holding period is cut at now − hold; `\"strictDoc\"` returns nothing."),
        .secondsPerSensor("holdingPeriod", \.holdingPeriod, section: "contract §8.1", summary: "how long new data is held back."),
        .secondsPerSensor("retention", \.retention, section: "contract §8.2", summary: "how long data stays readable after the hold."),
        .seconds("tombstoneRetention", \.tombstoneRetention, section: "contract §8.2", summary: "how long deletion records are kept."),
        .seconds("agePurgeInterval", \.agePurgeInterval, range: 60...WorldSwitches.longestDuration, orZero: true,
                 allowed: "seconds (0 = continuous, no ageLimit records)", section: "contract §8.2",
                 summary: "how often expired data is purged (each purge writes an `ageLimit` deletion record); 0 purges continuously without records; otherwise at least a minute."),
        .flag("purgeWhenNoInterestedClients", \.purgeWhenNoInterestedClients, section: "contract §5.4",
              summary: "delete stored data when the last recorder stops."),
        .choice("priorDataVisibility", \.priorDataVisibility, section: "contract §6.2",
                summary: "a newly recording app also sees data recorded for others; `\"sinceOwnStartRecording\"` only its own."),
        .choice("nilDeviceMode", \.nilDeviceMode, section: "contract §7.5",
                summary: "a request without a device reads the current phone; `\"decompiledEmpty\"` returns nothing."),
        .choice("alreadyAnsweredError", \.alreadyAnsweredError, section: "contract §5.2",
                summary: "asking again gives 4 wrapping 8201; `\"flat\"` gives 8201."),
        .value("epochMode", \.epochMode, allowed: "\"deviceEpoch\", \"cfAligned\" or { mode = \"cfAligned\", offset = s }",
               section: "contract §4.4",
               summary: "SR time 0 is the phone's first boot; `\"cfAligned\"` or `{ mode = \"cfAligned\", offset = s }` aligns it with Core Foundation time.",
               parse: WorldSwitches.epochMode(_:_:), text: WorldSwitches.epochModeText),
        .value("duplicateRate", \.duplicateRate, allowed: "a number in 0…1", section: "contract §7.4",
               summary: "fraction of fetch results delivered twice.",
               parse: { value, fail in
                   guard case .number(let d) = value, d >= 0, d <= 1 else { throw fail("cannot use \(value)") }
                   return d
               }, text: NumberText.plain),
        .secondsPerSensor("outOfOrderJitter", \.outOfOrderJitter, range: 0...86_400, section: "contract §7.4",
                          summary: "seconds of shuffling inside batched results, per sensor (up to a day)."),
        .errorCode("lockedFetchError", \.lockedFetchError, section: "contract §7.2",
                   summary: "the error of a fetch while the phone is locked."),
        .errorCode("fetchDevicesDeniedError", \.fetchDevicesDeniedError, section: "contract §9.1",
                   summary: "the error of fetching devices when not authorized."),
        .choice("concurrentFetchPolicy", \.concurrentFetchPolicy, section: "contract §7.6",
                summary: "a second `fetch` on a busy reader fails with 8194; `\"queue\"` waits."),
        .seconds("watchSyncLag", \.watchSyncLag, range: 0...30 * 86_400, section: "contract §4.3",
                 summary: "delay before watch data reaches the phone (up to 30 days)."),
        .choice("missingEntitlementMode", \.missingEntitlementMode, section: "contract §5.6",
                summary: "a missing entitlement gives error 0; `\"terminate\"` ends the app."),
        .flag("strictPrivacyPolicy", \.strictPrivacyPolicy, section: "contract §2.3", summary: "a missing privacy policy is an 8197 error."),
        .choice("platform", \.platform, section: "contract §1",
                summary: "also `\"iPad\"` (no SensorKit), `\"catalyst\"` and `\"visionOS\"` (every call silently ignored)."),
        .value("osVersion", \.osVersion, allowed: "a version such as \"17.4\"", section: "contract §14.1",
               summary: "the simulated phone's OS version. A sensor newer than it (`sensorkit.info(name).since`) does not exist there: `sensorkit.reader` and `sensorkit.requestAuthorization` raise an error naming the version it needs, as SensorKit traps on a sensor the OS does not know. Fields newer than it are left out of the samples (under `\"16.0\"` on-wrist records have no `onWristDate`/`offWristDate` and device-usage reports no `version`, iOS 16.4 fields; `sensorkit.info(name).fields[i].since` says which).",
               parse: { value, fail in
                   let text: String
                   switch value {
                   case .string(let s): text = s
                   case .number(let d): text = String(d)
                   default: throw fail("cannot use \(value)")
                   }
                   guard let v = OSVersion(text) else { throw fail("cannot use \(value)") }
                   return v
               }, text: { "`\"\($0)\"`" }),
        .flag("researchDataCollectionEnabled", \.researchDataCollectionEnabled, section: "contract §5.1",
              summary: "the system-wide Research Sensor & Usage Data switch; off, every status reads denied."),
    ]

    /// `epochMode` from a scenario value: `"deviceEpoch"`, `"cfAligned"`, or a table
    /// `{ mode = "cfAligned", offset = s }` (offset at most 100 years either way).
    static func epochMode(_ value: SwitchValue, _ fail: (String) -> SwitchError) throws -> EpochMode {
        switch value {
        case .string(let s) where s.lowercased() == "deviceepoch": return .deviceEpoch
        case .string(let s) where s.lowercased() == "cfaligned": return .cfAligned(offset: 0)
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
            if mode == "deviceepoch" && t["offset"] == nil { return .deviceEpoch }
            if mode == "cfaligned" || mode == nil { return .cfAligned(offset: offset) }
            throw fail("cannot use \(value)")
        default: throw fail("cannot use \(value)")
        }
    }

    /// `epochMode` as the documentation writes it.
    static func epochModeText(_ mode: EpochMode) -> String {
        switch mode {
        case .deviceEpoch: "`\"deviceEpoch\"`"
        case .cfAligned(let offset): offset == 0 ? "`\"cfAligned\"`" : "`{ mode = \"cfAligned\", offset = \(NumberText.plain(offset)) }`"
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

    /// Seconds as a switch value would say them, in the largest unit that takes them with
    /// at most one decimal: "0", "30s", "1m", "1h", "7.5d", "3660d".
    static func durationText(_ d: Double) -> String {
        if d == 0 { return "0" }
        for (unit, suffix) in [(86_400.0, "d"), (3_600, "h"), (60, "m")] where abs(d) >= unit {
            let tenths = d / unit * 10
            if tenths.rounded() == tenths { return NumberText.plain(d / unit) + suffix }
        }
        return NumberText.plain(d) + "s"
    }

    /// A per-sensor map as the documentation writes it: the value most sensors have (the
    /// smaller on a tie), then each sensor with another value, in catalogue order
    /// (`"1d; faceMetrics 7.5d"`).
    static func perSensorText(_ map: [Sensor: Double]) -> String {
        var counts: [Double: Int] = [:]
        for s in Sensor.allCases { if let v = map[s] { counts[v, default: 0] += 1 } }
        guard let common = counts.min(by: { ($1.value, $0.key) < ($0.value, $1.key) })?.key else { return "none" }
        let others = Sensor.allCases.compactMap { s in map[s].flatMap { $0 == common ? nil : "\(s.rawValue) \(durationText($0))" } }
        return ([durationText(common)] + others).joined(separator: "; ")
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
