import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel
import StudyReport

/// Something the scenario makes happen to a participant's SensorKit state
/// (data-shaping events such as wear gaps belong to the backend instead).
public enum ModelEvent: Sendable, Equatable {
    /// The participant turns a sensor off in Settings.
    case revoke(Sensor, at: Double)
    /// The participant turns it back on.
    case grant(Sensor, at: Double)
    /// The participant deletes data written in a range (during the hold, it is never delivered).
    case delete(Sensor, from: Double, to: Double, at: Double)
    /// The phone is locked (protected data unavailable) in [from, to).
    case locked(from: Double, to: Double)
    /// The phone's wall clock jumps by `offset` seconds.
    case wallClockJump(at: Double, offset: Double)
    /// The participant travels: local time (os.date, time.day, schedule.daily) follows `timeZone`.
    case travel(at: Double, timeZone: String)

    /// When the event happens (a deletion: when the participant deletes).
    public var time: Double {
        switch self {
        case .revoke(_, let at), .grant(_, let at), .delete(_, _, _, let at), .wallClockJump(let at, _), .travel(let at, _): at
        case .locked(let from, _): from
        }
    }
}

/// What one participant's run needs.
public struct ParticipantSetup: Sendable {
    public var id: String
    public var timeZone: TimeZone
    public var consent: ConsentPolicy
    public var events: [ModelEvent]

    public init(id: String, timeZone: TimeZone, consent: ConsentPolicy = .allowAll, events: [ModelEvent] = []) {
        self.id = id
        self.timeZone = timeZone
        self.consent = consent
        self.events = events
    }
}

/// Settings shared by every participant of a run.
public struct RunSettings: Sendable {
    public var protocolPath: String
    /// Folders `require` searches after the stdlib (the protocol's own folder).
    public var moduleDirectories: [String]
    /// Serve the stdlib from this folder instead of the copy built into the library
    /// (development: `SENSORIUM_STDLIB`); nil: the built-in stdlib (`Stdlib.modules`).
    public var stdlibFolder: String?
    public var start: Double
    public var days: Int
    public var seed: Int64
    public var limits: LuaLimits
    public var switches: WorldSwitches
    /// A failed `expect` raises an error (stopping the run) instead of recording a finding.
    public var failFast: Bool
    /// The protocol's source text, run under the chunk name `protocolPath` instead of
    /// reading that file (an embedder's protocol held in memory); nil: read the file.
    public var protocolSource: String?
    /// The embedder's own registrations (host functions, modules), run in each participant's
    /// state after the study API is installed and before the protocol runs, inside the
    /// state's protected set-up: a throw fails the set-up with a `LuaError`.
    public var extensions: [@Sendable (LuaState) throws -> Void] = []

    public init(protocolPath: String, moduleDirectories: [String], start: Double, days: Int, seed: Int64,
                limits: LuaLimits = LuaLimits(), switches: WorldSwitches = WorldSwitches(), failFast: Bool = false,
                stdlibFolder: String? = nil) {
        self.protocolPath = protocolPath
        self.moduleDirectories = moduleDirectories
        self.stdlibFolder = stdlibFolder
        self.start = start
        self.days = days
        self.seed = seed
        self.limits = limits
        self.switches = switches
        self.failFast = failFast
    }

    public var end: Double { start + Double(days) * 86_400 }
}

/// An error of a run, with the participant and the simulated time it happened at.
///
/// The description always names the script file and line when Lua knows them, also
/// for errors raised as values (a SensorKit error from `reader:samples{}` that the
/// protocol did not catch, `error({...})`), whose message carries no position.
public struct RunError: Error, CustomStringConvertible {
    public var participant: String
    public var time: String
    public var error: LuaError
    /// Raised by the protocol's top level (its declarations, `study{}`, readers), before the
    /// clock runs: the protocol's error, the same for every participant, not one participant's.
    public var inTopLevel = false

    public init(participant: String, time: String, error: LuaError) {
        self.participant = participant
        self.time = time
        self.error = error
    }

    /// The script (Lua chunk name, usually the file path, possibly shortened) the error happened in.
    public var file: String? { error.chunk }
    /// The line in `file`.
    public var line: Int? { error.line }

    /// The error's message with its position, without addresses.
    public var message: String {
        var text = error.message
        // A table raised without __tostring prints as "table: 0x…": not informative and not deterministic.
        if text.range(of: "^[a-z]+: (0x)?[0-9a-fA-F]+$", options: .regularExpression) != nil {
            text = "(error object is a \(error.value?.typeName ?? "non-string") value; raise a string or a table with __tostring)"
        }
        if let file, let line, !text.hasPrefix(file + ":") { text = "\(file):\(line): " + text }
        return text
    }

    /// The error as a finding of its participant: "run stopped: file:line: message (traceback:
    /// frame; frame)".
    public var finding: Finding {
        let report = error.report(frames: 4)
        let frames = report.hasPrefix(error.message)
            ? report.dropFirst(error.message.count).split(separator: "\n").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
            : []
        return Finding(participant: participant, time: time, location: "",
                       message: Finding.stoppedRunPrefix + message + (frames.isEmpty ? "" : " (traceback: " + frames.joined(separator: "; ") + ")"))
    }

    public var description: String {
        let report = error.report()
        let traceback = report.hasPrefix(error.message) ? String(report.dropFirst(error.message.count)) : ""
        return "[\(participant) \(time)] " + message + traceback
    }
}

/// One participant's study: a Lua state, the participant's SensorKit model,
/// the sample source, a virtual clock and the event loop that drives them.
public final class ParticipantRun {
    public let setup: ParticipantSetup
    public let settings: RunSettings
    /// The participant's Lua state (set in `init`, by the state's own set-up, which
    /// registers the study API inside its one protected call).
    public private(set) var state: LuaState!
    public var model: ParticipantModel
    public let source: any SampleSource
    public let clock: VirtualClock
    /// What the phone's clock shows (`os.time`, `time.now()`): `clock` plus scenario wall-clock jumps.
    public let wallClock: DeviceWallClock
    public let loop = EventLoop()
    public let report: ReportBook
    /// What this participant's fetches deliver, published to subscribers (the report's coverage).
    public let deliveries = Deliveries()
    let output: (String) -> Void
    var readers: [WeakReader] = []
    /// What the warnings about unheard readers remember (`ReaderWarnings`).
    var readerWarnings = ReaderWarnings()
    var studyDeclared = false
    /// How the protocol enrols (`study{ enrol = … }`) and the readers of its declared sensors.
    var enrolment = Enrolment()
    /// Sensors whose fetch already warned about data lost to retention (`warnRetentionLoss`).
    var retentionWarned = Set<Sensor>()
    /// Sensors a fetch asked a recording for that it holds no data of (warned once each).
    var noDataWarned = Set<Sensor>()
    /// Sensors a fetch read from a device of a kind they cannot have (warned once each).
    var deviceKindWarned = Set<Sensor>()
    /// Sensors and reasons an empty fetch was explained for (`warnEmptyForAReason`, once each).
    var emptyFetchWarned = Set<String>()
    /// Overlapping `locked` scenario intervals in force.
    var lockCount = 0
    public var manifest: StudyManifest?
    /// `study{}` raises an error for names SensorKit does not know (`StudyManifest.refusedNames`),
    /// as `run` and `test` want; `sensorium check`, which reports them with the rest, turns it off.
    public var refusesUnknownStudyNames = true
    /// Failed `expect` checks so far (see `RunSettings.failFast`).
    public internal(set) var findings: [Finding] = []
    /// Sensors the protocol's code uses (readers made, authorization asked), for `sensorium check`.
    public internal(set) var usedSensors: [Sensor: String] = [:]

    public init(setup: ParticipantSetup, settings: RunSettings, source: any SampleSource, report: ReportBook,
                output: @escaping (String) -> Void) throws {
        self.setup = setup
        self.settings = settings
        self.source = source
        self.report = report
        report.coverage.start = settings.start
        report.coverage.days = settings.days
        report.coverage.addParticipant(setup.id, timeZone: setup.timeZone, watch: source.devices(participant: setup.id).count > 1)
        report.follow(deliveries, participant: setup.id)
        self.output = output
        self.clock = VirtualClock(start: settings.start, timeZone: setup.timeZone)
        self.wallClock = DeviceWallClock(clock)
        let participantSeed = UInt64(bitPattern: settings.seed) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(setup.id.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) })
        self.model = ParticipantModel(participant: setup.id, study: ResolvedStudy(), switches: settings.switches,
                                      activation: settings.start - 30 * 86_400, seed: participantSeed)
        model.advance(to: settings.start)
        model.chunkRows = 1 << 18       // ~1.5 h of 50 Hz data a chunk: few backend calls, ~15 MB a chunk
        self.state = try LuaState(limits: settings.limits,
                                  sandbox: Stdlib.sandbox(folder: settings.stdlibFolder, moduleDirectories: settings.moduleDirectories,
                                                          seed: Int64(bitPattern: participantSeed >> 1))) { [unowned self] state in
            state.clock = self.wallClock
            state.output = output
            try Bindings.install(in: self, state: state)
            for extend in settings.extensions { try extend(state) }
        }
        for event in setup.events { scheduleModelEvent(event) }
    }

    /// Runs the protocol's top level, then every event until the study ends.
    /// At the end, warns about readers the protocol made and never used.
    public func run() throws {
        try runTopLevel()
        try drain(until: settings.end)
        warnUnusedReaders()
    }

    /// Runs only the protocol's top level (declarations, readers, schedules).
    public func runTopLevel() throws {
        do {
            try guarded {
                if let source = settings.protocolSource {
                    _ = try state.execute(source, chunkName: "@" + settings.protocolPath)
                } else {
                    try state.executeFile(settings.protocolPath)
                }
                try bindings?.enrolAutomatically()
            }
        } catch var e as RunError {
            e.inTopLevel = true
            throw e
        }
    }

    /// Writes a log line stamped with the participant and local time (`log.info` & co.).
    func log(_ level: String, _ text: String) {
        output("[\(setup.id) \(LocalTime.minuteLabel(clock.now, clock.timeZone))] \(level): \(text)\n")
    }

    /// Runs events up to `limit` (inclusive), advancing the clocks; stops at the first error.
    public func drain(until limit: Double) throws {
        while let (time, action) = loop.next(upTo: limit) {
            advance(to: time)
            try guarded(action)
        }
        advance(to: limit)
    }

    /// Runs `body` (the top level or one event) and turns what it throws into a `RunError` at
    /// the current virtual time: the one place a participant's failure is made. A sample
    /// source that cannot read its data (a corrupt store chunk) throws `SampleReadError`; it
    /// reaches here as thrown (a read in Swift code) or as the `LuaError` of the Lua code that
    /// read, carrying that very error as its `hostError` (the protocol's own `pcall` cannot
    /// catch it: `SampleReadError` is a `LuaUncatchableError`). Either way the run fails with
    /// the source's message (store, participant, sensor, device, range, what went wrong).
    func guarded(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let e as RunError {
            throw e
        } catch let e as LuaError {
            throw RunError(participant: setup.id, time: LocalTime.minuteLabel(clock.now, clock.timeZone), error: e)
        } catch {
            throw RunError(participant: setup.id, time: LocalTime.minuteLabel(clock.now, clock.timeZone),
                           error: LuaError(kind: .runtime, message: "\(error)", hostError: error))
        }
    }

    func advance(to t: Double) {
        guard t > clock.now else { return }
        clock.advance(to: t)
        model.advance(to: t)
    }

    /// Queues a delegate call for after the current code returns (same virtual time).
    func deliver(_ action: @escaping () throws -> Void) {
        loop.schedule(at: clock.now, action)
    }

    /// Queues a callback for `reader`, keeping the reader alive (pinned) until it has run,
    /// even if the protocol drops it meanwhile.
    func deliver(to reader: Reader, _ action: @escaping () throws -> Void) throws {
        try pin(reader)
        loop.schedule(at: clock.now) { [unowned self] in
            defer { self.unpin(reader) }
            try action()
        }
    }

    func pin(_ reader: Reader) throws {
        if reader.pins == 0, let pin = bindings?.pinReader { try state.call(pin, [.integer(reader.id)], results: 0) }
        reader.pins += 1
    }

    func unpin(_ reader: Reader) {
        reader.pins -= 1
        // Unpinning only clears a table slot; should even that fail (out of memory), the
        // reader merely stays alive.
        if reader.pins == 0, let unpin = bindings?.unpinReader { _ = try? state.call(unpin, [.integer(reader.id)], results: 0) }
    }

    private func scheduleModelEvent(_ event: ModelEvent) {
        loop.schedule(at: max(event.time, settings.start)) { [unowned self] in
            switch event {
            case .revoke(let sensor, _): try self.notify(self.model.revoke(sensor))
            case .grant(let sensor, _): try self.notify(self.model.grant(sensor))
            case .delete(let sensor, let from, let to, _):
                self.model.deleteData(sensor, range: TimeRange(after: from, through: to))
            case .locked(_, let to):
                // Lock intervals may overlap: the phone unlocks when the last one ends.
                self.lockCount += 1
                self.model.deviceLocked = true
                self.loop.schedule(at: max(to, self.clock.now)) { [unowned self] in
                    self.lockCount -= 1
                    self.model.deviceLocked = self.lockCount > 0
                }
            case .wallClockJump(_, let offset):
                self.model.clock.jumpWallClock(by: offset)
                self.wallClock.offset = self.model.clock.wallOffset(atTrue: self.clock.now)
            case .travel(_, let zone):
                if let tz = TimeZone(identifier: zone) {
                    self.clock.timeZone = tz
                }
            }
        }
    }

    /// Tells every live reader of a changed sensor (`didChangeAuthorizationStatus`).
    /// Readers the protocol dropped and the collector reclaimed are no longer told.
    func notify(_ changes: [StatusChange]) throws {
        pruneReaders()
        warnUnheardStatusChanges(changes)
        for change in changes {
            for weak in readers {
                guard let reader = weak.reader, reader.sensor == change.sensor else { continue }
                try deliver(to: reader) { [unowned self] in
                    if reader.recordsOnGrant { try self.bindings?.enrolledStatusChanged(reader, to: change.to) }
                    try self.callDelegate(reader, "didChangeAuthorizationStatus", [.string(change.to.name)])
                }
            }
        }
    }

    /// Calls `reader.delegate[method](reader, args...)` when the delegate has that method.
    /// Returns nil when there is no delegate or no such method, else the method's first result.
    @discardableResult
    func callDelegate(_ reader: Reader, _ method: String, _ args: [LuaValue]) throws -> LuaValue? {
        guard let deliver = bindings?.deliver else { return nil }
        let results = try state.call(deliver, [.integer(reader.id), .string(method)] + args, results: 2)
        guard results.count == 2, results[1].boolValue == true else { return nil }
        return results[0]
    }

    var bindings: Bindings?
}

final class WeakReader {
    weak var reader: Reader?
    /// The reader's record, kept after it is collected.
    let record: ReaderRecord
    init(_ reader: Reader) {
        self.reader = reader
        self.record = reader.record
    }
}

/// A recorded store that cannot be read ends the participant's run whatever the protocol
/// catches: broken data is an error, never missing data.
extension SampleReadError: LuaUncatchableError {}
