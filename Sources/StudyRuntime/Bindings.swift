import Foundation
import LuaHost
import SensorKitModel

/// The study API of a protocol: `study`, `sensorkit`, `schedule`, `time`,
/// `report`, `log`, and the Reader and SampleSet types. Each function turns Lua
/// arguments into model operations; delegate callbacks are queued on the event
/// loop, never called from inside the API call (SensorKit delivers asynchronously).
final class Bindings {
    unowned let run: ParticipantRun
    let readerClass = LuaClass<Reader>("SRSensorReader")
    let sampleSetClass = LuaClass<SampleSet>("SampleSet")
    let groupsClass = LuaClass<GroupedSet>("GroupedSampleSet")
    /// The prelude's `deliver(reader, method, ...)`: calls a delegate method if present.
    var deliver: LuaReference?
    /// The prelude's error constructor: `make_error(code, name, domain, message, underlying)`.
    var makeError: LuaReference?
    /// The prelude's `set_field(table, key, value)` (request write-back).
    var setField: LuaReference?
    /// The prelude's reader bookkeeping (see `Reader`): `register_reader(id, reader)`,
    /// `get_delegate(reader)`, `set_delegate(reader, delegate)`, `pin(id)`, `unpin(id)`.
    var registerReader: LuaReference?
    var getDelegate: LuaReference?
    var setDelegate: LuaReference?
    var pinReader: LuaReference?
    var unpinReader: LuaReference?
    /// The next reader's id.
    var nextReaderID: Int64 = 1

    init(run: ParticipantRun) { self.run = run }

    static func install(in run: ParticipantRun) throws {
        let b = Bindings(run: run)
        run.bindings = b
        b.defineReader()
        b.defineSampleSet()
        b.defineSampleSetDisplay()
        b.defineSummarize()
        let state = run.state
        state.register(b.readerClass)
        state.register(b.sampleSetClass)
        state.register(b.groupsClass)
        state.register("study") { call in try b.study(call) }
        state.registerModule("sensorkit", b.sensorkitFunctions() + b.catalogueFunctions())
        state.registerModule("schedule", b.scheduleFunctions())
        state.registerModule("report", b.reportFunctions() + [b.findingFunction()])
        b.installTestBuiltins()
        state.registerModule("__runtime", b.runtimeFunctions())
        let prelude = try state.execute(Bindings.prelude, chunkName: "=runtime")
        func function(_ i: Int) -> LuaReference? {
            prelude.dropFirst(i).first.flatMap { if case .function(let f) = $0 { f } else { nil } }
        }
        b.deliver = function(0)
        b.makeError = function(1)
        b.setField = function(2)
        b.registerReader = function(3)
        b.getDelegate = function(4)
        b.setDelegate = function(5)
        b.pinReader = function(6)
        b.unpinReader = function(7)
    }

    // MARK: study{}

    func study(_ call: LuaCall) throws -> Int32 {
        let table = try call.table(1)
        let manifest = StudyManifest(table: Bindings.declaredEntries(table))
        run.model.study = manifest.resolved()
        run.manifest = manifest
        run.studyDeclared = true
        return 0
    }

    static func declared(_ value: LuaValue) -> DeclaredValue {
        switch value {
        case .string(let s): return .string(s)
        case .bytes(let b): return .string(String(decoding: b, as: UTF8.self))
        case .integer(let i): return .number(Double(i))
        case .number(let d): return .number(d)
        case .boolean(let b): return .bool(b)
        case .table(let t):
            if let items = t.arrayValue, !items.isEmpty { return .list(items.map(declared)) }
            return .table(declaredEntries(t))
        default: return .string(value.typeName)
        }
    }

    static func declaredEntries(_ table: LuaTable) -> [DeclaredEntry] {
        table.entries.compactMap { e in
            guard let key = e.key.stringValue else { return nil }
            return DeclaredEntry(key, declared(e.value))
        }
    }

    // MARK: sensorkit

    func sensor(_ call: LuaCall, _ index: Int32) throws -> Sensor {
        try sensor(named: try call.string(index))
    }

    func sensor(named name: String) throws -> Sensor {
        if let s = Sensor(name: name) { return s }
        let hint = SensorCatalogue.sensorSuggestions(for: name).first.map { "; did you mean '\($0)'?" } ?? ""
        throw LuaScriptError("unknown sensor '\(name)'\(hint) (`sensorium sensors` lists them)")
    }

    func sensorkitFunctions() -> [(String, LuaFunction)] {
        [
            ("reader", { [unowned self] call in
                let name = try call.string(1)
                var stream = FetchStream.samples
                var sensorName = name
                if name.hasSuffix(".tombstones") {
                    stream = .deletionRecords
                    sensorName = String(name.dropLast(".tombstones".count))
                }
                let s = try self.sensor(named: sensorName)
                try self.requireSensorKit("sensorkit.reader")
                try self.requireOS(s, "sensorkit.reader")
                let reader = Reader(sensor: s, stream: stream, id: self.nextReaderID)
                self.nextReaderID += 1
                if self.run.usedSensors[s] == nil { self.run.usedSensors[s] = "sensorkit.reader" }
                call.push(reader, as: self.readerClass)
                // Weakly: the runtime keeps no reader alive (see `Reader`).
                if let register = self.registerReader {
                    try self.run.state.call(register, [.integer(reader.id), .reference(call.reference(-1))], results: 0)
                }
                self.run.readers.removeAll { $0.reader == nil }
                self.run.readers.append(WeakReader(reader))
                return 1
            }),
            ("requestAuthorization", { [unowned self] call in
                let list = try call.table(1)
                var sensors = Set<Sensor>()
                for (i, item) in (list.arrayValue ?? list.entries.map(\.value)).enumerated() {
                    guard let name = item.stringValue, let s = Sensor(name: name) else {
                        let hint = item.stringValue.flatMap { (name: String) in SensorCatalogue.sensorSuggestions(for: name).first }
                            .map { (s: String) in "; did you mean '\(s)'?" } ?? ""
                        throw LuaScriptError("requestAuthorization: item \(i + 1) is not a known sensor (\(item.stringValue ?? item.typeName))\(hint)")
                    }
                    sensors.insert(s)
                    self.run.usedSensors[s] = "sensorkit.requestAuthorization"
                }
                let completion = call.isNil(2) ? nil : try call.function(2)
                try self.requireSensorKit("requestAuthorization")
                for s in sensors.sorted(by: { $0.rawValue < $1.rawValue }) { try self.requireOS(s, "requestAuthorization") }
                try self.requestAuthorization(sensors, completion: completion)
                return 0
            }),
            ("isAvailable", { [unowned self] call in
                call.push(self.run.model.switches.platform.isSensorKitAvailable)
                return 1
            }),
            ("status", { [unowned self] call in
                call.push(self.run.model.status(try self.sensor(call, 1)).name)
                return 1
            }),
            ("now", { [unowned self] call in
                call.push(self.run.model.clock.current().rawValue)
                return 1
            }),
            ("absoluteTime", { [unowned self] call in
                call.push(self.run.model.clock.fromUnixTime(try call.double(1)).rawValue)
                return 1
            }),
            ("wallTime", { [unowned self] call in
                call.push(self.run.model.clock.toUnixTime(SRAbsoluteTime(try call.double(1))))
                return 1
            }),
            ("currentDevice", { [unowned self] call in
                call.push(self.deviceValue(self.run.model.currentDevice(source: self.run.source)))
                return 1
            }),
            ("sensors", { call in
                call.push(.array(Sensor.allCases.map { .string($0.rawValue) }))
                return 1
            }),
            ("participant", { [unowned self] call in
                call.push(self.run.setup.id)
                return 1
            }),
        ]
    }

    /// `SRSensorReader.requestAuthorization(sensors:completion:)`.
    ///
    /// The sheet is answered asynchronously: statuses stay as they are until the
    /// completion is delivered (§5.2: never on the caller's stack), and while the sheet is
    /// on screen a second request that has something new to ask fails with 4/8195
    /// (prompt busy). On delivery the participant's answers apply, the status changes
    /// are queued (`didChangeAuthorizationStatus` to every live reader, §5.3), then the
    /// completion runs — so the changes arrive after the completion, and before anything
    /// the completion itself starts (§14.4).
    func requestAuthorization(_ sensors: Set<Sensor>, completion: LuaReference?) throws {
        let run = self.run
        var preview = run.model
        let outcome = preview.requestAuthorization(sensors, policy: run.setup.consent)
        switch outcome.delivery {
        case .noCallback:
            return
        case .terminate(let error):
            // Missing entitlement with missingEntitlementMode = terminate (§5.6): the app dies.
            throw LuaScriptError("the app was terminated by SensorKit (missingEntitlementMode = terminate): \(error)")
        case .completion:
            break
        }
        guard outcome.sheetShown else {
            // Answered without a sheet (empty set, 8197, 0, 8201, 8195…): nothing changes.
            run.deliver { [unowned self] in
                if let completion { try self.run.state.call(completion, [try self.errorValue(outcome.error)], results: 0) }
            }
            return
        }
        run.model.sheetBusy = true
        // The readers of the sensors asked about wait for their didChangeAuthorizationStatus:
        // keep them alive until the sheet is answered (notify then pins those it tells).
        let groups = Set(sensors.flatMap(\.authorizationGroup))
        let waiting = run.readers.compactMap(\.reader).filter { groups.contains($0.sensor) }
        for r in waiting { try run.pin(r) }
        run.deliver { [unowned self] in
            defer { for r in waiting { self.run.unpin(r) } }
            self.run.model.sheetBusy = false
            let result = self.run.model.requestAuthorization(sensors, policy: self.run.setup.consent)
            try self.run.notify(result.changes)
            if let completion { try self.run.state.call(completion, [try self.errorValue(result.error)], results: 0) }
        }
    }

    /// Raises a Lua error when SensorKit does not exist on the simulated platform
    /// (`switches.platform = "iPad"`, §1, trap T6); `sensorkit.isAvailable()` is the probe.
    /// Raises a Lua error for a sensor newer than the simulated phone's OS (`switches.osVersion`):
    /// SensorKit has no such sensor there, and `SRSensorReader(sensor:)` traps on it (§3.1, T26).
    func requireOS(_ sensor: Sensor, _ what: String) throws {
        let sw = run.model.switches
        guard !sw.supports(sensor) else { return }
        throw LuaScriptError("\(what): \(sensor.rawValue) needs iOS \(sensor.firstOS), but the simulated phone runs iOS \(sw.osVersion) "
            + "(switches.osVersion); check sensorkit.info(\"\(sensor.rawValue)\").since before using it")
    }

    func requireSensorKit(_ what: String) throws {
        let platform = run.model.switches.platform
        guard platform.isSensorKitAvailable else {
            throw LuaScriptError("\(what): SensorKit is not available on \(platform.rawValue) (switches.platform); check sensorkit.isAvailable() first")
        }
    }

    /// A SensorKit error as the Lua value protocols see: a table with code, name,
    /// domain, message and underlying, printing as `SRErrorDomain 4 (promptDeclined): …`.
    ///
    /// The value is a reference to the Lua table itself: a copy (`LuaValue.table`) would
    /// lose the metatable, so `tostring(err)` would print an address and
    /// `sensorkit.isError(err)` would be false.
    func errorValue(_ error: SensorKitError?) throws -> LuaValue {
        guard let error, let makeError else { return .nil }
        let underlying = try errorValue(error.underlying)
        let state = run.state
        let top = state.top
        state.push(.function(makeError))
        for arg: LuaValue in [.integer(Int64(error.code.rawValue)), .string(error.codeName), .string(error.domain),
                              .string(error.message), underlying] { state.push(arg) }
        try state.pcall(arguments: 5, results: 1)
        let ref = state.makeReference(at: -1)
        state.top = top
        return .reference(ref)
    }

    func deviceValue(_ d: SRDevice) -> LuaValue {
        .dictionary(["name": .string(d.name), "model": .string(d.model), "systemName": .string(d.systemName),
                     "systemVersion": .string(d.systemVersion), "productType": .string(d.productType),
                     "kind": .string(d.kind.rawValue)])
    }

    func device(from value: LuaValue) throws -> SRDevice {
        guard let t = value.tableValue else { throw LuaScriptError("request.device must be a device table from reader:devices()") }
        let devices = run.source.devices(participant: run.setup.id)
        let productType = t["productType"]?.stringValue, kind = t["kind"]?.stringValue, model = t["model"]?.stringValue
        if let match = devices.first(where: { d in
            (productType == nil || d.productType == productType) && (kind == nil || d.kind.rawValue == kind)
                && (model == nil || d.model == model)
        }) { return match }
        return SRDevice(name: t["name"]?.stringValue ?? "", model: model ?? "", systemName: t["systemName"]?.stringValue ?? "",
                        systemVersion: t["systemVersion"]?.stringValue ?? "", productType: productType ?? "",
                        kind: DeviceKind(rawValue: kind ?? "phone") ?? .phone)
    }

    /// A fetch request table: `{ from = wall seconds, to = wall seconds, device = device }`
    /// (or `fromAbsolute`/`toAbsolute` in SRAbsoluteTime).
    func request(_ call: LuaCall, _ index: Int32) throws -> FetchRequest {
        let t = try call.table(index)
        let known: Set<String> = ["from", "to", "device", "fromAbsolute", "toAbsolute"]
        for e in t.entries {
            guard let k = e.key.stringValue, known.contains(k) else {
                throw LuaScriptError("fetch request has no field '\(e.key.stringValue ?? e.key.typeName)' (fields: from, to, device, fromAbsolute, toAbsolute)")
            }
        }
        var r = FetchRequest()
        let clock = run.model.clock
        func number(_ k: String) throws -> Double? {
            guard let v = t[k], !v.isNil else { return nil }
            guard let d = v.doubleValue else { throw LuaScriptError("fetch request field '\(k)' must be a number (seconds), got \(v.typeName)") }
            return d
        }
        if let f = try number("from") { r.from = clock.fromUnixTime(f) }
        if let f = try number("to") { r.to = clock.fromUnixTime(f) }
        if let f = try number("fromAbsolute") { r.from = SRAbsoluteTime(f) }
        if let f = try number("toAbsolute") { r.to = SRAbsoluteTime(f) }
        if let d = t["device"], !d.isNil { r.device = try device(from: d) }
        return r
    }

    // MARK: Reader

    func defineReader() {
        readerClass.describe = { "SRSensorReader(\($0.stream == .samples ? $0.sensor.rawValue : $0.sensor.rawValue + ".tombstones"))" }
        readerClass.property("sensor", get: { r, call in call.push(r.sensor.rawValue) })
        readerClass.property("authorizationStatus", get: { [unowned self] r, call in call.push(self.run.model.status(r.sensor).name) })
        // The delegate lives in a table with weak keys (an ephemeron table) keyed by the
        // reader's userdata, so a delegate whose callbacks refer to the reader does not
        // keep it alive.
        readerClass.property("delegate", get: { [unowned self] _, call in
            guard let get = self.getDelegate else { call.pushNil(); return }
            call.push(get)
            call.push(call.reference(1))
            try call.state.pcall(arguments: 1, results: 1)
        }, set: { [unowned self] _, call, i in
            guard call.isNil(i) || call.typeName(i) == "table" else {
                throw LuaScriptError("reader.delegate must be a table of callbacks, got \(call.typeName(i))")
            }
            guard let set = self.setDelegate else { return }
            try self.run.state.call(set, [.reference(call.reference(1)), .reference(call.reference(i))], results: 0)
        })
        readerClass.method("startRecording") { [unowned self] r, _ in
            let outcome = self.run.model.startRecording(r.sensor, stream: r.stream)
            try self.deliverRecording(r, outcome, success: "willStartRecording", failure: "startRecordingFailedWithError")
            return 0
        }
        readerClass.method("stopRecording") { [unowned self] r, _ in
            let outcome = self.run.model.stopRecording(r.sensor, stream: r.stream)
            try self.deliverRecording(r, outcome, success: "didStopRecording", failure: "stopRecordingFailedWithError")
            return 0
        }
        readerClass.method("fetch") { [unowned self] r, call in
            let request = try self.request(call, 2)
            try self.startFetch(r, request, call.reference(2))
            return 0
        }
        readerClass.method("fetchDevices") { [unowned self] r, _ in
            let response = self.run.model.fetchDevices(r.sensor, stream: r.stream, source: self.run.source)
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
            let request = try self.request(call, 2)
            switch self.run.model.fetch(request, sensor: r.sensor, stream: r.stream, source: self.run.source) {
            case .failed(let e): throw SensorKitRaise(value: try self.errorValue(e))
            case .ignored:
                call.push(SampleSet(sensor: r.sensor, stream: r.stream, timeZone: self.run.clock.timeZone, batches: []),
                          as: self.sampleSetClass)
            case .delivering(let plan):
                let set = SampleSet(sensor: r.sensor, stream: r.stream, timeZone: self.run.clock.timeZone) {
                    var it = plan.makeIterator()
                    return AnyIterator { it.next()?.batch }
                }
                call.push(set, as: self.sampleSetClass)
            }
            return 1
        }
        readerClass.method("devices") { [unowned self] r, call in
            switch self.run.model.fetchDevices(r.sensor, stream: r.stream, source: self.run.source) {
            case .devices(let devices): call.push(.array(devices.map(self.deviceValue)))
            case .failed(let e): throw SensorKitRaise(value: try self.errorValue(e))
            case .ignored: call.push(.array([]))
            }
            return 1
        }
    }

    func deliverRecording(_ r: Reader, _ outcome: RecordingOutcome, success: String, failure: String) throws {
        try run.deliver(to: r) { [unowned self] in
            switch outcome {
            case .willStart, .didStop: try self.run.callDelegate(r, success, [])
            case .failed(let e): try self.run.callDelegate(r, failure, [try self.errorValue(e)])
            case .ignored: break
            }
        }
    }

    /// `reader:fetch(request)`: evaluates the request now and queues its delivery. A
    /// reader runs one fetch at a time (§7.6): from the call until its terminal callback,
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
        let response = run.model.fetch(request, sensor: r.sensor, stream: r.stream, source: run.source)
        if case .ignored = response { return } // catalyst / visionOS: no callbacks at all
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
    /// table before the first callback (§7.5).
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
            for chunk in plan where !stop {
                for i in 0..<chunk.resultCount where !stop {
                    let result = try resultValue(chunk, i, sensor: r.sensor, stream: r.stream)
                    let answer = try run.callDelegate(r, "didFetchResult", [.reference(requestRef), result])
                    // Only `true` asks for more (SensorKit's Bool): `false`, nil or anything else
                    // stops, and so does a delegate without didFetchResult, after the first
                    // result (§7.2 step 5, §11).
                    if answer != .boolean(true) { stop = true }
                }
            }
            try finishFetch(r)
            try run.callDelegate(r, "didCompleteFetch", [.reference(requestRef)])
        }
    }

    /// One `SRFetchResult`: `{ timestamp = SR, sample = {...} }`, or for array sensors
    /// `sample` is a SampleSet of the batch written together.
    func resultValue(_ chunk: FetchChunk, _ i: Int, sensor: Sensor, stream: FetchStream) throws -> LuaValue {
        let rows = chunk.rows(ofResult: i)
        let timestamp = LuaValue.number(chunk.timestamp(ofResult: i).rawValue)
        if sensor.shape == .array {
            let set = SampleSet(sensor: sensor, stream: stream, timeZone: run.clock.timeZone, batches: [chunk.batch.slice(rows)])
            run.state.push(set, as: sampleSetClass)
            let ref = run.state.makeReference(at: -1)
            run.state.top -= 1
            return .dictionary(["timestamp": timestamp, "sample": .reference(ref)])
        }
        let rowTime = stream == .samples ? sensor.info.rowTimeField?.name : nil
        return .dictionary(["timestamp": timestamp, "sample": Bindings.rowValue(chunk.batch, rows.lowerBound, rowTime: rowTime)])
    }

    /// One row of a batch as a Lua table: its fields plus `time` and `writeTime`, and the
    /// sample's own date under its SensorKit name too (`rowTime`: `startDate`, `date`, …).
    static func rowValue(_ batch: SampleBatch, _ i: Int, rowTime: String?) -> LuaValue {
        var entries: [String: LuaValue] = ["time": .number(batch.times[i]), "writeTime": .number(batch.writeTimes[i])]
        if let rowTime { entries[rowTime] = .number(batch.times[i]) }
        for column in batch.columns {
            if let present = column.present, !present[i] { continue }
            switch column.data {
            case .double(let v): entries[column.name] = .number(v[i])
            case .int(let v): entries[column.name] = .integer(v[i])
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

    // MARK: SampleSet

    func defineSampleSet() {
        let c = sampleSetClass
        c.describe = { set in
            let n = (try? set.count()) ?? 0
            return "SampleSet(\(set.sensor.rawValue), \(n) samples\(set.filters.isEmpty ? "" : ", filtered"))"
        }
        c.method("count") { s, call in call.push(try s.count()); return 1 }
        for (name, pick) in Bindings.statPickers {
            c.method(name) { s, call in
                call.push(pick(try s.stats(try call.string(2))))
                return 1
            }
        }
        c.method("quantile") { s, call in
            let q = try call.double(3)
            guard (0...1).contains(q) else { throw LuaArgumentError(index: 3, message: "quantile must be between 0 and 1") }
            call.push(try s.quantile(try call.string(2), q))
            return 1
        }
        c.method("weightedMean") { s, call in
            call.push(try s.weightedMean(try call.string(2), weight: try call.optionalString(3) ?? "duration"))
            return 1
        }
        c.method("where") { [unowned self] s, call in
            let field = try call.string(2)
            let opText = try call.string(3)
            guard let op = RowFilter.Op(rawValue: opText == "!=" ? "~=" : opText) else {
                throw LuaArgumentError(index: 3, message: "operator must be one of < <= > >= == ~=")
            }
            let operand: RowFilter.Operand = call.typeName(4) == "string" ? .text(try call.string(4)) : .number(try call.double(4))
            call.push(s.filtered(RowFilter(field: field, op: op, operand: operand)), as: self.sampleSetClass)
            return 1
        }
        for (name, grouping) in [("byHour", Grouping.localHour), ("byDay", .localDay), ("byHourOfDay", .hourOfDay)] {
            c.method(name) { [unowned self] s, call in
                call.push(GroupedSet(set: s, grouping: grouping), as: self.groupsClass)
                return 1
            }
        }
        c.method("byWindow") { [unowned self] s, call in
            let seconds = try call.double(2)
            guard seconds > 0 else { throw LuaArgumentError(index: 2, message: "window length must be positive seconds") }
            let origin = try call.optionalDouble(3) ?? self.run.settings.start
            call.push(GroupedSet(set: s, grouping: .window(seconds: seconds, origin: origin)), as: self.groupsClass)
            return 1
        }
        c.method("column") { s, call in
            let field = try call.string(2)
            switch try s.column(field) {
            case .double(let v): call.push(.array(v.map { .number($0) }))
            case .int(let v): call.push(.array(v.map { .integer($0) }))
            case .bool(let v): call.push(.array(v.map { .boolean($0) }))
            case .string(let v): call.push(.array(v.map { .string($0) }))
            case .value(let v): call.push(.array(v.map(Bindings.fieldValue)))
            }
            return 1
        }
        c.method("first") { s, call in
            let n = try call.isNil(2) ? 1 : Int(call.integer(2))
            let batch = try s.materialize(limit: max(n, 0))
            call.push(.array((0..<batch.count).map { Bindings.rowValue(batch, $0, rowTime: s.rowTimeField?.name) }))
            return 1
        }
        c.method("rows") { s, call in
            let batch = try s.materialize()
            var i = 0
            call.push(function: { inner in
                guard i < batch.count else { inner.pushNil(); return 1 }
                inner.push(Bindings.rowValue(batch, i, rowTime: s.rowTimeField?.name))
                i += 1
                return 1
            })
            return 1
        }
        c.method("fields") { s, call in
            call.push(.array(s.fieldSchemas.map { .string($0.name) } + [.string("time"), .string("writeTime")]))
            return 1
        }
        c.method("distinct") { [unowned self] s, call in
            call.push(s.distinct(), as: self.sampleSetClass)
            return 1
        }
        groupsClass.describe = { "GroupedSampleSet(\($0.set.sensor.rawValue))" }
        let aggregates: [(String, (String?) -> GroupAggregate?)] = [
            ("count", { _ in .count }), ("sum", { $0.map { .sum($0) } }), ("mean", { $0.map { .mean($0) } }),
            ("min", { $0.map { .min($0) } }), ("max", { $0.map { .max($0) } }), ("stddev", { $0.map { .stddev($0) } }),
        ]
        for (name, make) in aggregates {
            groupsClass.method(name) { g, call in
                guard let aggregate = make(try call.optionalString(2)) else { throw call.argumentError(2, expected: "field name") }
                let integral: Bool = switch aggregate {
                case .count, .sum: true
                default: false
                }
                call.push(Bindings.groupsValue(try g.set.grouped(by: g.grouping, aggregate: aggregate), integral: integral))
                return 1
            }
        }
        groupsClass.method("quantiles") { g, call in
            let field = try call.string(2)
            let qs = try call.table(3).arrayValue?.compactMap(\.doubleValue) ?? []
            guard !qs.isEmpty, qs.allSatisfy({ (0...1).contains($0) }) else {
                throw LuaArgumentError(index: 3, message: "expected a list of quantiles between 0 and 1, e.g. {0.05, 0.5, 0.95}")
            }
            let groups = try g.set.grouped(by: g.grouping, aggregate: .quantiles(field, qs))
            call.push(.array(groups.map { r in
                .dictionary(["key": .string(r.label), "start": .number(r.start), "count": .integer(Int64(r.count)),
                             "values": .array(r.values.map { .number($0) })])
            }))
            return 1
        }
        groupsClass.method("quantile") { g, call in
            let q = try call.double(3)
            guard (0...1).contains(q) else { throw LuaArgumentError(index: 3, message: "quantile must be between 0 and 1") }
            call.push(Bindings.groupsValue(try g.set.grouped(by: g.grouping, aggregate: .quantile(try call.string(2), q))))
            return 1
        }
    }

    static let statPickers: [(String, @Sendable (RunningStats) -> Double)] = [
        ("sum", { $0.sum }), ("mean", { $0.mean }), ("min", { $0.min }), ("max", { $0.max }), ("stddev", { $0.standardDeviation }),
    ]

    /// Groups as a Lua list of `{ key, start, count, value }`; counts and whole-number sums are integers.
    static func groupsValue(_ groups: [GroupResult], integral: Bool = false) -> LuaValue {
        .array(groups.map { g in
            let value: LuaValue = integral && g.value.rounded() == g.value && abs(g.value) < 9e15 ? .integer(Int64(g.value)) : .number(g.value)
            return .dictionary(["key": .string(g.label), "start": .number(g.start), "count": .integer(Int64(g.count)), "value": value])
        })
    }

    // MARK: schedule

    func when(_ call: LuaCall, _ index: Int32) throws -> Double {
        if call.typeName(index) == "string" {
            let text = try call.string(index)
            guard let t = LocalTime.parse(text, run.clock.timeZone, studyStart: run.settings.start) else {
                throw LuaArgumentError(index: index, message: "expected a time like \"2026-03-02 09:00\", \"day 3 09:00\" or seconds, got \"\(text)\"")
            }
            return t
        }
        return try call.double(index)
    }

    func duration(_ call: LuaCall, _ index: Int32) throws -> Double {
        if call.typeName(index) == "string" {
            let text = try call.string(index)
            guard let d = LocalTime.parseDuration(text) else {
                throw LuaArgumentError(index: index, message: "expected a duration like \"26h\", \"15m\" or seconds, got \"\(text)\"")
            }
            return d
        }
        return try call.double(index)
    }

    /// Queues a call of `fn(now)`; `repeatEvery` re-queues it (nil: once). Returns the schedule id.
    func scheduleCall(_ fn: LuaReference, at t: Double, id: Int? = nil, next: ((Double) -> Double?)? = nil) -> Int {
        let eventID = id ?? run.loop.allocateID()
        run.loop.schedule(at: t, id: eventID) { [unowned self] in
            try self.run.state.call(fn, [.number(self.run.model.clock.wallNow)], results: 0)
            if let next, let t2 = next(t), !self.run.loop.isCancelled(eventID) {
                _ = self.scheduleCall(fn, at: t2, id: eventID, next: next)
            }
        }
        return eventID
    }

    func scheduleFunctions() -> [(String, LuaFunction)] {
        [
            ("at", { [unowned self] call in
                let t = try self.when(call, 1)
                call.push(self.scheduleCall(try call.function(2), at: max(t, self.run.clock.now)))
                return 1
            }),
            ("after", { [unowned self] call in
                let d = try self.duration(call, 1)
                call.push(self.scheduleCall(try call.function(2), at: self.run.clock.now + max(d, 0)))
                return 1
            }),
            ("every", { [unowned self] call in
                let d = try self.duration(call, 1)
                guard d > 0 else { throw LuaArgumentError(index: 1, message: "interval must be positive") }
                let fn = try call.function(2)
                call.push(self.scheduleCall(fn, at: self.run.clock.now + d, next: { $0 + d }))
                return 1
            }),
            ("daily", { [unowned self] call in
                let text = try call.string(1)
                let parts = text.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 2, (0..<24).contains(parts[0]), (0..<60).contains(parts[1]) else {
                    throw LuaArgumentError(index: 1, message: "expected local time \"HH:MM\", got \"\(text)\"")
                }
                let fn = try call.function(2)
                let tz = self.run.clock.timeZone
                let now = self.run.clock.now
                var first = LocalTime.time(onDayOf: now, hour: parts[0], minute: parts[1], tz)
                if first < now { first = LocalTime.time(onDayOf: LocalTime.nextDay(now, tz), hour: parts[0], minute: parts[1], tz) }
                call.push(self.scheduleCall(fn, at: first, next: { [unowned self] t in
                    let zone = self.run.clock.timeZone      // local time follows the participant's travel
                    return LocalTime.time(onDayOf: LocalTime.nextDay(t, zone), hour: parts[0], minute: parts[1], zone)
                }))
                return 1
            }),
            ("cancel", { [unowned self] call in
                self.run.loop.cancel(Int(try call.integer(1)))
                return 0
            }),
        ]
    }

    // MARK: report and log

    func reportFunctions() -> [(String, LuaFunction)] {
        [
            ("row", { [unowned self] call in
                let name = try call.string(1)
                let table = try call.table(2)
                var row: [String: ReportValue] = ["participant": .text(self.run.setup.id)]
                for e in table.entries {
                    guard let key = e.key.stringValue else { throw LuaScriptError("report.row: column names must be strings") }
                    row[key] = try Bindings.reportValue(e.value, column: key)
                }
                do { try self.run.report.add(name, row: row) } catch let e as ReportError { throw LuaScriptError("report.row: \(e.message)") }
                return 0
            }),
            ("table", { [unowned self] call in
                let name = try call.string(1)
                let options = call.isNil(2) ? LuaTable() : try call.table(2)
                let columns = options["columns"]?.tableValue?.arrayValue?.compactMap(\.stringValue)
                var formats: [String: String] = [:]
                for (k, v) in options["formats"]?.tableValue?.dictionaryValue ?? [:] {
                    guard let f = v.stringValue, ReportBook.isNumberFormat(f) else {
                        throw LuaScriptError("report.table: format for '\(k)' must be one number conversion like \"%.1f\" or \"%5d\" (width and precision up to 99)")
                    }
                    formats[k] = f
                }
                do { try self.run.report.declare(name, columns: columns.map { ["participant"] + $0.filter { $0 != "participant" } }, formats: formats) }
                catch let e as ReportError { throw LuaScriptError("report.table: \(e.message)") }
                return 0
            }),
        ]
    }

    static func reportValue(_ v: LuaValue, column: String) throws -> ReportValue {
        switch v {
        case .nil: return .null
        case .boolean(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .number(let d): return .double(d)
        case .string(let s): return .text(s)
        case .bytes(let b): return .text(String(decoding: b, as: UTF8.self))
        default: throw LuaScriptError("report.row: column '\(column)' holds a \(v.typeName); report numbers, strings or booleans")
        }
    }

    func runtimeFunctions() -> [(String, LuaFunction)] {
        [
            ("log", { [unowned self] call in
                let level = try call.string(1)
                let text = try call.string(2)
                self.run.output("[\(self.run.setup.id) \(LocalTime.minuteLabel(self.run.clock.now, self.run.clock.timeZone))] \(level): \(text)\n")
                return 0
            }),
            ("timezone", { [unowned self] call in
                call.push(self.run.clock.timeZone.identifier)
                return 1
            }),
            ("day", { [unowned self] call in
                call.push(LocalTime.dayLabel(try call.optionalDouble(1) ?? self.run.model.clock.wallNow, self.run.clock.timeZone))
                return 1
            }),
            ("start_of_day", { [unowned self] call in
                call.push(LocalTime.startOfDay(try call.optionalDouble(1) ?? self.run.model.clock.wallNow, self.run.clock.timeZone))
                return 1
            }),
            ("duration", { [unowned self] call in
                call.push(try self.duration(call, 1))
                return 1
            }),
            ("parse", { [unowned self] call in
                call.push(try self.when(call, 1))
                return 1
            }),
            ("study_start", { [unowned self] call in
                call.push(self.run.settings.start)
                return 1
            }),
            ("study_end", { [unowned self] call in
                call.push(self.run.settings.end)
                return 1
            }),
        ]
    }

    /// Lua-side pieces of the runtime: delegate delivery, SensorKit error values, the
    /// `time` and `log` modules, and the duration helpers. Returns deliver, make_error, set_field.
    static let prelude = #"""
    local rt = __runtime
    __runtime = nil

    -- Readers. The runtime holds none strongly, so a reader the protocol drops is
    -- collected, with its delegate (even when the delegate's callbacks refer to the
    -- reader: `delegates` has weak keys). While a callback for a reader is queued the
    -- reader is pinned, so a fetch or recording the protocol started still reports.
    local live = setmetatable({}, { __mode = "v" })        -- id -> reader
    local delegates = setmetatable({}, { __mode = "k" })   -- reader -> delegate table
    local pinned = {}                                      -- id -> reader, callbacks queued
    local function register_reader(id, reader) live[id] = reader end
    local function get_delegate(reader) return delegates[reader] end
    local function set_delegate(reader, delegate) delegates[reader] = delegate end
    local function pin(id) pinned[id] = live[id] end
    local function unpin(id) pinned[id] = nil end

    -- deliver(id, method, ...): calls the reader's delegate[method](reader, ...) if present.
    -- Returns the method's first result and true, or nil and false when there is none
    -- (also when the reader was collected).
    local function deliver(id, method, ...)
      local reader = pinned[id] or live[id]
      if reader == nil then return nil, false end
      local delegate = delegates[reader]
      if delegate == nil then return nil, false end
      local fn = delegate[method]
      if fn == nil then return nil, false end
      return (fn(reader, ...)), true
    end

    -- SensorKit errors are tables: { code, name, domain, message, underlying }.
    local error_mt = {
      __tostring = function(e)
        local text = string.format("%s %d (%s): %s", e.domain, e.code, e.name, e.message)
        if e.underlying then text = text .. " [underlying: " .. tostring(e.underlying) .. "]" end
        return text
      end,
      __name = "SRError",
    }
    local function make_error(code, name, domain, message, underlying)
      return setmetatable({ code = code, name = name, domain = domain, message = message, underlying = underlying }, error_mt)
    end

    -- Error codes by name, as SensorKit's SRError.Code.
    local codes = { invalidEntitlement = 0, noAuthorization = 1, dataInaccessible = 2, fetchRequestInvalid = 3,
                    promptDeclined = 4, noNewAuthorizationGroups = 8201, promptBusy = 8195, promptCancelled = 8196,
                    invalidInfoPlist = 8197, connectionNotFound = 8193, internalError = 8194 }
    local sk = sensorkit
    sk.errors = codes
    sk.isError = function(v) return getmetatable(v) == error_mt end

    -- Durations in seconds.
    function seconds(n) return n end
    function minutes(n) return n * 60 end
    function hours(n) return n * 3600 end
    function days(n) return n * 86400 end

    -- time: the participant's virtual wall clock and local calendar.
    time = {
      now = function() return os.time() end,
      day = rt.day,                       -- "YYYY-MM-DD" of a time (default now), local
      startOfDay = rt.start_of_day,       -- start of the local day of a time
      hour = function(t) return tonumber(os.date("%H", t or os.time())) end,
      format = function(t, fmt) return os.date(fmt or "%Y-%m-%d %H:%M", t) end,
      timezone = rt.timezone,
      duration = rt.duration,             -- "26h" → 93600
      parse = rt.parse,                   -- "2026-03-02 09:00" (local) → seconds
      studyStart = rt.study_start,
      studyEnd = rt.study_end,
      seconds = seconds, minutes = minutes, hours = hours, days = days,
    }

    -- log: lines in the run's output, stamped with participant and local time.
    local function logger(level)
      return function(fmt, ...)
        local text = tostring(fmt)
        if select("#", ...) > 0 then
          local ok, formatted = pcall(string.format, fmt, ...)
          if not ok then error("log." .. level .. ": " .. formatted, 2) end   -- at the protocol's line
          text = formatted
        end
        rt.log(level, text)
      end
    end
    log = { info = logger("info"), warn = logger("warn"), error = logger("error") }

    local function set_field(t, k, v) t[k] = v end

    return deliver, make_error, set_field, register_reader, get_delegate, set_delegate, pin, unpin
    """#
}

/// A Lua-visible SensorKit error raised from the convenient path.
struct SensorKitRaise: LuaRaisable {
    let value: LuaValue
    func pushErrorValue(_ call: LuaCall) { call.push(value) }
}

/// One `SRSensorReader` of a protocol.
///
/// Lifetime: like an `SRSensorReader` object, a reader lives while the protocol refers
/// to it. The runtime keeps its userdata only weakly (by `id`, in the prelude's `live`
/// table) and its delegate in a weak-keyed table, so once the protocol drops every
/// reference the reader is collected and gets no more callbacks. While a callback for
/// it is queued (`pins` > 0: a fetch, `fetchDevices`, start/stop outcome or status
/// change) it is pinned, so what the protocol started still reports. Recording is the
/// app's, not the object's (§6.2): collecting a reader does not stop it.
public final class Reader {
    public let sensor: Sensor
    public let stream: FetchStream
    /// The key of the reader's userdata in the prelude's tables.
    let id: Int64
    /// A fetch was started and its terminal callback has not been delivered yet (§7.6).
    var fetchRunning = false
    /// Fetches waiting for the running one (`concurrentFetchPolicy = queue`).
    var queuedFetches: [(FetchRequest, LuaReference)] = []
    /// Queued callbacks for this reader; the userdata is pinned while it is positive.
    var pins = 0

    init(sensor: Sensor, stream: FetchStream, id: Int64) {
        self.sensor = sensor
        self.stream = stream
        self.id = id
    }
}

/// A SampleSet with a grouping chosen, waiting for its aggregate.
final class GroupedSet {
    let set: SampleSet
    let grouping: Grouping
    init(set: SampleSet, grouping: Grouping) {
        self.set = set
        self.grouping = grouping
    }
}
