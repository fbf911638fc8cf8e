@_spi(Bindings) import LuaHost
import SensorKitModel

/// The `SRSensorReader` type: properties, recording, fetches and their delivery to the
/// delegate, and samples as Lua rows.
extension Bindings {
    func defineReader() {
        readerClass.describe = { "SRSensorReader(\($0.name))" }
        readerClass.property("sensor", get: { r, call in
            r.record.used = true
            call.push(r.sensor.rawValue)
        })
        readerClass.property("authorizationStatus", get: { [unowned self] r, call in
            r.record.used = true
            call.push(self.run.model.status(r.sensor).name)
        })
        // The delegate lives in a table with weak keys (an ephemeron table) keyed by the
        // reader's userdata, so a delegate whose callbacks refer to the reader does not
        // keep it alive.
        readerClass.property("delegate", get: { [unowned self] r, call in
            r.record.used = true
            guard let get = self.getDelegate else { call.pushNil(); return }
            call.push(get)
            call.push(call.reference(1))
            try call.state.pcall(arguments: 1, results: 1)
        }, set: { [unowned self] r, call, i in
            guard call.isNil(i) || call.typeName(i) == "table" else {
                throw LuaScriptError("reader.delegate must be a table of callbacks, got \(call.typeName(i))")
            }
            r.record.used = true
            r.record.hasDelegate = !call.isNil(i)
            r.record.delegateHearsStatus = call.hasRawField(i, "didChangeAuthorizationStatus")
            guard let set = self.setDelegate else { return }
            try self.run.state.call(set, [.reference(call.reference(1)), .reference(call.reference(i))], results: 0)
        })
        readerClass.method("startRecording") { [unowned self] r, _ in
            r.record.used = true
            let outcome = self.run.model.startRecording(r.sensor, stream: r.stream)
            try self.deliverRecording(r, outcome, "startRecording", success: "willStartRecording", failure: "startRecordingFailedWithError")
            return 0
        }
        readerClass.method("stopRecording") { [unowned self] r, _ in
            r.record.used = true
            let outcome = self.run.model.stopRecording(r.sensor, stream: r.stream)
            try self.deliverRecording(r, outcome, "stopRecording", success: "didStopRecording", failure: "stopRecordingFailedWithError")
            return 0
        }
        readerClass.method("fetch") { [unowned self] r, call in
            r.record.used = true
            let request = try self.request(call, 2)
            try self.warnWithoutDelegate(r, call, "fetch")
            try self.startFetch(r, request, call.reference(2))
            return 0
        }
        readerClass.method("fetchDevices") { [unowned self] r, call in
            r.record.used = true
            try self.warnWithoutDelegate(r, call, "fetchDevices")
            self.warnNoRecordedData(r)
            let response = try self.run.model.fetchDevices(r.sensor, stream: r.stream, source: self.run.source)
            try self.run.deliver(to: r) { [unowned self] in
                switch response {
                case .devices(let devices):
                    try self.run.callDelegate(r, "didFetchDevices", [.array(devices.map(self.deviceValue))])
                case .failed(let e):
                    try self.run.callDelegate(r, "fetchDevicesDidFailWithError", [try self.errorValue(e)])
                case .ignored: break
                }
            }
            return 0
        }
        readerClass.method("samples") { [unowned self] r, call in
            r.record.used = true
            let request = try self.request(call, 2)
            self.warnNoRecordedData(r)
            switch self.run.model.fetch(request, sensor: r.sensor, stream: r.stream, source: self.run.source) {
            case .failed(let e): throw SensorKitRaise(value: try self.errorValue(e))
            case .ignored:
                call.push(SampleSet(sensor: r.sensor, stream: r.stream, timeZone: self.run.clock.timeZone, batches: []),
                          as: self.sampleSetClass)
            case .delivering(let plan):
                self.warnRetentionLoss(r, plan)
                self.warnDeviceWithoutSensor(r, request, plan)
                self.warnEmptyForAReason(r, plan)
                let deliveries = self.run.deliveries
                // A set too large for the chunk budget is read again by each pass: its
                // samples are published by the first read that reaches the end, not again.
                let published = PublishedOnce()
                // Each pass reads the columns it needs (`ColumnProjection`).
                let set = SampleSet(sensor: r.sensor, stream: r.stream, timeZone: self.run.clock.timeZone) { (columns: ColumnProjection) in
                    var chunks = deliveries.chunks(of: plan, publishing: !published.complete, columns: columns)
                    return BatchIterator(columns: columns) {
                        guard let chunk = try chunks.next() else { published.complete = true; return nil }
                        return chunk.batch
                    }
                }
                call.push(set.cached(in: self.chunkBudget), as: self.sampleSetClass)
            }
            return 1
        }
        readerClass.method("devices") { [unowned self] r, call in
            r.record.used = true
            self.warnNoRecordedData(r)
            switch try self.run.model.fetchDevices(r.sensor, stream: r.stream, source: self.run.source) {
            case .devices(let devices): call.push(.array(devices.map(self.deviceValue)))
            case .failed(let e): throw SensorKitRaise(value: try self.errorValue(e))
            case .ignored: call.push(.array([]))
            }
            return 1
        }
    }

    /// Logs a warning, once per sensor, when a fetch (`samples`, `devices`, `fetch`,
    /// `fetchDevices`) asks a recording for a sensor it holds no data of at all for this
    /// participant: the answer is empty, and without a word it would read as zero.
    func warnNoRecordedData(_ r: Reader) {
        guard r.stream == .samples, run.source.holdsAnyData(participant: run.setup.id, sensor: r.sensor) == false,
              run.noDataWarned.insert(r.sensor).inserted else { return }
        run.log("warn", "\(r.sensor.rawValue): the recording holds no data of this sensor for this participant, on any device: "
            + "every fetch of it is empty (was it collected, authorized and exported? `sensorium inspect` lists what the store holds)")
    }

    /// Logs a warning, once per sensor and run, when a fetch (`samples`, `fetch`) reads a
    /// device of a kind the sensor cannot have — most often a watch sensor fetched with no
    /// `device`, which reads the current device, the iPhone (contract §7.5): the answer is
    /// empty, and without a word it would read as zero.
    func warnDeviceWithoutSensor(_ r: Reader, _ request: FetchRequest, _ plan: FetchPlan) {
        guard r.stream == .samples, let device = plan.device, !r.sensor.deviceKinds.contains(device.kind),
              run.deviceKindWarned.insert(r.sensor).inserted else { return }
        let kinds = r.sensor.deviceKinds.map { $0 == .watch ? "an Apple Watch" : "an iPhone" }.joined(separator: " or ")
        let read = request.device == nil ? "this fetch names no device, so it reads the current device (\(device.model))"
            : "this fetch reads \(device.model)\(device.productType.isEmpty ? "" : " (\(device.productType))")"
        // The advice depends on whether a device holds the sensor's data now: when none does,
        // `reader:devices()[1]` is nil and naming it changes nothing.
        let holding: [SRDevice]? = if case .devices(let d)? = try? run.model.fetchDevices(r.sensor, stream: r.stream, source: run.source) { d } else { nil }
        let advice = holding?.isEmpty == true
            ? "No device holds its data for this participant now: reader:devices() is empty (no \(kinds == "an Apple Watch" ? "watch" : "such device"), or its data not yet past the hold), so `device = reader:devices()[1]` is nil too; check `#reader:devices() > 0` first"
            : "Name the device: `device = reader:devices()[1]` (the devices holding its data; fetchDevices on the delegate path)"
        run.log("warn", "\(r.sensor.rawValue): \(read), which cannot have \(r.sensor.rawValue) (\(kinds) sensor): its answer is empty. " + advice)
    }

    /// Logs a warning, once per sensor and reason, when a fetch can deliver nothing for a
    /// reason the protocol can fix — its range ends more than a year before the study (an
    /// `SRAbsoluteTime` given as a wall time), lies wholly inside the 24-hour hold, or the
    /// sensor was never recording: SensorKit answers each with an empty result, as it
    /// should, and without a word it would read as zero. A device the sensor cannot have is
    /// `warnDeviceWithoutSensor`'s.
    func warnEmptyForAReason(_ r: Reader, _ plan: FetchPlan) {
        guard r.stream == .samples, plan.ranges.isEmpty, let device = plan.device, r.sensor.deviceKinds.contains(device.kind),
              let from = plan.request.from, let to = plan.request.to else { return }
        let clock = run.model.clock, zone = run.clock.timeZone, now = run.clock.now, hold = run.model.switches.hold(r.sensor)
        let trueFrom = clock.trueTime(of: from), trueTo = clock.trueTime(of: to)
        guard trueTo > trueFrom else { return }
        let name = r.sensor.rawValue
        let reason: (key: String, text: String)
        if trueTo < run.settings.start - 366 * 86_400 {
            reason = ("early", "this fetch asks for data written up to \(LocalTime.minuteLabel(clock.wallTime(atTrue: trueTo), zone)), more than a year before the study: "
                + "`from` and `to` are wall-clock seconds since 1970 (time.now(), time.parse); SensorKit's own times (sensorkit.now(), "
                + "sensorkit.absoluteTime) go in `fromAbsolute` and `toAbsolute`")
        } else if trueFrom >= now - hold {
            let hours = NumberText.plain(hold / 3600)
            reason = ("hold", "this fetch's range lies wholly inside SensorKit's \(hours)-hour hold (data written after "
                + "\(LocalTime.minuteLabel(clock.wallTime(atTrue: now - hold), zone)) is not readable yet): "
                + "its answer is empty; fetch a range that ended at least \(hours) hours ago")
        } else if run.model.recording.intervals(r.sensor, until: now).isEmpty {
            reason = ("recording", "the sensor was never recording for this participant, so SensorKit holds nothing of it: its answer is empty. "
                + "Call reader:startRecording() once authorized (study{} does so for the sensors it declares)")
        } else {
            return
        }
        guard run.emptyFetchWarned.insert("\(name) \(reason.key)").inserted else { return }
        run.log("warn", "\(name): " + reason.text)
    }

    /// Logs a warning, once per sensor and run, when a fetch reaches back past SensorKit's
    /// retention and recorded data there had already been purged (contract §8.2): an
    /// end-of-study fetch over a long study silently sees only the last ~7 days otherwise.
    func warnRetentionLoss(_ r: Reader, _ plan: FetchPlan) {
        guard let loss = plan.retentionLoss, run.retentionWarned.insert(r.sensor).inserted else { return }
        let tz = run.clock.timeZone
        run.log("warn", "\(r.sensor.rawValue): data written \(LocalTime.minuteLabel(loss.after, tz)) – \(LocalTime.minuteLabel(loss.through, tz)) "
            + "in this fetch's range was already purged (SensorKit keeps data about 7 days after the hold): "
            + "fetch each day while it is kept, e.g. every morning")
    }

    /// Logs a warning, once per reader, when `operation` (fetch, fetchDevices: their answers
    /// come only as callbacks) is started on a reader without a delegate: the answers would
    /// go nowhere. `call`'s argument 1 is the reader.
    func warnWithoutDelegate(_ r: Reader, _ call: LuaCall, _ operation: String) throws {
        guard !r.warnedNoDelegate, let get = getDelegate else { return }
        let delegate = try run.state.call(get, [.reference(call.reference(1))], results: 1)
        guard delegate.first?.isNil ?? true else { return }
        r.warnedNoDelegate = true
        run.log("warn", "\(operation)() on an SRSensorReader(\(r.name)) that has no delegate: its answers arrive only as "
            + "delegate callbacks and are lost (set reader.delegate, or use reader:samples / reader:devices)")
    }

    /// Queues the outcome of `startRecording`/`stopRecording` (`operation`) for the reader's
    /// delegate; a failure on a reader without one is warned about (`warnUnheardFailure`).
    func deliverRecording(_ r: Reader, _ outcome: RecordingOutcome, _ operation: String, success: String, failure: String) throws {
        try run.deliver(to: r) { [unowned self] in
            switch outcome {
            case .willStart, .didStop: try self.run.callDelegate(r, success, [])
            case .failed(let e):
                self.run.warnUnheardFailure(r, operation, failure, e)
                try self.run.callDelegate(r, failure, [try self.errorValue(e)])
            case .ignored: break
            }
        }
    }

    /// `reader:fetch(request)`: evaluates the request now and queues its delivery. A
    /// reader runs one fetch at a time (contract §7.6): from the call until its terminal callback,
    /// another `fetch` on the same reader fails with 8194 (`concurrentFetchPolicy =
    /// fail`, default) or waits its turn (`queue`).
    func startFetch(_ r: Reader, _ request: FetchRequest, _ requestRef: LuaReference) throws {
        if r.fetchRunning {
            switch run.model.switches.concurrentFetchPolicy {
            case .queue:
                r.queuedFetches.append((request, requestRef))
            case .fail:
                let error = SensorKitError(.internalError, "a fetch is already running on this reader (\(r.sensor.rawValue)): "
                    + "start the next one from didCompleteFetch or fetchFailedWithError, or use another reader (concurrentFetchPolicy = fail)")
                try run.deliver(to: r) { [unowned self] in
                    try self.run.callDelegate(r, "fetchFailedWithError", [.reference(requestRef), try self.errorValue(error)])
                }
            }
            return
        }
        warnNoRecordedData(r)
        let response = run.model.fetch(request, sensor: r.sensor, stream: r.stream, source: run.source)
        if case .ignored = response { return } // catalyst / visionOS: no callbacks at all
        if case .delivering(let plan) = response {
            warnRetentionLoss(r, plan)
            warnDeviceWithoutSensor(r, request, plan)
            warnEmptyForAReason(r, plan)
        }
        r.fetchRunning = true
        try run.deliver(to: r) { [unowned self] in try self.deliverFetch(r, response, request: request, requestRef: requestRef) }
    }

    /// The reader's fetch has ended (just before its terminal callback): the next queued one starts.
    func finishFetch(_ r: Reader) throws {
        r.fetchRunning = false
        if !r.queuedFetches.isEmpty {
            let (request, ref) = r.queuedFetches.removeFirst()
            try startFetch(r, request, ref)
        }
    }

    /// Delivers a fetch: one `didFetchResult(reader, request, result)` per result while it
    /// returns true, then `didCompleteFetch(reader, request)`; or `fetchFailedWithError`.
    /// Without a device in the request, the device used is written back into the request
    /// table before the first callback (contract §7.5).
    func deliverFetch(_ r: Reader, _ response: FetchResponse, request: FetchRequest, requestRef: LuaReference) throws {
        switch response {
        case .ignored:
            try finishFetch(r)
        case .failed(let e):
            try finishFetch(r)
            try run.callDelegate(r, "fetchFailedWithError", [.reference(requestRef), try errorValue(e)])
        case .delivering(let plan):
            if request.device == nil, let device = plan.request.device, let setField {
                try run.state.call(setField, [.reference(requestRef), .string("device"), deviceValue(device)], results: 0)
            }
            var stop = false
            var chunks = run.deliveries.chunks(of: plan)
            while !stop, let chunk = try chunks.next() {
                for i in 0..<chunk.resultCount where !stop {
                    let result = try resultValue(chunk, i, sensor: r.sensor, stream: r.stream)
                    let answer = try run.callDelegate(r, "didFetchResult", [.reference(requestRef), result])
                    // Only `true` asks for more (SensorKit's Bool): `false`, nil or anything else
                    // stops, and so does a delegate without didFetchResult, after the first
                    // result (contract §7.2 step 5, contract §11).
                    if answer != .boolean(true) { stop = true }
                }
            }
            try finishFetch(r)
            try run.callDelegate(r, "didCompleteFetch", [.reference(requestRef)])
        }
    }

    /// One `SRFetchResult`: `{ timestamp = SR, sample = {...} }`, or for array sensors
    /// `sample` is a SampleSet of the batch written together. A deletion record is an
    /// `SRDeletionRecord` table (startTime, endTime, reason) for every sensor, array-shaped
    /// ones too (contract §3.1, §3.3.21).
    func resultValue(_ chunk: FetchChunk, _ i: Int, sensor: Sensor, stream: FetchStream) throws -> LuaValue {
        let rows = chunk.rows(ofResult: i)
        let timestamp = LuaValue.number(chunk.timestamp(ofResult: i).rawValue)
        if sensor.shape == .array && stream == .samples {
            let set = SampleSet(sensor: sensor, stream: stream, timeZone: run.clock.timeZone, batches: [chunk.batch.slice(rows)])
            let state: LuaState = run.state
            let ref = state.withStackGuard {
                state.push(set, as: sampleSetClass)
                return state.makeReference(at: -1)
            }
            return .dictionary(["timestamp": timestamp, "sample": .reference(ref)])
        }
        let rowTime = stream == .samples ? sensor.info.rowTimeField?.name : nil
        return .dictionary(["timestamp": timestamp, "sample": Bindings.rowValue(chunk.batch, rows.lowerBound, rowTime: rowTime)])
    }

    /// One row of a batch as a Lua table: its fields plus `time` and `writeTime`, the
    /// sample's own date under its SensorKit name too (`rowTime`: `startDate`, `date`, …),
    /// and `windowStart`/`windowEnd` when the sample spans a window (`SampleWindow`).
    static func rowValue(_ batch: SampleBatch, _ i: Int, rowTime: String?) -> LuaValue {
        var entries: [String: LuaValue] = ["time": .number(batch.times[i]), "writeTime": .number(batch.writeTimes[i])]
        if let rowTime { entries[rowTime] = .number(batch.times[i]) }
        if let window = FieldReader.window(in: batch, row: i) {
            entries["windowStart"] = .number(window.start)
            if !window.end.isNaN { entries["windowEnd"] = .number(window.end) }
        }
        for column in batch.columns {
            if let present = column.present, !present[i] { continue }
            switch column.data {
            case .double(let v): entries[column.name] = .number(v[i])
            case .int(let v): entries[column.name] = .integer(v[i])
            case .intRuns(let v): entries[column.name] = .integer(v[i])
            case .bool(let v): entries[column.name] = .boolean(v[i])
            case .string(let v): entries[column.name] = .string(v[i])
            case .value(let v): entries[column.name] = fieldValue(v[i])
            }
        }
        return .dictionary(entries)
    }

    static func fieldValue(_ v: FieldValue) -> LuaValue {
        switch v {
        case .null: .nil
        case .bool(let b): .boolean(b)
        case .int(let i): .integer(i)
        case .double(let d): .number(d)
        case .string(let s): .string(s)
        case .array(let a): .array(a.map(fieldValue))
        case .object(let o): .table(LuaTable(entries: o.map { (key: LuaValue.string($0.0), value: fieldValue($0.1)) }))
        }
    }
}

/// One `SRSensorReader` of a protocol.
///
/// Lifetime: like an `SRSensorReader` object, a reader lives while the protocol refers
/// to it. The runtime keeps its userdata only weakly (by `id`, in the prelude's `live`
/// table) and its delegate in a weak-keyed table, so once the protocol drops every
/// reference the reader is collected and gets no more callbacks. While a callback for
/// it is queued (`pins` > 0: a fetch, `fetchDevices`, start/stop outcome or status
/// change) it is pinned, so what the protocol started still reports. Recording is the
/// app's, not the object's (contract §6.2): collecting a reader does not stop it.
public final class Reader {
    public let sensor: Sensor
    public let stream: FetchStream
    /// The key of the reader's userdata in the prelude's tables.
    let id: Int64
    /// A fetch was started and its terminal callback has not been delivered yet (contract §7.6).
    var fetchRunning = false
    /// Fetches waiting for the running one (`concurrentFetchPolicy = queue`).
    var queuedFetches: [(FetchRequest, LuaReference)] = []
    /// Queued callbacks for this reader; the userdata is pinned while it is positive.
    var pins = 0
    /// Enrolled automatically (`Enrolment`): starts recording whenever its sensor is granted.
    var recordsOnGrant = false
    /// The no-delegate warning was given (`warnWithoutDelegate`).
    var warnedNoDelegate = false
    /// What the runtime keeps of the reader after it is collected, for its warnings.
    let record: ReaderRecord

    init(sensor: Sensor, stream: FetchStream, id: Int64, record: ReaderRecord) {
        self.sensor = sensor
        self.stream = stream
        self.id = id
        self.record = record
    }

    /// `"ambientLightSensor"`, or `"ambientLightSensor.tombstones"` for the deletion records.
    var name: String { SensorStream(sensor, stream).name }
}

/// What the runtime remembers of a reader for the warnings about callbacks that reach no
/// one (`ReaderWarnings`): where the protocol made it, whether the protocol ever used it
/// and whether it has a delegate. Outlives the reader: a collected reader's record says
/// whose callbacks are lost.
final class ReaderRecord {
    let sensor: Sensor
    /// `SRSensorReader(name)` as the protocol sees it.
    let title: String
    /// `"protocol.lua:12"`: the script line that made the reader; nil for the runtime's own
    /// readers (declarative enrolment), which the warnings leave alone.
    let madeAt: String?
    /// The protocol set its delegate, read a property or called a method.
    var used = false
    /// The reader's delegate is a table (not nil).
    var hasDelegate = false
    /// When the delegate was set, it had a `didChangeAuthorizationStatus` callback.
    var delegateHearsStatus = false

    init(sensor: Sensor, title: String, madeAt: String?) {
        self.sensor = sensor
        self.title = title
        self.madeAt = madeAt
    }

    /// `"SRSensorReader(ambientLightSensor) made at protocol.lua:12"`.
    var described: String { title + (madeAt.map { " made at " + $0 } ?? "") }
}

/// Whether a read of a `reader:samples{}` set has published all of its chunks
/// (`Deliveries`), so that later reads of the same plan need not publish them again.
private final class PublishedOnce: @unchecked Sendable {
    var complete = false
}
