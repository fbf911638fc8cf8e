import Foundation
import SensorKitModel
import StudyStore

/// Native sample files whose columns are all numbers (accelerometer, rotation rate, ambient
/// pressure, heart rate…), like `MHCBatchedPipeline`: a reader thread cuts the file into
/// blocks of whole lines that worker threads parse straight into column storage
/// (`ParseJob`, `CSVReader.numberRows`), takes their rows in file order (checks, Float32
/// rounding) and cuts them into pieces of whole write batches of about a chunk; from the
/// first line the fast path does not take, it reads the rest row by row (the generic reader
/// and its error messages for any other row). The importing thread (which owns the database
/// connection) de-duplicates, encodes and stores the pieces. Memory is bounded by a few
/// blocks and pieces whatever the file size.
enum NativeNumericPipeline {
    /// How one header field is read.
    enum Target {
        case writeTime, time
        /// Schema column `column` (its index in the sensor's columns).
        case column(Int, FieldSchema)
    }

    /// Bytes of text per block parsed on a worker thread; 0: the whole file row by row on the
    /// reader thread (the reference the tests compare block parsing with).
    @TaskLocal static var blockBytes = 1 << 20

    /// True when every schema column is a double or a whole number (what the fast path reads).
    static func applies(to fields: [FieldSchema]) -> Bool {
        fields.allSatisfy { $0.type.columnKind == .double || $0.type.columnKind == .int }
    }

    /// Reads the rest of `csv` (its header already read into `targets`) and stores the rows.
    /// `float32`: schema columns whose values are rounded to Float32s (then widened).
    static func run(_ csv: CSVReader, path: String, names: [String], targets: [Target], float32: [Int] = [], participant: String,
                    device: SRDevice, sensor: Sensor, session: ImportSession, progress: ImportProgress?) throws {
        let queue = MHCBatchedPipeline.Queue(capacity: 3)
        let reader = MHCBatchedPipeline.Box(Parser(csv: csv, path: path, names: names, targets: targets, float32: float32,
                                                   sensor: sensor, device: device, queue: queue, blockBytes: blockBytes))
        try MHCBatchedPipeline.drive(queue, participant: participant, session: session, progress: progress,
                                     parse: { try reader.value.run() })
    }

    /// The reader thread.
    struct Parser {
        var csv: CSVReader
        let path: String
        let names: [String]
        let targets: [Target]
        /// Schema columns read as Float32s.
        let float32: [Int]
        let sensor: Sensor
        let device: SRDevice
        let queue: MHCBatchedPipeline.Queue
        let schema: [FieldSchema]
        /// Schema columns the header names.
        let written: Set<Int>
        var block: NumberBlock
        /// Write time of the last row parsed; rows before it in the block are in order when `sorted`.
        var sorted = true
        /// See `NativeNumericPipeline.blockBytes`.
        let blockBytes: Int

        init(csv: CSVReader, path: String, names: [String], targets: [Target], float32: [Int], sensor: Sensor, device: SRDevice,
             queue: MHCBatchedPipeline.Queue, blockBytes: Int) {
            self.blockBytes = blockBytes
            self.csv = csv
            self.path = path
            self.names = names
            self.targets = targets
            self.float32 = float32
            self.sensor = sensor
            self.device = device
            self.queue = queue
            schema = sensor.info.columnFields
            written = Set(targets.compactMap { if case .column(let k, _) = $0 { k } else { nil } })
            block = NumberBlock(columns: schema.count, capacity: RecordedStore.chunkRows + 8_192)
        }

        /// Where field f of a fast row goes: -2 the write time, -1 the time, else a column index.
        var slots: [Int] {
            targets.map { t in
                switch t {
                case .writeTime: -2
                case .time: -1
                case .column(let k, _): k
                }
            }
        }

        mutating func run() throws {
            if blockBytes <= 0 {
                try runRows()
            } else if let rest = try runInBlocks() {
                csv = rest
                try runRows()
            }
            try emit(upTo: block.count)
        }

        /// Parses the file in blocks of whole lines on worker threads (`ParseJob`), taking their
        /// rows in file order; stops at the first block holding a line that is not a fast row
        /// (empty field, quote, blank line…) and returns a reader of the file from that line on,
        /// for `runRows`. Nil when every line was a fast row. Lines are numbered as they come:
        /// in this mode every line is one row.
        mutating func runInBlocks() throws -> CSVReader? {
            let blocks = LineBlocks(after: csv, size: blockBytes)
            let shape = ParseJob.Shape(slots: slots, whole: targets.map { t in
                if case .column(_, let f) = t { f.type.columnKind == .int } else { false }
            }, columns: schema.count)
            let inFlight = 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)
            var pending: [ParseJob] = []
            var spare: [ParseJob] = []
            var line = csv.nextLine
            var endOfInput = false
            // An error reading ahead is the generic reader's to throw, after the rows before it.
            var readError: Error?
            while true {
                while !endOfInput && pending.count < inFlight {
                    let job = spare.popLast() ?? ParseJob(shape: shape, blockBytes: blocks.size)
                    do {
                        guard try blocks.next(into: job.text) else { endOfInput = true; break }
                    } catch {
                        readError = error
                        endOfInput = true
                        break
                    }
                    job.start()
                    pending.append(job)
                }
                guard !pending.isEmpty else {
                    guard let readError else { return nil }
                    return CSVReader(path: path, source: ChainSource([blocks.takeCarry()], then: blocks.source, failure: readError), firstLine: line)
                }
                let job = pending.removeFirst()
                job.wait()
                var from = 0
                while from < job.rows.count {
                    let n = min(job.rows.count - from, max(RecordedStore.chunkRows - block.count, 1_024))
                    block.reserve(n)
                    block.copyRows(from: job.rows, at: from, count: n)
                    try check(block.count, n, firstLine: line)
                    block.count += n
                    line += n
                    from += n
                    if block.count >= RecordedStore.chunkRows { try emitWholeBatches(bytesRead: job.text.fileBytesRead) }
                }
                if job.next < job.text.count {
                    // A line the fast path does not take: the generic reader reads on from it.
                    var rest = [job.text.bytes(from: job.next)]
                    for later in pending {
                        later.wait()
                        rest.append(later.text.bytes(from: 0))
                    }
                    rest.append(blocks.takeCarry())
                    return CSVReader(path: path, source: ChainSource(rest, then: blocks.source, failure: readError), firstLine: line)
                }
                spare.append(job)
            }
        }

        /// Reads the rest of the file row by row: runs of fast rows, and the generic reader for
        /// any other record.
        mutating func runRows() throws {
            let fields = targets.count
            let whole = targets.map { t -> Bool in if case .column(_, let f) = t { f.type.columnKind == .int } else { false } }
            // A write batch's rows share one write time: its text is parsed once per batch.
            let repeating = targets.firstIndex { if case .writeTime = $0 { true } else { false } } ?? -1
            var out = [UnsafeMutableRawPointer](repeating: UnsafeMutableRawPointer(block.writeTimes), count: fields)
            while true {
                block.reserve(1_024)
                for (f, t) in targets.enumerated() {
                    switch t {
                    case .writeTime: out[f] = UnsafeMutableRawPointer(block.writeTimes + block.count)
                    case .time: out[f] = UnsafeMutableRawPointer(block.times + block.count)
                    case .column(let k, _): out[f] = block.column(k) + 8 * block.count
                    }
                }
                let room = min(block.capacity - block.count, max(RecordedStore.chunkRows - block.count, 1_024))
                let n = out.withUnsafeBufferPointer { o in
                    whole.withUnsafeBufferPointer { w in
                        csv.fastNumberRows(fields, targets: o.baseAddress!, wholeNumber: w.baseAddress!, repeating: repeating, maxRows: room)
                    }
                }
                if n > 0 {
                    try check(block.count, n, firstLine: csv.line - n + 1)
                    block.count += n
                } else {
                    guard try csv.nextRecord() else { break }
                    try slowRow()
                    try check(block.count, 1, firstLine: csv.line)
                    block.count += 1
                }
                if block.count >= RecordedStore.chunkRows { try emitWholeBatches(bytesRead: csv.fileBytesRead) }
            }
        }

        /// One row through the generic reader (empty fields, quotes, names of enumeration cases…).
        mutating func slowRow() throws {
            guard csv.fieldCount == targets.count else {
                throw ImportError(file: path, line: csv.line, "expected \(targets.count) fields as in the header, found \(csv.fieldCount)")
            }
            let r = block.count
            for (i, t) in targets.enumerated() {
                switch t {
                case .writeTime:
                    guard let x = NumberParser.double(csv.bytes(i)) else {
                        throw ImportError(file: path, line: csv.line, field: "writeTime", "expected a number (seconds since 1970), found '\(csv.quoted(i))'")
                    }
                    block.writeTimes[r] = x
                case .time:
                    if csv.isEmpty(i) { block.times[r] = .nan; continue }
                    guard let x = NumberParser.double(csv.bytes(i)) else {
                        throw ImportError(file: path, line: csv.line, field: "time", "expected a number (seconds since 1970) or nothing, found '\(csv.quoted(i))'")
                    }
                    block.times[r] = x
                case .column(let k, let f):
                    switch try NativeFormat.numberField(csv, i, field: f, path: path, name: names[i]) {
                    case nil:
                        block.markMissing(column: k, row: r)
                        block.column(k).storeBytes(of: f.type.columnKind == .int ? 0 : Double.nan.bitPattern, toByteOffset: 8 * r, as: UInt64.self)
                    case .double(let x)?: block.column(k).storeBytes(of: x, toByteOffset: 8 * r, as: Double.self)
                    case .int(let x)?: block.column(k).storeBytes(of: x, toByteOffset: 8 * r, as: Int64.self)
                    }
                }
            }
        }

        /// Rounds rows `first..<first+n` of the Float32 columns to Float32s, then checks the dates
        /// of those rows (line `firstLine` on) and notes their order.
        mutating func check(_ first: Int, _ n: Int, firstLine: Int) throws {
            for k in float32 {
                let c = block.column(k).assumingMemoryBound(to: Double.self)
                for r in first..<first + n { c[r] = Double(Float(c[r])) }
            }
            let w = block.writeTimes, t = block.times
            var last = first > 0 ? w[first - 1] : -Double.infinity
            var bad = -1
            for r in first..<first + n {
                let x = w[r], y = t[r]
                // Plain comparisons in one pass; the row is looked at again only when one fails.
                if !(x >= Plausible.earliest && x <= Plausible.latest) || (y.isFinite && !(y >= Plausible.earliest && y <= Plausible.latest)) {
                    bad = r
                    break
                }
                if x < last { sorted = false }
                last = x
            }
            if bad >= 0 {
                let line = firstLine + (bad - first)
                if let problem = Plausible.problem(w[bad]) { throw ImportError(file: path, line: line, field: "writeTime", problem) }
                throw ImportError(file: path, line: line, field: "time", Plausible.problem(t[bad]) ?? "implausible date")
            }
            for (i, target) in targets.enumerated() {
                guard case .column(let k, let f) = target else { continue }
                let present = block.present[k]
                if f.type.columnKind == .int {
                    // Enumerations and option sets: only their raw values (numberField's rule).
                    guard !f.type.namedValues.isEmpty else { continue }
                    let c = block.column(k).assumingMemoryBound(to: Int64.self)
                    for r in first..<first + n where present?[r] ?? true && !f.type.accepts(raw: c[r]) {
                        throw ImportError(file: path, line: firstLine + (r - first), field: names[i],
                                          "expected \(f.type.allowedRaw), found '\(c[r])'")
                    }
                    continue
                }
                let c = block.column(k).assumingMemoryBound(to: Double.self)
                // Compared once, not per row (an enumeration with payloads compares slowly).
                let isDate = f.type == .date
                for r in first..<first + n where present?[r] ?? true {
                    guard c[r].isFinite else {
                        throw ImportError(file: path, line: firstLine + (r - first), field: names[i], "expected a finite number, found '\(c[r])'")
                    }
                    if isDate, let problem = Plausible.problem(c[r]) {
                        throw ImportError(file: path, line: firstLine + (r - first), field: names[i], problem)
                    }
                }
            }
        }

        /// Sends the rows before the last write batch of a full block (whole batches only).
        mutating func emitWholeBatches(bytesRead: Int64) throws {
            let w = block.writeTimes
            let last = w[block.count - 1]
            var cut = block.count - 1
            while cut > 0 && w[cut - 1] == last { cut -= 1 }
            if cut > 0 { try emit(upTo: cut, bytesRead: bytesRead) }
        }

        /// Sends rows `0..<end` as a piece; later rows move to the front. `bytesRead`: progress
        /// (bytes of the file read so far; the reader's when not given).
        mutating func emit(upTo end: Int, bytesRead: Int64? = nil) throws {
            guard end > 0 else { return }
            let batch = block.batch(sensor: sensor, schema: schema, written: written, rows: end)
            block.dropFront(end)
            let wasSorted = sorted
            sorted = true
            let piece = MHCBatchedPipeline.Piece(device: device, batch: batch, bytesRead: bytesRead ?? csv.fileBytesRead, sorted: wasSorted)
            if !queue.put(piece) { throw CancellationError() }
        }
    }
}

/// Column storage the native parser writes into: write times, sample times and `columns`
/// 8-byte columns (Double or Int64 by the schema), `count` rows; a column gets presence
/// flags when one of its values is missing. Grows only when a write batch outgrows it.
final class NumberBlock {
    private(set) var capacity: Int
    let columns: Int
    var count = 0
    private(set) var writeTimes: UnsafeMutablePointer<Double>
    private(set) var times: UnsafeMutablePointer<Double>
    /// Column k at `base + 8 · k · capacity`.
    private var base: UnsafeMutableRawPointer
    /// Per column: nil while every value is present; else `capacity` flags (true past `count`).
    private(set) var present: [UnsafeMutablePointer<Bool>?]

    init(columns: Int, capacity: Int) {
        self.columns = columns
        self.capacity = capacity
        writeTimes = .allocate(capacity: capacity)
        times = .allocate(capacity: capacity)
        base = .allocate(byteCount: 8 * capacity * max(columns, 1), alignment: 16)
        present = Array(repeating: nil, count: columns)
    }

    deinit {
        writeTimes.deallocate()
        times.deallocate()
        base.deallocate()
        for p in present { p?.deallocate() }
    }

    @inline(__always) func column(_ k: Int) -> UnsafeMutableRawPointer { base + 8 * k * capacity }

    /// Row `r` of column `k` is missing.
    func markMissing(column k: Int, row r: Int) {
        if present[k] == nil {
            let p = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
            p.initialize(repeating: true, count: capacity)
            present[k] = p
        }
        present[k]![r] = false
    }

    /// Room for at least `n` more rows.
    func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        let c = max(capacity * 2, count + n)
        func grown<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<T> { p.moved(count: count, toCapacity: c) }
        writeTimes = grown(writeTimes)
        times = grown(times)
        let b = UnsafeMutableRawPointer.allocate(byteCount: 8 * c * max(columns, 1), alignment: 16)
        for k in 0..<columns { (b + 8 * k * c).copyMemory(from: column(k), byteCount: 8 * count) }
        base.deallocate()
        base = b
        for k in 0..<columns {
            guard let p = present[k] else { continue }
            let q = UnsafeMutablePointer<Bool>.allocate(capacity: c)
            q.initialize(repeating: true, count: c)
            q.update(from: p, count: count)
            p.deallocate()
            present[k] = q
        }
        capacity = c
    }

    /// Writes rows `from..<from+n` of `other` (same columns, every value present) at rows
    /// `count..<count+n`, without changing `count`; room must be reserved.
    func copyRows(from other: NumberBlock, at from: Int, count n: Int) {
        (writeTimes + count).update(from: other.writeTimes + from, count: n)
        (times + count).update(from: other.times + from, count: n)
        for k in 0..<columns { (column(k) + 8 * count).copyMemory(from: other.column(k) + 8 * from, byteCount: 8 * n) }
    }

    /// Removes rows `0..<n`, moving the rest to the front.
    func dropFront(_ n: Int) {
        let rest = count - n
        if rest > 0 {
            writeTimes.update(from: writeTimes + n, count: rest)
            times.update(from: times + n, count: rest)
            for k in 0..<columns { column(k).copyMemory(from: column(k) + 8 * n, byteCount: 8 * rest) }
        }
        for k in 0..<columns {
            guard let p = present[k] else { continue }
            if rest > 0 { p.update(from: p + n, count: rest) }
            (p + rest).update(repeating: true, count: capacity - rest)
        }
        count = rest
    }

    /// Rows `0..<rows` as a batch of `sensor`'s schema; columns not in `written` are missing.
    func batch(sensor: Sensor, schema: [FieldSchema], written: Set<Int>, rows: Int) -> SampleBatch {
        func doubles(_ p: UnsafeMutablePointer<Double>) -> [Double] { Array(UnsafeBufferPointer(start: p, count: rows)) }
        let cols = schema.enumerated().map { k, f -> Column in
            guard written.contains(k) else {
                let missing = ColumnBuilder(name: f.name, kind: f.type.columnKind)
                missing.appendMissing(count: rows)
                return missing.take()
            }
            let data: ColumnData = f.type.columnKind == .int
                ? .int(Array(UnsafeBufferPointer(start: column(k).assumingMemoryBound(to: Int64.self), count: rows)))
                : .double(doubles(column(k).assumingMemoryBound(to: Double.self)))
            var mask: [Bool]? = nil
            if let p = present[k] {
                let m = Array(UnsafeBufferPointer(start: p, count: rows))
                if m.contains(false) { mask = m }
            }
            return Column(name: f.name, data: data, present: mask)
        }
        return SampleBatch(sensor: sensor, writeTimes: doubles(writeTimes), times: doubles(times), columns: cols)
    }
}

/// One block of lines parsed on a worker thread (GCD's global queue): every leading line that
/// is a fast row (`CSVReader.numberRows`) into `rows`; `next` is the offset of the first
/// line it did not take (`text.count` when it took all). The thread that `start`s a job owns
/// it again after `wait`; in between, only the worker touches it.
final class ParseJob: @unchecked Sendable {
    /// The fields of a row: `slots` (see `NativeNumericPipeline.Parser.slots`), which are
    /// whole numbers, and the schema's column count.
    struct Shape: Sendable {
        var slots: [Int]
        var whole: [Bool]
        var columns: Int
    }

    let shape: Shape
    let text: TextBlock
    let rows: NumberBlock
    private(set) var next = 0
    private let done = DispatchSemaphore(value: 0)

    init(shape: Shape, blockBytes: Int) {
        self.shape = shape
        text = TextBlock(capacity: blockBytes)
        // A fast row takes at least two bytes a field.
        rows = NumberBlock(columns: shape.columns, capacity: 1_024)
    }

    /// Parses `text` on a worker thread.
    func start() {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            parse()
            done.signal()
        }
    }

    /// Waits until the worker is done.
    func wait() { done.wait() }

    private func parse() {
        rows.count = 0
        next = 0
        let fields = shape.slots.count
        let repeating = shape.slots.firstIndex(of: -2) ?? -1
        var out = [UnsafeMutableRawPointer](repeating: UnsafeMutableRawPointer(rows.writeTimes), count: fields)
        shape.whole.withUnsafeBufferPointer { whole in
            while next < text.count {
                rows.reserve(max(1_024, min(text.count - next, 1 << 16) / 16))
                for (f, slot) in shape.slots.enumerated() {
                    switch slot {
                    case -2: out[f] = UnsafeMutableRawPointer(rows.writeTimes + rows.count)
                    case -1: out[f] = UnsafeMutableRawPointer(rows.times + rows.count)
                    default: out[f] = rows.column(slot) + 8 * rows.count
                    }
                }
                let (n, after) = out.withUnsafeBufferPointer { o in
                    CSVReader.numberRows(text.base, from: next, end: text.count, fields, targets: o.baseAddress!,
                                         wholeNumber: whole.baseAddress!, repeating: repeating, maxRows: rows.capacity - rows.count)
                }
                guard n > 0 else { break }
                rows.count += n
                next = after
            }
        }
    }
}

extension UnsafeMutablePointer {
    /// A new allocation of `capacity` elements holding this one's first `count` (moved);
    /// this allocation is freed. The row blocks of the import pipelines grow by it.
    func moved(count: Int, toCapacity capacity: Int) -> UnsafeMutablePointer<Pointee> {
        let q = UnsafeMutablePointer<Pointee>.allocate(capacity: capacity)
        q.moveInitialize(from: self, count: count)
        deallocate()
        return q
    }
}
