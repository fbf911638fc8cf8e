import Foundation
import SensorKitModel

/// Batched MyHeartCounts streams (accelerometer, ambient pressure) on two threads: a reader
/// thread parses the CSV into blocks of whole write batches; the importing thread (which
/// owns the database connection) sorts, de-duplicates, encodes and stores them. A bounded
/// queue of blocks keeps memory independent of the file size.
enum MHCBatchedPipeline {
    /// Rows of whole write batches, all from one device.
    struct Block {
        var device: SRDevice
        var writeTimes: [Double] = []
        var times: [Double] = []
        var ids: [Int64] = []
        var values: [[Double]]
        var bytesRead: Int64 = 0
        var count: Int { times.count }

        init(device: SRDevice, columns: Int, capacity: Int) {
            self.device = device
            values = Array(repeating: [], count: columns)
            writeTimes.reserveCapacity(capacity)
            times.reserveCapacity(capacity)
            ids.reserveCapacity(capacity)
            for k in 0..<columns { values[k].reserveCapacity(capacity) }
        }
    }

    /// A small blocking queue between the two threads.
    final class Queue: @unchecked Sendable {
        private let cond = NSCondition()
        private var items: [Block] = []
        private var finished = false
        private var failure: Error?
        private var cancelled = false
        let capacity: Int

        init(capacity: Int) { self.capacity = capacity }

        /// False when the consumer gave up (stop producing).
        func put(_ b: Block) -> Bool {
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

        /// The next block; nil at the end. Rethrows the producer's error.
        func take() throws -> Block? {
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

    static let blockRows = 16_384

    /// Imports one file; returns the last watch seen (accelerometer may come from a watch).
    static func run(_ path: String, sensor: Sensor, participant: String, session: ImportSession,
                    progress: ImportProgress?) throws -> SRDevice? {
        let columns = MHCFormat.headers.first { $0.sensor == sensor }!.columns
        let csv = CSVReader(path: path, source: try openByteSource(path))
        _ = try csv.nextRecord()
        let queue = Queue(capacity: 4)
        let reader = Box(csv)
        let thread = Thread {
            do {
                try produce(reader.value, path: path, columns: columns, queue: queue)
                queue.finish(nil)
            } catch {
                queue.finish(error)
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
        var lastWatch: SRDevice? = nil
        var current: SRDevice? = nil
        var buf: StreamBuffer? = nil
        var slots: [Int] = []
        var uptime: Int? = nil
        do {
            while let block = try queue.take() {
                if block.device != current {
                    current = block.device
                    if block.device.kind == .watch { lastWatch = block.device }
                    let b = try session.buffer(participant: participant, device: block.device, sensor: sensor)
                    buf = b
                    slots = columns.map { b.column($0) ?? -1 }
                    uptime = b.column("timestamp")
                }
                let b = buf!
                if let first = block.writeTimes.first { b.noteWrite(first) }
                b.writeTimes.append(contentsOf: block.writeTimes)
                b.times.append(contentsOf: block.times)
                b.columns[slots[1]].appendInts(block.ids)
                for k in 0..<block.values.count { b.columns[slots[k + 2]].appendDoubles(block.values[k]) }
                if let u = uptime { b.columns[u].appendMissing(count: block.count) }
                progress?.rows += block.count
                progress?.fileProgress(block.bytesRead)
                try session.rowsAdded(block.count, to: b)
            }
        } catch {
            queue.cancel()
            queue.waitFinished()
            throw error
        }
        return lastWatch
    }

    /// The reader thread: the CSV rows into blocks of whole write batches.
    static func produce(_ csv: CSVReader, path: String, columns: [String], queue: Queue) throws {
        let nFields = columns.count
        let nValues = nFields - 3
        let deviceField = nFields - 1
        var deviceBytes: [UInt8] = []
        var device: SRDevice? = nil
        var haveDevice = false
        var block: Block? = nil
        // The open write batch.
        var runTimes: [Double] = [], runIDs: [Int64] = []
        var runValues: [[Double]] = Array(repeating: [], count: nValues)
        var runID: Int64 = 0
        var runMax = -Double.infinity
        var inRun = false
        let fast = UnsafeMutablePointer<Double>.allocate(capacity: 16)
        defer { fast.deallocate() }
        var fastID: Int64 = 0

        func closeRun() {
            guard inRun else { return }
            let n = runTimes.count
            block!.writeTimes.append(contentsOf: repeatElement(runMax, count: n))
            block!.times.append(contentsOf: runTimes)
            block!.ids.append(contentsOf: runIDs)
            for k in 0..<nValues { block!.values[k].append(contentsOf: runValues[k]) }
            runTimes.removeAll(keepingCapacity: true)
            runIDs.removeAll(keepingCapacity: true)
            for k in 0..<nValues { runValues[k].removeAll(keepingCapacity: true) }
            inRun = false
        }
        func emit() throws {
            guard var b = block, b.count > 0 else { return }
            b.bytesRead = csv.fileBytesRead
            if !queue.put(b) { throw CancellationError() }
            block = Block(device: b.device, columns: nValues, capacity: blockRows + 4_096)
        }
        func row(_ t: Double, _ id: Int64) throws {
            if !inRun || id != runID {
                closeRun()
                if block!.count >= blockRows { try emit() }
                inRun = true
                runID = id
                runMax = t
            } else if t > runMax {
                runMax = t
            }
            runTimes.append(t)
            runIDs.append(id)
            for k in 0..<nValues { runValues[k].append(fast[k + 2]) }
        }
        func fail(_ i: Int, _ expected: String) -> ImportError {
            ImportError(file: path, line: csv.line, field: columns[i], "expected \(expected), found '\(csv.string(i))'")
        }

        while true {
            if haveDevice && csv.fastNumericRecord(nFields - 1, fast, intField: 1, &fastID) {
                let t = fast[0]
                if !(t >= Plausible.earliest && t <= Plausible.latest) {
                    throw ImportError(file: path, line: csv.line, field: columns[0], Plausible.problem(t) ?? "implausible date")
                }
                try row(t, fastID)
                continue
            }
            guard try csv.nextRecord() else { break }
            guard csv.fieldCount == nFields else {
                throw ImportError(file: path, line: csv.line, "expected \(nFields) fields (\(columns.joined(separator: ","))), found \(csv.fieldCount)")
            }
            let db = csv.bytes(deviceField)
            let same = haveDevice && db.count == deviceBytes.count
                && deviceBytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, db.baseAddress!, db.count) == 0 }
            if !same {
                let d = MHCFormat.device(fromDescription: csv.string(deviceField))
                if d != device {
                    closeRun()
                    try emit()
                    device = d
                    haveDevice = true
                    block = Block(device: d, columns: nValues, capacity: blockRows + 4_096)
                }
                deviceBytes = Array(db)
                if csv.fieldQuoted[deviceField] {
                    csv.expectedTail = deviceBytes.contains(UInt8(ascii: "\"")) ? []
                        : [UInt8(ascii: "\"")] + deviceBytes + [UInt8(ascii: "\"")]
                } else {
                    csv.expectedTail = deviceBytes
                }
                csv.tailAfter = deviceField
            }
            guard let t = NumberParser.double(csv.bytes(0)) else {
                throw fail(0, csv.isEmpty(0) ? "a date in seconds since 1970 (the field is empty)" : "a date in seconds since 1970")
            }
            if !(t >= Plausible.earliest && t <= Plausible.latest) {
                throw ImportError(file: path, line: csv.line, field: columns[0], Plausible.problem(t) ?? "implausible date")
            }
            guard let id = NumberParser.int(csv.bytes(1)) else { throw fail(1, "a batch identifier (a whole number)") }
            for i in 2..<(nFields - 1) {
                guard let v = NumberParser.double(csv.bytes(i)) else { throw fail(i, "a number") }
                fast[i] = v
            }
            try row(t, id)
        }
        closeRun()
        try emit()
    }
}
