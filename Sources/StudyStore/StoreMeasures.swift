import Foundation
import GRDB
import SensorKitModel

extension RecordedStore {
    /// Decodes every chunk of the store, every column, on the calling thread; returns the rows
    /// decoded (`sensorium bench store`'s decode speed). Throws the store's or the codec's error.
    package func decodeEveryChunk() throws -> Int {
        try pool.read { db in
            var rows = 0
            let chunks = try Row.fetchAll(db, sql: "SELECT chunk.id, stream.sensor FROM chunk JOIN stream ON stream.id = chunk.stream ORDER BY chunk.id")
            for c in chunks {
                guard let sensor = Sensor(rawValue: c[1]) else { continue }
                rows += try RecordedSource.decodeChunk(db, id: c[0], sensor: sensor).count
            }
            return rows
        }
    }

    /// Bytes of the store's tables without SQLite's free pages.
    package func usedBytes() throws -> Int {
        try pool.read { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return (pages - free) * size
        }
    }
}
