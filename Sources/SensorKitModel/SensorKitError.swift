/// An `SRErrorDomain` code (docs/sensorkit-contract.md §10).
///
/// A struct rather than an enum because the simulator lets scenarios choose codes
/// (`lockedFetchError`, `fetchDevicesDeniedError`, contract §14.2) and because other domains
/// can leak through (contract §10.2, `NSCocoaErrorDomain` 4097/4099). Named constants cover
/// the five public codes (contract §10.1) and the non-public ones seen in the wild (contract §10.2).
public struct SRErrorCode: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    // contract §10.1 public codes (`SRError.Code`).
    /// 0 — no valid SensorKit entitlement for the sensor (contract §5.6).
    public static let invalidEntitlement = SRErrorCode(0)
    /// 1 — the app lacks authorization for the action (contract §5.4, §5.5, §6.2).
    public static let noAuthorization = SRErrorCode(1)
    /// 2 — data cannot be accessed right now, e.g. the device is locked (contract §7.2).
    public static let dataInaccessible = SRErrorCode(2)
    /// 3 — the fetch request has invalid values (`from`/`to` unset, `from > to`) (contract §7.2).
    public static let fetchRequestInvalid = SRErrorCode(3)
    /// 4 — the authorization request was not completed (contract §5.2); the cause is nested.
    public static let promptDeclined = SRErrorCode(4)

    // contract §10.2 non-public codes.
    /// 4096 — a required companion app is not installed.
    public static let companionAppNotInstalled = SRErrorCode(4096)
    /// 4097 — SensorKit onboarding not completed (underlying of 1).
    public static let onboardingNotCompleted = SRErrorCode(4097)
    /// 4098 — the global "Research Sensor & Usage Data" setting is off (underlying of 1).
    public static let researchDataCollectionOff = SRErrorCode(4098)
    /// 8192 — not enough storage space.
    public static let insufficientStorage = SRErrorCode(8192)
    /// 8193 — daemon connection / record not found (what `fetchDevices` reports when denied, contract §9.1).
    public static let connectionNotFound = SRErrorCode(8193)
    /// 8194 — generic internal error (also the simulator's concurrent-fetch failure, contract §7.6).
    public static let internalError = SRErrorCode(8194)
    /// 8195 — another authorization prompt is already showing (underlying of 4).
    public static let promptBusy = SRErrorCode(8195)
    /// 8196 — the authorization prompt was cancelled (underlying of 4).
    public static let promptCancelled = SRErrorCode(8196)
    /// 8197 — Info.plist lacks a required key or has the wrong type (delivered directly, contract §2.3).
    public static let invalidInfoPlist = SRErrorCode(8197)
    /// 8198 — no device identifier.
    public static let noDeviceIdentifier = SRErrorCode(8198)
    /// 8199 — invalid time synchronisation (watch ↔ phone clock mapping).
    public static let invalidTimeSync = SRErrorCode(8199)
    /// 8200 — app bundle not found.
    public static let bundleNotFound = SRErrorCode(8200)
    /// 8201 — no new authorization groups requested: everything was already answered (underlying of 4).
    public static let noNewAuthorizationGroups = SRErrorCode(8201)
    /// 12292 — writer side: samples out of order (never seen by readers).
    public static let samplesOutOfOrder = SRErrorCode(12292)
    /// 12296 — writer side: sample dated more than 10 s in the future (never seen by readers).
    public static let sampleInFuture = SRErrorCode(12296)
    /// 16384 — invalid sensor configuration (private API only).
    public static let invalidSensorConfiguration = SRErrorCode(16384)

    /// Every named code, ascending.
    public static let known: [SRErrorCode] = [
        .invalidEntitlement, .noAuthorization, .dataInaccessible, .fetchRequestInvalid, .promptDeclined,
        .companionAppNotInstalled, .onboardingNotCompleted, .researchDataCollectionOff,
        .insufficientStorage, .connectionNotFound, .internalError, .promptBusy, .promptCancelled,
        .invalidInfoPlist, .noDeviceIdentifier, .invalidTimeSync, .bundleNotFound, .noNewAuthorizationGroups,
        .samplesOutOfOrder, .sampleInFuture, .invalidSensorConfiguration,
    ]

    /// The Swift-style name (`"promptDeclined"`), or nil for a code without one.
    public var name: String? {
        switch rawValue {
        case 0: "invalidEntitlement"
        case 1: "noAuthorization"
        case 2: "dataInaccessible"
        case 3: "fetchRequestInvalid"
        case 4: "promptDeclined"
        case 4096: "companionAppNotInstalled"
        case 4097: "onboardingNotCompleted"
        case 4098: "researchDataCollectionOff"
        case 8192: "insufficientStorage"
        case 8193: "connectionNotFound"
        case 8194: "internalError"
        case 8195: "promptBusy"
        case 8196: "promptCancelled"
        case 8197: "invalidInfoPlist"
        case 8198: "noDeviceIdentifier"
        case 8199: "invalidTimeSync"
        case 8200: "bundleNotFound"
        case 8201: "noNewAuthorizationGroups"
        case 12292: "samplesOutOfOrder"
        case 12296: "sampleInFuture"
        case 16384: "invalidSensorConfiguration"
        default: nil
        }
    }

    /// True for the five codes of `SRError.Code` (contract §10.1).
    public var isPublic: Bool { (0...4).contains(rawValue) }

    /// A one-line meaning (contract §10.1, §10.2).
    public var summary: String {
        switch rawValue {
        case 0: "no valid SensorKit entitlement for this sensor"
        case 1: "the app is not authorized for this sensor"
        case 2: "the data cannot be accessed right now"
        case 3: "the fetch request has invalid values"
        case 4: "the authorization request was not completed"
        case 4096: "a required companion app is not installed"
        case 4097: "SensorKit onboarding was not completed"
        case 4098: "Research Sensor & Usage Data is turned off"
        case 8192: "not enough storage space"
        case 8193: "connection or record not found"
        case 8194: "internal error"
        case 8195: "another authorization prompt is already showing"
        case 8196: "the authorization prompt was cancelled"
        case 8197: "the Info.plist lacks a required key or has the wrong type"
        case 8198: "no device identifier"
        case 8199: "invalid time synchronisation"
        case 8200: "app bundle not found"
        case 8201: "no new authorization groups were requested"
        case 12292: "samples written out of order"
        case 12296: "sample dated in the future"
        case 16384: "invalid sensor configuration"
        default: "error \(rawValue)"
        }
    }

    /// Looks a code up by name (`"promptDeclined"`, case-insensitive) or decimal text (`"8201"`).
    public init?(name: String) {
        if let n = Int(name) { self.init(n); return }
        guard let c = SRErrorCode.known.first(where: { $0.name?.lowercased() == name.lowercased() }) else { return nil }
        self = c
    }

    public static func < (a: SRErrorCode, b: SRErrorCode) -> Bool { a.rawValue < b.rawValue }
    public var description: String { name.map { "\($0) (\(rawValue))" } ?? "\(rawValue)" }
}

/// A SensorKit error as a protocol sees it: domain, code, message and an optional
/// nested cause (`NSUnderlyingErrorKey`), e.g. `promptDeclined` (4) wrapping
/// `noNewAuthorizationGroups` (8201) — contract §5.2, trap T1.
///
/// Where each error is delivered (contract §10.3), see `SensorKitOperation`.
public struct SensorKitError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `"SRErrorDomain"`.
    public static let srErrorDomain = "SRErrorDomain"

    public var domain: String
    /// The code, to be read in `domain` (named constants apply to `SRErrorDomain`).
    public var code: SRErrorCode
    /// Human text (`NSLocalizedDescriptionKey`).
    public var message: String
    private var underlyingStorage: [SensorKitError]

    public init(_ code: SRErrorCode, _ message: String? = nil, underlying: SensorKitError? = nil,
                domain: String = SensorKitError.srErrorDomain) {
        self.domain = domain
        self.code = code
        self.message = message ?? code.summary
        self.underlyingStorage = underlying.map { [$0] } ?? []
    }

    /// The nested cause (`NSUnderlyingErrorKey`), if any.
    public var underlying: SensorKitError? {
        get { underlyingStorage.first }
        set { underlyingStorage = newValue.map { [$0] } ?? [] }
    }

    /// The code's name, or the number as text.
    public var codeName: String { code.name ?? String(code.rawValue) }

    /// `"SRErrorDomain 4 promptDeclined: … (underlying: SRErrorDomain 8201 …)"`.
    public var description: String {
        var s = "\(domain) \(code.rawValue)"
        if let n = code.name, domain == SensorKitError.srErrorDomain { s += " \(n)" }
        s += ": \(message)"
        if let u = underlying { s += " (underlying: \(u))" }
        return s
    }

    // MARK: Factories for the errors the model produces.

    public static func invalidEntitlement(_ sensor: Sensor) -> SensorKitError {
        SensorKitError(.invalidEntitlement,
                       "no SensorKit entitlement for \(sensor.rawValue): add '\(sensor.entitlement)' to com.apple.developer.sensorkit.reader.allow")
    }

    public static func noAuthorization(_ sensor: Sensor, _ status: SRAuthorizationStatus) -> SensorKitError {
        SensorKitError(.noAuthorization, "not authorized for \(sensor.rawValue) (status \(status.name))")
    }

    public static func fetchRequestInvalid(_ reason: String) -> SensorKitError {
        SensorKitError(.fetchRequestInvalid, "invalid fetch request: \(reason)")
    }

    /// An Info.plist problem (contract §2.3): "Your bundle's Info.plist must have an <key> key", code 8197.
    public static func invalidInfoPlist(key: String, detail: String? = nil) -> SensorKitError {
        var m = "Your bundle's Info.plist must have an \(key) key"
        if let d = detail { m += " (\(d))" }
        return SensorKitError(.invalidInfoPlist, m)
    }

    /// `promptDeclined` (4) wrapping `cause` (contract §5.2 steps 3, 5, 6, 7).
    public static func promptDeclined(underlying cause: SensorKitError) -> SensorKitError {
        SensorKitError(.promptDeclined, "the authorization request was not completed", underlying: cause)
    }
}

/// The SensorKit operations that can fail, and where each failure is delivered (contract §10.3, §11).
public enum SensorKitOperation: String, Sendable, CaseIterable {
    case requestAuthorization, startRecording, stopRecording, fetch, fetchDevices

    /// The delegate method (or completion) that receives a failure.
    public var failureCallback: String {
        switch self {
        case .requestAuthorization: "completion(error)"
        case .startRecording: "sensorReader(_:startRecordingFailedWithError:)"
        case .stopRecording: "sensorReader(_:stopRecordingFailedWithError:)"
        case .fetch: "sensorReader(_:fetching:failedWithError:)"
        case .fetchDevices: "sensorReader(_:fetchDevicesDidFailWithError:)"
        }
    }

    /// The delegate method (or completion) that reports success.
    public var successCallback: String {
        switch self {
        case .requestAuthorization: "completion(nil)"
        case .startRecording: "sensorReaderWillStartRecording(_:)"
        case .stopRecording: "sensorReaderDidStopRecording(_:)"
        case .fetch: "sensorReader(_:fetching:didFetchResult:) per result, then sensorReader(_:didCompleteFetch:)"
        case .fetchDevices: "sensorReader(_:didFetch:)"
        }
    }
}
