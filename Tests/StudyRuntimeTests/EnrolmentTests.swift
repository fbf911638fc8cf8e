import Foundation
import XCTest
@testable import StudyRuntime

/// Declarative enrolment (`study{ sensors = … }` asks for and records the declared
/// sensors unless the protocol enrols by hand): the callbacks a protocol receives and the
/// data it can fetch, compared line by line.
final class EnrolmentTests: XCTestCase {
    static let declaration = #"""
    local readers = study {
      id = "e", title = "Enrolment", usage = "Testing enrolment.", privacy_policy = "https://example.org/privacy",
      entitlements = { "ambient-light-sensor", "pedometer" }, %ENROL%
      sensors = {
        ambientLightSensor = { detail = "Light.", required = true },
        pedometerData = { detail = "Steps." },
      },
    }
    local T = require "t"
    """#

    func declaration(_ enrol: String = "") -> String { EnrolmentTests.declaration.replacingOccurrences(of: "%ENROL%", with: enrol) }

    func testDeclaredSensorsAreAskedForAndRecordedOnGrant() throws {
        let h = try ProtocolHarness()
        let o = try h.run(declaration() + #"""
        T.log("table", readers == sensors, tostring(sensors.ambientLightSensor), tostring(sensors.pedometerData), (pcall(function() return sensors.heartRate end)))
        sensors.ambientLightSensor.delegate = T.recorder("light")
        T.log("top level", sensors.ambientLightSensor.authorizationStatus)
        schedule.at("2026-03-03 12:00", function(now)
          local set = sensors.ambientLightSensor:samples { from = time.studyStart(), to = now }
          T.log("light", sensors.ambientLightSensor.authorizationStatus, set:count() > 100, set:min("time") >= time.studyStart())
          T.log("steps", sensorkit.status("pedometerData"), sensors.pedometerData:samples { from = time.studyStart(), to = now }:count() > 0)
        end)
        """#)
        XCTAssertEqual(o.lines, [
            "table true SRSensorReader(ambientLightSensor) SRSensorReader(pedometerData) false",   // undeclared: an error
            "top level notDetermined",
            // After the top level: one sheet for both; on the grant, recording starts before the delegate hears of it.
            "light didChange authorized",
            "light willStart",
            "light authorized true true",
            "steps authorized true",
        ])
        XCTAssertEqual(o.logLines, [])
    }

    func testADeniedSensorIsLoggedAndARegrantRecordsAgain() throws {
        let h = try ProtocolHarness()
        let scenario = #"""
        return { days = 3, participants = { { id = "P1",
                 events = { { at = "day 1 12:00", revoke = "ambientLightSensor" }, { at = "day 2 12:00", grant = "ambientLightSensor" } } } } }
        """#
        let o = try h.run(declaration() + #"""
        sensors.ambientLightSensor.delegate = T.recorder("light")
        """#, scenario: scenario)
        XCTAssertEqual(o.lines, ["light didChange authorized", "light willStart", "light didChange denied",
                                 "light didChange authorized", "light willStart"])
        XCTAssertEqual(o.logLines, ["[P1 2026-03-02 12:00] warn: ambientLightSensor is denied: not recorded"])
    }

    func testManualEnrolmentAsksForNothing() throws {
        let h = try ProtocolHarness()
        let o = try h.run(declaration(#"enrol = "manual","#) + #"""
        sensors.ambientLightSensor.delegate = T.recorder("light")
        schedule.at("2026-03-03 12:00", function() T.log("status", sensors.ambientLightSensor.authorizationStatus) end)
        """#)
        XCTAssertEqual(o.lines, ["status notDetermined"])
    }

    func testAProtocolThatAsksItselfEnrolsByHand() throws {
        let h = try ProtocolHarness()
        let o = try h.run(declaration() + #"""
        sensors.ambientLightSensor.delegate = T.recorder("light")
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(err) T.log("completion", T.err(err)) end)
        schedule.at("2026-03-03 12:00", function()
          T.log("status", sensorkit.status("ambientLightSensor"), sensorkit.status("pedometerData"))
          local ok, e = pcall(sensors.ambientLightSensor.samples, sensors.ambientLightSensor, { from = time.studyStart(), to = time.now() })
          T.log("fetch", ok, ok and e:count())        -- authorized but never recorded: nothing to fetch
        end)
        """#)
        XCTAssertEqual(o.lines, ["completion nil", "light didChange authorized", "status authorized notDetermined", "fetch true 0"])
    }

    func testABadEnrolValueIsAnErrorAtTheProtocolsLine() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(declaration(#"enrol = "manaul","#))
        let run = try XCTUnwrap(error as? RunError)
        XCTAssertEqual(run.line, 1)
        XCTAssertTrue(run.message.contains(#"study.enrol must be "auto""#) && run.message.contains(#"got "manaul""#), run.message)
    }

    func testAFailedEnrolmentRequestIsLogged() throws {
        let h = try ProtocolHarness()
        // The pedometer's usage detail is malformed: the sheet fails with 8197, as on a phone.
        let o = try h.run(#"""
        study { id = "e", title = "E", usage = "U.", privacy_policy = "https://example.org/p",
                entitlements = { "pedometer" }, sensors = { pedometerData = "Steps." } }
        schedule.at("2026-03-02 01:00", function() print(sensorkit.status("pedometerData")) end)
        """#)
        XCTAssertEqual(o.lines, ["notDetermined"])
        XCTAssertEqual(o.logLines.count, 1)
        XCTAssertTrue(o.logLines[0].hasPrefix("[P1 2026-03-02 00:00] warn: enrolment: SRErrorDomain 8197"), o.logLines[0])
    }

    /// accelerometer and rotationRate share one usage-detail key (`SRSensorUsageMotion`):
    /// a study that names and entitles only the accelerometer enrols the accelerometer, not
    /// its group's other sensor; naming a group member without its entitlement still fails
    /// as a phone fails, and so does a group key none of whose sensors is entitled.
    func testASharedUsageKeyEnrolsTheSensorsTheStudyMeans() throws {
        let h = try ProtocolHarness()
        func study(_ entitlements: String, _ sensors: String) -> String {
            #"study { id = "m", title = "M", usage = "U.", privacy_policy = "https://example.org/p", entitlements = { "# + entitlements
                + " }, sensors = { " + sensors + #" } }"# + "\nlocal T = require \"t\"\n" + #"""
            schedule.at("2026-03-03 12:00", function(now)
              local names = {}
              for name in pairs(sensors) do names[#names + 1] = name end
              table.sort(names)
              local ok, set = pcall(sensors.accelerometer.samples, sensors.accelerometer, { from = now - hours(30), to = now - hours(29) })
              T.log(table.concat(names, ","), sensorkit.status("accelerometer"), sensorkit.status("rotationRate"), ok and set:count() > 0)
            end)
            """#
        }
        let one = try h.run(study(#""motion-accelerometer""#, #"accelerometer = { detail = "Movement." }"#))
        XCTAssertEqual(one.lines, ["accelerometer authorized notDetermined true"], "only the accelerometer asked for and recorded")
        XCTAssertEqual(one.logLines, [])
        let byKey = try h.run(study(#""motion-accelerometer""#, #"SRSensorUsageMotion = { detail = "Movement." }"#))
        XCTAssertEqual(byKey.lines, ["accelerometer authorized notDetermined true"])
        XCTAssertEqual(byKey.logLines, [])
        let both = try h.run(study(#""motion-accelerometer""#, #"accelerometer = { detail = "Movement." }, rotationRate = { detail = "Turning." }"#))
        XCTAssertEqual(both.lines, ["accelerometer,rotationRate notDetermined notDetermined false"], "rotationRate named without its entitlement: the sheet fails")
        XCTAssertEqual(both.logLines.count, 1)
        XCTAssertTrue(both.logLines.first?.contains("invalidEntitlement: no SensorKit entitlement for rotationRate") == true, "\(both.logLines)")
    }
}
