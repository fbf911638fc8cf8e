import SensorKitModel

/// The columns the simulator emits for each sensor: the catalogue's column fields
/// (`SensorKitModel/SensorCatalogue.swift`, contract §3.3), named, ordered and stored as
/// it says. The catalogue is the one source; this only caches its columns per sensor.
enum Schema {
    typealias Kind = ColumnKind

    private static let table: [Sensor: [(String, Kind)]] = Dictionary(uniqueKeysWithValues: Sensor.allCases.map { sensor in
        (sensor, sensor.info.columnFields.map { ($0.name, $0.type.columnKind) })
    })

    static func columns(_ sensor: Sensor) -> [(String, Kind)] { table[sensor]! }

    static let keyboardLength = SensorCatalogue.keyboardLengthDistributions
    static let keyboardDuration = SensorCatalogue.keyboardDurationDistributions
    static let keyboardPositional = SensorCatalogue.keyboardPositionalDistributions.map(\.name)
    static let sentiments = SensorCatalogue.sentimentCategories.map(\.name)
    static let keyboardCorrections = SensorCatalogue.keyboardCorrectionKinds.map { "total\($0)Corrections" }
    static let keyboardColumns = columns(.keyboardMetrics)

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

    /// The device kinds that produce `sensor` (contract §3.1 "Src"; what this simulator emits).
    static func produces(_ sensor: Sensor, on kind: DeviceKind) -> Bool {
        switch sensor {
        case .accelerometer, .rotationRate, .odometer, .ambientLightSensor: return true
        case .onWristState, .heartRate, .wristTemperature, .electrocardiogram, .photoplethysmogram, .sleepSessions:
            return kind == .watch
        default: return kind == .phone
        }
    }
}
