import Foundation
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// `RecordedStudy`: what a run needs to replay a store under the same rules.
final class RecordedReplayTests: XCTestCase {
    func testReplaySetsUpClockSpanAuthorizationRecordingAndDeletions() throws {
        let sim = makeRecSource(seed: 4, [recTrio[0]])
        let dir = try recordedTempDir(self)
        let folder = dir.appendingPathComponent("export")
        let start = recMonday, end = recMonday + 2 * recDay
        try NativeFormat.export(NativeFormat.Study(start: start, end: end, participants: [
            .init(id: "ana", timeZone: "Europe/Berlin",
                  authorization: [AuthorizationChange(sensor: .heartRate, at: start, status: .authorized),
                                  AuthorizationChange(sensor: .heartRate, at: start + recDay, status: .denied)],
                  deletions: [DeletionEvent(sensor: .heartRate, range: TimeRange(after: start + 6 * 3_600, through: start + 8 * 3_600), at: start + 9 * 3_600)]),
        ], sensors: [.heartRate, .ambientLightSensor]), source: sim, to: folder)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        try store.importData(ImportRequest(format: .native, sources: [folder.path], progressBar: false))
        let study = try RecordedStudy(store: store)
        XCTAssertTrue(study.warnings.isEmpty, "\(study.warnings)")
        let p = try XCTUnwrap(study.participant("ana"))
        XCTAssertEqual(p.timeZone.identifier, "Europe/Berlin")
        XCTAssertEqual(p.devices, sim.devices(participant: "ana"))
        XCTAssertEqual(p.sensors, [.ambientLightSensor, .heartRate])
        // The clock: the declared span of the export.
        XCTAssertEqual(study.start(in: p.timeZone), recMonday)
        XCTAssertEqual(study.days(in: p.timeZone), 2, "the declared span (an export)")

        let resolved = ResolvedStudy.permissive
        var switches = WorldSwitches()
        switches.duplicateRate = 0
        var model = ParticipantModel(participant: "ana", study: resolved, switches: switches, activation: start - 30 * recDay)
        model.advance(to: start + 60)
        let later = study.prepare(&model, participant: "ana")
        XCTAssertEqual(later.map(\.status), [.denied], "the revocation is left for the runtime to schedule")
        let policy = study.consentPolicy(participant: "ana", at: start + 60)
        XCTAssertEqual(policy.answers[.heartRate], .allow)
        XCTAssertEqual(study.consentPolicy(participant: "ana", at: start + 2 * recDay).answers[.heartRate], .deny)
        XCTAssertEqual(policy.answer(forGroup: [.ambientLightSensor]), .allow, "not in the timeline: allowed")
        // The protocol asks; the recorded answers come back.
        _ = model.requestAuthorization([.heartRate, .ambientLightSensor], policy: policy)
        XCTAssertEqual(model.status(.heartRate), .authorized)
        XCTAssertEqual(model.deletions.events.count, 1)
        XCTAssertFalse(model.recording.intervals(.heartRate, until: end).isEmpty)

        // Two days later, the fetch sees the recorded data minus the deleted hour.
        model.advance(to: end + recDay)
        let watch = p.devices[1]
        let req = FetchRequest(from: model.clock.srTime(atTrue: start), to: model.clock.srTime(atTrue: end), device: watch)
        let got = try model.fetch(req, sensor: .heartRate, source: study.source).plan!.collect()
        let all = sim.samples(participant: "ana", sensor: .heartRate, device: watch, writtenAfter: start, through: end)
        XCTAssertGreaterThan(got.count, 0)
        XCTAssertLessThan(got.count, all.count)
        XCTAssertFalse(got.writeTimes.contains { $0 > start + 6 * 3_600 && $0 <= start + 8 * 3_600 }, "deleted range not delivered")
        XCTAssertEqual(got.count, all.writeTimes.filter { !($0 > start + 6 * 3_600 && $0 <= start + 8 * 3_600) }.count)
    }

    func testUnknownAuthorizationIsTreatedAsAuthorizedWithAWarning() throws {
        let dir = try recordedTempDir(self)
        let csv = "timestamp,value,confidence,device\n1772409700.5,61,3,Watch\n1772409701.5,62,3,Watch\n"
        let f = try writeFile(dir, "in/hr.csv", csv)
        let store = try RecordedStore(path: dir.appendingPathComponent("s.sqlite").path)
        try store.importData(ImportRequest(format: .mhcCSV, sources: [f], participant: "p", progressBar: false))
        let study = try RecordedStudy(store: store)
        XCTAssertTrue(study.warnings.contains { $0.contains("authorization unknown") && $0.contains("treated as authorized") }, "\(study.warnings)")
        XCTAssertTrue(study.warnings.contains { $0.contains("time zone unknown") })
        var model = ParticipantModel(participant: "p", study: ResolvedStudy(), activation: 1_772_409_600 - 30 * recDay)
        model.advance(to: 1_772_409_600)
        XCTAssertTrue(study.prepare(&model, participant: "p").isEmpty)
        XCTAssertEqual(study.consentPolicy(participant: "p", at: 1_772_409_600).answer(forGroup: [.heartRate]), .allow)
        XCTAssertEqual(study.start(in: TimeZone(identifier: "UTC")!), 1_772_409_600, "local midnight of the first write")
        XCTAssertEqual(study.days(in: TimeZone(identifier: "UTC")!), 3,
                       "no declared span: the day of data, one day of hold, one day for a morning schedule to see it")
        XCTAssertEqual(study.days(in: TimeZone(identifier: "UTC")!, hold: 7.5 * 86_400), 10, "face metrics' 7.5-day hold: 1 + 8 + 1")
        XCTAssertThrowsError(try RecordedStudy(store: store, participant: "nobody")) { e in
            XCTAssertTrue("\(e)".contains("no participant 'nobody' (participants: p)"), "\(e)")
        }
    }
}
