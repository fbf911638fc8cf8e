@_spi(Bindings) import LuaHost
import SensorKitModel

/// The `sensorkit` module: readers, authorization, devices, fetch requests and
/// SensorKit errors as Lua values.
extension Bindings {
    func sensor(_ call: LuaCall, _ index: Int32) throws -> Sensor {
        try sensor(named: try call.string(index))
    }

    func sensor(named name: String) throws -> Sensor {
        if let s = Sensor(name: name) { return s }
        throw LuaScriptError("unknown sensor '\(name)'\(SensorCatalogue.sensorHint(for: name)) (`sensorium sensors` lists them)")
    }

    func sensorkitFunctions() -> [(String, LuaFunction)] {
        [
            ("reader", { [unowned self] call in
                let (sensorName, stream) = SensorStream.split(try call.string(1))
                let s = try self.sensor(named: sensorName)
                try self.requireSensorKit("sensorkit.reader")
                try self.requireOS(s, "sensorkit.reader")
                if self.run.usedSensors[s] == nil { self.run.usedSensors[s] = "sensorkit.reader" }
                _ = try self.makeReader(call, sensor: s, stream: stream)
                return 1
            }),
            ("requestAuthorization", { [unowned self] call in
                let list = try call.table(1)
                var sensors = Set<Sensor>()
                for (i, item) in (list.arrayValue ?? list.entries.map(\.value)).enumerated() {
                    guard let name = item.stringValue, let s = Sensor(name: name) else {
                        let hint = item.stringValue.map(SensorCatalogue.sensorHint(for:)) ?? ""
                        throw LuaScriptError("requestAuthorization: item \(i + 1) is not a known sensor (\(item.stringValue ?? item.typeName))\(hint)")
                    }
                    sensors.insert(s)
                    self.run.usedSensors[s] = "sensorkit.requestAuthorization"
                }
                self.run.enrolment.askedByHand = true
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
            ("isReader", { [unowned self] call in
                call.push(call.object(1, self.readerClass) != nil)
                return 1
            }),
        ]
    }

    /// `SRSensorReader.requestAuthorization(sensors:completion:)`.
    ///
    /// The sheet is answered asynchronously: statuses stay as they are until the
    /// completion is delivered (contract §5.2: never on the caller's stack), and while the sheet is
    /// on screen a second request that has something new to ask fails with 4/8195
    /// (prompt busy). On delivery the participant's answers apply, the status changes
    /// are queued (`didChangeAuthorizationStatus` to every live reader, contract §5.3), then the
    /// completion runs — so the changes arrive after the completion, and before anything
    /// the completion itself starts (contract §14.4).
    ///
    /// `onError` (for the runtime's own requests, which have no Lua completion) hears the
    /// error the completion would get, when there is one.
    func requestAuthorization(_ sensors: Set<Sensor>, completion: LuaReference?,
                              onError: ((SensorKitError) -> Void)? = nil) throws {
        let run = self.run
        var preview = run.model
        let outcome = preview.requestAuthorization(sensors, policy: run.setup.consent)
        switch outcome.delivery {
        case .noCallback:
            return
        case .terminate(let error):
            // Missing entitlement with missingEntitlementMode = terminate (contract §5.6): the app dies.
            throw LuaScriptError("the app was terminated by SensorKit (missingEntitlementMode = terminate): \(error)")
        case .completion:
            break
        }
        guard outcome.sheetShown else {
            // Answered without a sheet (empty set, 8197, 0, 8201, 8195…): nothing changes.
            run.deliver { [unowned self] in
                if let e = outcome.error { onError?(e) }
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
            if let e = result.error { onError?(e) }
            if let completion { try self.run.state.call(completion, [try self.errorValue(result.error)], results: 0) }
        }
    }

    /// Creates a reader and pushes its userdata (stack: +1). The runtime holds it only
    /// weakly (see `Reader`); its sensor's status changes reach it from now on.
    @discardableResult
    func makeReader(_ call: LuaCall, sensor: Sensor, stream: FetchStream, byRuntime: Bool = false) throws -> Reader {
        let record = ReaderRecord(sensor: sensor, title: "SRSensorReader(\(SensorStream(sensor, stream).name))", madeAt: byRuntime ? nil : call.scriptPosition() ?? "?")
        let reader = Reader(sensor: sensor, stream: stream, id: nextReaderID, record: record)
        nextReaderID += 1
        call.push(reader, as: readerClass)
        if let register = registerReader {
            try run.state.call(register, [.integer(reader.id), .reference(call.reference(-1))], results: 0)
        }
        run.pruneReaders()
        run.readers.append(WeakReader(reader))
        return reader
    }

    /// Raises a Lua error when SensorKit does not exist on the simulated platform
    /// (`switches.platform = "iPad"`, contract §1, trap T6); `sensorkit.isAvailable()` is the probe.
    /// Raises a Lua error for a sensor newer than the simulated phone's OS (`switches.osVersion`):
    /// SensorKit has no such sensor there, and `SRSensorReader(sensor:)` traps on it (contract §3.1, T26).
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
        let state: LuaState = run.state
        var message = error.message
        // Apple's terms (Info.plist keys, reader.allow) come from a study never declared:
        // say which Lua declares them.
        if !run.studyDeclared, error.domain == SensorKitError.srErrorDomain, [.invalidInfoPlist, .invalidEntitlement].contains(error.code) {
            message += " — this protocol declares no study{}; "
                + StudyManifest.missingStudyAdvice(for: run.usedSensors.keys.sorted { $0.rawValue < $1.rawValue })
        }
        return .reference(try state.withStackGuard {
            state.push(.function(makeError))
            for arg: LuaValue in [.integer(Int64(error.code.rawValue)), .string(error.codeName), .string(error.domain),
                                  .string(message), underlying] { state.push(arg) }
            try state.pcall(arguments: 5, results: 1)
            return state.makeReference(at: -1)
        })
    }

    func deviceValue(_ d: SRDevice) -> LuaValue {
        .dictionary(["name": .string(d.name), "model": .string(d.model), "systemName": .string(d.systemName),
                     "systemVersion": .string(d.systemVersion), "productType": .string(d.productType),
                     "kind": .string(d.kind.rawValue)])
    }

    /// The participant's device a request's `device` table names: the one whose fields equal
    /// every field the table gives (a table from `reader:devices()` gives them all; `{ kind =
    /// "watch" }` is allowed). A table no device matches stands for a device the participant
    /// does not own (its fetch is empty). Throws when the table names no field, or when it
    /// matches several devices (two watches of one model after a watchOS update): a fetch
    /// must never read one device for another.
    func device(from value: LuaValue) throws -> SRDevice {
        guard let t = value.tableValue else { throw LuaScriptError("request.device must be a device table from reader:devices()") }
        let fields: [(name: String, of: (SRDevice) -> String)] = [
            ("kind", { $0.kind.rawValue }), ("model", \.model), ("productType", \.productType),
            ("systemName", \.systemName), ("systemVersion", \.systemVersion), ("name", \.name),
        ]
        let given = fields.compactMap { f in t[f.name]?.stringValue.map { (f, $0) } }
        guard given.contains(where: { ["kind", "model", "productType"].contains($0.0.name) }) else {
            // An empty table would match any device (and silently mean the phone).
            throw LuaScriptError("request.device names no device (no productType, kind or model): pass a device from reader:devices()")
        }
        let matches = run.source.devices(participant: run.setup.id).filter { d in given.allSatisfy { $0.0.of(d) == $0.1 } }
        if matches.count > 1 {
            let named = given.map { "\($0.0.name) = \"\($0.1)\"" }.joined(separator: ", ")
            let which = matches.map { "\($0.model) \($0.productType) \($0.systemName) \($0.systemVersion) '\($0.name)'" }.joined(separator: "; ")
            throw LuaScriptError("request.device { \(named) } matches \(matches.count) devices of this participant (\(which)): pass one of reader:devices() itself")
        }
        if let match = matches.first { return match }
        let text = { (name: String) in t[name]?.stringValue ?? "" }
        return SRDevice(name: text("name"), model: text("model"), systemName: text("systemName"), systemVersion: text("systemVersion"),
                        productType: text("productType"), kind: DeviceKind(rawValue: t["kind"]?.stringValue ?? "phone") ?? .phone)
    }

    /// A fetch request table: `{ from = wall seconds, to = wall seconds, device = device }`
    /// (or `fromAbsolute`/`toAbsolute` in SRAbsoluteTime). Other fields are the protocol's
    /// own (a label) and stay in the table handed back to the delegate; a key that looks
    /// like a misspelt request field (`form`, `devise`) is an error.
    func request(_ call: LuaCall, _ index: Int32) throws -> FetchRequest {
        let t = try call.table(index)
        let known = ["from", "to", "device", "fromAbsolute", "toAbsolute"]
        for e in t.entries {
            guard let k = e.key.stringValue, !known.contains(k) else { continue }
            let misspelt = known.contains { f in
                let d = Suggestions.editDistance(k.lowercased(), f.lowercased())
                return d <= 1 || (d <= 2 && k.count >= 4)
            }
            if misspelt {
                throw LuaScriptError("fetch request has no field '\(k)' (fields: from, to, device, fromAbsolute, toAbsolute)")
            }
        }
        var r = FetchRequest()
        let clock = run.model.clock
        func number(_ k: String) throws -> Double? {
            guard let v = t[k], !v.isNil else { return nil }
            guard let d = v.doubleValue else { throw LuaScriptError("fetch request field '\(k)' must be a number (seconds), got \(v.typeName)") }
            guard !d.isNaN else { throw LuaScriptError("fetch request field '\(k)' is nan, not a time (an arithmetic result with no value, such as 0/0)") }
            return d
        }
        if let f = try number("from") { r.from = clock.fromUnixTime(f) }
        if let f = try number("to") { r.to = clock.fromUnixTime(f) }
        if let f = try number("fromAbsolute") { r.from = SRAbsoluteTime(f) }
        if let f = try number("toAbsolute") { r.to = SRAbsoluteTime(f) }
        if let d = t["device"], !d.isNil { r.device = try device(from: d) }
        return r
    }
}

/// A Lua-visible SensorKit error raised from the convenient path.
struct SensorKitRaise: LuaRaisable {
    let value: LuaValue
    func pushErrorValue(_ call: LuaCall) { call.push(value) }
}
