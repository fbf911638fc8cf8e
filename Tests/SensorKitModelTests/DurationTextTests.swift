import SensorKitModel
import XCTest

/// The one duration grammar: what switches, schedule, scenario offsets and `:advance` accept.
final class DurationTextTests: XCTestCase {
    func testNumbersAndSingleUnits() {
        XCTAssertEqual(DurationText.seconds("90"), 90)
        XCTAssertEqual(DurationText.seconds("-5"), -5)
        XCTAssertEqual(DurationText.seconds(" 1e3 "), 1000)
        XCTAssertEqual(DurationText.seconds("500ms"), 0.5)
        XCTAssertEqual(DurationText.seconds("30s"), 30)
        XCTAssertEqual(DurationText.seconds("15m"), 900)
        XCTAssertEqual(DurationText.seconds("26H"), 93_600)
        XCTAssertEqual(DurationText.seconds("7.5d"), 648_000)
        XCTAssertEqual(DurationText.seconds("2w"), 1_209_600)
        XCTAssertEqual(DurationText.seconds("1e3s"), 1000)
        XCTAssertEqual(DurationText.seconds("7.5 d"), 648_000)
    }

    func testSumsAndSign() {
        XCTAssertEqual(DurationText.seconds("1h30m"), 5_400)
        XCTAssertEqual(DurationText.seconds("1h 30m 15s"), 5_415)
        XCTAssertEqual(DurationText.seconds("-1h30m"), -5_400)
        XCTAssertEqual(DurationText.seconds("1m500ms"), 60.5)
    }

    func testRejects() {
        for text in ["", "h", "5x", "1.2.3h", "1h30", "nan", "inf", "1e999s", "ms", "--5m", "5 m x"] {
            XCTAssertNil(DurationText.seconds(text), text)
        }
    }

    func testSwitchesReadTheSameGrammar() {
        XCTAssertEqual(WorldSwitches.seconds(.string("1h30m")), 5_400)
        XCTAssertEqual(WorldSwitches.seconds(.string("250ms")), 0.25)
        XCTAssertNil(WorldSwitches.seconds(.string("soon")))
    }
}
