import Foundation
import GRDB
import XCTest
import SensorKitModel
@testable import StudyStore
@testable import Importers

/// A store's first import (no samples stored yet) runs under a rollback journal, so that
/// its pages are written once; every later import runs in WAL mode. Either way the store
/// is a WAL store again afterwards, and a failed import stores nothing.
extension RecordedImportTests {
    func journalMode(_ store: RecordedStore) throws -> String? {
        try store.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
    }

    func testFirstImportRunsUnderARollbackJournalAndLaterOnesInWAL() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        let (folder, rows) = try mhcFixture(dir)
        let store = try RecordedStore(path: path)
        XCTAssertEqual(try journalMode(store), "wal", "a new store is a WAL store")
        var modeDuring: String?
        let (_, first) = try store.importing { session in
            modeDuring = try String.fetchOne(session.db, sql: "PRAGMA journal_mode")
            try MHCFormat.importFiles(try RecordedStore.files([folder], suffixes: [".csv"]), participant: "p1", session: session, progress: nil)
        }
        XCTAssertEqual(modeDuring, "delete", "the first import writes its pages once")
        XCTAssertEqual(first.rowsStored, rows)
        XCTAssertEqual(try journalMode(store), "wal", "WAL again after the first import")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-journal"), "no rollback journal left")
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        XCTAssertEqual(wal, 0, "the first import's pages went to the store file, not to the log")

        // The store holds samples now: the next import runs in WAL mode.
        let more = dir.appendingPathComponent("more")
        try writeFile(more, "heart.csv", "timestamp,value,confidence,device\n\(Self.t0 + 9_000),61,3,Watch\n")
        let (_, second) = try store.importing { session in
            modeDuring = try String.fetchOne(session.db, sql: "PRAGMA journal_mode")
            try MHCFormat.importFiles([more.appendingPathComponent("heart.csv").path], participant: "p1", session: session, progress: nil)
        }
        XCTAssertEqual(modeDuring, "wal")
        XCTAssertEqual(second.rowsStored, 1)
        try store.close()
    }

    /// A failed first import stores nothing (the same content as before it) and leaves a WAL store.
    func testFailedFirstImportStoresNothing() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        let (folder, _) = try mhcFixture(dir)
        let store = try RecordedStore(path: path)
        let before = try store.contentDigest()
        let bad = dir.appendingPathComponent("bad")
        try writeFile(bad, "heart.csv", "timestamp,value,confidence,device\n\(Self.t0),sixty,3,Watch\n")
        // Good files first, so that the transaction holds stored chunks when the bad line comes.
        let files = try RecordedStore.files([folder], suffixes: [".csv"]) + [bad.appendingPathComponent("heart.csv").path]
        XCTAssertThrowsError(try store.importing { session in
            try MHCFormat.importFiles(files, participant: "p1", session: session, progress: nil)
        }) { XCTAssertTrue("\($0)".contains("heart.csv"), "\($0)") }
        XCTAssertEqual(try store.contentDigest(), before, "nothing of the failed import was stored")
        XCTAssertEqual(try journalMode(store), "wal")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-journal"))
        try store.close()
        // A new import of the good files then stores them (the store is still a first-import store).
        let reopened = try RecordedStore(path: path)
        XCTAssertGreaterThan(try reopened.importData(ImportRequest(format: .mhcCSV, sources: [folder], participant: "p1", progressBar: false)).rowsStored, 0)
        try reopened.close()
    }

    /// With another connection open, SQLite will not leave WAL mode: the first import then
    /// runs in WAL mode and still stores everything.
    func testFirstImportWithAReaderOpenRunsInWAL() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        let (folder, rows) = try mhcFixture(dir)
        let store = try RecordedStore(path: path)
        let reader = try RecordedStore(path: path, readOnly: true)
        _ = try reader.source()
        var modeDuring: String?
        let (_, stats) = try store.importing { session in
            modeDuring = try String.fetchOne(session.db, sql: "PRAGMA journal_mode")
            try MHCFormat.importFiles(try RecordedStore.files([folder], suffixes: [".csv"]), participant: "p1", session: session, progress: nil)
        }
        XCTAssertEqual(modeDuring, "wal")
        XCTAssertEqual(stats.rowsStored, rows)
        try reader.close()
        try store.close()
    }

    /// A store left in rollback mode (a first import stopped by a crash) is a WAL store again
    /// when next opened to be written.
    func testAStoreLeftInRollbackModeIsSwitchedBackToWAL() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        try RecordedStore(path: path).close()
        let raw = try DatabaseQueue(path: path)
        XCTAssertEqual(try raw.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }, "delete")
        try raw.close()
        let store = try RecordedStore(path: path)
        XCTAssertEqual(try journalMode(store), "wal")
        try store.close()
    }

    /// While a first import holds the store (rollback mode, exclusive lock), a reader is told
    /// the store is in use and to wait, not that the file is no database.
    func testAStoreHeldByAFirstImportIsReportedInUse() throws {
        let dir = try recordedTempDir(self)
        let path = dir.appendingPathComponent("s.sqlite").path
        try RecordedStore(path: path).close()
        let writer = try DatabaseQueue(path: path)
        _ = try writer.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN EXCLUSIVE")
            defer { try? db.execute(sql: "ROLLBACK") }
            for readOnly in [true, false] {
                XCTAssertThrowsError(try RecordedStore(path: path, readOnly: readOnly)) { error in
                    XCTAssertTrue("\(error)".contains("in use by another process"), "\(error)")
                    XCTAssertFalse("\(error)".contains("cannot be read as a SQLite database"), "\(error)")
                }
            }
        }
        try writer.close()
    }
}
