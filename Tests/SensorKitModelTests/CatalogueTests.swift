import XCTest
@testable import SensorKitModel

final class CatalogueTests: XCTestCase {
    func testTwentyTwoSensorsEachWithInfo() {
        XCTAssertEqual(Sensor.allCases.count, 22)
        XCTAssertEqual(SensorCatalogue.all.count, 22)
        XCTAssertEqual(SensorCatalogue.all.map(\.sensor), Sensor.allCases)
        for info in SensorCatalogue.all {
            XCTAssertFalse(info.fields.isEmpty, "\(info.sensor) has no fields")
            XCTAssertFalse(info.cadence.summary.isEmpty)
            XCTAssertFalse(info.deviceKinds.isEmpty)
            XCTAssertTrue(info.usageKey.hasPrefix("SRSensorUsage"), "\(info.sensor)")
            XCTAssertTrue(info.objcConstant.hasPrefix("SRSensor"))
            XCTAssertEqual(Set(info.fields.map(\.name)).count, info.fields.count, "duplicate field names in \(info.sensor)")
            XCTAssertLessThanOrEqual(info.fields.filter { $0.role == .rowTime }.count, 1)
            for field in info.fields {
                XCTAssertFalse(field.summary.isEmpty, "\(info.sensor).\(field.name) lacks a summary")
                XCTAssertFalse(field.name.contains("."), "\(field.name) must be a flat column name")
                if case .enumeration(_, let cases) = field.type { XCTAssertFalse(cases.isEmpty) }
                if field.role == .rowTime { XCTAssertEqual(field.type, .date) }
            }
        }
    }

    /// contract §2.1 entitlement strings, exactly.
    func testEntitlementStrings() {
        let expected: [Sensor: String] = [
            .onWristState: "on-wrist", .ambientLightSensor: "ambient-light-sensor",
            .accelerometer: "motion-accelerometer", .rotationRate: "motion-rotation-rate", .visits: "visits",
            .pedometerData: "pedometer", .deviceUsageReport: "device-usage", .messagesUsageReport: "messages-usage",
            .phoneUsageReport: "phone-usage", .keyboardMetrics: "keyboard-metrics",
            .telephonySpeechMetrics: "speech-metrics-telephony", .siriSpeechMetrics: "speech-metrics-siri",
            .ambientPressure: "ambient-pressure", .electrocardiogram: "ecg", .photoplethysmogram: "ppg",
            .heartRate: "heart-rate", .wristTemperature: "wrist-temperature", .faceMetrics: "face-metrics",
            .mediaEvents: "media-events", .odometer: "odometer", .acousticSettings: "acoustic-settings",
            .sleepSessions: "sleep-sessions",
        ]
        XCTAssertEqual(expected.count, 22)
        for s in Sensor.allCases { XCTAssertEqual(s.entitlement, expected[s], "\(s)") }
        XCTAssertEqual(Set(Sensor.allCases.filter { !$0.info.entitlementConfirmed }),
                       [.heartRate, .wristTemperature, .faceMetrics, .mediaEvents, .odometer, .acousticSettings, .sleepSessions])
    }

    /// contract §2.2 usage keys, including the two shared ones and the singular "Message".
    func testUsageKeys() {
        XCTAssertEqual(Sensor.accelerometer.usageKey, "SRSensorUsageMotion")
        XCTAssertEqual(Sensor.rotationRate.usageKey, "SRSensorUsageMotion")
        XCTAssertEqual(Sensor.siriSpeechMetrics.usageKey, "SRSensorUsageSpeechMetrics")
        XCTAssertEqual(Sensor.telephonySpeechMetrics.usageKey, "SRSensorUsageSpeechMetrics")
        XCTAssertEqual(Sensor.messagesUsageReport.usageKey, "SRSensorUsageMessageUsage")
        XCTAssertEqual(Sensor.ambientPressure.usageKey, "SRSensorUsageElevation")
        XCTAssertEqual(Sensor.faceMetrics.usageKey, "SRSensorUsageFacialMetrics")
        XCTAssertEqual(Sensor.onWristState.usageKey, "SRSensorUsageWristDetection")
        XCTAssertEqual(Sensor.electrocardiogram.usageKey, "SRSensorUsageECG")
        XCTAssertEqual(Sensor.photoplethysmogram.usageKey, "SRSensorUsagePPG")
        XCTAssertEqual(Sensor.sleepSessions.usageKey, "SRSensorUsageSleep")
        XCTAssertEqual(SensorCatalogue.usageKeys.count, 20)
        XCTAssertEqual(Sensor.accelerometer.authorizationGroup, [.accelerometer, .rotationRate])
        XCTAssertEqual(Sensor.telephonySpeechMetrics.authorizationGroup, [.siriSpeechMetrics, .telephonySpeechMetrics])
        XCTAssertEqual(Sensor.visits.authorizationGroup, [.visits])
    }

    /// contract §3.1: shapes, devices, first OS.
    func testMasterTable() {
        let arrays = Set(Sensor.allCases.filter { $0.shape == .array })
        XCTAssertEqual(arrays, [.accelerometer, .rotationRate, .ambientPressure, .electrocardiogram, .photoplethysmogram])
        let watchOnly = Set(Sensor.allCases.filter { $0.deviceKinds == [.watch] })
        XCTAssertEqual(watchOnly, [.onWristState, .wristTemperature, .heartRate, .electrocardiogram, .photoplethysmogram, .sleepSessions])
        let both = Set(Sensor.allCases.filter { $0.deviceKinds == [.phone, .watch] })
        // Ambient light from the watch: a real MyDataHelps export holds it (recorded-formats.md §2).
        XCTAssertEqual(both, [.accelerometer, .rotationRate, .odometer, .ambientLightSensor])
        XCTAssertEqual(Sensor.siriSpeechMetrics.firstOS, OSVersion(15))
        XCTAssertEqual(Sensor.ambientPressure.firstOS, OSVersion(15, 4))
        XCTAssertEqual(Sensor.mediaEvents.firstOS, OSVersion(16, 4))
        XCTAssertEqual(Sensor.heartRate.firstOS, OSVersion(17))
        XCTAssertEqual(Sensor.electrocardiogram.firstOS, OSVersion(17, 4))
        XCTAssertEqual(Sensor.acousticSettings.firstOS, OSVersion(26))
        XCTAssertEqual(Sensor.visits.firstOS, OSVersion(14))
        XCTAssertEqual(Sensor.wristTemperature.info.sampleType, "SRWristTemperatureSession", "T19")
        XCTAssertEqual(Sensor.heartRate.info.cadence.nominalPeriod, 1)
        XCTAssertTrue(Sensor.heartRate.info.cadence.confirmed)
        XCTAssertEqual(Sensor.accelerometer.info.cadence.nominalPeriod, 0.02)
        XCTAssertNil(Sensor.visits.info.cadence.nominalPeriod)
    }

    /// contract §3.3: every field, by Apple name, with its kind and unit.
    func testEveryFieldOfSection33() {
        typealias F = (apple: String, kind: String, unit: String?)
        let expected: [Sensor: [F]] = [
            .ambientLightSensor: [("lux", "double", "lx"), ("placement", "enumeration", nil),
                                  ("chromaticity.x", "double", nil), ("chromaticity.y", "double", nil)],
            .accelerometer: [("startDate", "date", nil), ("acceleration.x", "double", "g"), ("acceleration.y", "double", "g"),
                             ("acceleration.z", "double", "g"), ("timestamp", "duration", "s"), ("identifier", "int", nil)],
            .rotationRate: [("startDate", "date", nil), ("rotationRate.x", "double", "rad/s"), ("rotationRate.y", "double", "rad/s"),
                            ("rotationRate.z", "double", "rad/s"), ("timestamp", "duration", "s")],
            .ambientPressure: [("pressure", "double", "kPa"), ("temperature", "double", "°C"), ("identifier", "int", nil),
                               ("startDate", "date", nil), ("timestamp", "duration", "s")],
            .pedometerData: [("startDate", "date", nil), ("endDate", "date", nil), ("numberOfSteps", "int", "steps"),
                             ("distance", "double", "m"), ("floorsAscended", "int", "floors"), ("floorsDescended", "int", "floors"),
                             ("currentPace", "double", "s/m"), ("currentCadence", "double", "steps/s"),
                             ("averageActivePace", "double", "s/m")],
            .odometer: [("startDate", "date", nil), ("endDate", "date", nil), ("deltaDistance", "double", "m"),
                        ("deltaDistanceAccuracy", "double", "m"), ("speed", "double", "m/s"), ("speedAccuracy", "double", "m/s"),
                        ("gpsDate", "date", nil), ("deltaAltitude", "double", "m"), ("verticalAccuracy", "double", "m"),
                        ("originDevice", "enumeration", nil), ("slope", "double", "°"), ("maxAbsSlope", "double", "°")],
            .heartRate: [("heartRate", "double", "bpm"), ("confidence", "enumeration", nil), ("date", "date", nil),
                         ("timestamp", "duration", "s")],
            .visits: [("distanceFromHome", "double", "m"), ("arrivalDateInterval.start", "date", nil),
                      ("arrivalDateInterval.end", "date", nil), ("departureDateInterval.start", "date", nil),
                      ("departureDateInterval.end", "date", nil), ("locationCategory", "enumeration", nil), ("identifier", "string", nil)],
            .deviceUsageReport: [("duration", "duration", "s"), ("applicationUsageByCategory", "structured", nil),
                                 ("notificationUsageByCategory", "structured", nil), ("webUsageByCategory", "structured", nil),
                                 ("totalScreenWakes", "int", "count"), ("totalUnlocks", "int", "count"),
                                 ("totalUnlockDuration", "duration", "s"), ("version", "string", nil)],
            .messagesUsageReport: [("duration", "duration", "s"), ("totalOutgoingMessages", "int", "count"),
                                   ("totalIncomingMessages", "int", "count"), ("totalUniqueContacts", "int", "count")],
            .phoneUsageReport: [("duration", "duration", "s"), ("totalOutgoingCalls", "int", "count"),
                                ("totalIncomingCalls", "int", "count"), ("totalUniqueContacts", "int", "count"),
                                ("totalPhoneCallDuration", "duration", "s")],
            .onWristState: [("onWrist", "bool", nil), ("wristLocation", "enumeration", nil), ("crownOrientation", "enumeration", nil),
                            ("onWristDate", "date", nil), ("offWristDate", "date", nil)],
            .siriSpeechMetrics: [("sessionIdentifier", "string", nil), ("sessionFlags", "optionSet", nil), ("timestamp", "date", nil),
                                 ("timeSinceAudioStart", "duration", "s"), ("audioLevel.loudness", "double", "dB"),
                                 ("speechRecognition", "structured", nil), ("soundClassification", "structured", nil),
                                 ("speechExpression", "structured", nil)],
            .mediaEvents: [("mediaIdentifier", "string", nil), ("eventType", "enumeration", nil)],
            .faceMetrics: [("version", "string", nil), ("sessionIdentifier", "string", nil), ("context", "optionSet", nil),
                           ("faceAnchor", "structured", nil), ("wholeFaceExpressions", "structured", nil),
                           ("partialFaceExpressions", "structured", nil)],
            .wristTemperature: [("startDate", "date", nil), ("duration", "duration", "s"), ("version", "string", nil),
                                ("temperatures", "structured", nil)],
            .electrocardiogram: [("date", "date", nil), ("frequency", "double", "Hz"), ("session.state", "enumeration", nil),
                                 ("session.sessionGuidance", "enumeration", nil), ("session.identifier", "string", nil),
                                 ("lead", "enumeration", nil), ("data", "structured", nil)],
            .photoplethysmogram: [("startDate", "date", nil), ("nanosecondsSinceStart", "int", "ns"), ("usage", "structured", nil),
                                  ("opticalSamples", "structured", nil), ("accelerometerSamples", "structured", nil),
                                  ("temperature", "double", "°C")],
            .acousticSettings: [("isEnvironmentalSoundMeasurementsEnabled", "bool", nil),
                                ("audioExposureSampleLifetime", "enumeration", nil), ("headphoneSafetyAudioLevel", "double", "dB"),
                                ("musicEQSettings.isSoundCheckEnabled", "bool", nil), ("musicEQSettings.isLateNightModeEnabled", "bool", nil),
                                ("accessibilitySettings.leftRightBalance", "double", nil),
                                ("accessibilitySettings.isMonoAudioEnabled", "bool", nil),
                                ("accessibilitySettings.backgroundSounds.soundName", "enumeration", nil),
                                ("accessibilitySettings.headphoneAccommodations.mediaEnhanceApplication", "enumeration", nil)],
            .sleepSessions: [("startDate", "date", nil), ("duration", "duration", "s"), ("identifier", "string", nil)],
        ]
        for (sensor, fields) in expected {
            for e in fields {
                guard let f = sensor.info.fields.first(where: { $0.appleName == e.apple }) else {
                    XCTFail("\(sensor) lacks \(e.apple)")
                    continue
                }
                XCTAssertEqual(f.type.kindName, e.kind, "\(sensor).\(e.apple)")
                if let u = e.unit { XCTAssertEqual(f.unit, u, "\(sensor).\(e.apple) unit") }
            }
        }
        // Optional fields (contract §3.3 `?` types).
        let ped = Sensor.pedometerData.info
        XCTAssertFalse(ped.field("numberOfSteps")!.isOptional)
        XCTAssertTrue(ped.field("distance")!.isOptional)
        XCTAssertTrue(Sensor.onWristState.info.field("onWristDate")!.isOptional)
        XCTAssertEqual(Sensor.onWristState.info.field("onWristDate")!.since, OSVersion(16, 4))
        XCTAssertTrue(Sensor.photoplethysmogram.info.field("temperature")!.isOptional)
        XCTAssertTrue(Sensor.acousticSettings.info.field("headphoneSafetyAudioLevel")!.isOptional)
        // Telephony speech has the same schema as Siri.
        XCTAssertEqual(Sensor.siriSpeechMetrics.info.fields, Sensor.telephonySpeechMetrics.info.fields)
    }

    func testKeyboardMetricsFields() {
        let kb = Sensor.keyboardMetrics.info
        for n in ["duration", "keyboardIdentifier", "version", "width", "height", "inputModes", "sessionIdentifiers",
                  "totalWords", "totalAlteredWords", "totalTaps", "totalDrags", "totalDeletes", "totalEmojis", "totalPaths",
                  "totalPathTime", "totalPathLength", "totalAutoCorrections", "totalSpaceCorrections", "totalRetroCorrections",
                  "totalTranspositionCorrections", "totalInsertKeyCorrections", "totalSkipTouchCorrections",
                  "totalNearKeyCorrections", "totalSubstitutionCorrections", "totalHitTestCorrections", "totalTypingDuration",
                  "totalPauses", "totalPathPauses", "typingSpeed", "pathTypingSpeed", "totalTypingEpisodes",
                  "pathErrorDistanceRatio", "longWordUpErrorDistance", "deleteToDeletes", "wordCountAbsolutist",
                  "emojiCountConfused", "wordCountLowEnergy"] {
            XCTAssertNotNil(kb.field(n), n)
        }
        XCTAssertEqual(kb.field("width")?.unit, "mm")
        XCTAssertEqual(kb.field("typingSpeed")?.type, .double)
        XCTAssertEqual(kb.field("totalPathLength")?.type, .double)
        XCTAssertEqual(SensorCatalogue.keyboardLengthDistributions.count, 8)
        XCTAssertEqual(SensorCatalogue.keyboardDurationDistributions.count, 32)
        XCTAssertEqual(SensorCatalogue.keyboardPositionalDistributions.count, 6)
        XCTAssertEqual(kb.fields.filter { $0.name.hasPrefix("wordCount") }.count, 10)
        XCTAssertEqual(kb.fields.filter { $0.name.hasPrefix("emojiCount") }.count, 10)
        for n in SensorCatalogue.keyboardLengthDistributions + SensorCatalogue.keyboardDurationDistributions {
            XCTAssertEqual(kb.field(n)?.type.kindName, "structured", n)
        }
        // Every scalar is a flat column: no structured ints/doubles hide in nested values.
        XCTAssertEqual(kb.fields.filter { $0.type.columnKind == .int }.count, 7 + 9 + 3 + 20)
    }

    func testEnumerationRawValues() {
        let placement = Sensor.ambientLightSensor.info.field("placement")!.type
        XCTAssertEqual(placement.rawValue(forName: "unknown"), 0)
        XCTAssertEqual(placement.rawValue(forName: "frontBottomLeft"), 8)
        XCTAssertEqual(placement.namedValues.count, 9)
        XCTAssertEqual(Sensor.visits.info.field("locationCategory")!.type.caseName(for: 4), "gym")
        XCTAssertEqual(Sensor.heartRate.info.field("confidence")!.type.caseName(for: 3), "highest")
        XCTAssertEqual(Sensor.mediaEvents.info.field("eventType")!.type.rawValue(forName: "offScreen"), 2)
        XCTAssertEqual(Sensor.electrocardiogram.info.field("sessionState")!.type.rawValue(forName: "end"), 3)
        XCTAssertEqual(Sensor.electrocardiogram.info.field("lead")!.type.rawValue(forName: "leftArmMinusRightArm"), 2)
        let ctx = Sensor.faceMetrics.info.field("context")!.type
        XCTAssertEqual(ctx.rawValue(forName: "messagingAppUsage"), 2)
        XCTAssertEqual(ctx.optionNames(in: 3), ["deviceUnlock", "messagingAppUsage"])
        XCTAssertEqual(Sensor.acousticSettings.info.field("mediaEnhanceApplication")!.type.rawValue(forName: "none"), 1)
        XCTAssertEqual(Sensor.acousticSettings.info.field("mediaEnhanceTuning")!.type.rawValue(forName: "none"), 0)
        XCTAssertEqual(Sensor.acousticSettings.info.field("backgroundSoundName")!.type.rawValue(forName: "quietNight"), 16)
        XCTAssertEqual(SensorCatalogue.deviceUsageCategories.count, 29)
        XCTAssertEqual(SensorCatalogue.deviceUsageCategories.first, "SRDeviceUsageCategoryGames")
        XCTAssertEqual(SensorCatalogue.notificationEvents.last, NamedValue("deviceUnlocked", 16))
        XCTAssertEqual(SensorCatalogue.sentimentCategories.map(\.rawValue), Array(0...9))
    }

    /// contract §3.3.21: the tombstone stream's schema.
    func testDeletionRecordSchema() {
        let f = SensorCatalogue.deletionRecordFields
        XCTAssertEqual(f.map(\.name), ["startTime", "endTime", "reason"])
        XCTAssertEqual(f[0].type, .absoluteTime)
        XCTAssertEqual(f[2].type.namedValues.map(\.name),
                       ["userInitiated", "lowDiskSpace", "ageLimit", "noInterestedClients", "systemInitiated"])
        XCTAssertEqual(f[2].type.namedValues.map(\.rawValue), [0, 1, 2, 3, 4])
        XCTAssertEqual(Sensor.ambientLightSensor.deletionRecordIdentifier, "com.apple.SensorKit.als.tombstones")
    }

    func testRowTimeAndColumns() {
        XCTAssertNil(Sensor.ambientLightSensor.info.rowTimeField, "ALS has no own date: times are write times")
        XCTAssertEqual(Sensor.accelerometer.info.rowTimeField?.name, "startDate")
        XCTAssertEqual(Sensor.accelerometer.info.columnFields.map(\.name), ["x", "y", "z", "timestamp", "identifier"])
        XCTAssertEqual(Sensor.visits.info.rowTimeField?.appleName, "arrivalDateInterval.start")
        let empty = SampleBatch.empty(for: .pedometerData)
        XCTAssertEqual(empty.columns.map(\.name), Sensor.pedometerData.info.columnFields.map(\.name))
        XCTAssertEqual(empty.column("numberOfSteps")?.data, .int([]))
    }

    func testSensorLookupAndSuggestions() {
        XCTAssertEqual(try SensorCatalogue.sensor(named: "accelerometer").get(), .accelerometer)
        XCTAssertEqual(try SensorCatalogue.sensor(named: "com.apple.SensorKit.als").get(), .ambientLightSensor)
        XCTAssertEqual(try SensorCatalogue.sensor(named: "SRSensorHeartRate").get(), .heartRate)
        XCTAssertEqual(try SensorCatalogue.sensor(named: "HeartRate").get(), .heartRate)
        guard case .failure(let e) = SensorCatalogue.sensor(named: "acelerometer") else { return XCTFail() }
        XCTAssertEqual(e.suggestions.first, "accelerometer")
        XCTAssertEqual(e.description, "unknown sensor 'acelerometer' — did you mean 'accelerometer'?")
        XCTAssertEqual(SensorCatalogue.sensorSuggestions(for: "ambientLight").first, "ambientLightSensor")
        XCTAssertEqual(SensorCatalogue.sensorSuggestions(for: "wristTemprature").first, "wristTemperature")
        XCTAssertEqual(SensorCatalogue.sensorSuggestions(for: "motion-acclerometer").first, "accelerometer")
        XCTAssertTrue(SensorCatalogue.sensorSuggestions(for: "zzzzzzzzzzzz").isEmpty)
        // A name the sensor's starts with comes before a word two edits away.
        XCTAssertEqual(SensorCatalogue.sensorSuggestions(for: "pedometer").first, "pedometerData")
        XCTAssertEqual(SensorCatalogue.sensorSuggestions(for: "heart").first, "heartRate")
        XCTAssertEqual(SensorCatalogue.sensorSuggestions(for: "odometr").first, "odometer")
    }

    func testEntitlementLookup() {
        XCTAssertEqual(SensorCatalogue.sensor(forEntitlement: "messages-usage"), .messagesUsageReport)
        XCTAssertEqual(SensorCatalogue.sensor(forEntitlement: "ECG"), .electrocardiogram, "case-insensitive (MyHeartCounts ships ECG)")
        XCTAssertEqual(SensorCatalogue.sensor(forEntitlement: "com.apple.SensorKit.PPG"), .photoplethysmogram)
        XCTAssertEqual(SensorCatalogue.sensor(forEntitlement: "heartRate"), .heartRate)
        XCTAssertNil(SensorCatalogue.sensor(forEntitlement: "message-usage"), "T4: the typo is ignored")
        XCTAssertEqual(SensorCatalogue.entitlementSuggestions(for: "message-usage").first, "messages-usage")
        XCTAssertEqual(SensorCatalogue.entitlementSuggestions(for: "ambient-light").first, "ambient-light-sensor")
        XCTAssertEqual(try SensorCatalogue.sensors(forUsageDetailKey: "SRSensorUsageMotion").get(), [.accelerometer, .rotationRate])
        XCTAssertEqual(try SensorCatalogue.sensors(forUsageDetailKey: "visits").get(), [.visits])
    }

    func testEditDistance() {
        XCTAssertEqual(Suggestions.editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(Suggestions.editDistance("", "abc"), 3)
        XCTAssertEqual(Suggestions.editDistance("ABC", "abc"), 0)
        XCTAssertEqual(Suggestions.didYouMean(["a", "b", "c"]), " — did you mean 'a', 'b' or 'c'?")
    }

    /// Every hint has the one format: the closest name, or nothing.
    func testOneHintFormat() {
        XCTAssertEqual(Suggestions.hint(for: "consnt", among: ["consent", "events"]), " — did you mean 'consent'?")
        XCTAssertEqual(Suggestions.hint(for: "zzzzzz", among: ["consent", "events"]), "")
        XCTAssertEqual(SensorCatalogue.sensorHint(for: "hartRate"), " — did you mean 'heartRate'?")
        XCTAssertEqual(SensorCatalogue.sensorHint(for: "ambient-light"), " — did you mean 'ambientLightSensor'?")
        XCTAssertEqual(SensorCatalogue.sensorHint(for: "zzzzzzzzzzzz"), "")
        let named = Diagnostic(.error, "unknown-sensor", "unknown sensor 'x'", suggestion: "x")
        XCTAssertEqual(named.descriptionWithHint, named.description, "a suggestion the message names is not repeated")
        let other = Diagnostic(.error, "unknown-sensor", "unknown sensor 'hartRate'", suggestion: "heartRate")
        XCTAssertEqual(other.descriptionWithHint, other.description + " — did you mean 'heartRate'?")
    }

    /// A stream is a type (`SensorStream`): its name and identifier are made from it, and a
    /// reader name parses back to it, for every sensor and stream.
    func testStreamsAreNamedByType() {
        XCTAssertEqual(SensorStream(.pedometerData, .deletionRecords).name, "pedometerData.tombstones")
        XCTAssertEqual(SensorStream(.pedometerData).name, "pedometerData")
        XCTAssertEqual(SensorStream(.ambientLightSensor).identifier, "com.apple.SensorKit.als")
        XCTAssertEqual(SensorStream.split("hartRate.tombstones").sensorName, "hartRate")
        XCTAssertEqual(SensorStream.split("pedometerData.tombstones.x").stream, .samples)
        for sensor in Sensor.allCases {
            for stream in FetchStream.allCases {
                let parsed = SensorStream.split(SensorStream(sensor, stream).name)
                XCTAssertEqual(parsed.sensorName, sensor.rawValue)
                XCTAssertEqual(parsed.stream, stream)
            }
        }
    }

    func testOSVersion() {
        XCTAssertEqual(OSVersion("17.4"), OSVersion(17, 4))
        XCTAssertEqual(OSVersion("26"), OSVersion(26, 0))
        XCTAssertEqual(OSVersion("17.4.1"), OSVersion(17, 4))
        XCTAssertNil(OSVersion("x.1"))
        XCTAssertLessThan(OSVersion(16, 4), OSVersion(17))
    }
}

/// Structured fields describe their sub-fields with types and units (docs/lua-api.md
/// "sensorkit.info"); the same description checks values and gives the `shape` text.
final class StructureTests: XCTestCase {
    func field(_ sensor: Sensor, _ name: String) throws -> Structure {
        guard case .structured(let s)? = sensor.info.field(name)?.type else { throw XCTSkip("\(name) is not structured") }
        return s
    }

    func testSubFieldsCarryTypesAndUnits() throws {
        let apps = try field(.deviceUsageReport, "applicationUsageByCategory")
        XCTAssertEqual(apps.text, "{category: [{bundleIdentifier?, usageTime s, reportApplicationIdentifier, "
            + "textInputSessions: [{duration s, sessionType, sessionIdentifier}], supplementalCategories: [string], relativeStartTime s}]}")
        guard case .keyed(let key, let keys, _) = apps else { return XCTFail("not keyed by category") }
        XCTAssertEqual(key, "category")
        XCTAssertEqual(keys, SensorCatalogue.deviceUsageCategories)
        let entry = try XCTUnwrap(apps.entryFields)
        XCTAssertEqual(entry.map(\.name), ["bundleIdentifier", "usageTime", "reportApplicationIdentifier", "textInputSessions",
                                           "supplementalCategories", "relativeStartTime"])
        XCTAssertEqual(entry[0].isOptional, true)
        XCTAssertEqual(entry[1].form, .scalar(.duration, unit: "s"))
        let sessions = try XCTUnwrap(entry[3].form.entryFields)
        guard case .scalar(let type, _) = sessions[1].form else { return XCTFail() }
        XCTAssertEqual(type.rawValue(forName: "dictation"), 4)
        XCTAssertEqual(try field(.keyboardMetrics, "upErrorDistance").text, "[double mm]")
        XCTAssertEqual(try field(.keyboardMetrics, "longWordTouchDownUp").text, "[[double s]]")
        XCTAssertEqual(try field(.wristTemperature, "temperatures").entryFields?.map { $0.text },
                       ["timestamp s since 1970", "value °C", "condition", "errorEstimate °C"])
        XCTAssertEqual(try field(.faceMetrics, "faceAnchor").text, "{blendShapes: {name: double 0…1}}")
        XCTAssertEqual(try field(.telephonySpeechMetrics, "speechExpression").entryFields?.first { $0.name == "mood" }?.form,
                       .scalar(.double, unit: "−1…1"))
        // Every structured field has a description with named parts or a scalar element.
        for info in SensorCatalogue.all {
            for f in info.fields {
                guard case .structured(let s) = f.type else { continue }
                XCTAssertFalse(s.text.isEmpty, "\(info.sensor).\(f.name)")
            }
        }
    }

    func testValuesAreCheckedAgainstTheirForm() throws {
        let apps = try field(.deviceUsageReport, "applicationUsageByCategory")
        func app(_ usage: FieldValue, bundle: FieldValue = .null, extra: [(String, FieldValue)] = []) -> FieldValue {
            .object([("bundleIdentifier", bundle), ("usageTime", usage), ("reportApplicationIdentifier", .string("A")),
                     ("textInputSessions", .array([.object([("duration", .double(3)), ("sessionType", .int(1)),
                                                            ("sessionIdentifier", .string("S"))])])),
                     ("supplementalCategories", .array([])), ("relativeStartTime", .double(0))] + extra)
        }
        let games = "SRDeviceUsageCategoryGames"
        XCTAssertNil(apps.problem(in: .object([(games, .array([app(.double(60))]))])))
        XCTAssertNil(apps.problem(in: .object([(games, .array([app(.int(60), bundle: .string("com.apple.x"))]))])))
        XCTAssertEqual(apps.problem(in: .object([(games, .array([app(.string("60"))]))])), ".\(games)[1].usageTime: expected a number")
        XCTAssertEqual(apps.problem(in: .object([("Games", .array([]))])), ".Games: not one of the names allowed")
        XCTAssertEqual(apps.problem(in: .object([(games, .array([app(.double(1), extra: [("colour", .int(1))])]))])),
                       ".\(games)[1].colour: not a sub-field")
        XCTAssertEqual(apps.problem(in: .array([])), "expected a table")
        let temperatures = try field(.wristTemperature, "temperatures")
        let reading: [(String, FieldValue)] = [("timestamp", .double(1e9)), ("value", .double(34)), ("errorEstimate", .double(0.1))]
        XCTAssertEqual(temperatures.problem(in: .array([.object(reading)])), "[1].condition: missing")
        XCTAssertNil(temperatures.problem(in: .array([.object(reading + [("condition", .int(5))])])))
        XCTAssertEqual(temperatures.problem(in: .array([.object(reading + [("condition", .int(8))])])),
                       "[1].condition: 8 is not one of option bits within 7")
    }
}
