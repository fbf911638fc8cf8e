import Foundation
import SensorKitModel
import StudyStore

/// One MyDataHelps file on two threads, the shape of `MHCBatchedPipeline` and
/// `NativePipeline` (and their queue): a reader thread parses the JSON (`FileParser`: plain
/// items straight from the bytes by `MDHFastItems`, any other through `SampleMapper`) into
/// pieces of whole write batches of about a chunk; the importing thread, which owns the
/// database connection, de-duplicates, encodes and stores them. Memory stays bounded by a
/// few chunks whatever the file size.
enum MDHPipeline {
    /// What a file's parser noted besides its rows; the importing thread merges it into the
    /// import's stats when the file is done.
    struct Notes: Sendable {
        var notUnderstood: [String: Int] = [:]
        var warnings: [String] = []
        /// Fields missing in samples → how many (stored as missing, or timed by the item).
        var missing: [MDHFormat.MissingField: Int] = [:]
        /// Bytes of the file read (for the progress bar).
        var bytesRead: Int64 = 0
        /// Items the second reader read and the first took (see `FileParser.Speculation`).
        var itemsReadAhead = 0
        /// The unit of the file's item timestamps (nil: the file held no numeric one).
        var timestampUnit: MDHItemTimes.Unit?
        /// The file began with a UTF-8 byte-order mark (passed over).
        var byteOrderMark = false
        /// The forms its samples were met in that the summary names (`ImportForm`).
        var forms: Set<String> = []
    }

    /// Imports the file of `job` into `session`. Throws the parser's `ImportError` (file,
    /// line, JSON path, what was expected) or the store's error; either way the reader thread
    /// has stopped when it returns. `speculationBytes`: the window two readers share (tests
    /// make it small).
    static func run(_ job: MDHFormat.FileJob, session: ImportSession, progress: ImportProgress?,
                    speculationBytes: Int = FileParser.speculationBytes, source: ByteSource? = nil) throws -> Notes {
        let queue = MHCBatchedPipeline.Queue(capacity: 3)
        let parser = MHCBatchedPipeline.Box(FileParser(job: job, window: try window(job.path, source: source), queue: queue,
                                                       speculationBytes: speculationBytes))
        // JSONReader.value recurses up to 200 levels: 8 MiB of stack.
        try MHCBatchedPipeline.drive(queue, participant: job.participant, session: session, progress: progress,
                                     stackSize: 8 << 20, parse: { try parser.value.run() })
        // The queue's lock orders the parser's last writes before this read.
        let notes = parser.value.notes
        progress?.fileProgress(notes.bytesRead)
        return notes
    }

    /// The bytes of the file at `path`: a plain file mapped (`ByteWindow(mapping:)`), else read.
    /// `source`: the file opened already (`SourcesAhead`).
    static func window(_ path: String, source: ByteSource? = nil) throws -> ByteWindow {
        let source = try source ?? openByteSource(path)
        if let file = source as? FileSource, let mapped = ByteWindow(mapping: file) { return mapped }
        return ByteWindow(source)
    }

    /// The reader thread: one file, an object `{device, samples}` or an array of them, into
    /// pieces. Samples may come before the device: they then wait in a small list (an export
    /// writes `device` first in practice).
    final class FileParser {
        let job: MDHFormat.FileJob
        let reader: JSONReader
        let queue: MHCBatchedPipeline.Queue
        let mapper: SampleMapper
        /// The unit of the file's item timestamps (the first item decides it).
        let itemTimes: MDHItemTimes
        let fast: MDHFastItems?
        // Separate properties, not one `Notes`: the mapper takes three of them inout at once.
        private var notUnderstood: [String: Int] = [:]
        private var missing: [MDHFormat.MissingField: Int] = [:]
        private var warnings: [String] = []
        private var forms: Set<String> = []
        private var bytesRead: Int64 = 0
        private var itemsReadAhead = 0
        var notes: Notes {
            Notes(notUnderstood: notUnderstood, warnings: warnings, missing: missing, bytesRead: bytesRead, itemsReadAhead: itemsReadAhead,
                  timestampUnit: itemTimes.unit, byteOrderMark: reader.window.byteOrderMarkSkipped, forms: forms)
        }
        /// The device of the export object being read (nil until its `device` key).
        private var device: SRDevice?
        /// The rows not sent yet, and the device they belong to (fixed by the first row).
        private var rows: StreamBuffer?
        private var rowsDevice: SRDevice?
        /// The second reader of plain items (see `Speculation`), and its current run.
        private let helper: MDHFastItems?
        private var speculation: Speculation?
        /// Items to read before the next speculation (after one that failed).
        private var cooldown = 0
        private let speculationBytes: Int

        init(job: MDHFormat.FileJob, window: ByteWindow, queue: MHCBatchedPipeline.Queue, speculationBytes: Int) {
            self.job = job
            self.speculationBytes = speculationBytes
            reader = JSONReader(file: job.path, window: window)
            self.queue = queue
            itemTimes = MDHItemTimes(file: job.path)
            mapper = SampleMapper(sensor: job.sensor, itemTimes: itemTimes)
            fast = MDHFastItems(sensor: job.sensor)
            helper = MDHFastItems(sensor: job.sensor)
            reader.window.willMove = { [unowned self] in dropSpeculation(failed: true) }
        }

        deinit { dropSpeculation() }

        func run() throws {
            guard let first = try reader.peek() else { throw reader.error("empty file: expected a JSON object with device and samples") }
            if first == UInt8(ascii: "[") {
                try reader.array { _ in try readExport() }
            } else {
                try readExport()
            }
            guard try reader.atEnd() else { throw reader.error("unexpected text after the end of the JSON document") }
            bytesRead = reader.fileBytesRead
        }

        /// One `{device, samples}` object; its rows are all sent when it ends.
        func readExport() throws {
            guard try reader.peek() == UInt8(ascii: "{") else {
                throw reader.error("expected an object with \"device\" and \"samples\"")
            }
            device = nil
            var early: [(FieldValue, String, Int)] = []
            try reader.object { key in
                switch key {
                case "device":
                    let v = try reader.value()
                    device = try MDHFormat.deviceFrom(v, job: job, reader: reader)
                    if let w = MDHFormat.kindMismatch(v, job: job), !warnings.contains(w) { warnings.append(w) }
                    for key in MDHFormat.unknownDeviceKeys(v) {
                        notUnderstood["\(job.sensor.rawValue) device: \(ImportError.excerpt(key))", default: 0] += 1
                    }
                case "samples":
                    // The second reader stops before the window can move.
                    defer { dropSpeculation() }
                    try reader.array { _ in try readItem(&early) }
                default:
                    _ = try reader.value()
                    notUnderstood["\(job.sensor.rawValue) file: \(ImportError.excerpt(key))", default: 0] += 1
                }
            }
            if !early.isEmpty {
                let b = sink()
                for (item, path, line) in early {
                    _ = try mapper.add(item, path: path, file: job.path, line: line, into: b, notUnderstood: &notUnderstood,
                                       missing: &missing, forms: &forms)
                }
            }
            try send(final: true)
            rows = nil
            rowsDevice = nil
        }

        /// One `{timestamp, sample}` item of `samples`: plain ones straight from the bytes, any
        /// other as a `FieldValue` through the mapper (kept in `early` while no device is known).
        func readItem(_ early: inout [(FieldValue, String, Int)]) throws {
            _ = try reader.peek()
            if let spec = speculation {
                if reader.window.start == spec.start {
                    if try adopt(spec) { return }
                } else if reader.window.start > spec.start {
                    // Past the second reader's start without landing on it: not an item start.
                    dropSpeculation(failed: true)
                }
            }
            if itemTimes.unit == nil, device != nil, fast != nil { try decideUnitAtItemStart() }
            if device != nil, itemTimes.unit != nil, let fast, try fast.read(reader, into: sink()) {
                // Read straight from the bytes.
            } else {
                let line = reader.line
                let item = try reader.value()
                if device == nil, early.count < 10_000 {
                    early.append((item, reader.path, line))
                    return
                }
                _ = try mapper.add(item, path: reader.path, file: job.path, line: line, into: sink(), notUnderstood: &notUnderstood,
                                   missing: &missing, forms: &forms)
            }
            if let b = rows, b.count >= b.capacity { try send(final: false) }
            if itemTimes.unit != nil, fast?.timestampDivisor != itemTimes.divisor {
                fast?.timestampDivisor = itemTimes.divisor
                helper?.timestampDivisor = itemTimes.divisor
            }
            if cooldown > 0 { cooldown -= 1 } else if speculation == nil, device != nil, fast != nil, itemTimes.unit != nil { try speculate() }
        }

        /// Decides the file's unit of item timestamps from the item starting here when it
        /// begins with its `timestamp` (as exports write it), reading only that number: the
        /// item can then be read straight from the bytes (the general reader, which otherwise
        /// decides, is many times slower on an item of thousands of elements). Leaves the unit
        /// undecided for any other form; throws the unit's error for a timestamp that is a
        /// date in neither unit.
        func decideUnitAtItemStart() throws {
            let window = reader.window
            try window.fill(atLeast: 64)
            let p = window.base, end = window.end
            var i = window.start
            func blanks() { while i < end, p[i] == 0x20 || p[i] == 0x0A || p[i] == 0x0D || p[i] == 0x09 { i += 1 } }
            let key = Array("\"timestamp\"".utf8)
            blanks()
            guard i < end, p[i] == UInt8(ascii: "{") else { return }
            i += 1
            blanks()
            guard end - i > key.count, memcmp(p + i, key, key.count) == 0 else { return }
            i += key.count
            blanks()
            guard i < end, p[i] == UInt8(ascii: ":") else { return }
            i += 1
            blanks()
            let from = i
            while i < end, (p[i] >= 48 && p[i] <= 57) || p[i] == UInt8(ascii: ".") || p[i] == UInt8(ascii: "-")
                || p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E") || p[i] == UInt8(ascii: "+") { i += 1 }
            guard i > from, let x = NumberParser.double(UnsafeBufferPointer(start: p + from, count: i - from)) else { return }
            do {
                _ = try itemTimes.seconds(.double(x), file: job.path, path: reader.path + ".timestamp")
            } catch var e as ImportError {
                if e.line == nil { e.line = reader.line }
                throw e
            }
        }

        // MARK: Two readers

        /// A second reader of plain items on another thread (`MDHFastItems.readRun`), from a
        /// place in the window that looks like an item start (`]}`, ',', `{`) about halfway to
        /// its end, while this thread reads the items before it. When this thread lands
        /// exactly there, the second reader's items are the ones it would have read (parsing
        /// from an item start depends on nothing else), and are taken instead; otherwise they
        /// are dropped. Either way the rows, their order, the pieces and every error are those
        /// of one reader. While it runs, nothing moves the window: reading past its end first
        /// stops it (`ByteWindow.willMove`).
        final class Speculation: @unchecked Sendable {
            let start: Int
            let buffer: StreamBuffer
            private(set) var run = MDHFastItems.Run()
            private let done = DispatchSemaphore(value: 0)
            private var joined = false

            /// Starts reading `base[start..<end]` with `reader` into `buffer` on another thread,
            /// up to the first item that ends at `stopAfter` or later.
            init(reader: MDHFastItems, base: UnsafeMutablePointer<UInt8>, start: Int, end: Int, stopAfter: Int, buffer: StreamBuffer) {
                self.start = start
                self.buffer = buffer
                let job = Job(reader: reader, base: base)
                DispatchQueue.global().async { [self] in
                    run = job.reader.readRun(job.base, from: start, end: end, stopAfter: stopAfter, into: self.buffer)
                    done.signal()
                }
            }

            private struct Job: @unchecked Sendable {
                let reader: MDHFastItems
                let base: UnsafeMutablePointer<UInt8>
            }

            /// Waits for the other thread (once).
            func join() {
                if !joined { done.wait(); joined = true }
            }
        }

        /// Window bytes the two readers share.
        static let speculationBytes = 8 << 20

        /// Starts a second reader in the second half of the window, when the file holds
        /// enough of it and an item start is found there.
        func speculate() throws {
            guard let helper else { return }
            let window = reader.window
            try window.fill(atLeast: windowBytes)
            let from = window.start, end = window.end
            guard end - from >= speculationBytes / 4 else { return }
            // Each reader gets about half the window (a mapped file is all in the window).
            let half = min((end - from) / 2, windowBytes / 2)
            let p = window.base
            @inline(__always) func blanks(_ j: inout Int) {
                while p[j] == 0x20 || p[j] == 0x0A || p[j] == 0x0D || p[j] == 0x09 { j += 1 }
            }
            var k = from + half
            let searchEnd = min(end, k + half)
            while k < searchEnd, let hit = memchr(p + k, Int32(UInt8(ascii: "]")), searchEnd - k) {
                var j = p.distance(to: hit.assumingMemoryBound(to: UInt8.self)) + 1
                guard p[j] == UInt8(ascii: "}") else { k = j; continue }
                j += 1
                blanks(&j)
                if p[j] == UInt8(ascii: ",") {
                    j += 1
                    blanks(&j)
                    if p[j] == UInt8(ascii: "{") {
                        speculation = Speculation(reader: helper, base: p, start: j, end: end, stopAfter: j + half,
                                                  buffer: StreamBuffer(streamID: 0, sensor: job.sensor))
                        return
                    }
                }
                k = j
            }
        }

        /// At the second reader's start: takes its items (rows, lines, item count) and leaves the
        /// reader after the last of them. False when it read none.
        func adopt(_ spec: Speculation) throws -> Bool {
            spec.join()
            speculation = nil
            let run = spec.run
            guard !run.items.isEmpty else { cooldown = 8; return false }
            let all = spec.buffer.take()
            let b = sink()
            var from = 0
            for n in run.items {
                try b.append(all, rows: from..<from + n)
                from += n
                if b.count >= b.capacity { try send(final: false) }
            }
            reader.window.start = run.end
            reader.skippedLines(run.lines)
            reader.skippedItems(run.items.count - 1)
            itemsReadAhead += run.items.count
            // The next item most likely runs past the window's end (where the second reader
            // stopped): read on now rather than when it is half read; and start the next
            // second reader now, not after one item read alone.
            try reader.window.fill(atLeast: windowBytes)
            try speculate()
            return true
        }

        /// The window the two readers share: `speculationBytes`, or room for four of the
        /// longest items so far (each reader gets whole items; at most 64 MiB).
        var windowBytes: Int { max(speculationBytes, min(4 * (fast?.largestItemBytes ?? 0), 64 << 20)) }

        /// Stops the second reader (its items are not taken).
        func dropSpeculation(failed: Bool = false) {
            guard let spec = speculation else { return }
            spec.join()
            speculation = nil
            if failed { cooldown = 8 }
        }

        /// The buffer rows go to; the first call names their device (after the folder when
        /// the file named none, with a warning).
        func sink() -> StreamBuffer {
            if let b = rows { return b }
            if device == nil {
                device = SRDevice(name: job.deviceID, model: job.kind == .watch ? "Watch" : "iPhone", systemName: "",
                                  systemVersion: "", productType: job.deviceID, kind: job.kind)
                let w = "\(job.path): no device object before the samples; device named after its folder"
                if !warnings.contains(w) { warnings.append(w) }
            }
            let b = StreamBuffer(streamID: 0, sensor: job.sensor)
            rows = b
            rowsDevice = device
            return b
        }

        /// Sends the buffered rows as a piece: all of them when `final`, else all but the last
        /// write batch (it may continue in the next item).
        func send(final: Bool) throws {
            guard let b = rows, let device = rowsDevice, b.count > 0 else { return }
            let (batch, sorted) = b.take(keepingLastRun: !final)
            let piece = MHCBatchedPipeline.Piece(device: device, batch: batch, bytesRead: reader.fileBytesRead, sorted: sorted)
            if !queue.put(piece) { throw CancellationError() }
        }
    }
}
