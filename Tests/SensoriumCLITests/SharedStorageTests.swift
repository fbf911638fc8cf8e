import Foundation
import XCTest

/// A store on shared storage (a cluster's network file system), read by many nodes at once:
/// replays open it as immutable — no WAL shared memory, no locks, no side files — and a store
/// being written there is refused. `SENSORIUM_SHARED_STORAGE=1` marks this test's ordinary
/// folder as shared (the same path a store on NFS, Lustre, GPFS, … takes).
extension SensoriumCLITests {
    func testManyProcessesReplayOneStoreOnSharedStorage() throws {
        let imported = try sensorium(["import", "--format", "mdh-json", ExportFixtures.mdh, "--into", "s.sqlite"], timeout: 120)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let review = ExportFixtures.root.appendingPathComponent("protocols/first_export_review").path
        let local = try sensorium(["run", review, "--recording", "s.sqlite", "--quiet"], timeout: 120)
        XCTAssertEqual(local.status, 0, local.stderr)
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let walBytes = { (try? FileManager.default.attributesOfItem(atPath: self.folder.appendingPathComponent("s.sqlite-wal").path)[.size] as? NSNumber)?.intValue ?? 0 }
        XCTAssertEqual(walBytes(), 0, "the import and the local replay left no unmerged pages")

        // Eight processes at once, as eight nodes would.
        guard let executable = SensoriumCLITests.executable else { return XCTFail("sensorium executable not found") }
        var shared = ProcessInfo.processInfo.environment
        shared["SENSORIUM_STDLIB"] = nil
        shared["SENSORIUM_SHARED_STORAGE"] = "1"
        let environment = shared
        let results = Outcomes(count: 8)
        let folder = self.folder!
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            results.set(i, try? ChildProcess.run(executable.path, ["run", review, "--recording", "s.sqlite", "--quiet", "--jobs", "1"],
                                                 in: folder, environment: environment, timeout: 300))
        }
        for (i, outcome) in results.all.enumerated() {
            guard let outcome else { XCTFail("process \(i) did not start"); continue }
            XCTAssertEqual(outcome.status, 0, String(decoding: outcome.stderr, as: UTF8.self))
            XCTAssertEqual(String(decoding: outcome.stdout, as: UTF8.self), local.stdout, "process \(i) read what a local replay reads")
        }
        let after = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertEqual(after, before, "no side file was made beside the store")

        // Without the local replay's side files, shared-storage replays make none either.
        for side in ["-wal", "-shm"] { try? FileManager.default.removeItem(at: folder.appendingPathComponent("s.sqlite" + side)) }
        let alone = try sensorium(["run", review, "--recording", "s.sqlite", "--quiet"], timeout: 120, environment: ["SENSORIUM_SHARED_STORAGE": "1"])
        XCTAssertEqual(alone.stdout, local.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("s.sqlite") }, ["s.sqlite"])

        // A store being written (unmerged pages in a -wal beside it) is refused on shared storage, saying what to do.
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("s.sqlite-wal").path, contents: Data(repeating: 1, count: 4096))
        let refused = try sensorium(["run", review, "--recording", "s.sqlite", "--quiet"], timeout: 120,
                                    environment: ["SENSORIUM_SHARED_STORAGE": "1"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("is on shared storage") && refused.stderr.contains("s.sqlite-wal")
                      && refused.stderr.contains("wait for the import to finish"), refused.stderr)
        XCTAssertEqual(refused.stdout, "")
    }
}

/// Outcomes of processes run at once, one slot each.
final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [ChildProcess.Outcome?]
    init(count: Int) { slots = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ outcome: ChildProcess.Outcome?) { lock.lock(); slots[i] = outcome; lock.unlock() }
    var all: [ChildProcess.Outcome?] { lock.lock(); defer { lock.unlock() }; return slots }
}
