import XCTest
@testable import SensorKitModel

final class ErrorTests: XCTestCase {
    func testPublicCodes() {
        XCTAssertEqual([SRErrorCode.invalidEntitlement, .noAuthorization, .dataInaccessible, .fetchRequestInvalid, .promptDeclined]
            .map(\.rawValue), [0, 1, 2, 3, 4])
        XCTAssertEqual(SRErrorCode(4).name, "promptDeclined")
        XCTAssertTrue(SRErrorCode(3).isPublic)
        XCTAssertFalse(SRErrorCode(8201).isPublic)
    }

    func testNonPublicCodes() {
        let expected: [Int: String] = [
            4096: "companionAppNotInstalled", 4097: "onboardingNotCompleted", 4098: "researchDataCollectionOff",
            8192: "insufficientStorage", 8193: "connectionNotFound", 8194: "internalError", 8195: "promptBusy",
            8196: "promptCancelled", 8197: "invalidInfoPlist", 8198: "noDeviceIdentifier", 8199: "invalidTimeSync",
            8200: "bundleNotFound", 8201: "noNewAuthorizationGroups", 16384: "invalidSensorConfiguration",
        ]
        for (raw, name) in expected {
            XCTAssertEqual(SRErrorCode(raw).name, name)
            XCTAssertEqual(SRErrorCode(name: name), SRErrorCode(raw))
        }
        XCTAssertEqual(SRErrorCode(name: "8201"), .noNewAuthorizationGroups)
        XCTAssertEqual(SRErrorCode(name: "PROMPTDECLINED"), .promptDeclined)
        XCTAssertNil(SRErrorCode(name: "nope"))
        XCTAssertNil(SRErrorCode(12345).name)
        XCTAssertEqual(SRErrorCode.known, SRErrorCode.known.sorted())
    }

    func testNestedError() {
        let e = SensorKitError.promptDeclined(underlying: SensorKitError(.noNewAuthorizationGroups))
        XCTAssertEqual(e.domain, "SRErrorDomain")
        XCTAssertEqual(e.code, .promptDeclined)
        XCTAssertEqual(e.underlying?.code, .noNewAuthorizationGroups)
        XCTAssertNil(e.underlying?.underlying)
        XCTAssertEqual(e.description,
                       "SRErrorDomain 4 promptDeclined: the authorization request was not completed (underlying: SRErrorDomain 8201 noNewAuthorizationGroups: no new authorization groups were requested)")
        let plist = SensorKitError.invalidInfoPlist(key: "NSSensorKitUsageDetail")
        XCTAssertEqual(plist.code.rawValue, 8197)
        XCTAssertEqual(plist.message, "Your bundle's Info.plist must have an NSSensorKitUsageDetail key")
        let cocoa = SensorKitError(SRErrorCode(4099), "XPC connection invalid", domain: "NSCocoaErrorDomain")
        XCTAssertEqual(cocoa.description, "NSCocoaErrorDomain 4099: XPC connection invalid")
    }

    func testDeliveryDocumentation() {
        XCTAssertEqual(SensorKitOperation.fetch.failureCallback, "sensorReader(_:fetching:failedWithError:)")
        XCTAssertEqual(SensorKitOperation.fetchDevices.failureCallback, "sensorReader(_:fetchDevicesDidFailWithError:)")
        XCTAssertEqual(SensorKitOperation.allCases.count, 5)
    }
}

final class SwitchTests: XCTestCase {
    /// contract §14.2 defaults.
    func testDefaults() {
        let s = WorldSwitches()
        XCTAssertEqual(s.holdingMode, .clamp)
        XCTAssertEqual(s.hold(.accelerometer), 86_400)
        XCTAssertEqual(s.hold(.faceMetrics), 648_000)
        XCTAssertEqual(s.retentionPeriod(.visits), 604_800)
        XCTAssertEqual(s.retentionPeriod(.faceMetrics), 1_209_600)
        XCTAssertEqual(s.tombstoneRetention, 5_184_000)
        XCTAssertEqual(s.priorDataVisibility, .sevenDaysIfSensorActive)
        XCTAssertEqual(s.nilDeviceMode, .docCurrentDevice)
        XCTAssertEqual(s.alreadyAnsweredError, .nested)
        XCTAssertEqual(s.epochMode, .deviceEpoch)
        XCTAssertEqual(s.duplicateRate, 0.01)
        XCTAssertEqual(s.outOfOrderJitter[.photoplethysmogram], 0)
        XCTAssertEqual(s.lockedFetchError, .dataInaccessible)
        XCTAssertEqual(s.fetchDevicesDeniedError.rawValue, 8193)
        XCTAssertEqual(s.concurrentFetchPolicy, .fail)
        XCTAssertEqual(s.watchSyncLag, 3_600)
        XCTAssertEqual(s.missingEntitlementMode, .error)
        XCTAssertEqual(s.platform, .iPhone)
        XCTAssertTrue(s.researchDataCollectionEnabled)
    }

    func testSetEveryKnobByName() throws {
        var s = WorldSwitches()
        try s.set(name: "holdingMode", value: .string("strictDoc"))
        XCTAssertEqual(s.holdingMode, .strictDoc)
        try s.set(name: "holdingPeriod", value: .string("12h"))
        XCTAssertEqual(s.hold(.faceMetrics), 43_200)
        try s.set(name: "holdingPeriod.faceMetrics", value: .string("7.5d"))
        XCTAssertEqual(s.hold(.faceMetrics), 648_000)
        XCTAssertEqual(s.hold(.visits), 43_200)
        try s.set(name: "retention", value: .table(["visits": .number(100), "accelerometer": .string("2d")]))
        XCTAssertEqual(s.retentionPeriod(.visits), 100)
        XCTAssertEqual(s.retentionPeriod(.accelerometer), 172_800)
        XCTAssertEqual(s.retentionPeriod(.heartRate), 604_800)
        try s.set(name: "tombstoneRetention", value: .string("30d"))
        XCTAssertEqual(s.tombstoneRetention, 2_592_000)
        try s.set(name: "agePurgeInterval", value: .string("15m"))
        XCTAssertEqual(s.agePurgeInterval, 900)
        try s.set(name: "purgeWhenNoInterestedClients", value: .bool(true))
        XCTAssertTrue(s.purgeWhenNoInterestedClients)
        try s.set(name: "priorDataVisibility", value: .string("sinceOwnStartRecording"))
        XCTAssertEqual(s.priorDataVisibility, .sinceOwnStartRecording)
        try s.set(name: "nilDeviceMode", value: .string("decompiledEmpty"))
        XCTAssertEqual(s.nilDeviceMode, .decompiledEmpty)
        try s.set(name: "alreadyAnsweredError", value: .string("flat"))
        XCTAssertEqual(s.alreadyAnsweredError, .flat)
        try s.set(name: "epochMode", value: .string("cfAligned"))
        XCTAssertEqual(s.epochMode, .cfAligned(offset: 0))
        try s.set(name: "epochMode", value: .table(["mode": .string("cfAligned"), "offset": .number(5)]))
        XCTAssertEqual(s.epochMode, .cfAligned(offset: 5))
        try s.set(name: "epochMode", value: .string("deviceEpoch"))
        XCTAssertEqual(s.epochMode, .deviceEpoch)
        try s.set(name: "duplicateRate", value: .number(0))
        XCTAssertEqual(s.duplicateRate, 0)
        try s.set(name: "outOfOrderJitter.photoplethysmogram", value: .number(0.008))
        XCTAssertEqual(s.outOfOrderJitter[.photoplethysmogram], 0.008)
        try s.set(name: "lockedFetchError", value: .string("internalError"))
        XCTAssertEqual(s.lockedFetchError.rawValue, 8194)
        try s.set(name: "fetchDevicesDeniedError", value: .number(1))
        XCTAssertEqual(s.fetchDevicesDeniedError, .noAuthorization)
        try s.set(name: "concurrentFetchPolicy", value: .string("queue"))
        XCTAssertEqual(s.concurrentFetchPolicy, .queue)
        try s.set(name: "watchSyncLag", value: .string("90m"))
        XCTAssertEqual(s.watchSyncLag, 5_400)
        try s.set(name: "missingEntitlementMode", value: .string("terminate"))
        XCTAssertEqual(s.missingEntitlementMode, .terminate)
        try s.set(name: "strictPrivacyPolicy", value: .string("true"))
        XCTAssertTrue(s.strictPrivacyPolicy)
        try s.set(name: "platform", value: .string("catalyst"))
        XCTAssertTrue(s.platform.ignoresCalls)
        try s.set(name: "osVersion", value: .string("17.4"))
        XCTAssertEqual(s.osVersion, OSVersion(17, 4))
        try s.set(name: "researchDataCollectionEnabled", value: .bool(false))
        XCTAssertFalse(s.researchDataCollectionEnabled)
        // Every documented knob is settable (the loop above covers them all); the simulator's
        // own switches (report windows, write batches, speech rounding) are SimulationSettings'.
        XCTAssertEqual(WorldSwitches.knobs.count, 21)
        var holds = WorldSwitches().holdingPeriod
        try WorldSwitches.setPerSensorSeconds(&holds, name: "holdingPeriod.visits", value: .string("2d"), allowed: "seconds")
        XCTAssertEqual(holds[.visits], 172_800)
        XCTAssertThrowsError(try WorldSwitches.setPerSensorSeconds(&holds, name: "holdingPeriod", value: .table(["visitz": .number(1)]),
                                                                   allowed: "seconds"))
        XCTAssertEqual(holds[.visits], 172_800)
    }

    func testErrorsNameKnobAndAllowedValues() {
        var s = WorldSwitches()
        XCTAssertThrowsError(try s.set(name: "holdingMod", value: .string("clamp"))) { e in
            let e = e as! SwitchError
            XCTAssertEqual(e.knob, "holdingMod")
            XCTAssertEqual(e.suggestions.first, "holdingMode")
            XCTAssertEqual(e.description, "switch 'holdingMod': no such switch — did you mean 'holdingMode'?")
        }
        XCTAssertThrowsError(try s.set(name: "holdingMode", value: .string("clammp"))) { e in
            XCTAssertEqual((e as! SwitchError).description,
                           "switch 'holdingMode': unknown value \"clammp\"; expected \"clamp\" or \"strictDoc\" — did you mean 'clamp'?")
        }
        XCTAssertThrowsError(try s.set(name: "duplicateRate", value: .number(2))) { e in
            XCTAssertEqual((e as! SwitchError).allowed, "a number in 0…1")
        }
        XCTAssertThrowsError(try s.set(name: "holdingPeriod.acelerometer", value: .number(1))) { e in
            XCTAssertEqual((e as! SwitchError).suggestions.first, "accelerometer")
        }
        XCTAssertThrowsError(try s.set(name: "watchSyncLag", value: .string("soon")))
        XCTAssertThrowsError(try s.set(name: "watchSyncLag", value: .number(-1)))
        XCTAssertThrowsError(try s.set(name: "duplicateRate.visits", value: .number(0.1)))
        XCTAssertThrowsError(try s.set(name: "lockedFetchError", value: .string("dataInacessible"))) { e in
            XCTAssertEqual((e as! SwitchError).suggestions.first, "dataInaccessible")
        }
        // A failed table assignment leaves the map unchanged.
        XCTAssertThrowsError(try s.set(name: "retention", value: .table(["visits": .number(1), "nope": .number(2)])))
        XCTAssertEqual(s.retentionPeriod(.visits), 604_800)
        XCTAssertEqual(s, WorldSwitches(), "failed sets change nothing")
    }

    /// Each switch is one entry: the documentation comes from the table, the defaults from
    /// the properties the key paths name, and a set value shows through the same entry.
    func testEachSwitchIsOneEntry() throws {
        let names = WorldSwitches.switchTable.map(\.name)
        XCTAssertEqual(Set(names).count, names.count, "a switch listed twice")
        XCTAssertEqual(WorldSwitches.knobs.map(\.name), names)
        XCTAssertEqual(WorldSwitches.switchTable.filter(\.perSensor).map(\.name), ["holdingPeriod", "retention", "outOfOrderJitter"])
        let defaults = Dictionary(uniqueKeysWithValues: WorldSwitches.knobs.map { ($0.name, $0.defaultValue) })
        XCTAssertEqual(defaults["holdingMode"], "`\"clamp\"`")
        XCTAssertEqual(defaults["holdingPeriod"], "1d; faceMetrics 7.5d")
        XCTAssertEqual(defaults["agePurgeInterval"], "1h")
        XCTAssertEqual(defaults["lockedFetchError"], "2, dataInaccessible")
        XCTAssertEqual(defaults["osVersion"], "`\"26.1\"`")
        XCTAssertEqual(WorldSwitches.knobs.first { $0.name == "platform" }?.allowed, "\"iPhone\", \"iPad\", \"catalyst\" or \"visionOS\"")
        var s = WorldSwitches()
        try s.set(name: "holdingPeriod.visits", value: .string("12h"))
        try s.set(name: "epochMode", value: .table(["offset": .number(5)]))
        let entry = try XCTUnwrap(WorldSwitches.entry(named: "holdingPeriod.visits"))
        XCTAssertEqual(entry.show(s), "1d; visits 12h; faceMetrics 7.5d")
        XCTAssertEqual(WorldSwitches.entry(named: "epochMode")?.show(s), "`{ mode = \"cfAligned\", offset = 5 }`")
        XCTAssertThrowsError(try s.set(name: "tombstoneRetention.visits", value: .number(1))) { e in
            XCTAssertEqual("\(e)", "switch 'tombstoneRetention.visits': is not a per-sensor switch; expected seconds")
        }
        XCTAssertEqual(WorldSwitches.durationText(0), "0")
        XCTAssertEqual(WorldSwitches.durationText(90), "1.5m")
        XCTAssertEqual(WorldSwitches.durationText(3_660 * 86_400), "3660d")
        XCTAssertEqual(WorldSwitches.durationText(0.25), "0.25s")
    }

    func testDurationParsing() {
        XCTAssertEqual(WorldSwitches.seconds(.string("24h")), 86_400)
        XCTAssertEqual(WorldSwitches.seconds(.string(" 7.5d ")), 648_000)
        XCTAssertEqual(WorldSwitches.seconds(.string("250ms")), 0.25)
        XCTAssertEqual(WorldSwitches.seconds(.string("2w")), 1_209_600)
        XCTAssertEqual(WorldSwitches.seconds(.string("42")), 42)
        XCTAssertNil(WorldSwitches.seconds(.string("h")))
        XCTAssertNil(WorldSwitches.seconds(.bool(true)))
    }
}
