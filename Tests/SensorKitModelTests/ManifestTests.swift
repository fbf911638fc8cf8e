import XCTest
@testable import SensorKitModel

final class ManifestTests: XCTestCase {
    /// The design sketch's study, as the Lua converter would hand it over.
    func sketch(entitlements: [String] = ["ambient-light-sensor", "on-wrist"],
                sensors: [DeclaredEntry]? = nil, dropping: Set<String> = []) -> StudyManifest {
        var entries: [DeclaredEntry] = [
            DeclaredEntry("id", .string("sleep-light")),
            DeclaredEntry("title", .string("Evening light and sleep timing")),
            DeclaredEntry("usage", .string("Measures light exposure to study its effect on sleep.")),
            DeclaredEntry("privacy_policy", .string("https://example.org/privacy")),
            DeclaredEntry("entitlements", .list(entitlements.map(DeclaredValue.string))),
            DeclaredEntry("sensors", .table(sensors ?? [
                DeclaredEntry("ambientLightSensor", .table([DeclaredEntry("detail", .string("Records light around you.")),
                                                            DeclaredEntry("required", .bool(true))])),
                DeclaredEntry("onWristState", .table([DeclaredEntry("detail", .string("Checks whether the watch is worn."))])),
            ])),
        ]
        entries.removeAll { dropping.contains($0.key) }
        return StudyManifest(table: entries)
    }

    func codes(_ d: [Diagnostic]) -> [String] { d.map(\.code) }

    func testValidStudyHasNoDiagnostics() {
        let m = sketch()
        XCTAssertEqual(m.validate(), [])
        let r = m.resolved()
        XCTAssertEqual(r.id, "sleep-light")
        XCTAssertEqual(r.entitledSensors, [.ambientLightSensor, .onWristState])
        XCTAssertEqual(r.usageDetails[.ambientLightSensor], UsageDetail(detail: "Records light around you.", required: true))
        XCTAssertEqual(r.usageDetails[.onWristState]?.required, false)
        XCTAssertNil(r.infoPlistError(for: [.ambientLightSensor, .onWristState]))
    }

    func testUnknownSensorWithSuggestion() {
        let m = sketch(sensors: [DeclaredEntry("ambientLightSensr", .table([DeclaredEntry("detail", .string("x"))]))])
        let d = m.validate().first { $0.code == "unknown-sensor" }!
        XCTAssertEqual(d.severity, .error)
        XCTAssertEqual(d.key, "sensors.ambientLightSensr")
        XCTAssertEqual(d.suggestion, "ambientLightSensor")
        XCTAssertTrue(d.message.contains("did you mean 'ambientLightSensor'"), d.message)
    }

    /// T4: `message-usage` instead of `messages-usage`.
    func testEntitlementTypo() {
        let m = sketch(entitlements: ["message-usage"], sensors: [
            DeclaredEntry("messagesUsageReport", .table([DeclaredEntry("detail", .string("Counts messages."))])),
        ])
        let d = m.validate()
        let typo = d.first { $0.code == "unknown-entitlement" }!
        XCTAssertEqual(typo.severity, .warning)
        XCTAssertEqual(typo.suggestion, "messages-usage")
        XCTAssertEqual(typo.key, "entitlements[1]")
        XCTAssertEqual(typo.sensor, .messagesUsageReport)
        let missing = d.first { $0.code == "missing-entitlement" }!
        XCTAssertEqual(missing.severity, .error)
        XCTAssertEqual(missing.sensor, .messagesUsageReport)
        XCTAssertEqual(missing.errorCode, .invalidEntitlement)
        XCTAssertTrue(missing.message.contains("\"message-usage\" at entitlements[1] looks like a typo"), missing.message)
        XCTAssertEqual(m.resolved().entitledSensors, [], "the typo is ignored at runtime")
    }

    func testSensorWithoutEntitlement() {
        let m = sketch(entitlements: ["ambient-light-sensor"])
        let d = m.validate()
        XCTAssertEqual(codes(d), ["missing-entitlement"])
        XCTAssertEqual(d[0].sensor, .onWristState)
        XCTAssertEqual(d[0].suggestion, "on-wrist")
    }

    /// `accelerometer = {…}` gives rotationRate its detail too (one key, `SRSensorUsageMotion`):
    /// with only the accelerometer entitled, that is no error and rotationRate is not in use;
    /// rotationRate named on its own without its entitlement is one; a group key with no
    /// sensor of its group entitled is one, said once.
    func testASharedUsageKeyAsksEntitlementsOnlyOfTheSensorsMeant() {
        let detail = DeclaredValue.table([DeclaredEntry("detail", .string("Measures movement."))])
        let one = sketch(entitlements: ["motion-accelerometer"], sensors: [DeclaredEntry("accelerometer", detail)])
        XCTAssertEqual(one.validate(), [])
        XCTAssertEqual(one.resolved().sensorsInUse, [.accelerometer])
        XCTAssertNotNil(one.resolved().usageDetails[.rotationRate], "the detail covers the group")
        let named = sketch(entitlements: ["motion-accelerometer"], sensors: [DeclaredEntry("accelerometer", detail), DeclaredEntry("rotationRate", detail)])
        XCTAssertEqual(codes(named.validate()), ["missing-entitlement"])
        XCTAssertEqual(named.validate().first?.sensor, .rotationRate)
        XCTAssertEqual(named.resolved().sensorsInUse, [.accelerometer, .rotationRate])
        let byKey = sketch(entitlements: ["motion-rotation-rate"], sensors: [DeclaredEntry("SRSensorUsageMotion", detail)])
        XCTAssertEqual(byKey.validate(), [])
        XCTAssertEqual(byKey.resolved().sensorsInUse, [.rotationRate])
        let none = sketch(entitlements: ["ambient-light-sensor"], sensors: [DeclaredEntry("SRSensorUsageMotion", detail)])
        XCTAssertEqual(codes(none.validate()).filter { $0 == "missing-entitlement" }.count, 1)
        XCTAssertEqual(none.resolved().sensorsInUse, [.accelerometer, .rotationRate], "none entitled: the study meets invalidEntitlement")
    }

    func testEntitledWithoutUsageDetail() {
        let m = sketch(entitlements: ["ambient-light-sensor", "on-wrist", "visits"])
        let d = m.validate()
        XCTAssertEqual(codes(d), ["missing-usage-detail"])
        XCTAssertEqual(d[0].sensor, .visits)
        XCTAssertEqual(d[0].errorCode, .invalidInfoPlist)
        XCTAssertEqual(m.resolved().infoPlistError(for: [.visits])?.code.rawValue, 8197)
    }

    /// T5 / contract §2.3: the detail given as a string instead of a table.
    func testDetailAsString() {
        let m = sketch(sensors: [
            DeclaredEntry("ambientLightSensor", .string("Records light around you.")),
            DeclaredEntry("onWristState", .table([DeclaredEntry("detail", .string("Worn?"))])),
        ])
        let d = m.validate()
        XCTAssertEqual(codes(d), ["usage-detail-not-table"])
        XCTAssertEqual(d[0].errorCode?.rawValue, 8197)
        XCTAssertEqual(d[0].sensor, .ambientLightSensor)
        XCTAssertEqual(d[0].suggestion, "ambientLightSensor = { detail = \"Records light around you.\" }")
        let r = m.resolved()
        XCTAssertNil(r.usageDetails[.ambientLightSensor])
        let e = r.infoPlistError(for: [.ambientLightSensor])!
        XCTAssertEqual(e.code, .invalidInfoPlist)
        XCTAssertTrue(e.message.hasPrefix("Your bundle's Info.plist must have an NSSensorKitUsageDetail key"), e.message)
        XCTAssertTrue(e.message.contains("not a table"), e.message)
        XCTAssertNil(r.infoPlistError(for: [.onWristState]), "other sensors are unaffected")
    }

    func testWholeUsageDetailAsString() {
        var m = sketch()
        m.usageDetails = .string("We use sensors.")
        let d = m.validate()
        XCTAssertTrue(codes(d).contains("invalid-usage-details"))
        XCTAssertEqual(m.resolved().infoPlistError(for: [.onWristState])?.code.rawValue, 8197)
    }

    func testMissingPrivacyPolicyAndUsageDescription() {
        let m = sketch(dropping: ["privacy_policy", "usage"])
        let d = m.validate()
        let usage = d.first { $0.code == "missing-usage-description" }!
        XCTAssertEqual(usage.severity, .error)
        XCTAssertEqual(usage.errorCode?.rawValue, 8197)
        XCTAssertEqual(d.first { $0.code == "missing-privacy-policy" }?.severity, .warning)
        XCTAssertEqual(m.validate(strictPrivacyPolicy: true).first { $0.code == "missing-privacy-policy" }?.severity, .error)
        let r = m.resolved()
        XCTAssertEqual(r.infoPlistError(for: [.onWristState])?.message,
                       "Your bundle's Info.plist must have an NSSensorKitUsageDescription key")
        var withUsage = m
        withUsage.usageDescription = .string("Purpose.")
        XCTAssertNil(withUsage.resolved().infoPlistError(for: [.onWristState]))
        XCTAssertEqual(withUsage.resolved().infoPlistError(for: [.onWristState], strictPrivacyPolicy: true)?.message,
                       "Your bundle's Info.plist must have an NSSensorKitPrivacyPolicyURL key")
    }

    func testMalformedValues() {
        var m = sketch()
        m.id = .number(3)
        m.entitlements = .string("on-wrist")
        m.privacyPolicyURL = .string("example.org/privacy")
        m.usageDetails = .table([
            DeclaredEntry("onWristState", .table([DeclaredEntry("detail", .string("x")), DeclaredEntry("required", .string("yes"))])),
            DeclaredEntry("ambientLightSensor", .table([DeclaredEntry("detial", .string("x"))])),
        ])
        let c = codes(m.validate())
        XCTAssertTrue(c.contains("invalid-id"))
        XCTAssertTrue(c.contains("invalid-entitlements"))
        XCTAssertTrue(c.contains("invalid-privacy-policy"))
        XCTAssertTrue(c.contains("invalid-required"))
        XCTAssertTrue(c.contains("missing-detail-text"))
        // A single string still entitles, leniently, at runtime.
        XCTAssertEqual(m.resolved().entitledSensors, [.onWristState])
    }

    func testUnknownKeysGetSuggestions() {
        var entries = [DeclaredEntry("privacy_polcy", .string("https://x.org"))]
        entries.append(DeclaredEntry("id", .string("s")))
        let m = StudyManifest(table: entries)
        let d = m.validate().first { $0.code == "unknown-study-key" }!
        XCTAssertEqual(d.suggestion, "privacy_policy")
        let detail = sketch(sensors: [
            DeclaredEntry("ambientLightSensor", .table([DeclaredEntry("detail", .string("x")), DeclaredEntry("requird", .bool(true))])),
            DeclaredEntry("onWristState", .table([DeclaredEntry("detail", .string("y"))])),
        ]).validate()
        XCTAssertEqual(detail.first { $0.code == "unknown-detail-key" }?.suggestion, "required")
    }

    /// One Info.plist key covers accelerometer + rotation rate (contract §2.2).
    func testSharedUsageKey() {
        let m = sketch(entitlements: ["motion-accelerometer", "motion-rotation-rate"], sensors: [
            DeclaredEntry("SRSensorUsageMotion", .table([DeclaredEntry("detail", .string("Movement."))])),
        ])
        XCTAssertEqual(m.validate(), [])
        let r = m.resolved()
        XCTAssertEqual(r.usageDetails[.rotationRate]?.detail, "Movement.")
        XCTAssertEqual(r.usageDetails[.accelerometer]?.detail, "Movement.")

        let conflicting = sketch(entitlements: ["motion-accelerometer", "motion-rotation-rate"], sensors: [
            DeclaredEntry("accelerometer", .table([DeclaredEntry("detail", .string("A"))])),
            DeclaredEntry("rotationRate", .table([DeclaredEntry("detail", .string("B"))])),
        ]).validate()
        XCTAssertEqual(codes(conflicting), ["conflicting-usage-detail"])
        XCTAssertEqual(conflicting[0].sensor, .rotationRate)
    }

    func testOSVersionCheckAndOrdering() {
        let m = sketch(entitlements: ["ambient-light-sensor", "on-wrist", "ecg"], sensors: [
            DeclaredEntry("ambientLightSensor", .table([DeclaredEntry("detail", .string("a"))])),
            DeclaredEntry("onWristState", .table([DeclaredEntry("detail", .string("b"))])),
            DeclaredEntry("electrocardiogram", .table([DeclaredEntry("detail", .string("c"))])),
        ])
        let d = m.validate(osVersion: OSVersion(17, 0))
        XCTAssertEqual(codes(d), ["sensor-unavailable"])
        XCTAssertEqual(d[0].sensor, .electrocardiogram)
        XCTAssertEqual(m.validate(osVersion: OSVersion(17, 4)), [])
        XCTAssertEqual(m.validate(), m.validate(), "deterministic")
    }

    func testDiagnosticDescription() {
        let d = Diagnostic(.error, "unknown-sensor", "unknown sensor 'x'", key: "sensors.x")
        XCTAssertEqual(d.description, "error[unknown-sensor] sensors.x: unknown sensor 'x'")
    }
}
