import Foundation
import GRDB
import SensorKitModel

/// One recorded study in one SQLite file (WAL, GRDB migrations).
///
/// Tables: `meta`, `participant` (time zone), `device`, `stream` (one per participant ×
/// device × sensor), `chunk` (time-ordered pieces of a stream: row count, write-time and
/// sample-time bounds, the write-time and sample-time columns), `chunkColumn` (one BLOB per
/// schema column per chunk, see `ColumnCodec`), `recordingInterval`, `authorization`,
/// `deletion`. The index `chunk(stream, minWrite)` (the stream standing for participant,
/// device and sensor) serves write-time ranges; a query reads only the overlapping chunks.
///
/// One store object is one SQLite connection (a GRDB `DatabaseQueue`): a replay opens one
/// per worker thread. Opening an existing store writes nothing to it (a `DatabasePool`
/// would: GRDB creates and drops a table to make a WAL file), so a failed import leaves
/// the file byte for byte as it was.
public final class RecordedStore: Sendable {
    public let path: String
    /// Read-write, or read-only (`readOnly`, see `init`).
    package let pool: DatabaseQueue

    /// Rows per chunk for streams of plain numbers; nested-value streams use `valueChunkRows`.
    public static let chunkRows = 65_536
    public static let valueChunkRows = 2_048

    /// The `meta.format` value that marks a Sensorium store.
    public static let formatMark = "sensorium-recorded-store"

    /// Opens (creating and migrating when needed) the store at `path`. With `readOnly`, opens
    /// an existing store without writing to it (no migration, no WAL switch): what `inspect`
    /// and `run --recording` need, also for a file the user may not write. Throws
    /// `ImportError` for a file that is not a Sensorium store (never adds tables to it).
    public init(path: String, readOnly: Bool = false) throws {
        self.path = path
        do {
            pool = try RecordedStore.open(path, readOnly: readOnly)
        } catch let e as DatabaseError {
            throw RecordedStore.userFacing(e, path: path)
        }
    }

    /// What a SQLite failure on the store at `path` means for the user, and what to do.
    public static func userFacing(_ e: DatabaseError, path: String) -> StoreFormatError {
        let sqlite = "(SQLite: \(e.message ?? "\(e.resultCode)"))"
        switch e.resultCode.primaryResultCode {
        case .SQLITE_CANTOPEN:
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            return StoreFormatError(path: path, FileManager.default.fileExists(atPath: folder)
                ? "cannot open the store: check that \(folder) is writable \(sqlite)"
                : "cannot open the store: the folder \(folder) does not exist \(sqlite)")
        case .SQLITE_NOTADB: return StoreFormatError(path: path, "not a SQLite database (or an encrypted one); choose another file name \(sqlite)")
        case .SQLITE_CORRUPT: return StoreFormatError(path: path, "the store file is damaged; import the data again into a new store \(sqlite)")
        case .SQLITE_BUSY, .SQLITE_LOCKED: return StoreFormatError(path: path, "the store is in use by another process (another import?); wait for it to finish \(sqlite)")
        case .SQLITE_READONLY, .SQLITE_PERM: return StoreFormatError(path: path, "the store cannot be written here (read-only file or folder) \(sqlite)")
        case .SQLITE_FULL: return StoreFormatError(path: path, "the disk is full; free space and import again (nothing of this import was stored) \(sqlite)")
        case .SQLITE_IOERR: return StoreFormatError(path: path, "the disk reported an input/output error; check the disk and free space \(sqlite)")
        default: return StoreFormatError(path: path, "SQLite error \(sqlite)")
        }
    }

    /// Opens the connection `init` describes.
    private static func open(_ path: String, readOnly: Bool) throws -> DatabaseQueue {
        if readOnly || FileManager.default.fileExists(atPath: path) { try RecordedStore.checkIsStore(path) }
        if readOnly {
            return try RecordedStore.openReadOnly(path)
        }
        if !FileManager.default.fileExists(atPath: path) {
            // Fix the page size before WAL mode makes it permanent: big pages read BLOBs faster.
            var config = Configuration()
            config.prepareDatabase { db in try db.execute(sql: "PRAGMA page_size = 65536") }
            let q = try DatabaseQueue(path: path, configuration: config)
            try RecordedStore.migrator.migrate(q)
            try q.writeWithoutTransaction { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
            try q.close()
        }
        var config = Configuration()
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA cache_size = -16384")
        }
        let pool = try DatabaseQueue(path: path, configuration: config)
        let superseded = try pool.read { db in
            try db.tableExists("grdb_migrations") ? try RecordedStore.migrator.hasBeenSuperseded(db) : false
        }
        if superseded {
            try? pool.close()
            throw StoreFormatError(path: path, "written by a newer Sensorium (its schema has migrations this version does not know); use that version or import the data again")
        }
        let format = try pool.read { db in
            try db.tableExists("meta") ? try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'format'") : nil
        }
        if let format, format != "sensorium-recorded-store" {
            try? pool.close()
            throw StoreFormatError(path: path, "not a Sensorium recorded store (format '\(format)')")
        }
        try RecordedStore.migrator.migrate(pool)
        // A first import stopped by a crash (see `importing`) leaves the store in rollback mode.
        try pool.writeWithoutTransaction { db in
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            }
        }
        return pool
    }

    /// Throws unless `path` is an existing Sensorium store (a SQLite file whose `meta` table
    /// says `format = sensorium-recorded-store`). An empty file counts as a new store.
    package static func checkIsStore(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ImportError(file: path, "no such study store (make one with `sensorium import … --into \(path)`)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        guard size > 0 else { return }
        let header = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16)) ?? nil
        guard header == Data("SQLite format 3\u{0}".utf8) else {
            throw ImportError(file: path, "not a Sensorium study store (not a SQLite database); choose another file name")
        }
        let mark: String?
        do {
            let q = try openReadOnly(path)
            defer { try? q.close() }
            mark = try q.read { db in
                guard try db.tableExists("meta") else { return nil }
                return try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'format'")
            }
        } catch let e as DatabaseError where [ResultCode.SQLITE_BUSY, .SQLITE_LOCKED].contains(e.resultCode.primaryResultCode) {
            // Another process writes it: a store's first import holds it until it ends (`importing`).
            throw userFacing(e, path: path)
        } catch let e as DatabaseError {
            throw ImportError(file: path, "cannot be read as a SQLite database: \(e.message ?? "\(e.resultCode)")")
        }
        guard mark == formatMark else {
            throw ImportError(file: path, "not a Sensorium study store (a SQLite database without Sensorium's tables); Sensorium will not add its tables to it: choose another file name")
        }
    }

    /// A read-only connection. Reading a WAL store normally needs its `-shm` file; where that
    /// cannot be made (a read-only folder or medium) and no `-wal` holds unmerged pages, the
    /// file is opened as immutable (no locks, no side files).
    ///
    /// On shared storage (`SharedStorage.holds(path)`: NFS, SMB, Lustre, GPFS, BeeGFS, Ceph,
    /// …, or `SENSORIUM_SHARED_STORAGE=1`), where SQLite's WAL shared memory does not work
    /// across nodes (nor, on some, its file locks), the store is always opened as immutable
    /// — when no writer holds it: no `-journal` and no `-wal` with unmerged pages beside it
    /// (an empty `-wal` is what a finished import or a local replay leaves). A store being
    /// written there is refused, saying to wait. Many nodes then read it at once, and none
    /// writes a side file.
    package static func openReadOnly(_ path: String) throws -> DatabaseQueue {
        var config = Configuration()
        config.readonly = true
        if let kind = SharedStorage.holds(path) {
            if let side = beingWritten(path) {
                throw StoreFormatError(path: path, "the store is on shared storage (\(kind)) and is being written (\(URL(fileURLWithPath: path + side).lastPathComponent) beside it): "
                    + "many nodes read a store there without locks, so it must not change meanwhile; wait for the import to finish, then run again")
            }
            return try DatabaseQueue(path: immutableURI(path), configuration: config)
        }
        do {
            let q = try DatabaseQueue(path: path, configuration: config)
            _ = try q.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
            return q
        } catch let e as DatabaseError where [ResultCode.SQLITE_READONLY, .SQLITE_CANTOPEN].contains(e.resultCode.primaryResultCode)
                    && !FileManager.default.fileExists(atPath: path + "-wal") {
            return try DatabaseQueue(path: immutableURI(path), configuration: config)
        }
    }

    /// The side file that shows a writer holds the store at `path` ("-journal": a first
    /// import; "-wal" with pages in it: a later import), or nil.
    package static func beingWritten(_ path: String) -> String? {
        if FileManager.default.fileExists(atPath: path + "-journal") { return "-journal" }
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
        return wal > 0 ? "-wal" : nil
    }

    /// The SQLite URI that opens `path` as immutable (no locks, no side files).
    package static func immutableURI(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? absolute) + "?immutable=1"
    }

    package static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
            CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
            CREATE TABLE participant(
              id TEXT PRIMARY KEY NOT NULL,
              timeZone TEXT NOT NULL,
              timeZoneKnown INTEGER NOT NULL DEFAULT 1);
            CREATE TABLE device(
              id INTEGER PRIMARY KEY,
              participant TEXT NOT NULL REFERENCES participant(id),
              kind TEXT NOT NULL, name TEXT NOT NULL, model TEXT NOT NULL, systemName TEXT NOT NULL,
              systemVersion TEXT NOT NULL, productType TEXT NOT NULL,
              UNIQUE(participant, kind, name, model, systemName, systemVersion, productType));
            CREATE TABLE stream(
              id INTEGER PRIMARY KEY,
              participant TEXT NOT NULL REFERENCES participant(id),
              device INTEGER NOT NULL REFERENCES device(id),
              sensor TEXT NOT NULL,
              maxChunkSpan REAL NOT NULL DEFAULT 0,
              UNIQUE(participant, device, sensor));
            CREATE TABLE chunk(
              id INTEGER PRIMARY KEY,
              stream INTEGER NOT NULL REFERENCES stream(id),
              rows INTEGER NOT NULL,
              minWrite REAL NOT NULL, maxWrite REAL NOT NULL,
              minTime REAL, maxTime REAL,
              writeTimes BLOB NOT NULL, times BLOB NOT NULL);
            CREATE INDEX chunk_by_write ON chunk(stream, minWrite);
            CREATE TABLE chunkColumn(
              chunk INTEGER NOT NULL REFERENCES chunk(id) ON DELETE CASCADE,
              ordinal INTEGER NOT NULL,
              name TEXT NOT NULL,
              kind TEXT NOT NULL,
              present BLOB,
              data BLOB NOT NULL,
              PRIMARY KEY(chunk, ordinal));
            CREATE TABLE recordingInterval(
              participant TEXT NOT NULL REFERENCES participant(id),
              sensor TEXT NOT NULL,
              device INTEGER REFERENCES device(id),
              afterTime REAL NOT NULL, throughTime REAL NOT NULL,
              stakeholder TEXT NOT NULL);
            CREATE UNIQUE INDEX recordingInterval_once
              ON recordingInterval(participant, sensor, ifnull(device, -1), afterTime, throughTime, stakeholder);
            CREATE TABLE authorization(
              participant TEXT NOT NULL REFERENCES participant(id),
              sensor TEXT NOT NULL,
              at REAL NOT NULL,
              status TEXT NOT NULL,
              UNIQUE(participant, sensor, at, status));
            CREATE TABLE deletion(
              participant TEXT NOT NULL REFERENCES participant(id),
              sensor TEXT NOT NULL,
              device INTEGER REFERENCES device(id),
              afterTime REAL NOT NULL, throughTime REAL NOT NULL,
              at REAL NOT NULL,
              reason INTEGER NOT NULL);
            CREATE UNIQUE INDEX deletion_once
              ON deletion(participant, sensor, ifnull(device, -1), afterTime, throughTime, at, reason);
            INSERT INTO meta(key, value) VALUES ('format', 'sensorium-recorded-store');
            """)
        }
        // Chunk encoding 2 (ColumnCodec): tagged presence masks; older chunks keep 1.
        m.registerMigration("v2") { db in
            try db.execute(sql: "ALTER TABLE chunk ADD COLUMN encoding INTEGER NOT NULL DEFAULT 1")
        }
        return m
    }

    /// Runs `body` in one write transaction: everything it adds lands, or (when it throws)
    /// nothing does. Buffered rows are flushed before the commit.
    ///
    /// Into a store that holds no samples yet (a study's first import, usually the largest),
    /// the transaction runs under a rollback journal (`withRollbackJournal`): each page is
    /// written once, where the WAL writes it twice (log, then checkpoint, the checkpoint
    /// after every row is parsed). Into a store that holds samples it runs in WAL mode, so
    /// that replays keep reading the stored samples while it runs, and a failed import leaves
    /// the file byte for byte as it was.
    public func importing<T>(progress: ImportProgress? = nil, _ body: (ImportSession) throws -> T) throws -> (T, ImportStats) {
        let holdsSamples = try pool.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM chunk)") ?? false }
        if holdsSamples || pool.configuration.readonly { return try importTransaction(progress: progress, body) }
        return try withRollbackJournal { try importTransaction(progress: progress, body) }
    }

    /// Runs `body` with the store in rollback-journal mode (`journal_mode = DELETE`), then
    /// switches it back to WAL, whether `body` threw or not. Where the switch cannot be made
    /// (another connection has the store open), `body` runs in WAL mode. Should switching
    /// back fail, the store stays valid in rollback mode and the next read-write open
    /// switches it (`open`).
    private func withRollbackJournal<T>(_ body: () throws -> T) throws -> T {
        // SQLite refuses to leave WAL mode (busy) while another connection has the store open.
        let mode = try? pool.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
        guard mode == "delete" else { return try body() }
        defer { _ = try? pool.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") } }
        return try body()
    }

    /// `importing`'s transaction.
    private func importTransaction<T>(progress: ImportProgress?, _ body: (ImportSession) throws -> T) throws -> (T, ImportStats) {
        try pool.write { db in
            let session = try ImportSession(db: db, progress: progress)
            let value = try body(session)
            try session.flushAll()
            progress?.finish()
            return (value, session.stats)
        }
    }

    /// Reads everything a replay needs (participants, devices, streams, timelines).
    public func source() throws -> RecordedSource { try RecordedSource(store: self) }

    /// A fingerprint of every table's content (for tests: a failed import leaves it unchanged).
    public func contentDigest() throws -> String {
        try pool.read { db in
            var h = StableDigest()
            for table in ["meta", "participant", "device", "stream", "chunk", "chunkColumn", "recordingInterval", "authorization", "deletion"] {
                h.add(table)
                let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2")
                h.add(String(rows.count))
                for row in rows { h.add(row.description) }
            }
            return h.hex
        }
    }

    /// Checkpoints the WAL into the main file (after a large import).
    public func checkpoint() throws {
        try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }

    public func close() throws { try pool.close() }
}

/// A store this Sensorium cannot read (written by a newer version, or not a store at all).
public struct StoreFormatError: Error, CustomStringConvertible {
    public var path: String
    public var message: String
    package init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}

/// A 64-bit FNV-1a digest of a sequence of strings (each followed by a separator byte):
/// stable across runs and machines, for fingerprints, not for security.
public struct StableDigest: Sendable {
    package var state: UInt64 = 0xcbf2_9ce4_8422_2325
    public init() {}
    public mutating func add(_ s: String) {
        for b in s.utf8 { state = (state ^ UInt64(b)) &* 0x100_0000_01b3 }
        state = (state ^ 0xFF) &* 0x100_0000_01b3
    }
    public mutating func add(_ bytes: Data) {
        for b in bytes { state = (state ^ UInt64(b)) &* 0x100_0000_01b3 }
        state = (state ^ 0xFF) &* 0x100_0000_01b3
    }
    public var hex: String { String(state, radix: 16) }
}

/// The write side of one import transaction.
public final class ImportSession {
    package let db: Database
    public package(set) var stats = ImportStats()
    package let progress: ImportProgress?
    private var participants: Set<String> = []
    private var deviceIDs: [String: [SRDevice: Int64]] = [:]
    private var buffers: [StreamKey: StreamBuffer] = [:]
    /// Streams in the order they were opened (flush order is deterministic).
    private var bufferOrder: [StreamKey] = []
    /// How the summary names each open stream (by stream id).
    private var labels: [Int64: ImportStats.StreamLabel] = [:]
    /// Streams whose rows are refused, not stored (negative ids, never in the store), and why.
    private var refusedStreams: [Int64: String] = [:]

    package struct StreamKey: Hashable {
        var participant: String
        var device: SRDevice
        var sensor: Sensor
    }

    /// Chunks with this id or above were written by this import: rows matching them are
    /// duplicates inside the input (two files holding the same samples), not "already stored".
    private let firstNewChunk: Int64

    package init(db: Database, progress: ImportProgress?) throws {
        self.db = db
        self.progress = progress
        firstNewChunk = (try Int64.fetchOne(db, sql: "SELECT max(id) FROM chunk") ?? 0) + 1
    }

    // MARK: Metadata

    /// Adds a participant, or (when it exists) updates a time zone that was not known.
    public func addParticipant(_ p: RecordedParticipant) throws {
        if let row = try Row.fetchOne(db, sql: "SELECT timeZone, timeZoneKnown FROM participant WHERE id = ?", arguments: [p.id]) {
            let known: Bool = row["timeZoneKnown"]
            let zone: String = row["timeZone"]
            if p.timeZoneKnown && (!known || zone != p.timeZone) {
                if known && zone != p.timeZone {
                    stats.warn("participant '\(p.id)': time zone changed from \(zone) to \(p.timeZone)")
                }
                try db.execute(sql: "UPDATE participant SET timeZone = ?, timeZoneKnown = 1 WHERE id = ?", arguments: [p.timeZone, p.id])
                stats.metadataAdded += 1
            }
        } else {
            try db.execute(sql: "INSERT INTO participant(id, timeZone, timeZoneKnown) VALUES (?, ?, ?)",
                           arguments: [p.id, p.timeZone, p.timeZoneKnown])
            stats.metadataAdded += 1
        }
        participants.insert(p.id)
        stats.participants.insert(p.id)
    }

    package func ensureParticipant(_ id: String) throws {
        if participants.contains(id) { return }
        if try Bool.fetchOne(db, sql: "SELECT 1 FROM participant WHERE id = ?", arguments: [id]) == nil {
            try addParticipant(RecordedParticipant(id: id, timeZone: "UTC", timeZoneKnown: false))
            stats.warn("participant '\(id)': no time zone in the input, UTC assumed (use --timezone)")
        }
        participants.insert(id)
        stats.participants.insert(id)
    }

    /// The store's id of `device` for `participant`, adding it when new.
    @discardableResult
    public func addDevice(participant: String, _ device: SRDevice) throws -> Int64 {
        if let id = deviceIDs[participant]?[device] { return id }
        try ensureParticipant(participant)
        let args: StatementArguments = [participant, device.kind.rawValue, device.name, device.model, device.systemName,
                                        device.systemVersion, device.productType]
        let id: Int64
        if let existing = try Int64.fetchOne(db, sql: """
            SELECT id FROM device WHERE participant = ? AND kind = ? AND name = ? AND model = ? AND systemName = ?
              AND systemVersion = ? AND productType = ?
            """, arguments: args) {
            id = existing
        } else {
            try db.execute(sql: """
                INSERT INTO device(participant, kind, name, model, systemName, systemVersion, productType)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: args)
            id = db.lastInsertedRowID
            stats.metadataAdded += 1
        }
        deviceIDs[participant, default: [:]][device] = id
        return id
    }

    public func addRecordingInterval(participant: String, _ r: RecordingInterval) throws {
        try ensureParticipant(participant)
        let dev = try r.device.map { try addDevice(participant: participant, $0) }
        try db.execute(sql: """
            INSERT OR IGNORE INTO recordingInterval(participant, sensor, device, afterTime, throughTime, stakeholder)
            VALUES (?, ?, ?, ?, ?, ?)
            """, arguments: [participant, r.sensor.rawValue, dev, r.after, r.through, r.stakeholder])
        stats.metadataAdded += db.changesCount
    }

    public func addAuthorization(participant: String, _ a: AuthorizationChange) throws {
        try ensureParticipant(participant)
        try db.execute(sql: "INSERT OR IGNORE INTO authorization(participant, sensor, at, status) VALUES (?, ?, ?, ?)",
                       arguments: [participant, a.sensor.rawValue, a.at, a.status.name])
        stats.metadataAdded += db.changesCount
    }

    public func addDeletion(participant: String, _ d: DeletionEvent) throws {
        try ensureParticipant(participant)
        let dev = try d.device.map { try addDevice(participant: participant, $0) }
        try db.execute(sql: """
            INSERT OR IGNORE INTO deletion(participant, sensor, device, afterTime, throughTime, at, reason)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [participant, d.sensor.rawValue, dev, d.range.after, d.range.through, d.at, d.reason.rawValue])
        stats.metadataAdded += db.changesCount
    }

    public func setMeta(_ key: String, _ value: String) throws {
        try db.execute(sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       arguments: [key, value])
    }

    // MARK: Samples

    /// Appends rows (any order; exact duplicates are dropped) to a stream.
    public func append(participant: String, device: SRDevice, _ batch: SampleBatch) throws {
        guard batch.count > 0 else { return }
        let buf = try buffer(participant: participant, device: device, sensor: batch.sensor)
        try buf.append(batch)
        stats.rowsRead += batch.count
        counts(buf.streamID, batch.sensor) { $0.rowsRead += batch.count }
        if buf.count >= buf.capacity { try flush(buf) }
    }

    /// Appends rows made of whole write batches (rows sharing a write time never continue
    /// in a later call). A batch of about a chunk's size is stored as its own chunk when
    /// nothing of the stream is buffered, without a copy; otherwise as `append`.
    package func appendWholeBatches(participant: String, device: SRDevice, _ batch: SampleBatch) throws {
        guard batch.count > 0 else { return }
        let buf = try buffer(participant: participant, device: device, sensor: batch.sensor)
        if buf.count == 0 && batch.count >= buf.capacity / 2 && batch.count <= buf.capacity * 2 {
            stats.rowsRead += batch.count
            counts(buf.streamID, batch.sensor) { $0.rowsRead += batch.count }
            try storeChunk(batch, stream: buf.streamID, knownUnsorted: false)
        } else {
            try append(participant: participant, device: device, batch)
        }
    }

    /// The open buffer of a stream (importers fill its columns directly). A stream from a
    /// device kind the sensor does not come from (the catalogue's devices) gets a buffer whose
    /// rows are refused when flushed: counted by reason in the summary, never stored (a fetch
    /// could not see them), and named in a warning.
    package func buffer(participant: String, device: SRDevice, sensor: Sensor) throws -> StreamBuffer {
        let key = StreamKey(participant: participant, device: device, sensor: sensor)
        if let b = buffers[key] { return b }
        guard sensor.deviceKinds.contains(device.kind) else {
            let id = -Int64(refusedStreams.count + 1)
            let kinds = sensor.deviceKinds.map(\.rawValue).joined(separator: " and ")
            let reason = "a \(device.kind.rawValue) does not record \(sensor.rawValue) (SensorKit: \(kinds) only)"
            refusedStreams[id] = reason
            labels[id] = ImportStats.StreamLabel(participant: participant, sensor: sensor, device: device)
            stats.warn("participant '\(participant)': \(sensor.rawValue) rows from the \(device.kind.rawValue) '\(ImportError.excerpt(device.name))' "
                       + "(\(ImportError.excerpt(device.productType))) refused: \(reason)")
            let b = StreamBuffer(streamID: id, sensor: sensor)
            buffers[key] = b
            bufferOrder.append(key)
            return b
        }
        let dev = try addDevice(participant: participant, device)
        try db.execute(sql: "INSERT OR IGNORE INTO stream(participant, device, sensor) VALUES (?, ?, ?)",
                       arguments: [participant, dev, sensor.rawValue])
        let id = try Int64.fetchOne(db, sql: "SELECT id FROM stream WHERE participant = ? AND device = ? AND sensor = ?",
                                    arguments: [participant, dev, sensor.rawValue])!
        let b = StreamBuffer(streamID: id, sensor: sensor)
        buffers[key] = b
        bufferOrder.append(key)
        labels[id] = ImportStats.StreamLabel(participant: participant, sensor: sensor, device: device)
        return b
    }

    /// The counts of stream `id` in the summary.
    private func counts(_ id: Int64, _ sensor: Sensor, _ change: (inout ImportStats.StreamCounts) -> Void) {
        let label = labels[id] ?? ImportStats.StreamLabel(participant: "?", sensor: sensor, device: SRDevice(name: "", model: "?", systemName: "", systemVersion: "", productType: "", kind: .phone))
        change(&stats.byStream[label, default: .init()])
    }

    /// Called by importers after filling a buffer's columns directly.
    package func rowsAdded(_ n: Int, to buf: StreamBuffer) throws {
        stats.rowsRead += n
        counts(buf.streamID, buf.sensor) { $0.rowsRead += n }
        if buf.count >= buf.capacity { try flush(buf) }
    }

    /// Writes every open buffer (the end of a file group or of the import).
    public func flushAll() throws {
        for key in bufferOrder { if let b = buffers[key] { try flush(b, final: true) } }
        buffers.removeAll()
        bufferOrder.removeAll()
    }

    package func flush(_ buf: StreamBuffer, final: Bool = false) throws {
        guard buf.count > 0 else { return }
        // Keep the last write-time run for the next chunk, so that one write batch is
        // never split across chunks of one import (its duplicates stay together).
        let (batch, sorted) = buf.take(keepingLastRun: !final)
        try storeChunk(batch, stream: buf.streamID, knownUnsorted: !sorted)
    }

    /// Stores `batch` as one chunk of `stream`: sorted by write time (then sample time),
    /// without its exact duplicates, without rows the store already holds.
    /// `knownUnsorted`: the caller saw rows out of write-time order (skips the check).
    private func storeChunk(_ batch: SampleBatch, stream: Int64, knownUnsorted: Bool) throws {
        if let reason = refusedStreams[stream] {
            counts(stream, batch.sensor) { $0.refused[reason, default: 0] += batch.count }
            return
        }
        var batch = batch
        if knownUnsorted || !isSortedByWrite(batch) { batch = sortByWriteThenTime(batch) }
        let (unique, dropped) = RowDedup.dropDuplicates(batch)
        stats.duplicatesInInput += dropped
        counts(stream, batch.sensor) { $0.duplicatesInInput += dropped }
        batch = unique
        batch = try dropStored(batch, stream: stream)
        guard batch.count > 0 else { return }
        try writeChunk(batch, stream: stream)
        progress?.tick()
    }

    private func isSortedByWrite(_ b: SampleBatch) -> Bool {
        b.writeTimes.isSorted
    }

    private func sortByWriteThenTime(_ b: SampleBatch) -> SampleBatch {
        let w = b.writeTimes.array
        let idx = (0..<b.count).sorted { i, j in
            let wi = w[i], wj = w[j]
            if wi != wj { return wi < wj }
            let ti = b.times[i], tj = b.times[j]
            if ti != tj && !(ti.isNaN && tj.isNaN) { return ti < tj || (tj.isNaN && !ti.isNaN) }
            return i < j
        }
        return b.gather(idx)
    }

    /// Drops rows equal to rows the stream holds: stored before this import (re-imported
    /// files: "already stored"), or stored earlier in this import (overlapping input files:
    /// duplicates in the input).
    private func dropStored(_ batch: SampleBatch, stream: Int64) throws -> SampleBatch {
        let lo = batch.writeTimes.first!, hi = batch.writeTimes.last!
        let span = try Double.fetchOne(db, sql: "SELECT maxChunkSpan FROM stream WHERE id = ?", arguments: [stream]) ?? 0
        let ids = try Int64.fetchAll(db, sql: """
            SELECT id FROM chunk WHERE stream = ? AND minWrite >= ? AND minWrite <= ? AND maxWrite >= ? ORDER BY minWrite, id
            """, arguments: [stream, lo - span, hi, lo])
        guard !ids.isEmpty else { return batch }
        var before: [SampleBatch] = [], during: [SampleBatch] = []
        for id in ids {
            var c = try RecordedSource.decodeChunk(db, id: id, sensor: batch.sensor)
            // Only the rows inside [lo, hi] can match.
            let a = c.writeTimes.lowerBound(lo), b = c.writeTimes.upperBound(hi)
            if a > 0 || b < c.count { c = c.slice(a..<b) }
            guard c.count > 0 else { continue }
            if id >= firstNewChunk { during.append(c) } else { before.append(c) }
        }
        var kept = batch
        if !before.isEmpty {
            let (rest, dropped) = RowDedup.dropRows(of: kept, presentIn: before)
            stats.duplicatesAlreadyStored += dropped
            counts(stream, batch.sensor) { $0.duplicatesAlreadyStored += dropped }
            kept = rest
        }
        if !during.isEmpty && kept.count > 0 {
            let (rest, dropped) = RowDedup.dropRows(of: kept, presentIn: during)
            stats.duplicatesInInput += dropped
            counts(stream, batch.sensor) { $0.duplicatesInInput += dropped }
            kept = rest
        }
        return kept
    }

    private func writeChunk(_ batch: SampleBatch, stream: Int64) throws {
        let n = batch.count
        let minW = batch.writeTimes.first!, maxW = batch.writeTimes.last!
        var minT = Double.infinity, maxT = -Double.infinity
        for t in batch.times where !t.isNaN { minT = min(minT, t); maxT = max(maxT, t) }
        var w1 = ByteWriter(), w2 = ByteWriter()
        ColumnCodec.encodeDoubles(batch.writeTimes.array, into: &w1)
        ColumnCodec.encodeDoubles(batch.times, into: &w2)
        let insertChunk = try db.cachedStatement(sql: """
            INSERT INTO chunk(stream, rows, minWrite, maxWrite, minTime, maxTime, writeTimes, times, encoding)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try insertChunk.execute(arguments: [stream, n, minW, maxW, minT.isFinite ? minT : nil, maxT.isFinite ? maxT : nil,
                                            Data(w1.bytes), Data(w2.bytes), ColumnCodec.chunkEncoding])
        let chunkID = db.lastInsertedRowID
        let insertColumn = try db.cachedStatement(sql: """
            INSERT INTO chunkColumn(chunk, ordinal, name, kind, present, data) VALUES (?, ?, ?, ?, ?, ?)
            """)
        for (i, c) in batch.columns.enumerated() {
            let present = ColumnCodec.encodePresent(c.present).map { Data($0) }
            let enc = Data(ColumnCodec.encode(c.data, times: batch.times))
            try insertColumn.execute(arguments: [chunkID, i, c.name, c.data.kind.rawValue, present, enc])
        }
        try db.execute(sql: "UPDATE stream SET maxChunkSpan = max(maxChunkSpan, ?) WHERE id = ?", arguments: [maxW - minW, stream])
        stats.rowsStored += n
        counts(stream, batch.sensor) { $0.rowsStored += n }
        stats.chunks += 1
    }

}

/// The rows of one stream waiting to become a chunk, column by column.
package final class StreamBuffer {
    package let streamID: Int64
    package let sensor: Sensor
    package let capacity: Int
    package var writeTimes = WriteTimes()
    package var times: [Double] = []
    package var columns: [ColumnBuilder]
    /// False once a row arrived out of write-time order.
    package var sorted = true

    package init(streamID: Int64, sensor: Sensor) {
        self.streamID = streamID
        self.sensor = sensor
        columns = sensor.info.columnFields.map { ColumnBuilder(name: $0.name, kind: $0.type.columnKind) }
        capacity = columns.contains { $0.kind == .value } ? RecordedStore.valueChunkRows : RecordedStore.chunkRows
        reserve()
    }

    private func reserve() {
        times.reserveCapacity(capacity + 16)
        for c in columns { c.reserve(capacity + 16) }
    }

    package var count: Int { times.count }

    package func column(_ name: String) -> Int? { columns.firstIndex { $0.name == name } }

    /// Call after appending one row's write time (keeps the order flag).
    @inline(__always) package func noteWrite(_ w: Double) {
        if let last = writeTimes.last, w < last { sorted = false }
    }

    package func append(_ b: SampleBatch) throws {
        if let first = b.writeTimes.first { noteWrite(first) }
        if !b.writeTimes.isSorted { sorted = false }
        writeTimes += b.writeTimes
        times += b.times
        for c in columns {
            guard let src = b.column(c.name) else {
                for _ in 0..<b.count { c.appendMissing() }
                continue
            }
            c.append(src)
        }
    }

    /// Appends rows `rows` of `b`, as `append(b.slice(rows))` does but without making the slice
    /// (plain number columns are copied once).
    package func append(_ b: SampleBatch, rows: Range<Int>) throws {
        let w = b.writeTimes.slice(rows)
        if let first = w.first { noteWrite(first) }
        if !w.isSorted { sorted = false }
        writeTimes += w
        times += b.times[rows]
        for c in columns {
            guard let src = b.column(c.name) else {
                c.appendMissing(count: rows.count)
                continue
            }
            c.append(src, rows: rows)
        }
    }

    package func putBack(_ b: SampleBatch) {
        writeTimes += b.writeTimes
        times += b.times
        for c in columns { c.append(b.column(c.name)!) }
        sorted = true
    }

    /// The buffered rows as a batch, and whether they were in write-time order. With
    /// `keepingLastRun`, rows in order, and more than one write time, the rows of the last
    /// write time stay buffered (a write batch that may go on is never split); otherwise
    /// the buffer is empty afterwards.
    package func take(keepingLastRun: Bool) -> (batch: SampleBatch, sorted: Bool) {
        let wasSorted = sorted
        sorted = true
        guard keepingLastRun, wasSorted, count > 1 else { return (take(), wasSorted) }
        let cut = writeTimes.rows(ofRun: writeTimes.runCount - 1).lowerBound
        guard cut > 0 else { return (take(), wasSorted) }
        // The last run's rows move out (copied); the others are taken as they are.
        let n = count - cut
        let tail = SampleBatch(sensor: sensor, writeTimes: writeTimes.slice(cut..<count), times: Array(times[cut...]),
                               columns: columns.map { $0.removeLast(n) })
        writeTimes = writeTimes.slice(0..<cut)
        times.removeLast(n)
        let batch = take()
        putBack(tail)
        return (batch, wasSorted)
    }

    /// The buffered rows as a batch; the buffer is empty afterwards.
    package func take() -> SampleBatch {
        let b = SampleBatch(sensor: sensor, writeTimes: writeTimes, times: times, columns: columns.map { $0.take() })
        writeTimes = WriteTimes()
        times = []
        reserve()
        return b
    }
}

/// One column being filled.
package final class ColumnBuilder {
    package let name: String
    package let kind: ColumnKind
    package var d: [Double] = []
    package var i: [Int64] = []
    package var b: [Bool] = []
    package var s: [String] = []
    package var v: [FieldValue] = []
    package var present: [Bool]? = nil

    package init(name: String, kind: ColumnKind) {
        self.name = name
        self.kind = kind
    }

    package var count: Int {
        switch kind {
        case .double: d.count
        case .int: i.count
        case .bool: b.count
        case .string: s.count
        case .value: v.count
        }
    }

    package func reserve(_ n: Int) {
        switch kind {
        case .double: d.reserveCapacity(n)
        case .int: i.reserveCapacity(n)
        case .bool: b.reserveCapacity(n)
        case .string: s.reserveCapacity(n)
        case .value: v.reserveCapacity(min(n, 4096))
        }
    }

    @inline(__always) package func markPresent() {
        if present != nil { present!.append(true) }
    }

    package func markMissing() {
        if present == nil { present = [Bool](repeating: true, count: count) }
        present!.append(false)
    }

    /// A missing optional value (its slot holds a neutral value).
    package func appendMissing() {
        markMissing()
        switch kind {
        case .double: d.append(.nan)
        case .int: i.append(0)
        case .bool: b.append(false)
        case .string: s.append("")
        case .value: v.append(.null)
        }
    }

    /// `n` missing values at once.
    package func appendMissing(count n: Int) {
        guard n > 0 else { return }
        if present == nil { present = [Bool](repeating: true, count: count) }
        present!.append(contentsOf: repeatElement(false, count: n))
        switch kind {
        case .double: d.append(contentsOf: repeatElement(.nan, count: n))
        case .int: i.append(contentsOf: repeatElement(0, count: n))
        case .bool: b.append(contentsOf: repeatElement(false, count: n))
        case .string: s.append(contentsOf: repeatElement("", count: n))
        case .value: v.append(contentsOf: repeatElement(.null, count: n))
        }
    }

    @inline(__always) package func appendDouble(_ x: Double) { markPresent(); d.append(x) }
    @inline(__always) package func appendInt(_ x: Int64) { markPresent(); i.append(x) }
    package func appendBool(_ x: Bool) { markPresent(); b.append(x) }
    package func appendString(_ x: String) { markPresent(); s.append(x) }
    package func appendValue(_ x: FieldValue) { markPresent(); v.append(x) }

    package func append(_ c: Column) {
        let before = count
        switch c.data {
        case .double(let x) where kind == .double: d += x
        case .int(let x) where kind == .int: i += x
        case .intRuns(let x) where kind == .int: i += x
        case .bool(let x) where kind == .bool: b += x
        case .string(let x) where kind == .string: s += x
        case .value(let x) where kind == .value: v += x
        default:
            for _ in 0..<c.count { appendMissing() }
            return
        }
        if let p = c.present, p.contains(false) {
            if present == nil { present = [Bool](repeating: true, count: before) }
            present! += p
        } else if present != nil {
            present! += [Bool](repeating: true, count: c.count)
        }
    }

    /// Appends values `rows` of `c` (as `append(c.slice(rows))`; one copy when they are plain
    /// numbers all present).
    package func append(_ c: Column, rows: Range<Int>) {
        switch c.data {
        case .double(let x) where kind == .double && c.present == nil: d += x[rows]
        case .int(let x) where kind == .int && c.present == nil: i += x[rows]
        default:
            append(c.slice(rows))
            return
        }
        if present != nil { present! += repeatElement(true, count: rows.count) }
    }

    /// Removes the last `n` values and returns them as a column (copying only those).
    package func removeLast(_ n: Int) -> Column {
        let from = count - n
        let data: ColumnData
        switch kind {
        case .double: data = .double(Array(d[from...])); d.removeLast(n)
        case .int: data = .int(Array(i[from...])); i.removeLast(n)
        case .bool: data = .bool(Array(b[from...])); b.removeLast(n)
        case .string: data = .string(Array(s[from...])); s.removeLast(n)
        case .value: data = .value(Array(v[from...])); v.removeLast(n)
        }
        var p: [Bool]? = nil
        if present != nil {
            p = Array(present![from...])
            present!.removeLast(n)
        }
        return Column(name: name, data: data, present: p?.contains(false) == true ? p : nil)
    }

    package func take() -> Column {
        let data: ColumnData
        switch kind {
        case .double: data = .double(d); d = []
        case .int: data = .int(i); i = []
        case .bool: data = .bool(b); b = []
        case .string: data = .string(s); s = []
        case .value: data = .value(v); v = []
        }
        let p = present
        present = nil
        return Column(name: name, data: data, present: p?.contains(false) == true ? p : nil)
    }
}
