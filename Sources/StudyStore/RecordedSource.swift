import Foundation
import GRDB
import SensorKitModel

/// A recorded study as a `SampleSource`: answers "samples of sensor S on device D written
/// in (after, through]" by reading only the chunks that overlap the range.
///
/// The participants, devices, time zones, recording intervals, authorization timeline and
/// deletion records are read once, when the source is made; samples are read on demand.
public final class RecordedSource: SampleSource, @unchecked Sendable {
    public let store: RecordedStore
    public let participants: [RecordedParticipant]
    private let devicesByParticipant: [String: [SRDevice]]
    private let streams: [String: [SRDevice: [Sensor: StreamRef]]]
    private let intervals: [String: [RecordingInterval]]
    private let authorizationChanges: [String: [AuthorizationChange]]
    private let deletionEvents: [String: [DeletionEvent]]
    private let meta: [String: String]
    /// Write-time span of every stored row (Unix seconds), nil when there are none.
    public let dataSpan: TimeRange?
    private let cache = ChunkCache(capacity: 6)

    struct StreamRef {
        var id: Int64
        var maxChunkSpan: Double
    }

    public func holdsAnyData(participant: String, sensor: Sensor) -> Bool? {
        streams[participant]?.values.contains { $0[sensor] != nil } ?? false
    }

    public func streamSummaries(participant: String) throws -> [StreamSummary]? {
        try streamSummaries(of: participant)
    }

    init(store: RecordedStore) throws {
        self.store = store
        var participants: [RecordedParticipant] = []
        var devices: [String: [SRDevice]] = [:]
        var deviceByID: [Int64: SRDevice] = [:]
        var streams: [String: [SRDevice: [Sensor: StreamRef]]] = [:]
        var intervals: [String: [RecordingInterval]] = [:]
        var auth: [String: [AuthorizationChange]] = [:]
        var dels: [String: [DeletionEvent]] = [:]
        var meta: [String: String] = [:]
        var span: TimeRange?
        try store.pool.read { db in
            for row in try Row.fetchAll(db, sql: "SELECT key, value FROM meta") { meta[row["key"]] = row["value"] }
            for row in try Row.fetchAll(db, sql: "SELECT id, timeZone, timeZoneKnown FROM participant ORDER BY rowid") {
                participants.append(RecordedParticipant(id: row["id"], timeZone: row["timeZone"], timeZoneKnown: row["timeZoneKnown"]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY participant, kind = 'watch', id") {
                let kind = DeviceKind(rawValue: row["kind"]) ?? .phone
                let d = SRDevice(name: row["name"], model: row["model"], systemName: row["systemName"],
                                 systemVersion: row["systemVersion"], productType: row["productType"], kind: kind)
                deviceByID[row["id"]] = d
                devices[row["participant"], default: []].append(d)
            }
            for row in try Row.fetchAll(db, sql: "SELECT id, participant, device, sensor, maxChunkSpan FROM stream") {
                guard let sensor = Sensor(rawValue: row["sensor"]), let d = deviceByID[row["device"]] else { continue }
                streams[row["participant"], default: [:]][d, default: [:]][sensor] = StreamRef(id: row["id"], maxChunkSpan: row["maxChunkSpan"])
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM recordingInterval ORDER BY participant, sensor, afterTime") {
                guard let sensor = Sensor(rawValue: row["sensor"]) else { continue }
                let dev: Int64? = row["device"]
                intervals[row["participant"], default: []].append(RecordingInterval(
                    sensor: sensor, device: dev.flatMap { deviceByID[$0] }, after: row["afterTime"], through: row["throughTime"],
                    stakeholder: row["stakeholder"]))
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM authorization ORDER BY participant, at, sensor") {
                guard let sensor = Sensor(rawValue: row["sensor"]), let status = SRAuthorizationStatus(name: row["status"]) else { continue }
                auth[row["participant"], default: []].append(AuthorizationChange(sensor: sensor, at: row["at"], status: status))
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM deletion ORDER BY participant, at, sensor, afterTime") {
                guard let sensor = Sensor(rawValue: row["sensor"]), let reason = SRDeletionReason(rawValue: row["reason"]) else { continue }
                let dev: Int64? = row["device"]
                dels[row["participant"], default: []].append(DeletionEvent(
                    sensor: sensor, device: dev.flatMap { deviceByID[$0] },
                    range: TimeRange(after: row["afterTime"], through: row["throughTime"]), at: row["at"], reason: reason))
            }
            if let row = try Row.fetchOne(db, sql: "SELECT min(minWrite) AS lo, max(maxWrite) AS hi FROM chunk"),
               let lo: Double = row["lo"], let hi: Double = row["hi"] {
                span = TimeRange(after: lo, through: hi)
            }
        }
        self.participants = participants
        devicesByParticipant = devices
        self.streams = streams
        self.intervals = intervals
        authorizationChanges = auth
        deletionEvents = dels
        self.meta = meta
        dataSpan = span
    }

    // MARK: SampleSource

    public func devices(participant: String) -> [SRDevice] { devicesByParticipant[participant] ?? [] }

    public func samples(participant: String, sensor: Sensor, device: SRDevice,
                        writtenAfter after: Double, through: Double) throws -> SampleBatch {
        guard through > after, let ref = streams[participant]?[device]?[sensor] else { return SampleBatch.empty(for: sensor) }
        return try reading(participant, sensor, device, after, through) {
            try read(chunks(ref, after: after, through: through), sensor: sensor, after: after, through: through)
        }
    }

    /// Up to the end of the first stored chunk with rows in (after, through]: that chunk's
    /// rows in range, shared with the chunk cache (not copied) when the chunk lies wholly
    /// inside. Where chunks of separate imports interleave in write time, everything
    /// through `through`, joined and ordered as `samples` does.
    public func samplePiece(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double,
                            producedIn produced: IntervalSet?) throws -> (batch: SampleBatch, reached: Double) {
        try samplePiece(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through,
                        producedIn: produced, columns: .all)
    }

    /// `samplePiece(…producedIn:)` holding exactly the columns in `columns` (of the sensor's):
    /// the others' blobs are neither fetched from SQLite nor decoded (`decodeChunk`).
    public func samplePiece(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double, through: Double,
                            producedIn _: IntervalSet?, columns: ColumnProjection) throws -> (batch: SampleBatch, reached: Double) {
        guard through > after, let ref = streams[participant]?[device]?[sensor] else {
            return (SampleBatch.empty(for: sensor).keeping(columns), through)
        }
        return try reading(participant, sensor, device, after, through) {
            try readPiece(ref, sensor: sensor, after: after, through: through, columns: columns)
        }
    }

    /// Runs a read of (after, through], turning whatever it throws (SQLite's error, the
    /// decoder's `StoreCorruption`) into a `SampleReadError` naming the store, participant,
    /// sensor, device and range.
    private func reading<T>(_ participant: String, _ sensor: Sensor, _ device: SRDevice, _ after: Double, _ through: Double,
                            _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw SampleReadError(store: store.path, participant: participant, sensor: sensor, device: device,
                                  range: TimeRange(after: after, through: through), message: "\(error)")
        }
    }

    private func readPiece(_ ref: StreamRef, sensor: Sensor, after: Double, through: Double,
                           columns: ColumnProjection) throws -> (batch: SampleBatch, reached: Double) {
        let chunks = try chunks(ref, after: after, through: through)
        guard let first = chunks.first else { return (SampleBatch.empty(for: sensor).keeping(columns), through) }
        let disjoint = zip(chunks, chunks.dropFirst()).allSatisfy { $1.minWrite > $0.maxWrite }
        guard disjoint else { return (try read(chunks, sensor: sensor, after: after, through: through, columns: columns), through) }
        let reached = Swift.min(through, first.maxWrite)
        let chunk = try decoded(first.id, sensor: sensor, columns: columns)
        let a = chunk.writeTimes.upperBound(after), b = chunk.writeTimes.upperBound(reached)
        if a == 0 && b == chunk.count { return (chunk, reached) }
        return (chunk.slice(a..<b), reached)
    }

    /// The stream's chunks with rows written in (after, through], by first write time.
    private func chunks(_ ref: StreamRef, after: Double, through: Double) throws -> [(id: Int64, minWrite: Double, maxWrite: Double)] {
        let lo = after.isFinite ? after - ref.maxChunkSpan : -Double.greatestFiniteMagnitude
        let hi = through.isFinite ? through : Double.greatestFiniteMagnitude
        let after_ = after.isFinite ? after : -Double.greatestFiniteMagnitude
        return try store.pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, minWrite, maxWrite FROM chunk WHERE stream = ? AND minWrite >= ? AND minWrite <= ? AND maxWrite > ? ORDER BY minWrite, id
                """, arguments: [ref.id, lo, hi, after_]).map { (id: $0[0] as Int64, minWrite: $0[1] as Double, maxWrite: $0[2] as Double) }
        }
    }

    /// Chunk `id` with exactly the columns in `columns`, decoded once and kept in the cache
    /// (a chunk kept with more columns serves it).
    private func decoded(_ id: Int64, sensor: Sensor, columns: ColumnProjection) throws -> SampleBatch {
        try cache.get(id, columns) {
            try store.pool.read { db in try RecordedSource.decodeChunk(db, id: id, sensor: sensor, columns: columns) }
        }
    }

    /// The rows of `chunks` written in (after, through], joined into one batch in
    /// (write time, sample time) order.
    private func read(_ chunks: [(id: Int64, minWrite: Double, maxWrite: Double)], sensor: Sensor,
                      after: Double, through: Double, columns: ColumnProjection = .all) throws -> SampleBatch {
        var pieces: [(SampleBatch, Range<Int>)] = []
        var overlapping = false
        var lastMax = -Double.infinity
        for c in chunks {
            let chunk = try decoded(c.id, sensor: sensor, columns: columns)
            guard chunk.count > 0 else { continue }
            let a = chunk.writeTimes.upperBound(after), b = chunk.writeTimes.upperBound(through)
            guard b > a else { continue }
            if chunk.writeTimes[a] <= lastMax { overlapping = true }
            lastMax = max(lastMax, chunk.writeTimes[b - 1])
            pieces.append((chunk, a..<b))
        }
        guard !pieces.isEmpty else { return SampleBatch.empty(for: sensor).keeping(columns) }
        if pieces.count == 1 && pieces[0].1 == 0..<pieces[0].0.count { return pieces[0].0 }
        var out = RecordedSource.concatenate(pieces, sensor: sensor)
        if overlapping {
            // Chunks of separate imports interleave: restore (write time, sample time) order.
            let w = out.writeTimes.array
            let idx = (0..<out.count).sorted { i, j in
                (w[i], out.times[i], i) < (w[j], out.times[j], j)
            }
            out = out.gather(idx)
        }
        return out
    }

    /// The rows `range` of each chunk, copied once into one batch.
    static func concatenate(_ pieces: [(SampleBatch, Range<Int>)], sensor: Sensor) -> SampleBatch {
        let n = pieces.reduce(0) { $0 + $1.1.count }
        func doubles(_ get: (SampleBatch) -> [Double]) -> [Double] {
            [Double](unsafeUninitializedCapacity: n) { buf, done in
                var o = 0
                for (b, r) in pieces {
                    get(b).withUnsafeBufferPointer { src in
                        UnsafeMutableRawPointer(buf.baseAddress! + o).copyMemory(from: src.baseAddress! + r.lowerBound,
                                                                                  byteCount: r.count * 8)
                    }
                    o += r.count
                }
                done = n
            }
        }
        var writeTimes = WriteTimes()
        for (b, r) in pieces { writeTimes += b.writeTimes.slice(r) }
        let times = doubles { $0.times }
        var columns: [Column] = []
        for (ci, c0) in pieces[0].0.columns.enumerated() {
            let data: ColumnData
            switch c0.data {
            case .double:
                data = .double(doubles { b in if case .double(let v) = b.columns[ci].data { v } else { [] } })
            case .int:
                var v: [Int64] = []
                v.reserveCapacity(n)
                for (b, r) in pieces {
                    switch b.columns[ci].data {
                    case .int(let x): v += x[r]
                    case .intRuns(let x): v += x.slice(r)
                    default: preconditionFailure("chunks of one stream hold a column in two kinds")
                    }
                }
                data = .int(v)
            default:
                var d = ColumnData.empty(c0.data.kind)
                for (b, r) in pieces { d = d.appending(b.columns[ci].data.slice(r)) ?? d }
                data = d
            }
            var present: [Bool]? = nil
            if pieces.contains(where: { $0.0.columns[ci].present != nil }) {
                present = []
                present!.reserveCapacity(n)
                for (b, r) in pieces {
                    if let p = b.columns[ci].present { present! += p[r] } else { present! += repeatElement(true, count: r.count) }
                }
            }
            columns.append(Column(name: c0.name, data: data, present: present))
        }
        return SampleBatch(sensor: sensor, writeTimes: writeTimes, times: times, columns: columns)
    }

    /// One stored chunk, with the columns of the sensor's schema in `columns` (a column the
    /// chunk lacks is all missing); the others are left out, their blobs not read. Blobs are
    /// decoded in place (no copies); throws `StoreCorruption` when they do not decode.
    static func decodeChunk(_ db: Database, id: Int64, sensor: Sensor, columns wanted: ColumnProjection = .all) throws -> SampleBatch {
        let chunkRow = try db.cachedStatement(sql: "SELECT rows, writeTimes, times, encoding FROM chunk WHERE id = ?")
        let cursor = try Row.fetchCursor(chunkRow, arguments: [id])
        guard let row = try cursor.next() else { throw StoreCorruption("chunk \(id) disappeared") }
        let n: Int = row[0]
        let encoding: Int = row[3]
        guard ColumnCodec.readableChunkEncodings.contains(encoding) else {
            throw StoreCorruption("chunk \(id) has encoding \(encoding); this Sensorium reads encodings \(ColumnCodec.readableChunkEncodings.lowerBound)–\(ColumnCodec.readableChunkEncodings.upperBound) (written by a newer version?)")
        }
        guard n > 0 else { throw StoreCorruption("chunk \(id) has \(n) rows") }
        let writeTimes = try blob(row, 1) { try ColumnCodec.decodeWriteTimes($0, count: n) }
        let (times, timesWithin) = try blob(row, 2) { try ColumnCodec.decodeTimes($0, count: n) }
        let fields = sensor.info.columnFields.filter { wanted.contains($0.name) }
        var columns = [Column?](repeating: nil, count: fields.count)
        // Only the wanted columns' rows are read: the others' blobs are never loaded.
        let names = wanted.names ?? []
        let columnRows = try db.cachedStatement(sql: "SELECT name, kind, present, data FROM chunkColumn WHERE chunk = ?"
            + (wanted.isAll ? "" : " AND name IN (" + names.map { _ in "?" }.joined(separator: ", ") + ")") + " ORDER BY ordinal")
        let rows = try Row.fetchCursor(columnRows, arguments: StatementArguments([id] + names.map { $0 as (any DatabaseValueConvertible) }))
        while !fields.isEmpty, let r = try rows.next() {
            let name: String = r[0]
            guard let kind = ColumnKind(rawValue: r[1]) else { throw StoreCorruption("chunk \(id) column \(name): unknown kind") }
            // A column the sensor's schema no longer names is left unread.
            guard let i = fields.firstIndex(where: { $0.name == name }) else { continue }
            do {
                guard kind == fields[i].type.columnKind else {
                    throw StoreCorruption("stored as \(kind.rawValue), but \(sensor.rawValue).\(name) holds \(fields[i].type.columnKind.rawValue) values")
                }
                let data = try blob(r, 3) { try ColumnCodec.decode($0, kind: kind, count: n, times: times) }
                let present = try r.withUnsafeData(atIndex: 2) { (p: Data?) -> [Bool]? in
                    try p.map { try $0.withUnsafeBytes { try ColumnCodec.decodePresent($0, count: n, encoding: encoding) } }
                }
                columns[i] = Column(name: name, data: data, present: present)
            } catch let e as StoreCorruption {
                throw StoreCorruption("chunk \(id) column \(name): \(e.message)")
            }
        }
        let all = zip(fields, columns).map { f, c -> Column in
            if let c { return c }
            let missing = ColumnBuilder(name: f.name, kind: f.type.columnKind)
            missing.appendMissing(count: n)
            return missing.take()
        }
        return SampleBatch(sensor: sensor, writeTimes: writeTimes, times: times, columns: all, timesWithin: timesWithin)
    }

    private static func blob<T>(_ row: Row, _ index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        try row.withUnsafeData(atIndex: index) { (d: Data?) -> T in
            guard let d else { throw StoreCorruption("missing blob") }
            return try d.withUnsafeBytes { try body($0) }
        }
    }

    // MARK: What a replay needs

    public func participant(_ id: String) -> RecordedParticipant? { participants.first { $0.id == id } }

    /// Recording intervals of `participant` (empty when the input did not say).
    public func recordingIntervals(participant: String) -> [RecordingInterval] { intervals[participant] ?? [] }

    /// The authorization timeline of `participant`, by time (empty when unknown).
    public func authorizationTimeline(participant: String) -> [AuthorizationChange] { authorizationChanges[participant] ?? [] }

    /// Deletion records of `participant`, by time.
    public func deletions(participant: String) -> [DeletionEvent] { deletionEvents[participant] ?? [] }

    /// Sensors with stored rows for `participant` on `device`.
    public func sensors(participant: String, device: SRDevice) -> [Sensor] {
        (streams[participant]?[device]?.keys).map { Array($0).sorted() } ?? []
    }

    /// A value the import recorded (`spanStart`, `spanEnd`, `source`…).
    public func meta(_ key: String) -> String? { meta[key] }

    /// Per-stream counts and spans of every participant (or of `only`): participants in the
    /// store's order, devices phone first, sensors by name.
    public func streamSummaries(of only: String? = nil) throws -> [StreamSummary] {
        try store.pool.read { db in
            var out: [StreamSummary] = []
            for p in participants where only == nil || p.id == only {
                for d in devices(participant: p.id) {
                    for (sensor, ref) in (streams[p.id]?[d] ?? [:]).sorted(by: { $0.key < $1.key }) {
                        let row = try Row.fetchOne(db, sql: """
                            SELECT count(*) AS n, coalesce(sum(rows), 0) AS r, min(minWrite) AS lo, max(maxWrite) AS hi FROM chunk WHERE stream = ?
                            """, arguments: [ref.id])!
                        out.append(StreamSummary(participant: p.id, device: d, sensor: sensor, rows: row["r"], chunks: row["n"],
                                                 firstWrite: row["lo"], lastWrite: row["hi"]))
                    }
                }
            }
            return out
        }
    }

    /// Gaps longer than `minimum` seconds between consecutive write times of a stream
    /// (reads only the write-time column of each chunk).
    public func writeGaps(participant: String, device: SRDevice, sensor: Sensor, minimum: Double) throws -> [TimeRange] {
        guard let ref = streams[participant]?[device]?[sensor] else { return [] }
        return try store.pool.read { db in
            var gaps: [TimeRange] = []
            var last: Double? = nil
            let rows = try Row.fetchCursor(db, sql: "SELECT rows, writeTimes FROM chunk WHERE stream = ? ORDER BY minWrite, id",
                                           arguments: [ref.id])
            var all: [Double] = []
            var unordered = false
            while let r = try rows.next() {
                let n: Int = r["rows"]
                // One value per run of equal write times: a gap lies between runs.
                let w = try RecordedSource.blob(r, 1) { try ColumnCodec.decodeWriteTimes($0, count: n) }.values
                if let l = last, let f = w.first, f < l { unordered = true }
                if unordered { all += w; continue }
                for t in w {
                    if let l = last, t - l > minimum { gaps.append(TimeRange(after: l, through: t)) }
                    last = t
                }
            }
            if unordered {
                // Rare (overlapping imports): fall back to a sorted pass.
                gaps = []
                last = nil
                all.sort()
                for t in all {
                    if let l = last, t - l > minimum { gaps.append(TimeRange(after: l, through: t)) }
                    last = t
                }
            }
            return gaps
        }
    }
}

/// A few decoded chunks, most recent first (a fetch asks for neighbouring ranges), each
/// with the columns it was decoded with: an entry serves a read of the columns it covers,
/// narrowed to them, never one that needs more.
final class ChunkCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(id: Int64, columns: ColumnProjection, batch: SampleBatch)] = []
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Chunk `id` with exactly `columns`: a kept entry's, else `load`'s (which must decode
    /// exactly those), kept in place of narrower entries of the chunk.
    func get(_ id: Int64, _ columns: ColumnProjection, load: () throws -> SampleBatch) throws -> SampleBatch {
        lock.lock()
        if let e = entries.first(where: { $0.id == id && $0.columns.covers(columns) }) {
            lock.unlock()
            return e.columns == columns ? e.batch : e.batch.keeping(columns)
        }
        lock.unlock()
        let b = try load()
        lock.lock()
        entries.removeAll { $0.id == id && columns.covers($0.columns) }
        entries.insert((id, columns, b), at: 0)
        if entries.count > capacity { entries.removeLast() }
        lock.unlock()
        return b
    }
}

