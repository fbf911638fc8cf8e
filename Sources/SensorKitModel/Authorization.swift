/// `SRAuthorizationStatus` (contract §5.1): raw values 0, 1, 2.
public enum SRAuthorizationStatus: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case notDetermined = 0
    case authorized = 1
    case denied = 2

    /// `"notDetermined"`, `"authorized"` or `"denied"`.
    public var name: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .authorized: "authorized"
        case .denied: "denied"
        }
    }

    public init?(name: String) {
        guard let s = SRAuthorizationStatus.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = s
    }

    public var description: String { name }
}

/// How the simulated participant answers one item of the consent sheet (contract §14.1 `userPolicy`).
public enum ConsentAnswer: String, Sendable, Hashable, CaseIterable {
    /// "Allow Collection & Sharing".
    case allow
    /// "Don't Allow" — the sensor ends denied.
    case deny
    /// The sheet is dismissed without finishing (contract §5.2 step 5): nothing changes, 4/8196.
    case cancel
    /// Declines and, if the item is `Required`, picks "Don't Enroll in Study" (contract §5.2 step 9):
    /// every sensor of the sheet ends denied. On a non-required item it acts as `deny`.
    case dontEnroll
}

/// The participant's answers, per sensor, with a default for the rest.
///
/// Sensors sharing a usage key form one sheet item (contract §5.1); the item's answer is the
/// explicit answer of its first member in catalogue order, else `defaultAnswer`.
public struct ConsentPolicy: Sendable, Hashable {
    public var defaultAnswer: ConsentAnswer
    public var answers: [Sensor: ConsentAnswer]

    public init(default defaultAnswer: ConsentAnswer = .allow, answers: [Sensor: ConsentAnswer] = [:]) {
        self.defaultAnswer = defaultAnswer
        self.answers = answers
    }

    public static let allowAll = ConsentPolicy(default: .allow)
    public static let denyAll = ConsentPolicy(default: .deny)

    /// The answer for the sheet item covering `group` (sensors of one usage key).
    public func answer(forGroup group: [Sensor]) -> ConsentAnswer {
        for s in Sensor.allCases where group.contains(s) {
            if let a = answers[s] { return a }
        }
        return defaultAnswer
    }
}

/// A status change to announce with `sensorReader(_:didChange:)` to every live reader
/// of `sensor` (contract §5.3). Only produced when the status really changed.
public struct StatusChange: Sendable, Hashable, CustomStringConvertible {
    public var sensor: Sensor
    public var from: SRAuthorizationStatus
    public var to: SRAuthorizationStatus

    public init(sensor: Sensor, from: SRAuthorizationStatus, to: SRAuthorizationStatus) {
        self.sensor = sensor
        self.from = from
        self.to = to
    }

    public var description: String { "\(sensor.rawValue): \(from.name) → \(to.name)" }
}

/// What `requestAuthorization(sensors:completion:)` did (contract §5.2, §14.4).
public struct AuthorizationResult: Sendable, Hashable {
    /// How the call ends.
    public enum Delivery: Sendable, Hashable {
        /// The completion runs (asynchronously) with this error, or nil.
        case completion(SensorKitError?)
        /// Catalyst / visionOS: the call is ignored, no completion at all (contract §1).
        case noCallback
        /// The app is terminated (missing entitlement in `terminate` mode, contract §5.6).
        case terminate(SensorKitError)
    }

    public var delivery: Delivery
    /// Usage keys of the items the sheet showed, in catalogue order (empty: no sheet).
    public var presentedItems: [String] = []
    /// The participant's answer per shown item.
    public var answers: [String: ConsentAnswer] = [:]
    /// Status changes to announce *after* the completion ran (contract §14.4), in catalogue order.
    public var changes: [StatusChange] = []

    /// The completion's error (nil for success, `noCallback` and `terminate`).
    public var error: SensorKitError? {
        if case .completion(let e) = delivery { return e }
        return nil
    }

    /// True when a sheet was shown.
    public var sheetShown: Bool { !presentedItems.isEmpty }
}

/// One app's authorization state per sensor for one participant (contract §5).
///
/// Pure value type: operations return the changes to announce instead of calling
/// anything. The tombstone stream of a sensor shares its parent's status (contract §3.1).
public struct AuthorizationStore: Sendable, Hashable {
    private var stored: [Sensor: SRAuthorizationStatus] = [:]

    public init() {}

    /// The status as answered by the participant, ignoring the global switch.
    public func storedStatus(_ sensor: Sensor) -> SRAuthorizationStatus { stored[sensor] ?? .notDetermined }

    /// `reader.authorizationStatus`: the stored answer, or `denied` whenever the global
    /// Research Sensor & Usage Data switch is off (contract §5.1).
    public func status(_ sensor: Sensor, researchDataCollectionEnabled: Bool = true) -> SRAuthorizationStatus {
        researchDataCollectionEnabled ? storedStatus(sensor) : .denied
    }

    /// Effective status of every sensor (for diffing around a change of the global switch).
    public func statuses(researchDataCollectionEnabled: Bool = true) -> [Sensor: SRAuthorizationStatus] {
        var m: [Sensor: SRAuthorizationStatus] = [:]
        for s in Sensor.allCases { m[s] = status(s, researchDataCollectionEnabled: researchDataCollectionEnabled) }
        return m
    }

    /// The changes between two effective status maps, in catalogue order.
    public static func changes(from old: [Sensor: SRAuthorizationStatus], to new: [Sensor: SRAuthorizationStatus]) -> [StatusChange] {
        Sensor.allCases.compactMap { s in
            let a = old[s] ?? .notDetermined, b = new[s] ?? .notDetermined
            return a == b ? nil : StatusChange(sensor: s, from: a, to: b)
        }
    }

    /// `SRSensorReader.requestAuthorization(sensors:completion:)` exactly as contract §5.2 / contract §14.4 give it:
    ///
    /// 1. catalyst / visionOS → no callback at all;
    /// 2. empty set → completion(nil), no sheet;
    /// 3. Info.plist validation fails → 8197 (direct), no sheet;
    /// 4. a requested sensor lacks its entitlement → `invalidEntitlement` (0), or
    ///    termination in `missingEntitlementMode = terminate`;
    /// 5. Research Sensor & Usage Data off → 4 wrapping 4098 (daemon error surfaced as 4, contract §5.2 step 7) [INF];
    /// 6. nothing notDetermined among the requested sensors' items → 4 wrapping 8201
    ///    (`alreadyAnsweredError = flat`: 8201 at top level);
    /// 7. another sheet on screen (`sheetBusy`) → 4 wrapping 8195;
    /// 8. the participant cancels any item → 4 wrapping 8196, nothing changes;
    /// 9. otherwise completion(nil); each new item's answer applies to every entitled,
    ///    notDetermined sensor of its usage group; `dontEnroll` on a `Required` item
    ///    denies every sensor of the sheet.
    public mutating func requestAuthorization(_ sensors: Set<Sensor>, study: ResolvedStudy, policy: ConsentPolicy,
                                              switches: WorldSwitches, sheetBusy: Bool = false) -> AuthorizationResult {
        if switches.platform.ignoresCalls { return AuthorizationResult(delivery: .noCallback) }
        if sensors.isEmpty { return AuthorizationResult(delivery: .completion(nil)) }
        if let e = study.infoPlistError(for: sensors, strictPrivacyPolicy: switches.strictPrivacyPolicy) {
            return AuthorizationResult(delivery: .completion(e))
        }
        if let missing = Sensor.allCases.first(where: { sensors.contains($0) && !study.isEntitled($0) }) {
            let e = SensorKitError.invalidEntitlement(missing)
            return AuthorizationResult(delivery: switches.missingEntitlementMode == .terminate ? .terminate(e) : .completion(e))
        }
        if !switches.researchDataCollectionEnabled {
            return AuthorizationResult(delivery: .completion(.promptDeclined(underlying: SensorKitError(.researchDataCollectionOff))))
        }
        // Sheet items: one per usage key among the requested sensors, catalogue order.
        var items: [String] = []
        for s in Sensor.allCases where sensors.contains(s) && !items.contains(s.usageKey) { items.append(s.usageKey) }
        let newItems = items.filter { key in
            SensorCatalogue.sensors(forUsageKey: key).contains { sensors.contains($0) && storedStatus($0) == .notDetermined }
        }
        if newItems.isEmpty {
            let cause = SensorKitError(.noNewAuthorizationGroups)
            return AuthorizationResult(delivery: .completion(
                switches.alreadyAnsweredError == .flat ? cause : .promptDeclined(underlying: cause)))
        }
        if sheetBusy {
            return AuthorizationResult(delivery: .completion(.promptDeclined(underlying: SensorKitError(.promptBusy))))
        }
        var answers: [String: ConsentAnswer] = [:]
        for key in newItems {
            answers[key] = policy.answer(forGroup: SensorCatalogue.sensors(forUsageKey: key).filter { sensors.contains($0) })
        }
        if newItems.contains(where: { answers[$0] == .cancel }) {
            return AuthorizationResult(delivery: .completion(.promptDeclined(underlying: SensorKitError(.promptCancelled))),
                                       presentedItems: newItems, answers: answers)
        }
        let notEnrolled = newItems.contains { key in
            answers[key] == .dontEnroll && SensorCatalogue.sensors(forUsageKey: key).contains { study.usageDetails[$0]?.required == true }
        }
        let before = statuses(researchDataCollectionEnabled: true)
        for key in newItems {
            let granted = !notEnrolled && answers[key] == .allow
            for s in SensorCatalogue.sensors(forUsageKey: key) where study.isEntitled(s) && storedStatus(s) == .notDetermined {
                stored[s] = granted ? .authorized : .denied
            }
        }
        let changes = AuthorizationStore.changes(from: before, to: statuses(researchDataCollectionEnabled: true))
        return AuthorizationResult(delivery: .completion(nil), presentedItems: newItems, answers: answers, changes: changes)
    }

    /// The participant turns the sensor's item off in Settings (contract §5.4): every sensor of
    /// its usage group becomes denied. Stakeholdership ends separately (`RecordingLedger`).
    public mutating func revoke(_ sensor: Sensor) -> [StatusChange] {
        let before = statuses()
        for s in sensor.authorizationGroup where storedStatus(s) != .notDetermined { stored[s] = .denied }
        return AuthorizationStore.changes(from: before, to: statuses())
    }

    /// The participant turns the item back on in Settings (contract §5.4 "only Settings can flip
    /// it back"). Items never asked for are not listed in Settings: no change.
    public mutating func grant(_ sensor: Sensor) -> [StatusChange] {
        let before = statuses()
        for s in sensor.authorizationGroup where storedStatus(s) != .notDetermined { stored[s] = .authorized }
        return AuthorizationStore.changes(from: before, to: statuses())
    }

    /// Sets one sensor's stored status directly (scenario set-up).
    public mutating func setStatus(_ sensor: Sensor, _ status: SRAuthorizationStatus) -> [StatusChange] {
        let before = storedStatus(sensor)
        stored[sensor] = status
        return before == status ? [] : [StatusChange(sensor: sensor, from: before, to: status)]
    }
}

/// From `at` (Unix seconds) on, the study app's authorization for `sensor` is `status`.
public struct AuthorizationChange: Sendable, Hashable {
    public var sensor: Sensor
    public var at: Double
    public var status: SRAuthorizationStatus

    public init(sensor: Sensor, at: Double, status: SRAuthorizationStatus) {
        self.sensor = sensor
        self.at = at
        self.status = status
    }
}
