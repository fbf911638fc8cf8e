import XCTest
import SensorKitModel
import Simulator

/// The simulator's columns are the catalogue's columns (names, order, storage kind), and
/// every field is populated.
final class SchemaTests: XCTestCase {
    func testColumnsMatchTheCatalogue() {
        let s = makeSimSource(seed: 3, simTrio)
        var checkedForms = 0
        for sensor in SimulatedSource.implementedSensors {
            let info = SensorCatalogue.info(sensor)
            let device: SRDevice = SimulatedSource.produces(sensor, on: .phone) ? .defaultPhone : .defaultWatch
            guard let b = simFirstNonEmpty(s, sensor) else { XCTFail("\(sensor): no rows"); continue }
            XCTAssertEqual(b.columns.map(\.name), info.columnFields.map(\.name), "\(sensor) column names")
            for (c, f) in zip(b.columns, info.columnFields) {
                let kind = c.data.kind
                XCTAssertEqual(kind, f.type.columnKind, "\(sensor).\(c.name) storage")
                if !f.isOptional { XCTAssertNil(c.present, "\(sensor).\(c.name) has missing values") }
                // Structured values have the catalogue's form: sub-field names, types, optionality.
                if case .value(let values) = c.data, case .structured(let form) = f.type {
                    checkedForms += 1
                    for (i, value) in values.enumerated() where c.present?[i] ?? true {
                        if let problem = form.problem(in: value) { XCTFail("\(sensor).\(c.name) row \(i + 1)\(problem)"); break }
                    }
                }
                // Enumerations hold declared raw values.
                if case .int(let v) = c.data, !f.type.namedValues.isEmpty, case .enumeration = f.type {
                    let allowed = Set(f.type.namedValues.map(\.rawValue))
                    XCTAssertTrue(Set(v).isSubset(of: allowed), "\(sensor).\(c.name) values \(Set(v))")
                }
            }
            let empty = s.samples(participant: "ana", sensor: sensor, device: device, writtenAfter: simMonday, through: simMonday)
            XCTAssertEqual(empty.columns.map(\.name), info.columnFields.map(\.name), "\(sensor) empty batch columns")
        }
        let structured = SimulatedSource.implementedSensors.flatMap { SensorCatalogue.info($0).columnFields }
            .filter { if case .structured = $0.type { true } else { false } }
        XCTAssertEqual(checkedForms, structured.count, "every structured field's values were checked")
        XCTAssertGreaterThan(checkedForms, 60)
    }

    /// Device usage reports carry the nested structure of contract §3.3.9.
    func testDeviceUsageStructure() {
        let s = makeSimSource(seed: 3, simTrio)
        let b = s.samples(participant: "ben", sensor: .deviceUsageReport, device: .defaultPhone,
                          writtenAfter: simMonday + 15 * 3_600, through: simMonday + 23 * 3_600)
        guard case .value(let apps) = b.column("applicationUsageByCategory")!.data,
              case .value(let notes) = b.column("notificationUsageByCategory")!.data else { return XCTFail() }
        var sawApple = false, sawThirdParty = false, sawText = false
        for report in apps {
            guard case .object(let cats) = report else { return XCTFail("not an object") }
            for (cat, list) in cats {
                XCTAssertTrue(SensorCatalogue.deviceUsageCategories.contains(cat), cat)
                guard case .array(let entries) = list else { return XCTFail() }
                for e in entries {
                    guard case .object(let fields) = e else { return XCTFail() }
                    XCTAssertEqual(fields.map(\.0), ["bundleIdentifier", "usageTime", "reportApplicationIdentifier",
                                                     "textInputSessions", "supplementalCategories", "relativeStartTime"])
                    if case .string = fields[0].1 { sawApple = true } else { sawThirdParty = true }
                    if case .array(let t) = fields[3].1, !t.isEmpty { sawText = true }
                    if case .double(let u) = fields[1].1 { XCTAssertTrue(u >= 0 && u <= 900) }
                }
            }
        }
        XCTAssertTrue(sawApple && sawThirdParty && sawText)
        XCTAssertTrue(notes.contains { if case .object(let kv) = $0 { return !kv.isEmpty } else { return false } })
    }
}

/// The simulator's own scenario switches live in its settings, not in the model's.
final class SimulationSwitchSettingsTests: XCTestCase {
    func testGeneratorSwitchesSetTheSimulatorsSettings() throws {
        var s = SimulationSettings()
        try s.set(name: "reportWindow.deviceUsageReport", value: .string("1d"))
        XCTAssertEqual(s.reportWindow(for: .deviceUsageReport), 86_400)
        XCTAssertEqual(s.reportWindow(for: .keyboardMetrics), 900)
        try s.set(name: "writeBatch", value: .table(["accelerometer": .number(30)]))
        XCTAssertEqual(s.writeBatch(for: .accelerometer), 30)
        XCTAssertEqual(s.writeBatch(for: .rotationRate), 60)
        try s.set(name: "speechTimestampRounding", value: .number(5))
        XCTAssertEqual(s.speechTimestampRounding, 5)
        XCTAssertThrowsError(try s.set(name: "writeBatch", value: .number(0)))
        XCTAssertThrowsError(try s.set(name: "speechTimestampRounding.visits", value: .number(1)))
        XCTAssertTrue(SimulationSettings.isSwitch("reportWindow.keyboardMetrics"))
        XCTAssertFalse(SimulationSettings.isSwitch("holdingPeriod"))
        // The model does not know them, but suggests them for a misspelt name.
        var w = WorldSwitches()
        XCTAssertThrowsError(try w.set(name: "reportWindow", value: .number(60)))
        XCTAssertThrowsError(try w.set(name: "reportWindw", value: .number(60), otherKnobs: ["reportWindow"])) { error in
            XCTAssertEqual((error as? SwitchError)?.suggestions, ["reportWindow"])
        }
    }
}
