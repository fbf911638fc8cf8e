/// A value as a protocol declared it, before interpretation (contract §2).
///
/// Loose on purpose: a Lua table converts into it without losing what kind of
/// value each key held, so that validation can say "the detail was a string, not a
/// table" (error 8197, contract §2.3, trap T5).
public indirect enum DeclaredValue: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)
    /// A Lua sequence `{ "a", "b" }`.
    case list([DeclaredValue])
    /// A Lua table with keys, in a deterministic order chosen by the converter.
    case table([DeclaredEntry])

    /// `"string"`, `"number"`, `"boolean"`, `"list"` or `"table"`.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "boolean"
        case .list: "list"
        case .table: "table"
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }

    /// The entries of a table; an empty list counts as an empty table (Lua's `{}`).
    public var entries: [DeclaredEntry]? {
        switch self {
        case .table(let e): e
        case .list(let l) where l.isEmpty: []
        default: nil
        }
    }

    /// The items of a list; an empty table counts as an empty list (Lua's `{}`).
    public var items: [DeclaredValue]? {
        switch self {
        case .list(let l): l
        case .table(let e) where e.isEmpty: []
        default: nil
        }
    }

    /// The value under `key` in a table.
    public subscript(key: String) -> DeclaredValue? { entries?.first { $0.key == key }?.value }

    public var description: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .number(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b): String(b)
        case .list(let l): "{ " + l.map(\.description).joined(separator: ", ") + " }"
        case .table(let e): "{ " + e.map { "\($0.key) = \($0.value)" }.joined(separator: ", ") + " }"
        }
    }
}

/// One key of a declared table.
public struct DeclaredEntry: Sendable, Hashable {
    public var key: String
    public var value: DeclaredValue

    public init(_ key: String, _ value: DeclaredValue) {
        self.key = key
        self.value = value
    }
}

/// A finding of `StudyManifest.validate()`: what Apple's review or SensorKit's
/// runtime validation would object to.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }

    public var severity: Severity
    /// Stable identifier, e.g. `"unknown-entitlement"` (see `StudyManifest.validate`).
    public var code: String
    public var message: String
    /// The sensor involved, if any.
    public var sensor: Sensor?
    /// The declared key or value involved (`"entitlements[2]"`, `"sensors.accelerometer"`).
    public var key: String?
    /// The corrected spelling, when there is one.
    public var suggestion: String?
    /// The SensorKit error the problem causes at runtime (0 or 8197), if any.
    public var errorCode: SRErrorCode?

    public init(_ severity: Severity, _ code: String, _ message: String, sensor: Sensor? = nil, key: String? = nil,
                suggestion: String? = nil, errorCode: SRErrorCode? = nil) {
        self.severity = severity
        self.code = code
        self.message = message
        self.sensor = sensor
        self.key = key
        self.suggestion = suggestion
        self.errorCode = errorCode
    }

    /// `description`, then the suggestion as `Suggestions.didYouMean` unless the message
    /// already names it (`'x'`): how `check`, `run` and `study{}` print a diagnostic.
    public var descriptionWithHint: String {
        let hint = suggestion.map { description.contains("'\($0)'") ? "" : Suggestions.didYouMean([$0]) } ?? ""
        return description + hint
    }

    /// `"error[unknown-sensor] sensors.acelerometer: unknown sensor … — did you mean 'accelerometer'?"`
    public var description: String {
        "\(severity.rawValue)[\(code)]" + (key.map { " \($0)" } ?? "") + ": " + message
    }
}

/// A per-sensor usage detail (`NSSensorKitUsageDetail` → `SRSensorUsage…` dictionary, contract §2.2).
public struct UsageDetail: Sendable, Hashable {
    /// `Description`: why the study needs the sensor.
    public var detail: String
    /// `Required`: declining offers "Don't Enroll in Study" (contract §5.2 step 9).
    public var required: Bool

    public init(detail: String, required: Bool = false) {
        self.detail = detail
        self.required = required
    }
}

/// What a protocol's `study { … }` declares (contract §2): the simulated entitlements and
/// Info.plist of the study app, kept as declared.
///
/// | study key | Apple equivalent |
/// |---|---|
/// | `id`, `title` | the study (no Apple equivalent) |
/// | `usage` | `NSSensorKitUsageDescription` |
/// | `privacy_policy` | `NSSensorKitPrivacyPolicyURL` |
/// | `entitlements` | `com.apple.developer.sensorkit.reader.allow` |
/// | `sensors` | `NSSensorKitUsageDetail`: key = sensor name or `SRSensorUsage…` key, value = `{ detail = "…", required = bool }` |
public struct StudyManifest: Sendable, Hashable {
    public var id: DeclaredValue?
    public var title: DeclaredValue?
    public var usageDescription: DeclaredValue?
    public var privacyPolicyURL: DeclaredValue?
    public var entitlements: DeclaredValue?
    public var usageDetails: DeclaredValue?
    /// Keys of the `study` table this type does not know (reported as warnings).
    public var otherKeys: [DeclaredEntry]

    public init(id: DeclaredValue? = nil, title: DeclaredValue? = nil, usageDescription: DeclaredValue? = nil,
                privacyPolicyURL: DeclaredValue? = nil, entitlements: DeclaredValue? = nil,
                usageDetails: DeclaredValue? = nil, otherKeys: [DeclaredEntry] = []) {
        self.id = id
        self.title = title
        self.usageDescription = usageDescription
        self.privacyPolicyURL = privacyPolicyURL
        self.entitlements = entitlements
        self.usageDetails = usageDetails
        self.otherKeys = otherKeys
    }

    /// The keys `init(table:)` understands (first spelling is the documented one).
    public static let studyKeys: [(field: String, spellings: [String])] = [
        ("id", ["id"]),
        ("title", ["title"]),
        ("usage", ["usage", "usage_description", "NSSensorKitUsageDescription"]),
        ("privacy_policy", ["privacy_policy", "privacy_policy_url", "NSSensorKitPrivacyPolicyURL"]),
        ("entitlements", ["entitlements", "com.apple.developer.sensorkit.reader.allow"]),
        ("sensors", ["sensors", "NSSensorKitUsageDetail"]),
    ]

    /// Builds a manifest from the entries of a `study { … }` table.
    public init(table: [DeclaredEntry]) {
        self.init()
        for entry in table {
            switch StudyManifest.studyKeys.first(where: { $0.spellings.contains(entry.key) })?.field {
            case "id": id = entry.value
            case "title": title = entry.value
            case "usage": usageDescription = entry.value
            case "privacy_policy": privacyPolicyURL = entry.value
            case "entitlements": entitlements = entry.value
            case "sensors": usageDetails = entry.value
            default: otherKeys.append(entry)
            }
        }
    }

    // MARK: Interpretation

    /// The manifest as SensorKit would read it, best effort (malformed parts are left out
    /// and recorded as problems that surface as 8197 at `requestAuthorization`).
    public func resolved() -> ResolvedStudy {
        var r = ResolvedStudy()
        r.id = id?.stringValue
        r.title = title?.stringValue
        r.usageDescription = usageDescription?.stringValue.flatMap { trimmed($0).isEmpty ? nil : $0 }
        r.privacyPolicyURL = privacyPolicyURL?.stringValue.flatMap { trimmed($0).isEmpty ? nil : $0 }
        for item in entitlementItems() {
            if let s = item.value.stringValue, let sensor = SensorCatalogue.sensor(forEntitlement: s) {
                r.entitledSensors.insert(sensor)
            }
        }
        guard let details = usageDetails else {
            r.usageDetailsProblem = "NSSensorKitUsageDetail is missing"
            return r
        }
        guard let entries = details.entries else {
            r.usageDetailsProblem = "NSSensorKitUsageDetail is a \(details.typeName), not a dictionary"
            return r
        }
        for entry in entries {
            guard case .success(let sensors) = SensorCatalogue.sensors(forUsageDetailKey: entry.key) else { continue }
            if sensors.count == 1 { r.namedOnTheirOwn.insert(sensors[0]) }
            for sensor in expand(sensors) where r.usageDetails[sensor] == nil && r.detailProblems[sensor] == nil {
                switch StudyManifest.parseDetail(entry.value) {
                case .success(let d): r.usageDetails[sensor] = d
                case .failure(let problem): r.detailProblems[sensor] = problem.message
                }
            }
        }
        return r
    }

    /// Every sensor of the usage groups of `sensors` (one Info.plist key covers a group).
    private func expand(_ sensors: [Sensor]) -> [Sensor] {
        var out: [Sensor] = []
        for s in sensors { for g in s.authorizationGroup where !out.contains(g) { out.append(g) } }
        return out
    }

    private func entitlementItems() -> [(key: String, value: DeclaredValue)] {
        guard let e = entitlements else { return [] }
        if let items = e.items { return items.enumerated().map { ("entitlements[\($0.offset + 1)]", $0.element) } }
        if case .string = e { return [("entitlements", e)] }
        if let entries = e.entries { return entries.map { ("entitlements.\($0.key)", $0.value) } }
        return []
    }

    private struct DetailProblem: Error {
        var code: String
        var message: String
    }

    private static let detailKeys = ["detail", "required"]

    private static func parseDetail(_ value: DeclaredValue) -> Result<UsageDetail, DetailProblem> {
        guard let entries = value.entries else {
            return .failure(DetailProblem(code: "usage-detail-not-table",
                                          message: "the usage detail is a \(value.typeName), not a table { detail = \"…\", required = … }"))
        }
        let text = entries.first { ["detail", "Description", "description"].contains($0.key) }?.value
        guard let t = text?.stringValue, !trimmed(t).isEmpty else {
            let what = text.map { $0.stringValue != nil ? "is empty" : "is a \($0.typeName)" } ?? "is missing"
            return .failure(DetailProblem(code: "missing-detail-text", message: "the usage detail's `detail` text \(what)"))
        }
        var required = false
        if let r = entries.first(where: { ["required", "Required"].contains($0.key) })?.value {
            guard case .bool(let b) = r else {
                return .failure(DetailProblem(code: "invalid-required", message: "`required` must be true or false, not a \(r.typeName)"))
            }
            required = b
        }
        return .success(UsageDetail(detail: t, required: required))
    }

    // MARK: Validation

    /// Checks the manifest the way App Review and SensorKit's runtime validation would
    /// (contract §2.1–§2.3, traps T4 and T5). Diagnostics come in a stable order: study keys,
    /// entitlements, usage details, then cross-checks per sensor in catalogue order.
    ///
    /// Codes: `missing-id`, `invalid-id`, `missing-title`, `invalid-title`,
    /// `missing-usage-description`, `invalid-usage-description`, `missing-privacy-policy`,
    /// `invalid-privacy-policy`, `unknown-study-key`, `missing-entitlements`,
    /// `invalid-entitlements`, `invalid-entitlement-entry`, `unknown-entitlement`,
    /// `duplicate-entitlement`, `missing-usage-details`, `invalid-usage-details`,
    /// `unknown-sensor`, `usage-detail-not-table`, `missing-detail-text`, `invalid-required`,
    /// `unknown-detail-key`, `conflicting-usage-detail`, `missing-entitlement`,
    /// `missing-usage-detail`, `sensor-unavailable`.
    ///
    /// - Parameters:
    ///   - strictPrivacyPolicy: a missing privacy policy URL is an error (contract §2.3 "strict").
    ///   - osVersion: when given, sensors newer than it are reported.
    public func validate(strictPrivacyPolicy: Bool = false, osVersion: OSVersion? = nil) -> [Diagnostic] {
        var out: [Diagnostic] = []

        // Study keys.
        func requireString(_ v: DeclaredValue?, _ key: String, missing: Diagnostic?, invalidCode: String,
                           errorCode: SRErrorCode? = nil) {
            guard let v else {
                if let missing { out.append(missing) }
                return
            }
            guard let s = v.stringValue, !trimmed(s).isEmpty else {
                out.append(Diagnostic(.error, invalidCode, "`\(key)` must be a non-empty string, not \(v.typeName == "string" ? "an empty string" : "a \(v.typeName)")",
                                      key: key, errorCode: errorCode))
                return
            }
        }
        requireString(id, "id", missing: Diagnostic(.error, "missing-id", "the study has no `id`", key: "id"), invalidCode: "invalid-id")
        requireString(title, "title", missing: Diagnostic(.warning, "missing-title", "the study has no `title`", key: "title"),
                      invalidCode: "invalid-title")
        requireString(usageDescription, "usage",
                      missing: Diagnostic(.error, "missing-usage-description",
                                          "no `usage` (NSSensorKitUsageDescription): the consent sheet needs the study's purpose; requestAuthorization fails with 8197",
                                          key: "usage", errorCode: .invalidInfoPlist),
                      invalidCode: "invalid-usage-description", errorCode: .invalidInfoPlist)
        if let p = privacyPolicyURL {
            if let s = p.stringValue, !trimmed(s).isEmpty {
                let l = s.lowercased()
                if !(l.hasPrefix("https://") || l.hasPrefix("http://")) || s.contains(" ") {
                    out.append(Diagnostic(.warning, "invalid-privacy-policy", "`privacy_policy` should be an http(s) URL, not \"\(s)\"",
                                          key: "privacy_policy"))
                }
            } else {
                out.append(Diagnostic(.error, "invalid-privacy-policy", "`privacy_policy` must be a URL string, not a \(p.typeName == "string" ? "an empty string" : p.typeName)",
                                      key: "privacy_policy", errorCode: strictPrivacyPolicy ? .invalidInfoPlist : nil))
            }
        } else {
            out.append(Diagnostic(strictPrivacyPolicy ? .error : .warning, "missing-privacy-policy",
                                  "no `privacy_policy` (NSSensorKitPrivacyPolicyURL): the consent sheet links to it",
                                  key: "privacy_policy", errorCode: strictPrivacyPolicy ? .invalidInfoPlist : nil))
        }
        let known = StudyManifest.studyKeys.flatMap(\.spellings)
        for entry in otherKeys {
            let s = Suggestions.closest(to: entry.key, among: StudyManifest.studyKeys.map(\.field), limit: 1)
            if !known.contains(entry.key) {
                out.append(Diagnostic(.warning, "unknown-study-key", "unknown study key `\(entry.key)`" + Suggestions.didYouMean(s),
                                      key: entry.key, suggestion: s.first))
            }
        }

        // Entitlements.
        var entitled: [Sensor: String] = [:]
        var unknownEntitlements: [(key: String, value: String, suggestions: [String])] = []
        if let e = entitlements {
            if e.items == nil {
                if case .string = e {
                    out.append(Diagnostic(.error, "invalid-entitlements",
                                          "`entitlements` must be a list of strings, e.g. { \(e) }, not a string",
                                          key: "entitlements"))
                } else if e.entries == nil {
                    out.append(Diagnostic(.error, "invalid-entitlements", "`entitlements` must be a list of strings, not a \(e.typeName)",
                                          key: "entitlements"))
                } else {
                    out.append(Diagnostic(.error, "invalid-entitlements", "`entitlements` must be a list of strings, not a table with keys",
                                          key: "entitlements"))
                }
            }
            for (key, value) in entitlementItems() {
                guard let s = value.stringValue else {
                    out.append(Diagnostic(.error, "invalid-entitlement-entry", "entitlement must be a string, not a \(value.typeName)", key: key))
                    continue
                }
                if let sensor = SensorCatalogue.sensor(forEntitlement: s) {
                    if entitled[sensor] != nil {
                        out.append(Diagnostic(.warning, "duplicate-entitlement",
                                              "\"\(s)\" repeats the entitlement for \(sensor.rawValue)", sensor: sensor, key: key))
                    } else {
                        entitled[sensor] = key
                    }
                } else {
                    let sug = SensorCatalogue.entitlementSuggestions(for: s)
                    unknownEntitlements.append((key, s, sug))
                    out.append(Diagnostic(.warning, "unknown-entitlement",
                                          "\"\(s)\" is not a SensorKit entitlement and is ignored" + Suggestions.didYouMean(sug),
                                          sensor: sug.first.flatMap(SensorCatalogue.sensor(forEntitlement:)), key: key,
                                          suggestion: sug.first))
                }
            }
        }

        // Usage details.
        var detailed: [Sensor: (key: String, detail: UsageDetail?)] = [:]
        let namedOnTheirOwn = resolved().namedOnTheirOwn
        var detailsUsable = false
        if let d = usageDetails {
            if let entries = d.entries {
                detailsUsable = true
                for entry in entries {
                    let key = "sensors.\(entry.key)"
                    let sensors: [Sensor]
                    switch SensorCatalogue.sensors(forUsageDetailKey: entry.key) {
                    case .success(let s): sensors = s
                    case .failure(let e):
                        out.append(Diagnostic(.error, "unknown-sensor", e.description, key: key, suggestion: e.suggestions.first))
                        continue
                    }
                    var parsed: UsageDetail?
                    switch StudyManifest.parseDetail(entry.value) {
                    case .success(let u):
                        parsed = u
                        for k in entry.value.entries ?? [] where !(["detail", "Description", "description", "required", "Required"].contains(k.key)) {
                            let s = Suggestions.closest(to: k.key, among: StudyManifest.detailKeys, limit: 1)
                            out.append(Diagnostic(.warning, "unknown-detail-key", "unknown key `\(k.key)` in the usage detail" + Suggestions.didYouMean(s),
                                                  sensor: sensors.first, key: "\(key).\(k.key)", suggestion: s.first))
                        }
                    case .failure(let p):
                        var message = p.message
                        var suggestion: String?
                        if p.code == "usage-detail-not-table", case .string(let text) = entry.value {
                            suggestion = "\(entry.key) = { detail = \"\(text)\" }"
                            message += "; write \(suggestion!)"
                        }
                        out.append(Diagnostic(.error, p.code, message + " — requestAuthorization fails with 8197",
                                              sensor: sensors.first, key: key, suggestion: suggestion, errorCode: .invalidInfoPlist))
                    }
                    for sensor in expand(sensors) {
                        if let previous = detailed[sensor] {
                            if previous.detail != parsed, sensors.contains(sensor) {
                                out.append(Diagnostic(.warning, "conflicting-usage-detail",
                                                      "\(sensor.rawValue) shares \(sensor.usageKey) with \(previous.key.dropFirst(8)); Info.plist holds one detail per key, the first one is used",
                                                      sensor: sensor, key: key))
                            }
                        } else {
                            detailed[sensor] = (key, parsed)
                        }
                    }
                }
            } else {
                out.append(Diagnostic(.error, "invalid-usage-details",
                                      "`sensors` (NSSensorKitUsageDetail) must be a table of per-sensor tables, not a \(d.typeName) — requestAuthorization fails with 8197",
                                      key: "sensors", errorCode: .invalidInfoPlist))
            }
        }
        if entitlements == nil {
            out.append(Diagnostic(detailed.isEmpty ? .warning : .error, "missing-entitlements",
                                  "no `entitlements` (com.apple.developer.sensorkit.reader.allow): every sensor fails with invalidEntitlement (0)",
                                  key: "entitlements", errorCode: .invalidEntitlement))
        }
        if usageDetails == nil && !entitled.isEmpty {
            out.append(Diagnostic(.error, "missing-usage-details",
                                  "no `sensors` (NSSensorKitUsageDetail): requestAuthorization fails with 8197", key: "sensors",
                                  errorCode: .invalidInfoPlist))
        }

        // Cross-checks per sensor.
        var reportedGroups = Set<String>()
        for sensor in Sensor.allCases {
            let isEntitled = entitled[sensor] != nil
            let detail = detailed[sensor]
            if let d = detail, !isEntitled {
                // Named on its own (`messagesUsageReport = {…}`) or only through a key its group
                // shares (`SRSensorUsageMotion = {…}`, or `accelerometer = {…}` for rotationRate:
                // an error only if no sensor of the group is entitled).
                let groupEntitled = sensor.authorizationGroup.contains { entitled[$0] != nil }
                let typo = unknownEntitlements.first { $0.suggestions.first == sensor.entitlement }
                if typo != nil || namedOnTheirOwn.contains(sensor) || (!groupEntitled && reportedGroups.insert(sensor.usageKey).inserted) {
                    var message = "\(sensor.rawValue) has a usage detail but no entitlement '\(sensor.entitlement)': every operation on it fails with invalidEntitlement (0)"
                    if let t = typo { message += "; \"\(t.value)\" at \(t.key) looks like a typo of it" }
                    out.append(Diagnostic(.error, "missing-entitlement", message, sensor: sensor, key: d.key,
                                          suggestion: sensor.entitlement, errorCode: .invalidEntitlement))
                }
            }
            if isEntitled && detail == nil && detailsUsable {
                out.append(Diagnostic(.error, "missing-usage-detail",
                                      "\(sensor.rawValue) is entitled but has no usage detail (\(sensor.usageKey)): requestAuthorization fails with 8197; add \(sensor.rawValue) = { detail = \"…\" } to `sensors`",
                                      sensor: sensor, key: entitled[sensor], errorCode: .invalidInfoPlist))
            }
            if let os = osVersion, isEntitled || detail != nil, sensor.firstOS > os {
                out.append(Diagnostic(.warning, "sensor-unavailable",
                                      "\(sensor.rawValue) needs iOS \(sensor.firstOS); the simulated phone runs \(os)",
                                      sensor: sensor, key: entitled[sensor] ?? detail?.key))
            }
        }
        return out
    }
}

/// A study as SensorKit reads it: what is entitled, which usage details are usable.
public struct ResolvedStudy: Sendable, Hashable {
    public var id: String?
    public var title: String?
    public var usageDescription: String?
    public var privacyPolicyURL: String?
    /// Sensors whose entitlement is present (contract §2.1 rule; unknown strings ignored).
    public var entitledSensors: Set<Sensor> = []
    /// Well-formed usage details, per sensor (a shared key covers its whole group).
    public var usageDetails: [Sensor: UsageDetail] = [:]
    /// Why `NSSensorKitUsageDetail` as a whole is unusable, if it is.
    public var usageDetailsProblem: String?
    /// Per-sensor malformed details (string instead of table, empty text).
    public var detailProblems: [Sensor: String] = [:]
    /// Sensors `sensors` names by a key of their own (`accelerometer = {…}`, or a usage key
    /// that covers one sensor), not only through a key their group shares (`rotationRate`
    /// has the detail `accelerometer = {…}` gives, as both read `SRSensorUsageMotion`).
    public var namedOnTheirOwn: Set<Sensor> = []

    /// The sensors the study means to use, of those with a usage detail (well-formed or not):
    /// in each usage group, the members named on their own or entitled — `accelerometer =
    /// {…}` with only `motion-accelerometer` means the accelerometer, not rotationRate,
    /// though the detail covers both —, or the whole group when that leaves none (so a study
    /// that entitles none of a group it declares meets the invalidEntitlement a phone gives).
    /// Sorted by name. What automatic enrolment asks for.
    public var sensorsInUse: [Sensor] {
        let declared = Set(usageDetails.keys).union(detailProblems.keys)
        var chosen = Set<Sensor>()
        for group in Set(declared.map(\.authorizationGroup)) {
            let members = group.filter(declared.contains)
            let meant = members.filter { namedOnTheirOwn.contains($0) || entitledSensors.contains($0) }
            chosen.formUnion(meant.isEmpty ? members : meant)
        }
        return chosen.sorted { $0.rawValue < $1.rawValue }
    }

    public init() {}

    /// A study entitled for every sensor with a usage detail for each: for embedding and tests.
    public static var permissive: ResolvedStudy {
        var r = ResolvedStudy()
        r.id = "study"
        r.title = "Study"
        r.usageDescription = "Research study."
        r.privacyPolicyURL = "https://example.org/privacy"
        r.entitledSensors = Set(Sensor.allCases)
        for s in Sensor.allCases { r.usageDetails[s] = UsageDetail(detail: "Used by the study.") }
        return r
    }

    public func isEntitled(_ sensor: Sensor) -> Bool { entitledSensors.contains(sensor) }

    /// The 8197 error `requestAuthorization(sensors)` gets from client-side Info.plist
    /// validation (contract §2.3), or nil when the Info.plist is fine for these sensors.
    public func infoPlistError(for sensors: Set<Sensor>, strictPrivacyPolicy: Bool = false) -> SensorKitError? {
        if usageDescription == nil { return .invalidInfoPlist(key: "NSSensorKitUsageDescription") }
        if strictPrivacyPolicy && privacyPolicyURL == nil { return .invalidInfoPlist(key: "NSSensorKitPrivacyPolicyURL") }
        if let problem = usageDetailsProblem { return .invalidInfoPlist(key: "NSSensorKitUsageDetail", detail: problem) }
        for sensor in Sensor.allCases where sensors.contains(sensor) && usageDetails[sensor] == nil {
            let why = detailProblems[sensor] ?? "no \(sensor.usageKey) entry"
            return .invalidInfoPlist(key: "NSSensorKitUsageDetail",
                                     detail: "\(sensor.usageKey) for \(sensor.rawValue): \(why)")
        }
        return nil
    }
}

// MARK: Mistakes refused before a run

extension StudyManifest {
    /// The `validate()` codes for names in `study{}` that SensorKit does not know, which
    /// `sensorium run` and `sensorium test` refuse (`sensorium check` reports them with the rest).
    public static let refusedCodes: Set<String> = ["unknown-sensor"]

    /// What a run refuses: the errors of `validate()` whose code is in `refusedCodes`, in its
    /// order, with its messages (a misspelt sensor under `sensors`, with the closest names).
    public func refusedNames() -> [Diagnostic] {
        validate().filter { $0.severity == .error && StudyManifest.refusedCodes.contains($0.code) }
    }

    /// A minimal `study{}` declaration for `sensors` (one example sensor when empty), on one
    /// line: what a protocol without `study{}` should write.
    public static func exampleDeclaration(for sensors: [Sensor]) -> String {
        let list = sensors.isEmpty ? [Sensor.ambientLightSensor] : sensors
        let entitlements = list.map { "\"\($0.info.entitlement)\"" }.joined(separator: ", ")
        let details = list.map { "\($0.rawValue) = { detail = \"What it records and why.\" }" }.joined(separator: ", ")
        return "study{ id = \"my-study\", usage = \"Why the study needs these data.\", "
            + "entitlements = { \(entitlements) }, sensors = { \(details) } }"
    }

    /// What to write when a protocol declares no `study{}`: the fields and an example for
    /// `sensors` (the sensors the protocol uses).
    public static func missingStudyAdvice(for sensors: [Sensor]) -> String {
        "declare the study first, at the top of the protocol: its id, `usage` (NSSensorKitUsageDescription), "
            + "`entitlements` (com.apple.developer.sensorkit.reader.allow) and `sensors` (NSSensorKitUsageDetail), e.g. "
            + exampleDeclaration(for: sensors) + " (see docs/lua-api.md)"
    }
}
