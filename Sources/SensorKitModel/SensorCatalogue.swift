// The sensor catalogue: docs/sensorkit-contract.md §2.1 (entitlements), contract §2.2 (usage keys),
// contract §3.1 (master table), contract §3.2 (cadence) and contract §3.3 (every sample field).

private func f(_ name: String, _ type: FieldType, _ unit: String?, opt: Bool = false,
               apple: String? = nil, since: OSVersion? = nil, _ summary: String) -> FieldSchema {
    FieldSchema(name: name, type: type, unit: unit, isOptional: opt, summary: summary, appleName: apple, since: since)
}

private func f(_ name: String, _ type: FieldType, opt: Bool = false,
               apple: String? = nil, since: OSVersion? = nil, _ summary: String) -> FieldSchema {
    FieldSchema(name: name, type: type, unit: nil, isOptional: opt, summary: summary, appleName: apple, since: since)
}

private func rowTime(_ name: String, opt: Bool = false, apple: String? = nil, _ summary: String) -> FieldSchema {
    FieldSchema(name: name, type: .date, unit: "s since 1970", isOptional: opt, summary: summary, appleName: apple,
                role: .rowTime)
}

private func named(_ names: [String], from start: Int64 = 0) -> [NamedValue] {
    names.enumerated().map { NamedValue($0.element, start + Int64($0.offset)) }
}

private func bits(_ names: [String]) -> [NamedValue] {
    names.enumerated().map { NamedValue($0.element, Int64(1) << Int64($0.offset)) }
}

/// A scalar part of a structured field: its type and unit.
private func v(_ type: FieldType, _ unit: String? = nil) -> Structure { .scalar(type, unit: unit) }
/// A named scalar sub-field.
private func sub(_ name: String, _ type: FieldType, _ unit: String? = nil, opt: Bool = false) -> SubField {
    SubField(name, .scalar(type, unit: unit), optional: opt)
}
/// A named nested sub-field.
private func sub(_ name: String, _ form: Structure, opt: Bool = false) -> SubField { SubField(name, form, optional: opt) }
/// A table of named sub-fields.
private func rec(_ fields: SubField...) -> Structure { .record(fields) }
/// A list of values of one form.
private func list(_ element: Structure) -> Structure { .list(element) }
/// A table keyed by device-usage category names (`SRDeviceUsageCategory…`).
private func byCategory(_ element: Structure) -> Structure {
    .keyed(key: "category", keys: SensorCatalogue.deviceUsageCategories, element)
}
/// A `{start s, duration s}` time range inside an audio stream.
private let audioTimeRange = rec(sub("start", .duration, "s"), sub("duration", .duration, "s"))

private let uptimeField = f("timestamp", .duration, "s", apple: "timestamp",
                            "seconds since device boot (CMLogItem uptime clock), not wall time")
private let batchIdentifierField = f("identifier", .int, apple: "identifier",
                                     "write-batch identifier shared by the elements of one result; increases between batches")

/// The sensor catalogue (contract §3). Immutable, deterministic, `Sendable`.
public enum SensorCatalogue {
    /// The 29 `SRDeviceUsageReport.CategoryKey` values (contract §3.3.9), as their string values.
    public static let deviceUsageCategories: [String] = [
        "Games", "Business", "Weather", "Utilities", "Travel", "Sports", "SocialNetworking", "Reference",
        "Productivity", "PhotoAndVideo", "News", "Navigation", "Music", "Lifestyle", "HealthAndFitness",
        "Finance", "Entertainment", "Education", "Books", "Medical", "Newsstand", "Catalogs", "Kids",
        "Miscellaneous", "FoodAndDrink", "DeveloperTools", "GraphicsAndDesign", "Shopping", "Stickers",
    ].map { "SRDeviceUsageCategory" + $0 }

    /// `SRDeviceUsageReport.NotificationUsage.Event` (contract §3.3.9).
    public static let notificationEvents: [NamedValue] = named([
        "unknown", "received", "defaultAction", "supplementaryAction", "clear", "notificationCenterClearAll",
        "removed", "hide", "longLook", "silence", "appLaunch", "expired", "bannerPulldown", "tapCoalesce",
        "deduped", "deviceActivated", "deviceUnlocked",
    ])

    /// `SRTextInputSession.SessionType` (contract §3.3.9).
    public static let textInputSessionTypes: [NamedValue] = named(["keyboard", "thirdPartyKeyboard", "pencil", "dictation"], from: 1)

    /// `SRKeyboardMetrics.SentimentCategory` (contract §3.3.11) — not `CaseIterable` in Apple's SDK (contract trap T21).
    public static let sentimentCategories: [NamedValue] = named([
        "absolutist", "down", "death", "anxiety", "anger", "health", "positive", "sad", "lowEnergy", "confused",
    ])

    /// `SRPhotoplethysmogramSample.Usage` string values (contract §3.3.18).
    public static let ppgUsages = ["foregroundHeartRate", "deepBreathing", "foregroundBloodOxygen", "backgroundSystem"]

    /// `SRPhotoplethysmogramOpticalSample.Condition` string values (contract §3.3.18).
    public static let ppgOpticalConditions = ["signalSaturation", "unreliableNoise"]

    /// Length-unit probability metrics of `SRKeyboardMetrics` (contract §3.3.11).
    public static let keyboardLengthDistributions = [
        "upErrorDistance", "downErrorDistance", "spaceUpErrorDistance", "spaceDownErrorDistance",
        "deleteUpErrorDistance", "deleteDownErrorDistance", "shortWordCharKeyUpErrorDistance",
        "shortWordCharKeyDownErrorDistance",
    ]

    /// Duration-unit probability metrics of `SRKeyboardMetrics` (contract §3.3.11).
    public static let keyboardDurationDistributions = [
        "touchDownUp", "touchUpDown", "spaceTouchDownUp", "deleteTouchDownUp", "shortWordCharKeyTouchDownUp",
        "touchDownDown", "charKeyToPrediction", "shortWordCharKeyToCharKey", "charKeyToAnyTapKey",
        "anyTapToCharKey", "spaceToCharKey", "charKeyToSpaceKey", "spaceToDeleteKey", "deleteToSpaceKey",
        "spaceToSpaceKey", "spaceToShiftKey", "spaceToPlaneChangeKey", "spaceToPredictionKey", "deleteToCharKey",
        "charKeyToDelete", "deleteToDelete", "deleteToShiftKey", "deleteToPlaneChangeKey",
        "anyTapToPlaneChangeKey", "planeChangeToAnyTap", "charKeyToPlaneChangeKey", "planeChangeKeyToCharKey",
        "deleteToPath", "pathToDelete", "spaceToPath", "pathToSpace", "pathToPath",
    ]

    /// The correction kinds of `SRKeyboardMetrics`' `total…Corrections` counts (contract §3.3.11).
    public static let keyboardCorrectionKinds = ["Auto", "Space", "Retro", "Transposition", "InsertKey", "SkipTouch",
                                                 "NearKey", "Substitution", "HitTest"]

    /// Positional metrics of `SRKeyboardMetrics`: name → unit (contract §3.3.11).
    public static let keyboardPositionalDistributions: [(name: String, unit: String)] = [
        ("longWordUpErrorDistance", "mm"), ("longWordDownErrorDistance", "mm"),
        ("longWordTouchDownUp", "s"), ("longWordTouchDownDown", "s"), ("longWordTouchUpDown", "s"),
        ("deleteToDeletes", "s"),
    ]

    /// `SRDeletionRecord` (contract §3.3.21, §8.3): the rows of a sensor's tombstone stream.
    public static let deletionRecordFields: [FieldSchema] = [
        f("startTime", .absoluteTime, "SR s", "SR time where the deleted range starts"),
        f("endTime", .absoluteTime, "SR s", "SR time where the deleted range ends"),
        f("reason", .enumeration(name: "SRDeletionReason", cases: SRDeletionReason.allCases.map {
            NamedValue($0.name, Int64($0.rawValue))
        }), "why the samples were removed"),
    ]

    /// The info for every sensor, in `Sensor.allCases` order.
    public static let all: [SensorInfo] = Sensor.allCases.map { sensor in
        var info = makeInfo(sensor)
        info.window = window(of: sensor)
        return info
    }

    /// The info for `sensor`.
    public static func info(_ sensor: Sensor) -> SensorInfo { all[Sensor.allCases.firstIndex(of: sensor)!] }

    /// Every `SRSensorUsage…` key, each once, in catalogue order.
    public static var usageKeys: [String] {
        var seen = Set<String>()
        return all.map(\.usageKey).filter { seen.insert($0).inserted }
    }

    /// The sensors covered by a usage-detail key (contract §2.2): `SRSensorUsageMotion` → accelerometer, rotationRate.
    public static func sensors(forUsageKey key: String) -> [Sensor] {
        all.filter { $0.usageKey.lowercased() == key.lowercased() }.map(\.sensor)
    }

    // MARK: Name lookup

    /// Finds a sensor by Swift name (`"ambientLightSensor"`), SensorKit raw identifier
    /// (`"com.apple.SensorKit.als"`) or ObjC constant (`"SRSensorAmbientLightSensor"`),
    /// case-insensitively; otherwise an error with "did you mean" suggestions.
    public static func sensor(named name: String) -> Result<Sensor, NameLookupError> {
        if let s = Sensor(name: name) { return .success(s) }
        let l = name.lowercased()
        if let s = all.first(where: {
            $0.sensor.rawValue.lowercased() == l || $0.sensor.identifier.lowercased() == l || $0.objcConstant.lowercased() == l
        }) {
            return .success(s.sensor)
        }
        return .failure(NameLookupError(kind: "sensor", name: name, suggestions: sensorSuggestions(for: name)))
    }

    /// Suggested Swift sensor names for a misspelt `name` (also matches entitlement strings).
    public static func sensorSuggestions(for name: String) -> [String] {
        let direct = Suggestions.closest(to: name, among: Sensor.allCases.map(\.rawValue))
        if !direct.isEmpty { return direct }
        // "ambient-light", "motion-accelerometer": go through the entitlement strings.
        let viaEntitlement = Suggestions.closest(to: name, among: all.map(\.entitlement))
        return viaEntitlement.compactMap { e in all.first { $0.entitlement == e }?.sensor.rawValue }
    }

    /// The hint for a misspelt sensor name: the closest sensor as `Suggestions.didYouMean`
    /// (`" — did you mean 'heartRate'?"`), or `""`.
    public static func sensorHint(for name: String) -> String {
        Suggestions.didYouMean(Array(sensorSuggestions(for: name).prefix(1)))
    }

    /// Resolves one `com.apple.developer.sensorkit.reader.allow` string (contract §2.1 simulator
    /// rule): the public string, the raw identifier or the Swift property name,
    /// case-insensitively. Unknown strings give nil (SensorKit ignores them).
    public static func sensor(forEntitlement string: String) -> Sensor? {
        let l = string.lowercased()
        return all.first {
            $0.entitlement.lowercased() == l || $0.sensor.identifier.lowercased() == l || $0.sensor.rawValue.lowercased() == l
        }?.sensor
    }

    /// Suggested public entitlement strings for an unknown one (`"message-usage"` → `"messages-usage"`).
    public static func entitlementSuggestions(for string: String) -> [String] {
        let direct = Suggestions.closest(to: string, among: all.map(\.entitlement))
        if !direct.isEmpty { return direct }
        let viaName = Suggestions.closest(to: string, among: Sensor.allCases.map(\.rawValue))
        return viaName.compactMap { Sensor(rawValue: $0)?.entitlement }
    }

    /// Resolves a key of the study's `sensors` table (usage details): a sensor name
    /// (as `sensor(named:)` accepts) or an `SRSensorUsage…` key. Returns the sensors covered.
    public static func sensors(forUsageDetailKey key: String) -> Result<[Sensor], NameLookupError> {
        let byKey = sensors(forUsageKey: key)
        if !byKey.isEmpty { return .success(byKey) }
        switch sensor(named: key) {
        case .success(let s): return .success([s])
        case .failure(let e):
            var suggestions = e.suggestions
            if suggestions.isEmpty { suggestions = Suggestions.closest(to: key, among: usageKeys) }
            return .failure(NameLookupError(kind: "sensor", name: key, suggestions: suggestions))
        }
    }

    /// The span each sample covers (contract §3.3): interval bins end at `endDate`, a visit
    /// at its departure, sessions last their `duration`, and reports, which have no date of
    /// their own, cover their `duration` up to when they were written.
    private static func window(of sensor: Sensor) -> SampleWindow? {
        switch sensor {
        case .pedometerData, .odometer: .toField("endDate")
        case .visits: .toField("departureEnd")
        case .sleepSessions, .wristTemperature: .forDuration("duration")
        case .deviceUsageReport, .messagesUsageReport, .phoneUsageReport, .keyboardMetrics: .durationBeforeWrite("duration")
        default: nil
        }
    }

    // MARK: The table

    private static func makeInfo(_ sensor: Sensor) -> SensorInfo {
        let p: [DeviceKind] = [.phone], w: [DeviceKind] = [.watch], pw: [DeviceKind] = [.phone, .watch]
        /// One catalogue entry; every value labelled (contract §2.1, §2.2, §3.1, §3.2, §3.3).
        func info(entitlement: String, entitlementConfirmed: Bool, usageKey: String, usageKeyConfirmed: Bool,
                  objcConstant: String, sampleType: String, devices: [DeviceKind], shape: ResultShape,
                  firstOS: OSVersion, cadence: Cadence, fields: [FieldSchema]) -> SensorInfo {
            SensorInfo(sensor: sensor, entitlement: entitlement, entitlementConfirmed: entitlementConfirmed,
                       usageKey: usageKey, usageKeyConfirmed: usageKeyConfirmed, objcConstant: objcConstant,
                       sampleType: sampleType, deviceKinds: devices, shape: shape, firstOS: firstOS,
                       cadence: cadence, fields: fields)
        }
        switch sensor {
        case .ambientLightSensor:
            return info(entitlement: "ambient-light-sensor", entitlementConfirmed: true, usageKey: "SRSensorUsageAmbientLightSensor", usageKeyConfirmed: true,
                        objcConstant: "SRSensorAmbientLightSensor", sampleType: "SRAmbientLightSample", devices: pw, shape: .object,
                        firstOS: OSVersion(14),
                        cadence: Cadence("phone: one sample every ~10 s while the screen is on; watch: about one a minute while worn, chromaticity 0 (rates undocumented)", period: 10),
                        fields: [
                f("lux", .double, "lx", "illuminance at the sensor"),
                f("placement", .enumeration(name: "SRAmbientLightSample.SensorPlacement", cases: named([
                    "unknown", "frontTop", "frontBottom", "frontRight", "frontLeft", "frontTopRight",
                    "frontTopLeft", "frontBottomRight", "frontBottomLeft",
                ])), "where the light sensor sits relative to the display"),
                f("chromaticityX", .double, apple: "chromaticity.x", "CIE 1931 x chromaticity (0 when colour is not measured)"),
                f("chromaticityY", .double, apple: "chromaticity.y", "CIE 1931 y chromaticity (0 when colour is not measured)"),
            ])
        case .accelerometer:
            return info(entitlement: "motion-accelerometer", entitlementConfirmed: true, usageKey: "SRSensorUsageMotion", usageKeyConfirmed: true,
                        objcConstant: "SRSensorAccelerometer", sampleType: "CMRecordedAccelerometerData", devices: pw, shape: .array,
                        firstOS: OSVersion(14), cadence: Cadence("~50 Hz continuous, written in 60-s batches of ~3 000 elements", period: 0.02),
                        fields: [
                rowTime("startDate", "wall-clock time of the sample"),
                f("x", .double, "g", apple: "acceleration.x", "acceleration along x, device frame, gravity included"),
                f("y", .double, "g", apple: "acceleration.y", "acceleration along y, device frame, gravity included"),
                f("z", .double, "g", apple: "acceleration.z", "acceleration along z, device frame, gravity included"),
                uptimeField,
                batchIdentifierField,
            ])
        case .rotationRate:
            return info(entitlement: "motion-rotation-rate", entitlementConfirmed: true, usageKey: "SRSensorUsageMotion", usageKeyConfirmed: true,
                        objcConstant: "SRSensorRotationRate", sampleType: "CMRecordedRotationRateData", devices: pw, shape: .array,
                        firstOS: OSVersion(14), cadence: Cadence("~50 Hz continuous, written in 60-s batches", period: 0.02),
                        fields: [
                rowTime("startDate", "wall-clock time of the sample"),
                f("x", .double, "rad/s", apple: "rotationRate.x", "rotation rate about x"),
                f("y", .double, "rad/s", apple: "rotationRate.y", "rotation rate about y"),
                f("z", .double, "rad/s", apple: "rotationRate.z", "rotation rate about z"),
                uptimeField,
            ])
        case .visits:
            return info(entitlement: "visits", entitlementConfirmed: true, usageKey: "SRSensorUsageVisits", usageKeyConfirmed: true,
                        objcConstant: "SRSensorVisits", sampleType: "SRVisit", devices: p, shape: .object,
                        firstOS: OSVersion(14), cadence: Cadence("one record per visit to a significant place, written after departure", period: nil),
                        fields: [
                rowTime("arrivalStart", apple: "arrivalDateInterval.start", "start of the (fuzzy) arrival window"),
                f("distanceFromHome", .double, "m", "distance between this place and home"),
                f("arrivalEnd", .date, "s since 1970", apple: "arrivalDateInterval.end", "end of the arrival window"),
                f("departureStart", .date, "s since 1970", apple: "departureDateInterval.start", "start of the departure window"),
                f("departureEnd", .date, "s since 1970", apple: "departureDateInterval.end", "end of the departure window"),
                f("locationCategory", .enumeration(name: "SRVisit.LocationCategory",
                                                   cases: named(["unknown", "home", "work", "school", "gym"])),
                  "kind of place"),
                f("identifier", .string, apple: "identifier", "opaque UUID, stable per place; never coordinates"),
            ])
        case .pedometerData:
            return info(entitlement: "pedometer", entitlementConfirmed: true, usageKey: "SRSensorUsagePedometer", usageKeyConfirmed: true,
                        objcConstant: "SRSensorPedometerData", sampleType: "CMPedometerData", devices: p, shape: .object,
                        firstOS: OSVersion(14), cadence: Cadence("variable bins of ~1–5 min while walking (rate undocumented)", period: 60),
                        fields: [
                rowTime("startDate", "start of the interval covered"),
                f("endDate", .date, "s since 1970", "end of the interval covered"),
                f("numberOfSteps", .int, "steps", "steps taken in the interval"),
                f("distance", .double, "m", opt: true, "estimated distance walked"),
                f("floorsAscended", .int, "floors", opt: true, "floors climbed up (≈3 m each)"),
                f("floorsDescended", .int, "floors", opt: true, "floors climbed down"),
                f("currentPace", .double, "s/m", opt: true, "current pace"),
                f("currentCadence", .double, "steps/s", opt: true, "current cadence"),
                f("averageActivePace", .double, "s/m", opt: true, "average pace while active"),
            ])
        case .deviceUsageReport:
            return info(entitlement: "device-usage", entitlementConfirmed: true, usageKey: "SRSensorUsageDeviceUsage", usageKeyConfirmed: true,
                        objcConstant: "SRSensorDeviceUsageReport", sampleType: "SRDeviceUsageReport", devices: p, shape: .object,
                        firstOS: OSVersion(14), cadence: Cadence("one report per 15-min window (reportWindow; period undocumented)", period: 900),
                        fields: [
                f("duration", .duration, "s", "span the report covers"),
                f("totalScreenWakes", .int, "count", "screen wakes in the window"),
                f("totalUnlocks", .int, "count", "unlocks in the window"),
                f("totalUnlockDuration", .duration, "s", "time spent unlocked"),
                f("version", .string, since: OSVersion(16, 4), "algorithm version"),
                f("applicationUsageByCategory", .structured(byCategory(list(rec(
                    sub("bundleIdentifier", .string, opt: true), sub("usageTime", .duration, "s"),
                    sub("reportApplicationIdentifier", .string),
                    sub("textInputSessions", list(rec(
                        sub("duration", .duration, "s"),
                        sub("sessionType", .enumeration(name: "SRTextInputSession.SessionType", cases: textInputSessionTypes)),
                        sub("sessionIdentifier", .string)))),
                    sub("supplementalCategories", list(v(.string))), sub("relativeStartTime", .duration, "s"))))),
                  "app usage per App Store category; bundleIdentifier only for Apple apps"),
                f("notificationUsageByCategory", .structured(byCategory(list(rec(
                    sub("bundleIdentifier", .string, opt: true),
                    sub("event", .enumeration(name: "SRDeviceUsageReport.NotificationUsage.Event", cases: notificationEvents)))))),
                  "notification events per category"),
                f("webUsageByCategory", .structured(byCategory(list(rec(sub("totalUsageTime", .duration, "s"))))),
                  "web usage per Screen Time domain category"),
            ])
        case .messagesUsageReport:
            return info(entitlement: "messages-usage", entitlementConfirmed: true, usageKey: "SRSensorUsageMessageUsage", usageKeyConfirmed: true,
                        objcConstant: "SRSensorMessagesUsageReport", sampleType: "SRMessagesUsageReport", devices: p, shape: .object,
                        firstOS: OSVersion(14), cadence: Cadence("one report per 15-min window (period undocumented)", period: 900),
                        fields: [
                f("duration", .duration, "s", "span the report covers"),
                f("totalOutgoingMessages", .int, "count", "messages sent"),
                f("totalIncomingMessages", .int, "count", "messages received"),
                f("totalUniqueContacts", .int, "count", "distinct contacts messaged (no identities)"),
            ])
        case .phoneUsageReport:
            return info(entitlement: "phone-usage", entitlementConfirmed: true, usageKey: "SRSensorUsagePhoneUsage", usageKeyConfirmed: true,
                        objcConstant: "SRSensorPhoneUsageReport", sampleType: "SRPhoneUsageReport", devices: p, shape: .object,
                        firstOS: OSVersion(14), cadence: Cadence("one report per 15-min window (period undocumented)", period: 900),
                        fields: [
                f("duration", .duration, "s", "span the report covers"),
                f("totalOutgoingCalls", .int, "count", "calls placed"),
                f("totalIncomingCalls", .int, "count", "calls received"),
                f("totalUniqueContacts", .int, "count", "distinct contacts called (no identities)"),
                f("totalPhoneCallDuration", .duration, "s", "time spent in calls"),
            ])
        case .onWristState:
            let side = FieldType.enumeration(name: "SRWristDetection.WristLocation", cases: named(["left", "right"]))
            return info(entitlement: "on-wrist", entitlementConfirmed: true, usageKey: "SRSensorUsageWristDetection", usageKeyConfirmed: true,
                        objcConstant: "SRSensorOnWristState", sampleType: "SRWristDetection", devices: w, shape: .object,
                        firstOS: OSVersion(14), cadence: Cadence("one record per wear-state change (event-driven)", period: nil),
                        fields: [
                f("onWrist", .bool, "whether the watch is worn"),
                f("wristLocation", side, "wrist the watch is worn on"),
                f("crownOrientation", .enumeration(name: "SRWristDetection.CrownOrientation", cases: named(["left", "right"])),
                  "side the crown faces"),
                f("onWristDate", .date, "s since 1970", opt: true, since: OSVersion(16, 4),
                  "start of the latest on-wrist period (changes only on off→on)"),
                f("offWristDate", .date, "s since 1970", opt: true, since: OSVersion(16, 4),
                  "start of the latest off-wrist period (changes only on on→off)"),
            ])
        case .keyboardMetrics:
            return info(entitlement: "keyboard-metrics", entitlementConfirmed: true, usageKey: "SRSensorUsageKeyboardMetrics", usageKeyConfirmed: true,
                        objcConstant: "SRSensorKeyboardMetrics", sampleType: "SRKeyboardMetrics", devices: p, shape: .object,
                        firstOS: OSVersion(14), cadence: Cadence("one record per keyboard session or 15-min window", period: 900),
                        fields: keyboardFields())
        case .siriSpeechMetrics:
            return info(entitlement: "speech-metrics-siri", entitlementConfirmed: true, usageKey: "SRSensorUsageSpeechMetrics", usageKeyConfirmed: true,
                        objcConstant: "SRSensorSiriSpeechMetrics", sampleType: "SRSpeechMetrics", devices: p, shape: .object,
                        firstOS: OSVersion(15), cadence: Cadence("several records per Siri request, periodic through the audio", period: nil),
                        fields: speechFields())
        case .telephonySpeechMetrics:
            return info(entitlement: "speech-metrics-telephony", entitlementConfirmed: true, usageKey: "SRSensorUsageSpeechMetrics", usageKeyConfirmed: true,
                        objcConstant: "SRSensorTelephonySpeechMetrics", sampleType: "SRSpeechMetrics", devices: p, shape: .object,
                        firstOS: OSVersion(15), cadence: Cadence("several records per phone call, periodic through the audio", period: nil),
                        fields: speechFields())
        case .ambientPressure:
            return info(entitlement: "ambient-pressure", entitlementConfirmed: true, usageKey: "SRSensorUsageElevation", usageKeyConfirmed: true,
                        objcConstant: "SRSensorAmbientPressure", sampleType: "CMRecordedPressureData", devices: p, shape: .array,
                        firstOS: OSVersion(15, 4), cadence: Cadence("~1 Hz elements written in 60-s batches (rate undocumented)", period: 1),
                        fields: [
                rowTime("startDate", "wall-clock time of the sample"),
                f("pressure", .double, "kPa", apple: "pressure", "ambient pressure"),
                f("temperature", .double, "°C", apple: "temperature", "temperature at the pressure sensor"),
                batchIdentifierField,
                uptimeField,
            ])
        case .mediaEvents:
            return info(entitlement: "media-events", entitlementConfirmed: false, usageKey: "SRSensorUsageMediaEvents", usageKeyConfirmed: true,
                        objcConstant: "SRSensorMediaEvents", sampleType: "SRMediaEvent", devices: p, shape: .object,
                        firstOS: OSVersion(16, 4), cadence: Cadence("onScreen/offScreen event pairs for images and videos in messaging apps", period: nil),
                        fields: [
                f("mediaIdentifier", .string, "opaque identifier of the media item"),
                f("eventType", .enumeration(name: "SRMediaEventType", cases: named(["onScreen", "offScreen"], from: 1)),
                  "whether the item came on or went off screen"),
            ])
        case .wristTemperature:
            return info(entitlement: "wrist-temperature", entitlementConfirmed: false, usageKey: "SRSensorUsageWristTemperature", usageKeyConfirmed: true,
                        objcConstant: "SRSensorWristTemperature", sampleType: "SRWristTemperatureSession", devices: w, shape: .object,
                        firstOS: OSVersion(17), cadence: Cadence("one session per night while sleeping, readings every ~5 min inside", period: 86_400),
                        fields: [
                rowTime("startDate", "start of the sleep-time collection session"),
                f("duration", .duration, "s", "exact seconds of collection"),
                f("version", .string, "algorithm version"),
                f("temperatures", .structured(list(rec(
                    sub("timestamp", .date, "s since 1970"), sub("value", .double, "°C"),
                    sub("condition", .optionSet(name: "SRWristTemperature.Condition", bits: bits(["offWrist", "onCharger", "inMotion"]))),
                    sub("errorEstimate", .double, "°C")))),
                  "the session's readings (SRWristTemperature; single-pass enumerator in ObjC)"),
            ])
        case .heartRate:
            return info(entitlement: "heart-rate", entitlementConfirmed: false, usageKey: "SRSensorUsageHeartRate", usageKeyConfirmed: true,
                        objcConstant: "SRSensorHeartRate", sampleType: "CMHighFrequencyHeartRateData", devices: w, shape: .object,
                        firstOS: OSVersion(17), cadence: Cadence("1 Hz while the watch is worn", period: 1, confirmed: true),
                        fields: [
                rowTime("date", opt: true, "wall time of the estimate"),
                f("heartRate", .double, "bpm", "heart rate estimate"),
                f("confidence", .enumeration(name: "CMHighFrequencyHeartRateData.Confidence",
                                             cases: named(["low", "medium", "high", "highest"])),
                  "confidence of the estimate"),
                uptimeField,
            ])
        case .faceMetrics:
            return info(entitlement: "face-metrics", entitlementConfirmed: false, usageKey: "SRSensorUsageFacialMetrics", usageKeyConfirmed: true,
                        objcConstant: "SRSensorFaceMetrics", sampleType: "SRFaceMetrics", devices: p, shape: .object,
                        firstOS: OSVersion(17), cadence: Cadence("short face-tracking sessions at unlock / messaging app use", period: nil),
                        fields: [
                f("version", .string, "algorithm version"),
                f("sessionIdentifier", .string, "capture session"),
                f("context", .optionSet(name: "SRFaceMetrics.Context", bits: bits(["deviceUnlock", "messagingAppUsage"])),
                  "what the face was captured during"),
                f("faceAnchor", .structured(rec(sub("blendShapes", .keyed(key: "name", keys: nil, v(.double, "0…1"))))),
                  "face geometry; ARKit's ARFaceAnchor replaced by blend-shape coefficients"),
                f("wholeFaceExpressions", .structured(list(rec(sub("identifier", .string), sub("value", .double, "0…1")))), "whole-face expressions"),
                f("partialFaceExpressions", .structured(list(rec(sub("identifier", .string), sub("value", .double, "0…1")))), "partial-face expressions"),
            ])
        case .odometer:
            return info(entitlement: "odometer", entitlementConfirmed: false, usageKey: "SRSensorUsageOdometer", usageKeyConfirmed: true,
                        objcConstant: "SRSensorOdometer", sampleType: "CMOdometerData", devices: pw, shape: .object,
                        firstOS: OSVersion(17), cadence: Cadence("bins of ~10 s during locomotion (rate undocumented)", period: 10),
                        fields: [
                rowTime("startDate", "start of the interval"),
                f("endDate", .date, "s since 1970", "end of the interval"),
                f("deltaDistance", .double, "m", "distance travelled in the interval"),
                f("deltaDistanceAccuracy", .double, "m", "accuracy of deltaDistance (negative ⇒ invalid)"),
                f("speed", .double, "m/s", "speed"),
                f("speedAccuracy", .double, "m/s", "accuracy of speed"),
                f("gpsDate", .date, "s since 1970", "time of the last GPS fix used"),
                f("deltaAltitude", .double, "m", "altitude change in the interval"),
                f("verticalAccuracy", .double, "m", "accuracy of deltaAltitude"),
                f("originDevice", .enumeration(name: "CMOdometerOriginDevice", cases: named(["unknown", "local", "remote"])),
                  "device that measured (remote = e.g. watch)"),
                f("slope", .double, "°", opt: true, "slope"),
                f("maxAbsSlope", .double, "°", opt: true, "maximum absolute slope"),
            ])
        case .electrocardiogram:
            return info(entitlement: "ecg", entitlementConfirmed: true, usageKey: "SRSensorUsageECG", usageKeyConfirmed: true,
                        objcConstant: "SRSensorElectrocardiogram", sampleType: "SRElectrocardiogramSample", devices: w, shape: .array,
                        firstOS: OSVersion(17, 4), cadence: Cadence("on-demand ~30-s recordings split into begin/active/end batches (~512 Hz)", period: nil),
                        fields: [
                rowTime("date", "start of this batch of ECG data"),
                f("frequency", .double, "Hz", "sampling frequency"),
                f("sessionState", .enumeration(name: "SRElectrocardiogramSession.SessionState",
                                               cases: named(["begin", "active", "end"], from: 1)),
                  apple: "session.state", "position in the recording: begin → active… → end"),
                f("sessionGuidance", .enumeration(name: "SRElectrocardiogramSession.SessionGuidance",
                                                  cases: named(["guided", "unguided"], from: 1)),
                  apple: "session.sessionGuidance", "guided or unguided recording"),
                f("sessionIdentifier", .string, apple: "session.identifier", "recording shared by its batches"),
                f("lead", .enumeration(name: "SRElectrocardiogramSample.Lead",
                                       cases: named(["rightArmMinusLeftArm", "leftArmMinusRightArm"], from: 1)),
                  "electrode configuration"),
                f("data", .structured(list(rec(
                    sub("flags", .optionSet(name: "SRElectrocardiogramData.Flags", bits: bits(["signalInvalid", "crownTouched"]))),
                    sub("value", .double, "µV")))),
                  "the voltage samples (SRElectrocardiogramData)"),
            ])
        case .photoplethysmogram:
            return info(entitlement: "ppg", entitlementConfirmed: true, usageKey: "SRSensorUsagePPG", usageKeyConfirmed: true,
                        objcConstant: "SRSensorPhotoplethysmogram", sampleType: "SRPhotoplethysmogramSample", devices: w, shape: .array,
                        firstOS: OSVersion(17, 4), cadence: Cadence("2–60 s windows several times an hour; foreground and background", period: nil),
                        fields: [
                rowTime("startDate", "start of the PPG window"),
                f("nanosecondsSinceStart", .int, "ns", "offset of this sample within the window"),
                f("usage", .structured(list(v(.string))),
                  "what the window was recorded for: \(ppgUsages.joined(separator: ", "))"),
                f("opticalSamples", .structured(list(rec(
                    sub("emitter", .int), sub("activePhotodiodeIndexes", list(v(.int))), sub("signalIdentifier", .int),
                    sub("nominalWavelength", .double, "nm"), sub("effectiveWavelength", .double, "nm"),
                    sub("samplingFrequency", .double, "Hz"), sub("nanosecondsSinceStart", .int, "ns"),
                    sub("normalizedReflectance", .double, opt: true), sub("whiteNoise", .double, opt: true),
                    sub("pinkNoise", .double, opt: true), sub("backgroundNoise", .double, opt: true),
                    sub("backgroundNoiseOffset", .double, opt: true), sub("conditions", list(v(.string)))))),
                  "optical channel samples; conditions among \(ppgOpticalConditions.joined(separator: ", "))"),
                f("accelerometerSamples", .structured(list(rec(
                    sub("nanosecondsSinceStart", .int, "ns"), sub("samplingFrequency", .double, "Hz"),
                    sub("x", .double, "g"), sub("y", .double, "g"), sub("z", .double, "g")))),
                  "accelerometer samples taken with the window"),
                f("temperature", .double, "°C", opt: true, "sensor temperature"),
            ])
        case .acousticSettings:
            let tuning = FieldType.enumeration(name: "MediaEnhanceTuning", cases: named(["none", "balancedTone", "vocalRange", "brightness"]))
            let boosting = FieldType.enumeration(name: "MediaEnhanceBoosting", cases: named(["none", "slight", "moderate", "strong"]))
            let application = FieldType.enumeration(name: "MediaEnhanceApplication",
                                                    cases: named(["none", "phone", "media", "phoneAndMedia"], from: 1))
            let sound = FieldType.enumeration(name: "BackgroundSounds.Name", cases: named([
                "balancedNoise", "brightNoise", "darkNoise", "ocean", "rain", "stream", "night", "fire", "babble",
                "steam", "airplane", "boat", "bus", "train", "rainOnRoof", "quietNight",
            ], from: 1))
            let bs = "accessibilitySettings.backgroundSounds.", ha = "accessibilitySettings.headphoneAccommodations."
            return info(entitlement: "acoustic-settings", entitlementConfirmed: false, usageKey: "SRSensorUsageAcousticSettings", usageKeyConfirmed: false,
                        objcConstant: "SRSensorAcousticSettings", sampleType: "SRAcousticSettings", devices: p, shape: .object,
                        firstOS: OSVersion(26), cadence: Cadence("a settings snapshot at start and on each change", period: nil),
                        fields: [
                f("isEnvironmentalSoundMeasurementsEnabled", .bool, "environmental sound measurements on"),
                f("audioExposureSampleLifetime", .enumeration(name: "SRAcousticSettings.SampleLifetime",
                                                              cases: named(["eightDays", "untilUserDeletes"], from: 1)),
                  "how long audio exposure samples are kept"),
                f("headphoneSafetyAudioLevel", .double, "dB", opt: true, "headphone safety limit (nil when off)"),
                f("soundCheckEnabled", .bool, apple: "musicEQSettings.isSoundCheckEnabled", "Sound Check on"),
                f("lateNightModeEnabled", .bool, apple: "musicEQSettings.isLateNightModeEnabled", "Late Night mode on"),
                f("leftRightBalance", .double, apple: "accessibilitySettings.leftRightBalance", "left/right audio balance"),
                f("monoAudioEnabled", .bool, apple: "accessibilitySettings.isMonoAudioEnabled", "mono audio on"),
                f("backgroundSoundsEnabled", .bool, apple: bs + "isEnabled", "background sounds on"),
                f("backgroundSoundName", sound, apple: bs + "soundName", "background sound played"),
                f("backgroundSoundsRelativeVolume", .double, apple: bs + "relativeVolume", "background sound volume"),
                f("backgroundSoundsPlayWithMediaEnabled", .bool, apple: bs + "isPlayWithMediaEnabled",
                  "background sounds continue with media"),
                f("backgroundSoundsRelativeVolumeWithMedia", .double, apple: bs + "relativeVolumeWithMedia",
                  "background sound volume while media plays"),
                f("backgroundSoundsStopOnLockEnabled", .bool, apple: bs + "isStopOnLockEnabled", "stop background sounds on lock"),
                f("headphoneAccommodationsEnabled", .bool, apple: ha + "isEnabled", "headphone accommodations on"),
                f("mediaEnhanceTuning", tuning, apple: ha + "mediaEnhanceTuning", "headphone accommodation tuning"),
                f("mediaEnhanceBoosting", boosting, apple: ha + "mediaEnhanceBoosting", "boost of soft sounds"),
                f("mediaEnhanceApplication", application, apple: ha + "mediaEnhanceApplication",
                  "what the accommodation applies to"),
            ])
        case .sleepSessions:
            return info(entitlement: "sleep-sessions", entitlementConfirmed: false, usageKey: "SRSensorUsageSleep", usageKeyConfirmed: false,
                        objcConstant: "SRSensorSleepSessions", sampleType: "SRSleepSession", devices: w, shape: .object,
                        firstOS: OSVersion(26), cadence: Cadence("one session per sleep period", period: 86_400),
                        fields: [
                rowTime("startDate", "start of the sleep session"),
                f("duration", .duration, "s", "length of the session (0 when no end was recorded)"),
                f("identifier", .string, "session identifier"),
            ])
        }
    }

    private static func speechFields() -> [FieldSchema] {
        [
            rowTime("timestamp", "wall time the sample was produced (rounded down for privacy)"),
            f("sessionIdentifier", .string, "one phone call or one Siri utterance"),
            f("sessionFlags", .optionSet(name: "SRSpeechMetrics.SessionFlags", bits: bits(["bypassVoiceProcessing"])),
              "empty = audio passed the system voice processor"),
            f("timeSinceAudioStart", .duration, "s", since: OSVersion(17, 2), "seconds since the audio stream began"),
            f("audioLevelLoudness", .double, "dB", opt: true, apple: "audioLevel.loudness", "loudness of the audio"),
            f("audioLevelStart", .duration, "s", opt: true, apple: "audioLevel.timeRange.start",
              "start of the measured audio range within the stream"),
            f("audioLevelDuration", .duration, "s", opt: true, apple: "audioLevel.timeRange.duration",
              "length of the measured audio range"),
            f("speechRecognition", .structured(rec(
                sub("formattedString", .string, opt: true),
                sub("segments", list(rec(sub("substring", .string), sub("confidence", .double, "0…1"),
                                         sub("timestamp", .duration, "s"), sub("duration", .duration, "s")))))),
              opt: true, "Speech framework result (text withheld for Siri)"),
            f("soundClassification", .structured(rec(
                sub("timeRange", audioTimeRange),
                sub("classifications", list(rec(sub("identifier", .string), sub("confidence", .double, "0…1")))))),
              opt: true, "SoundAnalysis classification result"),
            f("speechExpression", .structured(rec(
                sub("version", .string), sub("timeRange", audioTimeRange), sub("confidence", .double, "0…1"),
                sub("mood", .double, "−1…1"), sub("valence", .double, "−1…1"), sub("activation", .double, "−1…1"),
                sub("dominance", .double, "−1…1"))),
              opt: true, "speech expression estimates"),
        ]
    }

    private static func keyboardFields() -> [FieldSchema] {
        var out: [FieldSchema] = [
            f("duration", .duration, "s", "span the metrics cover"),
            f("keyboardIdentifier", .string, "keyboard in the user's keyboard list"),
            f("version", .string, "metrics version"),
            f("width", .double, "mm", "keyboard width"),
            f("height", .double, "mm", "keyboard height"),
            f("inputModes", .structured(list(v(.string))), since: OSVersion(15), "input modes used"),
            f("sessionIdentifiers", .structured(list(v(.string))), since: OSVersion(16, 4),
              "keyboard sessions included (join key to SRTextInputSession.sessionIdentifier)"),
        ]
        let counts: [(String, String)] = [
            ("totalWords", "words typed"), ("totalAlteredWords", "words altered"), ("totalTaps", "taps"),
            ("totalDrags", "drags"), ("totalDeletes", "deletes"), ("totalEmojis", "emoji typed"),
            ("totalPaths", "swipe (QuickPath) paths"),
        ]
        for (n, s) in counts { out.append(f(n, .int, "count", s)) }
        out.append(f("totalPathTime", .duration, "s", "time spent drawing paths"))
        out.append(f("totalPathLength", .double, "mm", "length of all paths"))
        for kind in keyboardCorrectionKinds {
            out.append(f("total\(kind)Corrections", .int, "count", "\(kind) corrections"))
        }
        out.append(f("totalTypingDuration", .duration, "s", "time spent typing"))
        let v15 = OSVersion(15)
        out.append(f("totalPauses", .int, "count", since: v15, "pauses while tap typing"))
        out.append(f("totalPathPauses", .int, "count", since: v15, "pauses while path typing"))
        out.append(f("typingSpeed", .double, "words/min", since: v15, "tap typing speed"))
        out.append(f("pathTypingSpeed", .double, "words/min", since: v15, "path (swipe) typing speed"))
        out.append(f("totalTypingEpisodes", .int, "count", since: v15, "typing episodes (split at pauses > 5 s)"))
        for n in keyboardLengthDistributions {
            out.append(f(n, .structured(list(v(.double, "mm"))), "mm",
                         apple: n + ".distributionSampleValues", "distribution of \(n)"))
        }
        for n in keyboardDurationDistributions {
            out.append(f(n, .structured(list(v(.double, "s"))), "s",
                         apple: n + ".distributionSampleValues",
                         since: n == "touchUpDown" ? v15 : nil, "distribution of \(n)"))
        }
        out.append(f("pathErrorDistanceRatio", .structured(list(v(.double))), "distribution of path error distance ratios"))
        for (n, unit) in keyboardPositionalDistributions {
            out.append(f(n, .structured(list(list(v(.double, unit)))), unit,
                         since: n == "longWordTouchUpDown" ? v15 : nil, "distribution of \(n) per character position (6 lists: 1st…5th, rest)"))
        }
        for c in sentimentCategories {
            let cap = c.name.prefix(1).uppercased() + c.name.dropFirst()
            out.append(f("wordCount\(cap)", .int, "count", apple: "wordCount(for: .\(c.name))", since: v15,
                         "words in the \(c.name) sentiment category"))
        }
        for c in sentimentCategories {
            let cap = c.name.prefix(1).uppercased() + c.name.dropFirst()
            out.append(f("emojiCount\(cap)", .int, "count", apple: "emojiCount(for: .\(c.name))", since: v15,
                         "emoji in the \(c.name) sentiment category"))
        }
        return out
    }
}

/// An unknown name (sensor, entitlement, switch…) with "did you mean" suggestions.
public struct NameLookupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was looked up: `"sensor"`, `"entitlement"`, `"switch"`, …
    public var kind: String
    public var name: String
    public var suggestions: [String]

    public init(kind: String, name: String, suggestions: [String]) {
        self.kind = kind
        self.name = name
        self.suggestions = suggestions
    }

    /// `"unknown sensor 'acelerometer' — did you mean 'accelerometer'?"`
    public var description: String { "unknown \(kind) '\(name)'" + Suggestions.didYouMean(suggestions) }
}

extension Sensor {
    /// The catalogue entry (contract §3).
    public var info: SensorInfo { SensorCatalogue.info(self) }
    /// Public entitlement string (contract §2.1).
    public var entitlement: String { info.entitlement }
    /// `SRSensorUsage…` key (contract §2.2).
    public var usageKey: String { info.usageKey }
    public var shape: ResultShape { info.shape }
    public var deviceKinds: [DeviceKind] { info.deviceKinds }
    public var firstOS: OSVersion { info.firstOS }
    /// The sensors answered together in the consent sheet (same usage key, contract §5.1), self included.
    public var authorizationGroup: [Sensor] { SensorCatalogue.sensors(forUsageKey: usageKey) }
}
