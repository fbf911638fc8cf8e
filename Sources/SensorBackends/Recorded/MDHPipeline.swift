import Foundation
import SensorKitModel

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
        /// "sensor field" → samples where a field was missing (stored as missing).
        var missing: [String: Int] = [:]
        /// Bytes of the file read (for the progress bar).
        var bytesRead: Int64 = 0
    }

    /// Imports the file of `job` into `session`. Throws the parser's `ImportError` (file,
    /// line, JSON path, what was expected) or the store's error; either way the reader thread
    /// has stopped when it returns.
    static func run(_ job: MDHFormat.FileJob, session: ImportSession, progress: ImportProgress?) throws -> Notes {
        let queue = MHCBatchedPipeline.Queue(capacity: 3)
        let parser = MHCBatchedPipeline.Box(FileParser(job: job, source: try openByteSource(job.path), queue: queue))
        let thread = Thread {
            do {
                try parser.value.run()
                queue.finish(nil)
            } catch {
                queue.finish(error)
            }
        }
        // JSONReader.value recurses up to 200 levels.
        thread.stackSize = 8 << 20
        thread.start()
        do {
            while let piece = try queue.take() {
                progress?.rows += piece.batch.count
                progress?.fileProgress(piece.bytesRead)
                if piece.sorted {
                    try session.appendWholeBatches(participant: job.participant, device: piece.device, piece.batch)
                } else {
                    try session.append(participant: job.participant, device: piece.device, piece.batch)
                }
            }
        } catch {
            queue.cancel()
            queue.waitFinished()
            throw error
        }
        // The queue's lock orders the parser's last writes before this read.
        let notes = parser.value.notes
        progress?.fileProgress(notes.bytesRead)
        return notes
    }

    /// The reader thread: one file, an object `{device, samples}` or an array of them, into
    /// pieces. Samples may come before the device: they then wait in a small list (an export
    /// writes `device` first in practice).
    final class FileParser {
        let job: MDHFormat.FileJob
        let reader: JSONReader
        let queue: MHCBatchedPipeline.Queue
        let mapper: SampleMapper
        let fast: MDHFastItems?
        // Separate properties, not one `Notes`: the mapper takes two of them inout at once.
        private var notUnderstood: [String: Int] = [:]
        private var missing: [String: Int] = [:]
        private var warnings: [String] = []
        private var bytesRead: Int64 = 0
        var notes: Notes { Notes(notUnderstood: notUnderstood, warnings: warnings, missing: missing, bytesRead: bytesRead) }
        /// The device of the export object being read (nil until its `device` key).
        private var device: SRDevice?
        /// The rows not sent yet, and the device they belong to (fixed by the first row).
        private var rows: StreamBuffer?
        private var rowsDevice: SRDevice?

        init(job: MDHFormat.FileJob, source: ByteSource, queue: MHCBatchedPipeline.Queue) {
            self.job = job
            reader = JSONReader(file: job.path, source: source)
            self.queue = queue
            mapper = SampleMapper(sensor: job.sensor)
            fast = MDHFastItems(sensor: job.sensor)
        }

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
                    device = try MDHFormat.deviceFrom(try reader.value(), job: job, reader: reader)
                case "samples":
                    try reader.array { _ in try readItem(&early) }
                default:
                    _ = try reader.value()
                    notUnderstood["\(job.sensor.rawValue) file: \(key)", default: 0] += 1
                }
            }
            if !early.isEmpty {
                let b = sink()
                for (item, path, line) in early {
                    _ = try mapper.add(item, path: path, file: job.path, line: line, into: b, notUnderstood: &notUnderstood,
                                       missing: &missing)
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
            if device != nil, let fast, try fast.read(reader, into: sink()) {
                // Read straight from the bytes.
            } else {
                let line = reader.line
                let item = try reader.value()
                if device == nil, early.count < 10_000 {
                    early.append((item, reader.path, line))
                    return
                }
                _ = try mapper.add(item, path: reader.path, file: job.path, line: line, into: sink(), notUnderstood: &notUnderstood,
                                   missing: &missing)
            }
            if let b = rows, b.count >= b.capacity { try send(final: false) }
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
