import SensorKitModel

/// The columns the simulator emits for each sensor, named and ordered as the schema
/// catalogue (`SensorKitModel/SensorCatalogue.swift`, sensorkit-semantics.md §3.3) names
/// them. Kept here as plain data so the backend builds even while the catalogue changes;
/// a test checks the two agree.
enum Schema {
    enum Kind { case double, int, bool, string, value }

    static func columns(_ sensor: Sensor) -> [(String, Kind)] {
        switch sensor {
        case .ambientLightSensor:
            return [("lux", .double), ("placement", .int), ("chromaticityX", .double), ("chromaticityY", .double)]
        case .accelerometer:
            return [("x", .double), ("y", .double), ("z", .double), ("timestamp", .double), ("identifier", .int)]
        case .rotationRate:
            return [("x", .double), ("y", .double), ("z", .double), ("timestamp", .double)]
        case .visits:
            return [("distanceFromHome", .double), ("arrivalEnd", .double), ("departureStart", .double),
                    ("departureEnd", .double), ("locationCategory", .int), ("identifier", .string)]
        case .pedometerData:
            return [("endDate", .double), ("numberOfSteps", .int), ("distance", .double), ("floorsAscended", .int),
                    ("floorsDescended", .int), ("currentPace", .double), ("currentCadence", .double),
                    ("averageActivePace", .double)]
        case .deviceUsageReport:
            return [("duration", .double), ("totalScreenWakes", .int), ("totalUnlocks", .int),
                    ("totalUnlockDuration", .double), ("version", .string), ("applicationUsageByCategory", .value),
                    ("notificationUsageByCategory", .value), ("webUsageByCategory", .value)]
        case .messagesUsageReport:
            return [("duration", .double), ("totalOutgoingMessages", .int), ("totalIncomingMessages", .int),
                    ("totalUniqueContacts", .int)]
        case .phoneUsageReport:
            return [("duration", .double), ("totalOutgoingCalls", .int), ("totalIncomingCalls", .int),
                    ("totalUniqueContacts", .int), ("totalPhoneCallDuration", .double)]
        case .onWristState:
            return [("onWrist", .bool), ("wristLocation", .int), ("crownOrientation", .int), ("onWristDate", .double),
                    ("offWristDate", .double)]
        case .keyboardMetrics:
            return keyboardColumns
        case .siriSpeechMetrics, .telephonySpeechMetrics:
            return [("sessionIdentifier", .string), ("sessionFlags", .int), ("timeSinceAudioStart", .double),
                    ("audioLevelLoudness", .double), ("audioLevelStart", .double), ("audioLevelDuration", .double),
                    ("speechRecognition", .value), ("soundClassification", .value), ("speechExpression", .value)]
        case .ambientPressure:
            return [("pressure", .double), ("temperature", .double), ("identifier", .int), ("timestamp", .double)]
        case .mediaEvents:
            return [("mediaIdentifier", .string), ("eventType", .int)]
        case .wristTemperature:
            return [("duration", .double), ("version", .string), ("temperatures", .value)]
        case .heartRate:
            return [("heartRate", .double), ("confidence", .int), ("timestamp", .double)]
        case .faceMetrics:
            return [("version", .string), ("sessionIdentifier", .string), ("context", .int), ("faceAnchor", .value),
                    ("wholeFaceExpressions", .value), ("partialFaceExpressions", .value)]
        case .odometer:
            return [("endDate", .double), ("deltaDistance", .double), ("deltaDistanceAccuracy", .double),
                    ("speed", .double), ("speedAccuracy", .double), ("gpsDate", .double), ("deltaAltitude", .double),
                    ("verticalAccuracy", .double), ("originDevice", .int), ("slope", .double), ("maxAbsSlope", .double)]
        case .electrocardiogram:
            return [("frequency", .double), ("sessionState", .int), ("sessionGuidance", .int),
                    ("sessionIdentifier", .string), ("lead", .int), ("data", .value)]
        case .photoplethysmogram:
            return [("nanosecondsSinceStart", .int), ("usage", .value), ("opticalSamples", .value),
                    ("accelerometerSamples", .value), ("temperature", .double)]
        case .acousticSettings:
            return [("isEnvironmentalSoundMeasurementsEnabled", .bool), ("audioExposureSampleLifetime", .int),
                    ("headphoneSafetyAudioLevel", .double), ("soundCheckEnabled", .bool),
                    ("lateNightModeEnabled", .bool), ("leftRightBalance", .double), ("monoAudioEnabled", .bool),
                    ("backgroundSoundsEnabled", .bool), ("backgroundSoundName", .int),
                    ("backgroundSoundsRelativeVolume", .double), ("backgroundSoundsPlayWithMediaEnabled", .bool),
                    ("backgroundSoundsRelativeVolumeWithMedia", .double), ("backgroundSoundsStopOnLockEnabled", .bool),
                    ("headphoneAccommodationsEnabled", .bool), ("mediaEnhanceTuning", .int),
                    ("mediaEnhanceBoosting", .int), ("mediaEnhanceApplication", .int)]
        case .sleepSessions:
            return [("duration", .double), ("identifier", .string)]
        }
    }

    static let keyboardLength = [
        "upErrorDistance", "downErrorDistance", "spaceUpErrorDistance", "spaceDownErrorDistance",
        "deleteUpErrorDistance", "deleteDownErrorDistance", "shortWordCharKeyUpErrorDistance",
        "shortWordCharKeyDownErrorDistance",
    ]
    static let keyboardDuration = [
        "touchDownUp", "touchUpDown", "spaceTouchDownUp", "deleteTouchDownUp", "shortWordCharKeyTouchDownUp",
        "touchDownDown", "charKeyToPrediction", "shortWordCharKeyToCharKey", "charKeyToAnyTapKey",
        "anyTapToCharKey", "spaceToCharKey", "charKeyToSpaceKey", "spaceToDeleteKey", "deleteToSpaceKey",
        "spaceToSpaceKey", "spaceToShiftKey", "spaceToPlaneChangeKey", "spaceToPredictionKey", "deleteToCharKey",
        "charKeyToDelete", "deleteToDelete", "deleteToShiftKey", "deleteToPlaneChangeKey",
        "anyTapToPlaneChangeKey", "planeChangeToAnyTap", "charKeyToPlaneChangeKey", "planeChangeKeyToCharKey",
        "deleteToPath", "pathToDelete", "spaceToPath", "pathToSpace", "pathToPath",
    ]
    static let keyboardPositional = [
        "longWordUpErrorDistance", "longWordDownErrorDistance", "longWordTouchDownUp", "longWordTouchDownDown",
        "longWordTouchUpDown", "deleteToDeletes",
    ]
    static let sentiments = ["absolutist", "down", "death", "anxiety", "anger", "health", "positive", "sad", "lowEnergy", "confused"]
    static let keyboardCounts = ["totalWords", "totalAlteredWords", "totalTaps", "totalDrags", "totalDeletes",
                                 "totalEmojis", "totalPaths"]
    static let keyboardCorrections = ["Auto", "Space", "Retro", "Transposition", "InsertKey", "SkipTouch", "NearKey",
                                      "Substitution", "HitTest"].map { "total\($0)Corrections" }

    static let keyboardColumns: [(String, Kind)] = {
        var out: [(String, Kind)] = [("duration", .double), ("keyboardIdentifier", .string), ("version", .string),
                                     ("width", .double), ("height", .double), ("inputModes", .value),
                                     ("sessionIdentifiers", .value)]
        out += keyboardCounts.map { ($0, .int) }
        out += [("totalPathTime", .double), ("totalPathLength", .double)]
        out += keyboardCorrections.map { ($0, .int) }
        out += [("totalTypingDuration", .double), ("totalPauses", .int), ("totalPathPauses", .int),
                ("typingSpeed", .double), ("pathTypingSpeed", .double), ("totalTypingEpisodes", .int)]
        out += keyboardLength.map { ($0, .value) }
        out += keyboardDuration.map { ($0, .value) }
        out += [("pathErrorDistanceRatio", .value)]
        out += keyboardPositional.map { ($0, .value) }
        out += sentiments.map { ("wordCount" + $0.prefix(1).uppercased() + $0.dropFirst(), .int) }
        out += sentiments.map { ("emojiCount" + $0.prefix(1).uppercased() + $0.dropFirst(), .int) }
        return out
    }()

    /// A batch with the sensor's columns and no rows.
    static func empty(_ sensor: Sensor) -> SampleBatch {
        SampleBatch(sensor: sensor, columns: columns(sensor).map { name, kind in
            let data: ColumnData = switch kind {
            case .double: .double([])
            case .int: .int([])
            case .bool: .bool([])
            case .string: .string([])
            case .value: .value([])
            }
            return Column(name: name, data: data)
        })
    }

    /// The device kinds that produce `sensor` (§3.1 "Src"; what this simulator emits).
    static func produces(_ sensor: Sensor, on kind: DeviceKind) -> Bool {
        switch sensor {
        case .accelerometer, .rotationRate, .odometer: return true
        case .onWristState, .heartRate, .wristTemperature, .electrocardiogram, .photoplethysmogram, .sleepSessions:
            return kind == .watch
        default: return kind == .phone
        }
    }
}
