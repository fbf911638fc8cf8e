import Foundation
import SensorKitModel
import StudyStore

/// Batched MyHeartCounts streams (accelerometer, ambient pressure) on two threads: a reader
/// thread parses the CSV straight into column storage and cuts it into pieces of whole
/// write batches (about one chunk each); the importing thread (which owns the database
/// connection) de-duplicates, encodes and stores them. A bounded queue of pieces keeps
/// memory independent of the file size (bounded by the chunk size, or by the longest
/// write batch when one is longer than a chunk).
enum MHCBatchedPipeline {
    /// Rows of whole write batches, all from one device, in the sensor's schema columns.
    struct Piece: Sendable {
        var device: SRDevice
        var batch: SampleBatch
        /// Bytes of the file consumed when the piece was cut (for the progress bar).
        var bytesRead: Int64
        /// False when its rows are not in write-time order (they are then buffered and sorted).
        var sorted = true
        /// Warnings about the file met while its rows were read (given when it is stored).
        var warnings: [String] = []
    }

    /// A small blocking queue between the two threads.
    final class Queue: @unchecked Sendable {
        private let cond = NSCondition()
        private var items: [Piece] = []
        private var finished = false
        private var failure: Error?
        private var cancelled = false
        let capacity: Int

        init(capacity: Int) { self.capacity = capacity }

        /// False when the consumer gave up (stop producing).
        func put(_ b: Piece) -> Bool {
            cond.lock()
            defer { cond.unlock() }
            while items.count >= capacity && !cancelled { cond.wait() }
            if cancelled { return false }
            items.append(b)
            cond.broadcast()
            return true
        }

        func finish(_ error: Error?) {
            cond.lock()
            finished = true
            failure = error
            cond.broadcast()
            cond.unlock()
        }

        func cancel() {
            cond.lock()
            cancelled = true
            cond.broadcast()
            cond.unlock()
        }

        /// The next piece; nil at the end. Rethrows the producer's error.
        func take() throws -> Piece? {
            cond.lock()
            defer { cond.unlock() }
            while items.isEmpty && !finished { cond.wait() }
            if !items.isEmpty {
                let b = items.removeFirst()
                cond.broadcast()
                return b
            }
            if let e = failure { throw e }
            return nil
        }

        /// Waits until the producer has stopped (after `cancel`).
        func waitFinished() {
            cond.lock()
            while !finished { cond.wait() }
            cond.unlock()
        }
    }

    final class Box<T>: @unchecked Sendable { var value: T; init(_ v: T) { value = v } }

    /// Runs `parse` on a reader thread (`stackSize` bytes of stack) that fills `queue` with
    /// pieces, and stores each piece for `participant` on this thread as it comes (sorted
    /// pieces as whole batches, others buffered and sorted), after `seen(piece)`. Throws the
    /// parser's error or the store's; either way the reader thread has stopped when it returns.
    static func drive(_ queue: Queue, participant: String, session: ImportSession, progress: ImportProgress?,
                      stackSize: Int = 1 << 20, parse: @escaping @Sendable () throws -> Void,
                      seen: (Piece) -> Void = { _ in }) throws {
        startReader(queue, stackSize: stackSize, parse: parse)
        try store(queue, participant: participant, session: session, progress: progress, seen: seen)
    }

    /// Starts `parse` on a reader thread (`stackSize` bytes of stack) that fills `queue` with
    /// pieces, and finishes it with the parser's error, or none.
    static func startReader(_ queue: Queue, stackSize: Int = 1 << 20, parse: @escaping @Sendable () throws -> Void) {
        let thread = Thread {
            do {
                try parse()
                queue.finish(nil)
            } catch {
                queue.finish(error)
            }
        }
        thread.stackSize = stackSize
        thread.start()
    }

    /// Stores each piece of `queue` for `participant` as it comes (sorted pieces as whole
    /// batches, others buffered and sorted), after `seen(piece)`, until the reader finishes.
    /// Throws the parser's error or the store's; either way the reader has stopped when it
    /// returns.
    static func store(_ queue: Queue, participant: String, session: ImportSession, progress: ImportProgress?,
                      seen: (Piece) -> Void = { _ in }) throws {
        do {
            while let piece = try queue.take() {
                seen(piece)
                for w in piece.warnings { session.stats.warn(w) }
                progress?.rows += piece.batch.count
                progress?.fileProgress(piece.bytesRead)
                if piece.sorted {
                    try session.appendWholeBatches(participant: participant, device: piece.device, piece.batch)
                } else {
                    try session.append(participant: participant, device: piece.device, piece.batch)
                }
            }
        } catch {
            queue.cancel()
            queue.waitFinished()
            throw error
        }
    }

    /// Rows per piece (a piece is cut at the first write-batch boundary past this).
    static let pieceRows = RecordedStore.chunkRows

    /// Starts reading the file at `path` from `source` on a reader thread of its own: its
    /// pieces wait (at most a queue's worth) until `Parsing.store` stores them. Nothing is
    /// stored, and no error is seen, before then: the reader's error comes after its pieces.
    static func start(_ path: String, sensor: Sensor, source: ByteSource) -> Parsing {
        let columns = MHCFormat.headers.first { $0.sensor == sensor }!.columns
        let queue = Queue(capacity: 3)
        let reader = Box(CSVReader(path: path, source: source))
        startReader(queue) {
            let csv = reader.value
            _ = try csv.nextRecord()
            var parser = Parser(csv: csv, path: path, sensor: sensor, columns: columns, queue: queue)
            try parser.run()
        }
        return Parsing(queue: queue)
    }

    /// A file being read on its reader thread (`start`).
    struct Parsing {
        let queue: Queue

        /// Stores its pieces for `participant`; returns the last watch seen. Throws the
        /// reader's error or the store's; either way the reader has stopped when it returns.
        func store(participant: String, session: ImportSession, progress: ImportProgress?) throws -> SRDevice? {
            var lastWatch: SRDevice? = nil
            try MHCBatchedPipeline.store(queue, participant: participant, session: session, progress: progress,
                                         seen: { piece in if piece.device.kind == .watch { lastWatch = piece.device } })
            return lastWatch
        }

        /// Stops the reader without storing anything (an earlier file failed).
        func cancel() {
            queue.cancel()
            queue.waitFinished()
        }
    }

    /// The reader thread: CSV rows into pieces of whole write batches.
    ///
    /// Rows go straight into `RowBlock` columns; a write batch (a run of rows sharing an
    /// `identifier`) gets its write time, the latest sample time of the run, when it ends.
    struct Parser {
        let csv: CSVReader
        let path: String
        let sensor: Sensor
        let columns: [String]
        let queue: Queue
        /// CSV fields: time, identifier, values…, device.
        let nValues: Int
        var block: RowBlock
        var device: SRDevice? = nil
        var deviceBytes: [UInt8] = []
        /// A device text not in the producer's form: its warning, until a piece carries it
        /// (`warnedDeviceForm`: given once per file).
        var deviceWarning: String? = nil
        var warnedDeviceForm = false
        // The open write batch: rows runStart..<block.count.
        var inRun = false
        var runStart = 0
        var runID: Int64 = 0
        var runMax = -Double.infinity

        init(csv: CSVReader, path: String, sensor: Sensor, columns: [String], queue: Queue) {
            self.csv = csv
            self.path = path
            self.sensor = sensor
            self.columns = columns
            self.queue = queue
            nValues = columns.count - 3
            block = RowBlock(values: nValues, capacity: pieceRows + 8_192)
        }

        mutating func run() throws {
            let fields = columns.count
            let numeric = fields - 1
            // Column pointers for the fast path: field f goes to out[f] (the identifier to ints).
            var out = [UnsafeMutablePointer<Double>](repeating: block.times, count: numeric)
            while true {
                if device != nil {
                    block.reserve(1_024)
                    out[0] = block.times + block.count
                    for k in 0..<nValues { out[k + 2] = block.value(k) + block.count }
                    // Stop near the piece size so that a piece is cut without growing the block.
                    let room = min(block.capacity - block.count, max(pieceRows - block.count, 1_024))
                    let n = out.withUnsafeBufferPointer { o in
                        csv.fastNumericRows(numeric, intField: 1, out: o.baseAddress!, ints: block.ids + block.count, maxRows: room)
                    }
                    if n > 0 {
                        let first = block.count
                        block.count += n
                        try batchRows(first, firstLine: csv.line - n + 1)
                        continue
                    }
                }
                guard try csv.nextRecord() else { break }
                guard csv.fieldCount == fields else {
                    throw ImportError(file: path, line: csv.line, "expected \(fields) fields (\(columns.joined(separator: ","))), found \(csv.fieldCount)")
                }
                try noteDevice(field: numeric)
                block.reserve(1)
                let r = block.count
                guard let t = NumberParser.double(csv.bytes(0)) else {
                    throw fail(0, csv.isEmpty(0) ? "a date in seconds since 1970 (the field is empty)" : "a date in seconds since 1970")
                }
                guard let id = NumberParser.int(csv.bytes(1)) else { throw fail(1, "a batch identifier (a whole number)") }
                for k in 0..<nValues {
                    guard let v = NumberParser.double(csv.bytes(k + 2)) else { throw fail(k + 2, "a number") }
                    block.value(k)[r] = v
                }
                block.times[r] = t
                block.ids[r] = id
                block.count += 1
                try batchRows(r, firstLine: csv.line)
            }
            closeRun()
            try emit(upTo: block.count)
        }

        func fail(_ i: Int, _ expected: String) -> ImportError {
            ImportError(file: path, line: csv.line, field: columns[i], "expected \(expected), found '\(csv.quoted(i))'")
        }

        /// Resolves the device field when its text changes; a new device ends the piece.
        mutating func noteDevice(field: Int) throws {
            let db = csv.bytes(field)
            let same = device != nil && db.count == deviceBytes.count
                && deviceBytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, db.baseAddress!, db.count) == 0 }
            if same { return }
            let (d, warning) = try MHCFormat.deviceField(csv, field)
            if let warning, !warnedDeviceForm {
                deviceWarning = warning
                warnedDeviceForm = true
            }
            if d != device {
                closeRun()
                try emit(upTo: block.count)
                device = d
            }
            deviceBytes = Array(db)
            // The raw field text (with its quotes) lets the reader skip it on later rows.
            if csv.fieldQuoted[field] {
                csv.expectedTail = deviceBytes.contains(UInt8(ascii: "\"")) ? []
                    : [UInt8(ascii: "\"")] + deviceBytes + [UInt8(ascii: "\"")]
            } else {
                csv.expectedTail = deviceBytes
            }
            csv.tailAfter = field
        }

        /// Checks the dates of rows `first..<block.count` (line `firstLine` on) and follows
        /// their write batches; cuts a piece when the block is full at a batch boundary.
        mutating func batchRows(_ first: Int, firstLine: Int) throws {
            let times = block.times, ids = block.ids
            for r in first..<block.count {
                let t = times[r]
                if !(t >= Plausible.earliest && t <= Plausible.latest) {
                    throw ImportError(file: path, line: firstLine + (r - first), field: columns[0], Plausible.problem(t) ?? "implausible date")
                }
                let id = ids[r]
                if !inRun || id != runID {
                    closeRun(at: r)
                    inRun = true
                    runID = id
                    runStart = r
                    runMax = t
                } else if t > runMax {
                    runMax = t
                }
            }
            if runStart >= pieceRows { try emit(upTo: runStart) }
        }

        /// Gives the rows of the open write batch before `end` their write time.
        mutating func closeRun(at end: Int? = nil) {
            guard inRun else { return }
            let e = end ?? block.count
            (block.writeTimes + runStart).update(repeating: runMax, count: e - runStart)
            if end == nil { inRun = false; runStart = e }
        }

        /// Sends rows `0..<end` (whole write batches) as a piece; later rows move to the front.
        mutating func emit(upTo end: Int) throws {
            guard end > 0, let device else { return }
            let batch = block.batch(sensor: sensor, rows: end, columns: columns)
            block.dropFront(end)
            runStart -= end
            let piece = Piece(device: device, batch: batch, bytesRead: csv.fileBytesRead, warnings: deviceWarning.map { [$0] } ?? [])
            deviceWarning = nil
            if !queue.put(piece) { throw CancellationError() }
        }
    }
}

/// Column storage the parser writes into: write times, times, batch identifiers and
/// `values` double columns, `count` rows, growing only when a write batch outgrows it.
final class RowBlock {
    private(set) var capacity: Int
    let values: Int
    var count = 0
    private(set) var writeTimes: UnsafeMutablePointer<Double>
    private(set) var times: UnsafeMutablePointer<Double>
    private(set) var ids: UnsafeMutablePointer<Int64>
    /// Column k at `valueBase + k * capacity`.
    private var valueBase: UnsafeMutablePointer<Double>

    init(values: Int, capacity: Int) {
        self.values = values
        self.capacity = capacity
        writeTimes = .allocate(capacity: capacity)
        times = .allocate(capacity: capacity)
        ids = .allocate(capacity: capacity)
        valueBase = .allocate(capacity: capacity * max(values, 1))
    }

    deinit {
        writeTimes.deallocate()
        times.deallocate()
        ids.deallocate()
        valueBase.deallocate()
    }

    @inline(__always) func value(_ k: Int) -> UnsafeMutablePointer<Double> { valueBase + k * capacity }

    /// Room for at least `n` more rows.
    func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        let c = max(capacity * 2, count + n)
        func grown<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<T> { p.moved(count: count, toCapacity: c) }
        writeTimes = grown(writeTimes)
        times = grown(times)
        ids = grown(ids)
        let v = UnsafeMutablePointer<Double>.allocate(capacity: c * max(values, 1))
        for k in 0..<values { (v + k * c).moveInitialize(from: valueBase + k * capacity, count: count) }
        valueBase.deallocate()
        valueBase = v
        capacity = c
    }

    /// Removes rows `0..<n`, moving the rest to the front.
    func dropFront(_ n: Int) {
        let rest = count - n
        if rest > 0 {
            writeTimes.update(from: writeTimes + n, count: rest)
            times.update(from: times + n, count: rest)
            ids.update(from: ids + n, count: rest)
            for k in 0..<values { value(k).update(from: value(k) + n, count: rest) }
        }
        count = rest
    }

    /// Rows `0..<rows` as a batch of `sensor`'s schema: the CSV's `columns` (time,
    /// identifier, values…, device) fill `identifier` and the value columns of the same
    /// name; every other schema column (CoreMotion's uptime `timestamp`) is missing.
    func batch(sensor: Sensor, rows: Int, columns: [String]) -> SampleBatch {
        func doubles(_ p: UnsafeMutablePointer<Double>) -> [Double] { Array(UnsafeBufferPointer(start: p, count: rows)) }
        let schema = sensor.info.columnFields.map { f -> Column in
            if f.name == "identifier" { return Column(name: f.name, data: .int(Array(UnsafeBufferPointer(start: ids, count: rows)))) }
            if f.name != columns[0], let i = columns.firstIndex(of: f.name), i >= 2, i - 2 < values {
                return Column(name: f.name, data: .double(doubles(value(i - 2))))
            }
            let missing = ColumnBuilder(name: f.name, kind: f.type.columnKind)
            missing.appendMissing(count: rows)
            return missing.take()
        }
        return SampleBatch(sensor: sensor, writeTimes: doubles(writeTimes), times: doubles(times), columns: schema)
    }
}
