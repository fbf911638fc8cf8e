import XCTest
import SensorKitModel
import Simulator

final class DeterminismTests: XCTestCase {
    func testSameSeedGivesIdenticalBatches() {
        let a = makeSimSource(seed: 11, simTrio), b = makeSimSource(seed: 11, simTrio)
        for (sensor, device) in simStreams(a, "ana") {
            let x = a.samples(participant: "ana", sensor: sensor, device: device, writtenAfter: simMonday, through: simMonday + simDay)
            let y = b.samples(participant: "ana", sensor: sensor, device: device, writtenAfter: simMonday, through: simMonday + simDay)
            if !sparseSensors.contains(sensor) {
                XCTAssertGreaterThan(x.count, 0, "\(sensor) on \(device.kind) produced nothing in a day")
            }
            assertSameSimBatch(x, y, "\(sensor) on \(device.kind)")
        }
    }

    /// A worker's copy with a memo of its own gives the original's rows, and its memo holds at
    /// most the stories it was given room for, however many participants and days go through it.
    func testPrivateStoryCacheGivesSameRowsAndStaysBounded() {
        let shared = makeSimSource(seed: 13, simTrio)
        let worker = shared.withPrivateStoryCache(stories: 8)
        for id in ["ana", "ben", "cho"] {
            for (sensor, device) in simStreams(shared, id) where [.heartRate, .deviceUsageReport, .pedometerData].contains(sensor) {
                for day in 0..<5 {
                    let a = simMonday + Double(day) * simDay
                    let x = shared.samples(participant: id, sensor: sensor, device: device, writtenAfter: a, through: a + simDay)
                    let y = worker.samples(participant: id, sensor: sensor, device: device, writtenAfter: a, through: a + simDay)
                    assertSameSimBatch(x, y, "\(id) \(sensor) day \(day)")
                }
            }
        }
        XCTAssertEqual(worker.cachedStoryCount, 8, "the worker's memo is full but no larger than asked")
        XCTAssertGreaterThan(shared.cachedStoryCount, 8, "the shared memo keeps every participant's days")
    }

    func testEveryStreamProducesDataWithinAWeek() {
        let s = makeSimSource(seed: 11, simTrio)
        for sensor in Sensor.allCases {
            XCTAssertNotNil(simFirstNonEmpty(s, sensor), "\(sensor): no rows for anyone in a week")
        }
        XCTAssertEqual(Set(SimulatedSource.implementedSensors), Set(Sensor.allCases))
    }

    func testDifferentParticipantsAndSeedsDiffer() {
        // Same description except the id.
        let twins = [ParticipantDescription(id: "t1", timeZone: "Europe/Berlin", watch: .defaultWatch,
                                            profile: ParticipantProfile(preset: .officeWorker)),
                     ParticipantDescription(id: "t2", timeZone: "Europe/Berlin", watch: .defaultWatch,
                                            profile: ParticipantProfile(preset: .officeWorker))]
        let s = makeSimSource(seed: 3, twins), other = makeSimSource(seed: 4, twins)
        for (sensor, device) in simStreams(s, "t1") {
            let a = s.samples(participant: "t1", sensor: sensor, device: device, writtenAfter: simMonday, through: simMonday + simDay)
            let b = s.samples(participant: "t2", sensor: sensor, device: device, writtenAfter: simMonday, through: simMonday + simDay)
            let c = other.samples(participant: "t1", sensor: sensor, device: device, writtenAfter: simMonday, through: simMonday + simDay)
            if sparseSensors.contains(sensor) && (a.count == 0 || b.count == 0 || c.count == 0) { continue }
            XCTAssertTrue(a != b, "\(sensor) on \(device.kind): two participants gave the same data")
            XCTAssertTrue(a != c, "\(sensor) on \(device.kind): two seeds gave the same data")
        }
    }

    /// The central purity property: one day in one call equals 24 hourly calls, and equals
    /// calls in odd-sized chunks made in reverse order.
    func testOneCallEqualsHourlyAndOddChunks() {
        let s = makeSimSource(seed: 5, simTrio)
        for id in ["ana", "ben"] {
            for (sensor, device) in simStreams(s, id) {
                let whole = s.samples(participant: id, sensor: sensor, device: device, writtenAfter: simMonday, through: simMonday + simDay)
                let hourly = (0..<24).map {
                    s.samples(participant: id, sensor: sensor, device: device,
                              writtenAfter: simMonday + Double($0) * 3_600, through: simMonday + Double($0 + 1) * 3_600)
                }
                assertSameSimBatch(simConcat(hourly), simConcat([whole]), "\(id) \(sensor) on \(device.kind): day ≠ 24 hours")
                // 37-minute chunks over 8 hours, fetched last first, with a fresh source (no warm caches).
                let fresh = makeSimSource(seed: 5, simTrio)
                let a = simMonday + 7 * 3_600, b = a + 8 * 3_600
                let part = s.samples(participant: id, sensor: sensor, device: device, writtenAfter: a, through: b)
                var bounds: [Double] = stride(from: a, to: b, by: 37 * 60).map { $0 }
                bounds.append(b)
                let chunks = (0..<(bounds.count - 1)).reversed().map {
                    fresh.samples(participant: id, sensor: sensor, device: device,
                                  writtenAfter: bounds[$0], through: bounds[$0 + 1])
                }
                assertSameSimBatch(simConcat(chunks.reversed()), simConcat([part]), "\(id) \(sensor) on \(device.kind): odd chunks differ")
            }
        }
    }

    func testRowsOrderedAndInsideTheAskedRange() {
        let s = makeSimSource(seed: 9, simTrio)
        for id in ["ana", "cho"] {
            for (sensor, device) in simStreams(s, id) {
                let a = simMonday + 2 * simDay + 1_234.5, b = a + 9 * 3_600
                let batch = s.samples(participant: id, sensor: sensor, device: device, writtenAfter: a, through: b)
                assertSimOrdered(batch, after: a, through: b, "\(id) \(sensor) \(device.kind)")
            }
        }
    }

    func testUnknownOrUnpairedAnswersEmptyWithSchemaColumns() {
        let s = makeSimSource(simTrio)
        let hrOnPhone = s.samples(participant: "ana", sensor: .heartRate, device: .defaultPhone, writtenAfter: simMonday, through: simMonday + simDay)
        XCTAssertEqual(hrOnPhone.count, 0)
        XCTAssertEqual(hrOnPhone.columns.map(\.name), ["heartRate", "confidence", "timestamp"])
        let visitsOnWatch = s.samples(participant: "ana", sensor: .visits, device: .defaultWatch, writtenAfter: simMonday, through: simMonday + simDay)
        XCTAssertEqual(visitsOnWatch.count, 0)
        XCTAssertEqual(s.samples(participant: "nobody", sensor: .accelerometer, device: .defaultPhone,
                                 writtenAfter: simMonday, through: simMonday + simDay).count, 0)
        let foreign = SRDevice(name: "Other", model: "iPhone", systemName: "iOS", systemVersion: "17.0",
                               productType: "iPhone15,2", kind: .phone)
        XCTAssertEqual(s.samples(participant: "ana", sensor: .accelerometer, device: foreign,
                                 writtenAfter: simMonday, through: simMonday + simDay).count, 0)
        let noWatch = makeSimSource([ParticipantDescription(id: "solo")])
        XCTAssertEqual(noWatch.devices(participant: "solo"), [.defaultPhone])
        XCTAssertEqual(s.devices(participant: "ana"), [.defaultPhone, .defaultWatch])
    }

    func testBadScenariosAreRejected() {
        XCTAssertThrowsError(try SimulatedSource(seed: 1, participants: [ParticipantDescription(id: "x", timeZone: "Mars/Olympus")]))
        XCTAssertThrowsError(try SimulatedSource(seed: 1, participants: [ParticipantDescription(id: "x"), ParticipantDescription(id: "x")]))
        XCTAssertThrowsError(try SimulatedSource(seed: 1, participants: [
            ParticipantDescription(id: "x", events: [.watchOffWrist(from: 10, to: 5)]),
        ]))
    }
}
