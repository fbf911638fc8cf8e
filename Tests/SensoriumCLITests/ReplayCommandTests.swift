import Foundation
import XCTest

/// `run --recording` says what it does not take from flags and scenario, and what retention hides.
extension SensoriumCLITests {
    func testReplayWarnsOfIgnoredSettingsAndRetention() throws {
        try write("r.lua", "report.row('t', { a = 1 })")
        for (days, store) in [(9, "long"), (3, "short")] {
            let exported = try sensorium(["export", "--days", "\(days)", "--participants", "1", "--sensors", "pedometerData", "--into", store], timeout: 120)
            XCTAssertEqual(exported.status, 0, exported.stderr)
            let imported = try sensorium(["import", "--format", "native", store, "--into", "\(store).sqlite"], timeout: 120)
            XCTAssertEqual(imported.status, 0, imported.stderr)
        }
        try write("sc.lua", "return { timezone = 'Europe/Berlin', days = 3, seed = 4 }")
        let long = try sensorium(["run", "r.lua", "--recording", "long.sqlite", "--timezone", "America/New_York", "--scenario", "sc.lua"], timeout: 120)
        XCTAssertEqual(long.status, 0, long.stderr)
        assertContains(long.stderr, "warning: --timezone America/New_York is ignored in a replay")
        assertContains(long.stderr, "warning: sc.lua: timezone, days ignored in a replay (the recording gives them; use --start and --days to choose the span); only seed and switches apply")
        assertContains(long.stderr, "warning: the replay spans 9 days but SensorKit keeps data 7 days")
        let short = try sensorium(["run", "r.lua", "--recording", "short.sqlite"], timeout: 120)
        XCTAssertEqual(short.status, 0, short.stderr)
        XCTAssertFalse(short.stderr.contains("warning"), short.stderr)
    }
}
