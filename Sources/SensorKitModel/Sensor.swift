/// The 22 SensorKit sensors (through iOS 26), named as Swift's `SRSensor` names them.
///
/// The raw value of the enum is the Swift name used in protocols (`"ambientLightSensor"`);
/// `identifier` is SensorKit's own raw string (`"com.apple.SensorKit.als"`).
/// Source: docs/sensorkit-contract.md §3.1.
public enum Sensor: String, CaseIterable, Sendable, Hashable, Comparable {
    case ambientLightSensor
    case accelerometer
    case rotationRate
    case visits
    case pedometerData
    case deviceUsageReport
    case messagesUsageReport
    case phoneUsageReport
    case onWristState
    case keyboardMetrics
    case siriSpeechMetrics
    case telephonySpeechMetrics
    case ambientPressure
    case mediaEvents
    case wristTemperature
    case heartRate
    case faceMetrics
    case odometer
    case electrocardiogram
    case photoplethysmogram
    case acousticSettings
    case sleepSessions

    public static func < (a: Sensor, b: Sensor) -> Bool { a.rawValue < b.rawValue }

    /// SensorKit's raw `SRSensor` string (contract §3.1 "Raw value").
    public var identifier: String {
        switch self {
        case .ambientLightSensor: "com.apple.SensorKit.als"
        case .accelerometer: "com.apple.SensorKit.motion.accelerometer"
        case .rotationRate: "com.apple.SensorKit.motion.gyroscope"
        case .visits: "com.apple.SensorKit.visits"
        case .pedometerData: "com.apple.SensorKit.pedometer.data"
        case .deviceUsageReport: "com.apple.SensorKit.deviceUsageReport"
        case .messagesUsageReport: "com.apple.SensorKit.messagesUsageReport"
        case .phoneUsageReport: "com.apple.SensorKit.phoneUsageReport"
        case .onWristState: "com.apple.SensorKit.onWristState"
        case .keyboardMetrics: "com.apple.SensorKit.keyboardMetrics"
        case .siriSpeechMetrics: "com.apple.SensorKit.speechMetrics.siri"
        case .telephonySpeechMetrics: "com.apple.SensorKit.speechMetrics.telephony"
        case .ambientPressure: "com.apple.SensorKit.ambientPressure"
        case .mediaEvents: "com.apple.SensorKit.mediaEvents"
        case .wristTemperature: "com.apple.SensorKit.wristTemperature"
        case .heartRate: "com.apple.SensorKit.heart.rate"
        case .faceMetrics: "com.apple.SensorKit.faceMetrics"
        case .odometer: "com.apple.SensorKit.odometer"
        case .electrocardiogram: "com.apple.SensorKit.ECG"
        case .photoplethysmogram: "com.apple.SensorKit.PPG"
        case .acousticSettings: "com.apple.SensorKit.hearing.acousticSettings"
        case .sleepSessions: "com.apple.SensorKit.sleep.sessions"
        }
    }

    /// The companion deletion-record ("tombstone") stream's raw string (contract §3.1, §8.3).
    public var deletionRecordIdentifier: String { SensorStream(self, .deletionRecords).identifier }

    /// Looks a sensor up by its Swift name or by its SensorKit raw string.
    public init?(name: String) {
        if let s = Sensor(rawValue: name) { self = s; return }
        if let s = Sensor.allCases.first(where: { $0.identifier == name }) { self = s; return }
        return nil
    }
}

/// The kind of physical device a stream comes from (contract §3.1 "Src").
public enum DeviceKind: String, Sendable, Hashable, CaseIterable {
    case phone
    case watch
}
