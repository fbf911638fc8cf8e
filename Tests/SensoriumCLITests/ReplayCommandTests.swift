import Foundation
import XCTest

/// `export` → `import` → `run --recording`: a protocol replayed over the exported
/// simulation prints exactly what it printed on the simulation itself.
extension SensoriumCLITests {
    static let replayProtocol = """
    study {
      id = "replay", title = "Replay", usage = "Tests replay.", privacy_policy = "https://example.org/privacy",
      entitlements = { "ambient-light-sensor", "heart-rate", "pedometer" },
      sensors = {
        ambientLightSensor = { detail = "Light." }, heartRate = { detail = "Heart." }, pedometerData = { detail = "Steps." },
      },
    }
    local names = { "ambientLightSensor", "heartRate", "pedometerData" }
    local readers = {}
    for _, name in ipairs(names) do
      readers[name] = sensorkit.reader(name)
      readers[name].delegate = {
        didChangeAuthorizationStatus = function(r, s)
          print(sensorkit.participant() .. " " .. time.format(time.now(), "%Y-%m-%d %H:%M") .. " " .. r.sensor .. " " .. s)
          if s == "authorized" then r:startRecording() end
        end,
      }
    end
    sensorkit.requestAuthorization(names)
    schedule.daily("09:00", function(now)
      local from, to = time.startOfDay(now) - days(2), time.startOfDay(now) - days(1)
      if from < time.studyStart() then return end
      for _, name in ipairs(names) do
        local r = readers[name]
        if r.authorizationStatus == "authorized" then
          for _, device in ipairs(r:devices()) do
            local set = r:samples { device = device, from = from, to = to }
            local field = ({ ambientLightSensor = "lux", heartRate = "heartRate", pedometerData = "numberOfSteps" })[name]
            report.row("daily", { sensor = name, device = device.kind, day = time.day(from),
                                  n = set:count(), total = set:count() > 0 and set:sum(field) or 0 })
          end
        end
      end
    end)
    """

    static let replayScenario = """
    return {
      days = 5, seed = 9, start = "2026-03-02", timezone = "Europe/Berlin",
      switches = { duplicateRate = 0 },
      participants = {
        { id = "Ada", profile = "officeWorker" },
        { id = "Bea", profile = "student", consent = { heartRate = "deny" } },
      },
    }
    """

    func testReplayOfAnExportedSimulationPrintsTheSameAsTheSimulation() throws {
        try write("study/protocol.lua", SensoriumCLITests.replayProtocol)
        try write("study/scenario.lua", SensoriumCLITests.replayScenario)
        let simulated = try sensorium(["run", "study", "--out", "sim"], timeout: 120)
        XCTAssertEqual(simulated.status, 0, simulated.stderr)
        XCTAssertTrue(simulated.stdout.contains("Bea 2026-03-02 00:00 heartRate denied"), simulated.stdout)

        let export = try sensorium(["export", "--scenario", "study/scenario.lua", "--into", "exported",
                                    "--sensors", "ambientLightSensor,heartRate,pedometerData"], timeout: 300)
        XCTAssertEqual(export.status, 0, export.stderr)
        let imported = try sensorium(["import", "--format", "native", "exported", "--into", "study.sqlite"], timeout: 300)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let replayed = try sensorium(["run", "study", "--recording", "study.sqlite", "--out", "rec"], timeout: 120)
        XCTAssertEqual(replayed.status, 0, replayed.stderr)
        XCTAssertEqual(replayed.stdout, simulated.stdout)
        let sim = try String(contentsOf: folder.appendingPathComponent("sim/daily.csv"), encoding: .utf8)
        let rec = try String(contentsOf: folder.appendingPathComponent("rec/daily.csv"), encoding: .utf8)
        XCTAssertEqual(rec, sim)
        XCTAssertGreaterThan(sim.split(separator: "\n").count, 10, sim)

        // One participant only.
        let one = try sensorium(["run", "study", "--recording", "study.sqlite", "--participant", "Bea"], timeout: 120)
        XCTAssertEqual(one.status, 0, one.stderr)
        XCTAssertFalse(one.stdout.contains("Ada"), one.stdout)
        XCTAssertTrue(one.stdout.contains("Bea 2026-03-02 00:00 heartRate denied"), one.stdout)
    }
}
