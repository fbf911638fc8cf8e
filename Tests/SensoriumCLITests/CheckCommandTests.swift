import Foundation
import XCTest

/// `sensorium check` lints a manifest like App Review would; `sensorium sensors` lists the catalogue.
extension SensoriumCLITests {
    func testCheckAcceptsAWellFormedProtocol() throws {
        try write("good/protocol.lua", """
        study {
          id = "good", title = "Good", usage = "Measures light.", privacy_policy = "https://example.org/privacy",
          entitlements = { "ambient-light-sensor" },
          sensors = { ambientLightSensor = { detail = "Records light around you.", required = true } },
        }
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" })
        """)
        let result = try sensorium(["check", "good"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        assertContains(result.stdout, "good/protocol.lua: 0 errors, 0 warnings")
    }

    func testCheckReportsEveryKindOfManifestMistake() throws {
        try write("bad/protocol.lua", """
        study {
          id = "bad", title = "Bad", usage = "Measures things.",
          entitlements = { "ambient-light-sensor", "message-usage", "heart-rate" },
          sensors = {
            ambientLightSensor = "Records light around you.",
            acelerometer = { detail = "Movement." },
            heartRate = { detail = "Pulse." },
          },
        }
        local kb = sensorkit.reader "keyboardMetrics"
        """)
        let result = try sensorium(["check", "bad"])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        let out = result.stdout
        assertContains(out, "acelerometer")                    // unknown sensor…
        assertContains(out, "'accelerometer'")                 // …with a suggestion
        assertContains(out, "message-usage")                   // entitlement typo…
        assertContains(out, "'messages-usage'")                // …with a suggestion
        assertContains(out, "privacy")                         // missing privacy policy URL
        assertContains(out, "keyboardMetrics")                 // used without entitlement and detail
        assertContains(out, "error[used-without-entitlement]")
        assertContains(out, "error[used-without-usage-detail]")
        XCTAssertTrue(out.split(separator: "\n").contains { $0.contains("sensors.ambientLightSensor") && $0.contains("string") }, out)
        XCTAssertTrue(out.split(separator: "\n").last?.contains(" error") == true, out)
    }

    func testCheckWithoutAStudyDeclarationFails() throws {
        try write("nostudy/protocol.lua", "local x = 1\n")
        let result = try sensorium(["check", "nostudy"])
        XCTAssertEqual(result.status, 1)
        assertContains(result.stdout, "error[missing-study]")
    }

    func testSensorsListsAll22WithCadenceAndJSON() throws {
        let table = try sensorium(["sensors"])
        XCTAssertEqual(table.status, 0)
        let rows = table.stdout.split(separator: "\n").dropFirst()
        XCTAssertEqual(rows.count, 22, table.stdout)
        assertContains(table.stdout, "heartRate")
        assertContains(table.stdout, "1 Hz while the watch is worn")
        let json = try sensorium(["sensors", "--json"])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(parsed?.count, 22)
        let accel = parsed?.first { $0["name"] as? String == "accelerometer" }
        XCTAssertEqual(accel?["identifier"] as? String, "com.apple.SensorKit.motion.accelerometer")
        XCTAssertEqual(accel?["shape"] as? String, "array")
        let names = (accel?["fields"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
        XCTAssertTrue(["x", "y", "z", "identifier", "startDate"].allSatisfy(names.contains), "\(names)")
        XCTAssertTrue(accel?["window"] is NSNull)
        let usage = parsed?.first { $0["name"] as? String == "deviceUsageReport" }
        XCTAssertEqual(usage?["window"] as? String, "duration up to the write time")
        let web = (usage?["fields"] as? [[String: Any]])?.first { $0["name"] as? String == "webUsageByCategory" }
        XCTAssertEqual(web?["shape"] as? String, "{category: [{totalUsageTime s}]}")
        let steps = try sensorium(["sensors", "pedometerData"])
        assertContains(steps.stdout, "  window       startDate to endDate  (windowStart, windowEnd)")
        let temperature = try sensorium(["sensors", "wristTemperature"])
        assertContains(temperature.stdout, "      [{timestamp s since 1970, value °C, condition, errorEstimate °C}]")
        let one = try sensorium(["sensors", "acelerometer"])
        XCTAssertNotEqual(one.status, 0)
        assertContains(one.stderr, "did you mean 'accelerometer'?")
    }
}

/// `sensorium switches` lists the switch tables; the world flags are one group, checked alike.
extension SensoriumCLITests {
    func testSwitchesListsEverySwitchFromItsTable() throws {
        let plain = try sensorium(["switches"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        assertContains(plain.stdout, "holdingMode  default \"clamp\"  (contract §8.1)")
        assertContains(plain.stdout, "  accepts \"clamp\" or \"strictDoc\"")
        assertContains(plain.stdout, "reportWindow  default 15m  (contract §3.2)")
        let markdown = try sensorium(["switches", "--markdown"])
        XCTAssertEqual(markdown.status, 0, markdown.stderr)
        let lines = markdown.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 24, markdown.stdout)      // 21 of the model, 3 of the simulator
        XCTAssertTrue(lines.allSatisfy { $0.hasPrefix("- `") }, markdown.stdout)
        assertContains(markdown.stdout, "- `holdingPeriod` (1d; faceMetrics 7.5d): how long new data is held back.")
    }

    func testRunReplAndExportCheckTheWorldFlagsAlike() throws {
        for command in [["run", "x.lua"], ["repl"], ["export", "--into", "out"]] {
            let result = try sensorium(command + ["--days", "0", "--timezone", "Mars/Olympus"])
            XCTAssertEqual(result.status, 64, "\(command): \(result.stderr)")
            assertContains(result.stderr, "--days: 0 is outside the allowed range (a whole number from 1 to 366 days)")
        }
        let zone = try sensorium(["export", "--into", "out", "--timezone", "Mars/Olympus"])
        XCTAssertEqual(zone.status, 64, zone.stderr)
        assertContains(zone.stderr, "--timezone: unknown time zone 'Mars/Olympus'")
    }
}
