import XCTest
@testable import SensorKitModel

final class AuthorizationTests: XCTestCase {
    var study: ResolvedStudy { .permissive }
    let sw = WorldSwitches()

    func testEmptySetCompletesWithNil() {
        var store = AuthorizationStore()
        let r = store.requestAuthorization([], study: study, policy: .allowAll, switches: sw)
        XCTAssertEqual(r.delivery, .completion(nil))
        XCTAssertFalse(r.sheetShown)
        XCTAssertEqual(r.changes, [])
    }

    func testInvalidUsageDetailIs8197WithoutSheet() {
        var s = study
        s.usageDetails[.visits] = nil
        s.detailProblems[.visits] = "the usage detail is a string, not a table"
        var store = AuthorizationStore()
        let r = store.requestAuthorization([.visits, .accelerometer], study: s, policy: .allowAll, switches: sw)
        XCTAssertEqual(r.error?.code.rawValue, 8197)
        XCTAssertNil(r.error?.underlying, "8197 is delivered directly, not nested")
        XCTAssertFalse(r.sheetShown)
        XCTAssertEqual(store.storedStatus(.accelerometer), .notDetermined)
    }

    func testMissingEntitlementIsZeroOrTerminate() {
        var s = study
        s.entitledSensors.remove(.visits)
        var store = AuthorizationStore()
        let r = store.requestAuthorization([.visits], study: s, policy: .allowAll, switches: sw)
        XCTAssertEqual(r.error?.code, .invalidEntitlement)
        var strict = sw
        strict.missingEntitlementMode = .terminate
        let t = store.requestAuthorization([.visits], study: s, policy: .allowAll, switches: strict)
        guard case .terminate(let e) = t.delivery else { return XCTFail("\(t.delivery)") }
        XCTAssertEqual(e.code, .invalidEntitlement)
        XCTAssertNil(t.error)
    }

    func testAllowAllThenAlreadyAnswered() {
        var store = AuthorizationStore()
        let r = store.requestAuthorization([.visits, .ambientLightSensor], study: study, policy: .allowAll, switches: sw)
        XCTAssertEqual(r.delivery, .completion(nil))
        XCTAssertEqual(r.presentedItems, ["SRSensorUsageAmbientLightSensor", "SRSensorUsageVisits"])
        XCTAssertEqual(r.changes, [StatusChange(sensor: .ambientLightSensor, from: .notDetermined, to: .authorized),
                                   StatusChange(sensor: .visits, from: .notDetermined, to: .authorized)])
        XCTAssertEqual(store.status(.visits), .authorized)
        XCTAssertEqual(store.status(.accelerometer), .notDetermined)

        // contract §5.2 step 3 / T1: 4 with 8201 underlying, no sheet, no changes.
        let again = store.requestAuthorization([.visits], study: study, policy: .allowAll, switches: sw)
        XCTAssertEqual(again.error?.code, .promptDeclined)
        XCTAssertEqual(again.error?.underlying?.code.rawValue, 8201)
        XCTAssertFalse(again.sheetShown)
        XCTAssertEqual(again.changes, [])

        var flat = sw
        flat.alreadyAnsweredError = .flat
        let f = store.requestAuthorization([.visits], study: study, policy: .allowAll, switches: flat)
        XCTAssertEqual(f.error?.code.rawValue, 8201)
        XCTAssertNil(f.error?.underlying)

        // A mix of answered and new sensors shows only the new item.
        let mixed = store.requestAuthorization([.visits, .pedometerData], study: study, policy: .allowAll, switches: sw)
        XCTAssertNil(mixed.error)
        XCTAssertEqual(mixed.presentedItems, ["SRSensorUsagePedometer"])
    }

    func testSharedItemAnsweredTogether() {
        var store = AuthorizationStore()
        let r = store.requestAuthorization([.accelerometer], study: study, policy: .allowAll, switches: sw)
        XCTAssertEqual(r.presentedItems, ["SRSensorUsageMotion"])
        XCTAssertEqual(store.status(.rotationRate), .authorized, "the Motion item covers rotation rate too")
        XCTAssertEqual(r.changes.map(\.sensor), [.accelerometer, .rotationRate])
        let again = store.requestAuthorization([.rotationRate], study: study, policy: .allowAll, switches: sw)
        XCTAssertEqual(again.error?.underlying?.code, .noNewAuthorizationGroups)

        // Not entitled group members are left alone.
        var s = study
        s.entitledSensors.remove(.telephonySpeechMetrics)
        var other = AuthorizationStore()
        _ = other.requestAuthorization([.siriSpeechMetrics], study: s, policy: .denyAll, switches: sw)
        XCTAssertEqual(other.status(.siriSpeechMetrics), .denied)
        XCTAssertEqual(other.status(.telephonySpeechMetrics), .notDetermined)
    }

    func testSheetBusyAndCancel() {
        var store = AuthorizationStore()
        let busy = store.requestAuthorization([.visits], study: study, policy: .allowAll, switches: sw, sheetBusy: true)
        XCTAssertEqual(busy.error?.code, .promptDeclined)
        XCTAssertEqual(busy.error?.underlying?.code.rawValue, 8195)
        let cancel = store.requestAuthorization([.visits, .pedometerData], study: study,
                                                policy: ConsentPolicy(default: .allow, answers: [.pedometerData: .cancel]), switches: sw)
        XCTAssertEqual(cancel.error?.code, .promptDeclined)
        XCTAssertEqual(cancel.error?.underlying?.code.rawValue, 8196)
        XCTAssertTrue(cancel.sheetShown)
        XCTAssertEqual(cancel.changes, [])
        XCTAssertEqual(store.status(.visits), .notDetermined, "a cancelled sheet changes nothing")
        // …and the sensors can be asked again.
        XCTAssertNil(store.requestAuthorization([.visits], study: study, policy: .allowAll, switches: sw).error)
    }

    /// T2: a nil error with mixed answers.
    func testMixedAnswers() {
        var store = AuthorizationStore()
        let r = store.requestAuthorization([.visits, .pedometerData], study: study,
                                           policy: ConsentPolicy(default: .allow, answers: [.visits: .deny]), switches: sw)
        XCTAssertNil(r.error)
        XCTAssertEqual(store.status(.visits), .denied)
        XCTAssertEqual(store.status(.pedometerData), .authorized)
        XCTAssertEqual(r.answers["SRSensorUsageVisits"], .deny)
    }

    /// contract §5.2 step 9.
    func testRequiredAndDontEnroll() {
        var s = study
        s.usageDetails[.visits] = UsageDetail(detail: "Places.", required: true)
        var store = AuthorizationStore()
        let r = store.requestAuthorization([.visits, .pedometerData, .accelerometer], study: s,
                                           policy: ConsentPolicy(default: .allow, answers: [.visits: .dontEnroll]), switches: sw)
        XCTAssertNil(r.error)
        for x in [Sensor.visits, .pedometerData, .accelerometer, .rotationRate] { XCTAssertEqual(store.status(x), .denied, "\(x)") }

        // dontEnroll on a non-required item only declines that item.
        var other = AuthorizationStore()
        _ = other.requestAuthorization([.pedometerData, .visits], study: study,
                                       policy: ConsentPolicy(default: .allow, answers: [.pedometerData: .dontEnroll]), switches: sw)
        XCTAssertEqual(other.status(.pedometerData), .denied)
        XCTAssertEqual(other.status(.visits), .authorized)
    }

    func testCatalystAndGlobalSwitch() {
        var store = AuthorizationStore()
        var cat = sw
        cat.platform = .catalyst
        XCTAssertEqual(store.requestAuthorization([.visits], study: study, policy: .allowAll, switches: cat).delivery, .noCallback)
        var off = sw
        off.researchDataCollectionEnabled = false
        let r = store.requestAuthorization([.visits], study: study, policy: .allowAll, switches: off)
        XCTAssertEqual(r.error?.code, .promptDeclined)
        XCTAssertEqual(r.error?.underlying?.code.rawValue, 4098)
        _ = store.setStatus(.visits, .authorized)
        XCTAssertEqual(store.status(.visits, researchDataCollectionEnabled: false), .denied)
    }

    func testRevokeAndGrant() {
        var store = AuthorizationStore()
        _ = store.requestAuthorization([.accelerometer], study: study, policy: .allowAll, switches: sw)
        let revoked = store.revoke(.rotationRate)
        XCTAssertEqual(revoked, [StatusChange(sensor: .accelerometer, from: .authorized, to: .denied),
                                 StatusChange(sensor: .rotationRate, from: .authorized, to: .denied)])
        XCTAssertEqual(store.revoke(.rotationRate), [], "no change, no notification")
        XCTAssertEqual(store.requestAuthorization([.accelerometer], study: study, policy: .allowAll, switches: sw)
            .error?.underlying?.code.rawValue, 8201, "T3: re-prompting is impossible")
        XCTAssertEqual(store.grant(.accelerometer).count, 2)
        XCTAssertEqual(store.status(.accelerometer), .authorized)
        XCTAssertEqual(store.grant(.visits), [], "never-asked items are not in Settings")
    }

    func testConsentPolicyGroupAnswer() {
        let p = ConsentPolicy(default: .allow, answers: [.rotationRate: .deny])
        XCTAssertEqual(p.answer(forGroup: [.accelerometer, .rotationRate]), .deny)
        XCTAssertEqual(p.answer(forGroup: [.visits]), .allow)
        XCTAssertEqual(SRAuthorizationStatus(name: "denied")?.rawValue, 2)
        XCTAssertEqual(SRAuthorizationStatus.allCases.map(\.rawValue), [0, 1, 2])
    }
}
