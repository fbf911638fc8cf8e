import Foundation
import XCTest
@testable import StudyRuntime
import SensorKitModel

/// Mistakes in a protocol are caught where they are made (issue 22): a misspelt sensor in
/// `study{}` stops the run with `sensorium check`'s message, `sensors.X` for an undeclared
/// sensor is an error naming the declared ones, and a protocol without `study{}` is told
/// which fields to write.
final class StudyMistakesTests: XCTestCase {
    static let misspelt = #"""
    study {
      id = "t", title = "T", usage = "Measures light.",
      privacy_policy = "https://example.org/p",
      entitlements = { "ambient-light-sensor" },
      sensors = {
        ambientLightSenor = { detail = "Records light." },
      },
    }
    print("top level ran")
    """#

    func testAMisspeltSensorInStudyStopsTheRunWithChecksMessage() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(StudyMistakesTests.misspelt)
        let path = h.folder.appendingPathComponent("protocol.lua").path
        let expected = "\(path):6: error[unknown-sensor] sensors.ambientLightSenor: unknown sensor 'ambientLightSenor' — did you mean 'ambientLightSensor'?"
        guard let run = error as? RunError else { return XCTFail("not a RunError: \(error)") }
        XCTAssertEqual(run.message, expected)
        // The same text `sensorium check` prints, from the same function.
        let manifest = try XCTUnwrap(StudyManifest(table: [
            DeclaredEntry("sensors", .table([DeclaredEntry("ambientLightSenor", .table([DeclaredEntry("detail", .string("Records light."))]))])),
        ]).refusedNames().first)
        XCTAssertEqual(ManifestDiagnostics.text(manifest, script: path, source: ManifestDiagnostics.sourceLines(path)), expected)
    }

    func testAMisspeltSensorDeclaredFromAHelperModuleNamesTheCall() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "hartRate" })
        """#)
        let text = "\(error)"
        XCTAssertTrue(text.contains("error[unknown-sensor] sensors.hartRate: unknown sensor 'hartRate' — did you mean 'heartRate'?"), text)
        XCTAssertTrue(text.contains("t.lua:"), text)   // where study{} was called
    }

    func testReadingAnUndeclaredSensorIsAnErrorNamingTheDeclaredOnes() throws {
        let h = try ProtocolHarness()
        let declared = #"""
        study {
          id = "t", title = "T", usage = "Measures light.", privacy_policy = "https://example.org/p",
          entitlements = { "ambient-light-sensor", "on-wrist" },
          sensors = { ambientLightSensor = { detail = "Light." }, onWristState = { detail = "Wrist." } },
        }

        """#
        // (Lua shortens the long temporary path of the chunk: the message ends the same.)
        let typo = try XCTUnwrap((try h.failure(declared + "local light = sensors.ambientLightSenor\n") as? RunError)?.message)
        XCTAssertTrue(typo.hasSuffix("/protocol.lua:6: sensors.ambientLightSenor: no such sensor; study{} declares ambientLightSensor, onWristState — did you mean 'ambientLightSensor'?"), typo)
        let undeclared = try XCTUnwrap((try h.failure(declared + "local hr = sensors.heartRate\n") as? RunError)?.message)
        XCTAssertTrue(undeclared.hasSuffix("/protocol.lua:6: sensors.heartRate: not declared; study{} declares ambientLightSensor, onWristState; "
                                           + "to use it, add heartRate = { detail = \"…\" } to study{}'s sensors and 'heart-rate' to its entitlements"), undeclared)
        // Entitled already: the advice names only the usage detail.
        let entitled = declared.replacingOccurrences(of: #""on-wrist" }"#, with: #""on-wrist", "heart-rate" }"#)
        XCTAssertNotEqual(entitled, declared)
        let detailOnly = try XCTUnwrap((try h.failure(entitled + "local hr = sensors.heartRate\n") as? RunError)?.message)
        XCTAssertTrue(detailOnly.hasSuffix("to use it, add heartRate = { detail = \"…\" } to study{}'s sensors (its entitlement 'heart-rate' is there)"), detailOnly)
        // Declared sensors, pairs and the returned table are as before.
        let o = try h.run(declared + #"""
        local names = {}
        for name in pairs(sensors) do names[#names + 1] = name end
        table.sort(names)
        print(table.concat(names, ","), tostring(sensors.onWristState), rawget(sensors, "heartRate"))
        """#)
        XCTAssertEqual(o.lines, ["ambientLightSensor,onWristState\tSRSensorReader(onWristState)\tnil"])
    }

    func testWithoutStudySensorKitsErrorsSayWhichFieldsToWrite() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(err) print(err.message) end)
        light:startRecording()
        """#)
        let auth = try XCTUnwrap(o.lines.first)
        XCTAssertTrue(auth.hasPrefix("Your bundle's Info.plist must have an NSSensorKitUsageDescription key — this protocol declares no study{}; "), auth)
        XCTAssertTrue(auth.contains("`usage` (NSSensorKitUsageDescription), `entitlements` (com.apple.developer.sensorkit.reader.allow) and `sensors` (NSSensorKitUsageDetail)"), auth)
        XCTAssertTrue(auth.contains(#"study{ id = "my-study", usage = "Why the study needs these data.", entitlements = { "ambient-light-sensor" }, sensors = { ambientLightSensor = { detail = "What it records and why." } } }"#), auth)
        // With study{}, the messages stay SensorKit's own.
        let declared = try h.run(#"""
        study { id = "t", title = "T", entitlements = { "ambient-light-sensor" }, sensors = { ambientLightSensor = { detail = "Light." } }, enrol = "manual" }
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(err) print(err.message) end)
        """#)
        XCTAssertEqual(declared.lines, ["Your bundle's Info.plist must have an NSSensorKitUsageDescription key"])
    }

    func testTheExampleDeclarationIsAValidStudy() throws {
        let h = try ProtocolHarness()
        let example = StudyManifest.exampleDeclaration(for: [.heartRate, .onWristState])
        let o = try h.run(example + "\nprint(tostring(sensors.heartRate), tostring(sensors.onWristState))\n")
        XCTAssertEqual(o.lines, ["SRSensorReader(heartRate)\tSRSensorReader(onWristState)"])
        XCTAssertTrue(o.logLines.allSatisfy { !$0.contains("8197") && !$0.contains("invalidEntitlement") }, o.output)
    }

    /// `set:byDay("lux")` is a newcomer's shorthand for grouping and aggregating at once: the
    /// grouping says how to write it instead of ignoring the field.
    func testAGroupingGivenAFieldSaysToAggregateAfterIt() throws {
        let h = try ProtocolHarness()
        for name in ["byDay", "byHour", "byHourOfDay"] {
            let error = try XCTUnwrap(h.failure(#"""
            local T = require "t"
            T.study({ "ambientLightSensor" })
            local light = sensorkit.reader "ambientLightSensor"
            sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
            schedule.at("2026-03-03 12:00", function(now)
              local set = light:samples { from = time.studyStart(), to = now }
              local days = set:\#(name)("lux")
            end)
            """#) as? RunError)
            XCTAssertEqual(error.line, 7, error.message)
            XCTAssertTrue(error.message.contains("\(name) takes no arguments (got 1): group first, then aggregate a field, as in set:\(name)():mean(\"field\")"),
                          error.message)
        }
    }
}
