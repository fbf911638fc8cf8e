import Foundation
import XCTest
import SensorKitModel
@testable import Simulator

/// The heart-rate generator computes a watch row's write time through `write(ready:memo:)`,
/// once per sync slot; it must give `write(ready:)`'s time to the bit for every row, also
/// when syncs are pushed past the watch or the phone being switched off.
final class WriteMemoTests: XCTestCase {
    func testMemoisedWriteTimeEqualsDirectOneAroundDeviceOffTimes() throws {
        let id = "ana"
        let events: [TimelineEvent] = [
            .deviceOff(.watch, from: simMonday + 3_600.25, to: simMonday + 9_000.5),
            .deviceOff(.phone, from: simMonday + 20_000, to: simMonday + 20_017.75),
            .reboot(.watch, at: simMonday + 40_000.125),
        ]
        let source = try SimulatedSource(seed: 21, participants: [
            ParticipantDescription(id: id, timeZone: "Europe/Berlin", watch: .defaultWatch, events: events),
        ])
        let p = try XCTUnwrap(source.participants[id])
        let ctx = WriteContext(p, kind: .watch, after: simMonday, through: simMonday + simDay)
        var memo = WriteContext.WriteMemo()
        var distinct = Set<Double>()
        var t = simMonday
        while t < simMonday + 50_000 {
            let direct = ctx.write(ready: t)
            XCTAssertEqual(ctx.write(ready: t, memo: &memo).bitPattern, direct.bitPattern, "ready \(t - simMonday)")
            distinct.insert(direct)
            t += 0.75
        }
        XCTAssertGreaterThan(distinct.count, 10, "rows spread over many syncs")
    }
}
