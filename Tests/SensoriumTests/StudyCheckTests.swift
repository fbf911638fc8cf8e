import Foundation
import Sensorium
import XCTest

/// `Study.check`: the diagnostics `sensorium check` prints, as values.
final class StudyCheckTests: XCTestCase {
    /// A misspelt sensor in `sensors`, and a reader of a sensor the study neither entitles
    /// nor describes; no privacy policy.
    static let broken = """
    study { id = "t", title = "t", usage = "u", entitlements = { "heart-rate" },
            sensors = { heartRate = { detail = "d", required = true },
                        ambientLightSenor = { detail = "d" } } }
    local light = sensorkit.reader "ambientLightSensor"
    """

    func testFindsEachProblemWithItsLine() throws {
        let check = try Study(.source(Self.broken, name: "broken.lua")).check()
        XCTAssertTrue(check.declaresStudy)
        XCTAssertNil(check.topLevelError)
        XCTAssertEqual(check.diagnostics.map(\.code),
                       ["missing-privacy-policy", "unknown-sensor", "used-without-entitlement", "used-without-usage-detail"])
        XCTAssertEqual(check.diagnostics.map(\.line), [1, 3, 4, 4])
        let unknown = check.diagnostics[1]
        XCTAssertEqual(unknown.severity, .error)
        XCTAssertEqual(unknown.file, "broken.lua")
        XCTAssertEqual(unknown.key, "sensors.ambientLightSenor")
        XCTAssertEqual(unknown.description,
                       "broken.lua:3: error[unknown-sensor] sensors.ambientLightSenor: unknown sensor 'ambientLightSenor' — did you mean 'ambientLightSensor'?")
        XCTAssertEqual(check.diagnostics[0].severity, .warning)
        XCTAssertEqual(check.diagnostics[2].message,
                       "sensorkit.reader(\"ambientLightSensor\") is used, but the study's entitlements do not include 'ambient-light-sensor': SensorKit answers invalidEntitlement (0)")
        XCTAssertEqual(check.errorCount, 3)
        XCTAssertEqual(check.warningCount, 1)
        XCTAssertFalse(check.passed)
        XCTAssertEqual(check.summary, "broken.lua: 3 errors, 1 warning")
        // Strict: a missing privacy policy is an error too.
        XCTAssertEqual(try Study(.source(Self.broken, name: "broken.lua")).check(strictPrivacyPolicy: true).errorCount, 4)
    }

    /// A top level that fails is reported, and what ran before it is still checked.
    func testATopLevelErrorIsReportedAndTheCheckGoesOn() throws {
        let check = try Study(.source(Self.broken + "\nerror('boom')", name: "broken.lua")).check()
        XCTAssertTrue(check.topLevelError?.hasPrefix("broken.lua:5: boom") ?? false, "\(String(describing: check.topLevelError))")
        XCTAssertEqual(check.errorCount, 3)
    }

    /// A study{} that itself raises (a bad `enrol`) is still a declaration: its diagnostics
    /// are reported beside the error, not "no study{}".
    func testAStudyThatRaisesIsStillChecked() throws {
        let code = #"""
        study { id = "b", title = "B", usage = "U.", privacy_policy = "https://e.org/p", enrol = "automatc",
                entitlements = { "ambient-light-sensor" }, sensors = { ambientLightSensor = { detail = "L." }, heartRate = { detail = "H." } } }
        """#
        let check = try Study(.source(code, name: "enrol.lua")).check()
        XCTAssertTrue(check.declaresStudy)
        XCTAssertEqual(check.diagnostics.map(\.code), ["missing-entitlement"])
        XCTAssertTrue(check.topLevelError?.contains(#"study.enrol must be "auto""#) ?? false, "\(String(describing: check.topLevelError))")
    }

    func testAProtocolWithoutStudyIsToldHowToDeclareOne() throws {
        let check = try Study(.source("local r = sensorkit.reader \"accelerometer\"", name: "bare.lua")).check()
        XCTAssertFalse(check.declaresStudy)
        XCTAssertFalse(check.passed)
        XCTAssertEqual(check.diagnostics.map(\.code), ["missing-study"])
        XCTAssertTrue(check.diagnostics[0].description.hasPrefix("bare.lua: error[missing-study]: no study{} declaration; declare the study first"))
        XCTAssertTrue(check.diagnostics[0].message.contains("motion-accelerometer"), check.diagnostics[0].message)   // the example names the used sensor
    }

    /// Every protocol of the repository passes, as `sensorium check` says of them.
    func testTheRepositorysProtocolsPass() throws {
        for name in ["sleep_light", "heart_rate_walk_rest"] {
            let check = try Study(.folder(StudyTests.repository.appendingPathComponent("protocols/\(name)").path)).check()
            XCTAssertTrue(check.passed, "\(name): \(check.diagnostics)")
            XCTAssertNil(check.topLevelError)
        }
    }
}
