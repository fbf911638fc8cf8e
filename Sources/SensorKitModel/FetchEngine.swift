import Foundation

/// `SRFetchRequest` (contract §7.1): the range `(from, to]` on the SR write-time axis and a device.
///
/// `from`/`to` are optional so that "never assigned" can be told from 0 (contract §7.2 caveat).
public struct FetchRequest: Sendable, Hashable {
    public var from: SRAbsoluteTime?
    public var to: SRAbsoluteTime?
    /// nil: not set — see `WorldSwitches.nilDeviceMode` (contract §7.5).
    public var device: SRDevice?

    public init(from: SRAbsoluteTime? = nil, to: SRAbsoluteTime? = nil, device: SRDevice? = nil) {
        self.from = from
        self.to = to
        self.device = device
    }
}

/// Which stream of a sensor a reader reads (contract §3.1 "Deletion-record streams").
public enum FetchStream: String, Sendable, Hashable, CaseIterable {
    /// The sensor's samples.
    case samples
    /// The companion tombstone stream of `SRDeletionRecord`s (fetch-only, shares the
    /// parent's recording and authorization state).
    case deletionRecords

    /// What SensorKit appends to a sensor's name or identifier to name this stream: nothing
    /// for the samples, `.tombstones` for the deletion records (contract §3.1). Written
    /// only here; everything else asks `SensorStream`.
    var nameSuffix: String {
        switch self {
        case .samples: ""
        case .deletionRecords: ".tombstones"
        }
    }
}

/// One stream of one sensor, and its names: `"pedometerData"` for the samples,
/// `"pedometerData.tombstones"` for the deletion records, as a protocol names a reader
/// (`sensorkit.reader "pedometerData.tombstones"`) and SensorKit its identifiers.
public struct SensorStream: Sendable, Hashable {
    public var sensor: Sensor
    public var stream: FetchStream

    public init(_ sensor: Sensor, _ stream: FetchStream = .samples) {
        self.sensor = sensor
        self.stream = stream
    }

    /// A stream's name cut into the sensor's part and the stream it names: a name ending
    /// in a stream's suffix names that stream, any other name the samples. The sensor part
    /// is not looked up (`Sensor(name:)` does that).
    public static func split(_ name: String) -> (sensorName: String, stream: FetchStream) {
        for stream in FetchStream.allCases where !stream.nameSuffix.isEmpty && name.hasSuffix(stream.nameSuffix) {
            return (String(name.dropLast(stream.nameSuffix.count)), stream)
        }
        return (name, .samples)
    }

    /// `"ambientLightSensor"`, or `"ambientLightSensor.tombstones"` for the deletion records.
    public var name: String { sensor.rawValue + stream.nameSuffix }

    /// SensorKit's raw string of the stream (`"com.apple.SensorKit.als.tombstones"`).
    public var identifier: String { sensor.identifier + stream.nameSuffix }
}

/// Everything the fetch rules read, as of `clock.now`.
public struct FetchContext: Sendable {
    public var participant: String
    public var sensor: Sensor
    public var stream: FetchStream
    /// The participant's phone clock; `clock.now` is the virtual now (true time).
    public var clock: SRClock
    public var switches: WorldSwitches
    /// Whether the study holds the sensor's entitlement.
    public var entitled: Bool
    /// The app's effective status for the sensor (`ParticipantModel.status`: the global switch off reads denied).
    public var status: SRAuthorizationStatus
    public var recording: RecordingLedger
    public var deletions: DeletionLog
    /// Protected data unavailable (locked, or before first unlock after a reboot).
    public var deviceLocked: Bool
    /// The study seed (duplicates and jitter are a pure function of it).
    public var seed: UInt64
    /// Rows aimed for per chunk (the actual count varies with the data).
    public var chunkRows: Int
    /// Seconds of write time per source query; nil: derived from the sensor's nominal cadence.
    public var chunkDuration: Double?

    public init(participant: String, sensor: Sensor, stream: FetchStream = .samples, clock: SRClock,
                switches: WorldSwitches = WorldSwitches(), entitled: Bool = true, status: SRAuthorizationStatus = .authorized,
                recording: RecordingLedger = RecordingLedger(), deletions: DeletionLog = DeletionLog(),
                deviceLocked: Bool = false, seed: UInt64 = 0, chunkRows: Int = 65_536, chunkDuration: Double? = nil) {
        self.participant = participant
        self.sensor = sensor
        self.stream = stream
        self.clock = clock
        self.switches = switches
        self.entitled = entitled
        self.status = status
        self.recording = recording
        self.deletions = deletions
        self.deviceLocked = deviceLocked
        self.seed = seed
        self.chunkRows = chunkRows
        self.chunkDuration = chunkDuration
    }

    public var now: Double { clock.now }
}

/// The answer to `fetch(_:)`.
public enum FetchResponse: Sendable {
    /// `sensorReader(_:fetching:failedWithError:)`; nothing is delivered.
    case failed(SensorKitError)
    /// Catalyst / visionOS: no callback at all.
    case ignored
    /// Deliver the plan's results in order, then `didCompleteFetch` (also after an early stop).
    case delivering(FetchPlan)

    public var plan: FetchPlan? { if case .delivering(let p) = self { p } else { nil } }
    public var error: SensorKitError? { if case .failed(let e) = self { e } else { nil } }
}

/// The answer to `fetchDevices()` (contract §9.1).
public enum FetchDevicesResponse: Sendable, Hashable {
    case failed(SensorKitError)
    case ignored
    /// `sensorReader(_:didFetch:)` with these devices (phone first, as the source lists them).
    case devices([SRDevice])
}

/// The pure fetch rules (contract §7, §8, §14.4): validation, entitlement, authorization,
/// lock state, holding period, retention, recording intervals, deletions, ordering,
/// injected duplicates and jitter.
///
/// Rules are applied to write-time *ranges*: a fetch becomes a short list of
/// `(after, through]` questions to the `SampleSource`, streamed chunk by chunk.
public enum FetchEngine {
    /// `fetch(_:)` for `context.sensor` / `context.stream` (contract §7.2, §14.4 `fetch`).
    ///
    /// Order of checks: `from`/`to` unset or `from > to` → 3; entitlement → 0;
    /// status ≠ authorized → 1; device locked → `lockedFetchError`. Then the device
    /// (request's, or per `nilDeviceMode`) and the deliverable ranges.
    public static func fetch(_ request: FetchRequest, context: FetchContext, source: any SampleSource) -> FetchResponse {
        let sw = context.switches
        if sw.platform.ignoresCalls { return .ignored }
        guard let from = request.from, let to = request.to else {
            return .failed(.fetchRequestInvalid(request.from == nil && request.to == nil ? "`from` and `to` were never set"
                                                : request.from == nil ? "`from` was never set" : "`to` was never set"))
        }
        guard from.rawValue <= to.rawValue, !from.rawValue.isNaN, !to.rawValue.isNaN else {
            // Said in the participant's wall-clock time (UTC), as the protocol wrote the range, not in SR seconds.
            let clock = context.clock
            func wall(_ t: SRAbsoluteTime) -> String {
                guard t.rawValue.isFinite else { return "\(t.rawValue)" }
                let w = clock.wallTime(atTrue: clock.trueTime(of: t))
                guard abs(w) < 1e11 else { return "\(w)" }
                let f = DateFormatter()
                f.locale = Locale(identifier: "en_US_POSIX")
                f.timeZone = TimeZone(identifier: "UTC")
                f.dateFormat = "yyyy-MM-dd HH:mm:ss"
                return f.string(from: Date(timeIntervalSince1970: w)) + " UTC"
            }
            return .failed(.fetchRequestInvalid("`from` (\(wall(from))) is after `to` (\(wall(to)))"))
        }
        guard context.entitled else { return .failed(.invalidEntitlement(context.sensor)) }
        guard context.status == .authorized else { return .failed(.noAuthorization(context.sensor, context.status)) }
        if context.deviceLocked {
            return .failed(SensorKitError(sw.lockedFetchError, "protected data is unavailable: the device is locked"))
        }

        var notes: [String] = []
        var resolved = request
        let device: SRDevice
        if let d = request.device {
            device = d
        } else if sw.nilDeviceMode == .docCurrentDevice {
            device = currentDevice(participant: context.participant, source: source)
            resolved.device = device
            notes.append("no device set: using the current device \(device.model) (nilDeviceMode = docCurrentDevice)")
        } else {
            notes.append("no device set: completing with no results (nilDeviceMode = decompiledEmpty)")
            return .delivering(FetchPlan(request: resolved, context: context, source: source, device: nil,
                                         ranges: IntervalSet(), tombstones: [], notes: notes))
        }

        let trueFrom = context.clock.trueTime(of: from), trueTo = context.clock.trueTime(of: to)
        let readableUpper = context.now - sw.hold(context.sensor)
        var upper = min(trueTo, readableUpper)
        if trueTo > readableUpper {
            if sw.holdingMode == .strictDoc {
                upper = trueFrom
                notes.append("the range overlaps the holding period: no results (holdingMode = strictDoc)")
            } else {
                notes.append("`to` clamped to now − holding period (holdingMode = clamp)")
            }
        }
        let window = TimeRange(after: trueFrom, through: upper)

        switch context.stream {
        case .samples:
            let owned = owns(device, context: context, source: source)
            let ranges = owned
                ? visibleWriteRanges(device: device, context: context, source: source).intersection(window) : IntervalSet()
            var plan = FetchPlan(request: resolved, context: context, source: source, device: device,
                                 ranges: ranges, tombstones: [], notes: notes,
                                 produced: producedRanges(device: device, context: context))
            if owned { plan.retentionLoss = retentionLoss(window, device: device, context: context, source: source) }
            return .delivering(plan)
        case .deletionRecords:
            let kept = TimeRange(after: max(window.after, context.now - sw.tombstoneRetention), through: window.through)
            let records = owns(device, context: context, source: source)
                ? deletionRecords(device: device, context: context, source: source).filter { kept.contains($0.writeTime) } : []
            return .delivering(FetchPlan(request: resolved, context: context, source: source, device: device,
                                         ranges: IntervalSet([kept]), tombstones: records, notes: notes))
        }
    }

    /// The part of a fetch window whose recorded data SensorKit has already purged for age
    /// (about 7 days past the hold, contract §8.2), or nil when the window lost nothing.
    static func retentionLoss(_ window: TimeRange, device: SRDevice, context: FetchContext,
                              source: any SampleSource) -> TimeRange? {
        let cutoff = ageCutoff(at: context.now, sensor: context.sensor, switches: context.switches)
        guard window.after < cutoff else { return nil }
        let old = TimeRange(after: window.after, through: Swift.min(cutoff, window.through))
        let lost = storedWriteRanges(device: device, context: context, source: source).intersection(old)
        guard let lo = lost.lowerBound, let hi = lost.ranges.last?.through else { return nil }
        return TimeRange(after: lo, through: hi)
    }

    /// `fetchDevices()` (contract §9.1, §14.4): entitlement → 0; not authorized →
    /// `fetchDevicesDeniedError` (8193); otherwise the participant's devices that hold
    /// data readable now (past the hold, within retention, not deleted) — empty on day 1 (T24).
    /// The deletion-record stream is fetch-only: fetchDevices on it is ignored, like
    /// start and stop (contract §8.3).
    public static func fetchDevices(context: FetchContext, source: any SampleSource) throws -> FetchDevicesResponse {
        let sw = context.switches
        if sw.platform.ignoresCalls || context.stream == .deletionRecords { return .ignored }
        guard context.entitled else { return .failed(.invalidEntitlement(context.sensor)) }
        guard context.status == .authorized else {
            return .failed(SensorKitError(sw.fetchDevicesDeniedError, "fetchDevices failed: not authorized for \(context.sensor.rawValue)"))
        }
        var out: [SRDevice] = []
        // Whether a device has a row at all: read in small pieces (about `probeRows` rows,
        // at least a minute) so that the answer costs the first rows, not a day of them.
        var probe = context
        probe.chunkRows = min(context.chunkRows, FetchEngine.probeRows)
        for device in source.devices(participant: context.participant) where context.sensor.deviceKinds.contains(device.kind) {
            let readable = TimeRange(after: -.infinity, through: context.now - sw.hold(context.sensor))
            let plan = FetchPlan(request: FetchRequest(device: device), context: probe, source: source, device: device,
                                 ranges: visibleWriteRanges(device: device, context: context, source: source)
                                    .intersection(readable),
                                 tombstones: [], notes: [], injectDuplicates: false,
                                 produced: producedRanges(device: device, context: context))
            var it = plan.makeIterator()
            if try it.next() != nil { out.append(device) }
        }
        return .devices(out)
    }

    /// Rows per piece when `fetchDevices` looks for a device's first row (an hour of heart
    /// rate, a minute of accelerometer).
    static let probeRows = 720

    /// The phone the app runs on (`SRDevice.current`): the participant's first phone.
    public static func currentDevice(participant: String, source: any SampleSource) -> SRDevice {
        source.devices(participant: participant).first { $0.kind == .phone } ?? .defaultPhone
    }

    /// Seconds between a record being produced on `device` and its arrival in the phone's
    /// store (contract §4.3): at least `watchSyncLag` for a watch, 0 for a phone.
    ///
    /// The `SampleSource` already reports watch records at their phone-store write time
    /// (it models syncing: the first sync at least one lag after the watch wrote them);
    /// the model uses this lag, with `SampleSource.storeWriteBound`, only to find the
    /// write-time ranges where recorded watch data can lie.
    public static func syncLag(_ device: SRDevice, switches: WorldSwitches) -> Double {
        syncs(device) ? switches.watchSyncLag : 0
    }

    /// Whether `device`'s records reach the phone's store by syncing (a paired watch).
    public static func syncs(_ device: SRDevice) -> Bool { device.kind == .watch }

    /// For a syncing device, the true-time ranges in which the device itself must have
    /// produced a row for it to be delivered: the recorded ranges (contract §6.2 item 2 — the
    /// paired watch records while the sensor records). nil for the phone, whose store
    /// write time is its production time, so the write ranges alone decide.
    ///
    /// Filtering on production time, not on the phone-store write time, is what makes
    /// a fetch return exactly the watch data measured while recording was on: a sync
    /// carries data from both sides of a `startRecording`/`stopRecording`/revocation.
    public static func producedRanges(device: SRDevice, context: FetchContext) -> IntervalSet? {
        syncs(device) ? recordedRanges(context: context) : nil
    }

    /// Write-time ranges (true time, phone-store axis) where data `device` produced
    /// while recording can lie: for the phone the recorded ranges themselves; for a
    /// watch each recorded range `(a, b]` becomes `(a + lag, storeWriteBound(b)]` — from
    /// one lag after it began to the sync that carries its last record.
    static func storedWriteRanges(device: SRDevice, context: FetchContext, source: any SampleSource) -> IntervalSet {
        let recorded = recordedRanges(context: context)
        guard syncs(device) else { return recorded }
        let lag = syncLag(device, switches: context.switches)
        return IntervalSet(recorded.ranges.map { r in
            let bound = source.storeWriteBound(participant: context.participant, device: device, producedThrough: r.through,
                                               syncLag: lag)
            return TimeRange(after: r.after + lag, through: max(bound, r.through + lag))
        })
    }

    private static func owns(_ device: SRDevice, context: FetchContext, source: any SampleSource) -> Bool {
        context.sensor.deviceKinds.contains(device.kind) && source.devices(participant: context.participant).contains(device)
    }

    // MARK: Ranges

    /// Ranges (true time) during which the data visible to the app were recorded
    /// (contract §6.2 items 3 and 8): anyone recording; with `sinceOwnStartRecording`, only
    /// after the app's first own start. Phone data are written inside these ranges;
    /// the watch produces its data inside them and syncs them at least `watchSyncLag` later.
    public static func recordedRanges(context: FetchContext) -> IntervalSet {
        let anyone = context.recording.intervals(context.sensor, until: context.now)
        switch context.switches.priorDataVisibility {
        case .sevenDaysIfSensorActive:
            return anyone
        case .sinceOwnStartRecording:
            guard let first = context.recording.firstStart(context.sensor) else { return IntervalSet() }
            return anyone.intersection(TimeRange(after: first, through: .infinity))
        }
    }

    /// Oldest write time (exclusive) that survives the age-limit purge at true time `t`
    /// (contract §8.2: readable window `(now − retention − hold, now − hold]`, purged every `agePurgeInterval`).
    public static func ageCutoff(at t: Double, sensor: Sensor, switches: WorldSwitches) -> Double {
        let keep = switches.retentionPeriod(sensor) + switches.hold(sensor)
        let interval = switches.agePurgeInterval
        guard interval > 0 else { return t - keep }
        return (t / interval).rounded(.down) * interval - keep
    }

    /// Write-time ranges (true time, phone-store axis) of `device`'s stored data that
    /// exist now — recorded (for a watch, where its synced records can lie:
    /// `storedWriteRanges`), not deleted by the user, by age or for lack of stakeholders.
    /// The holding period is *not* applied here. For a watch, rows in these ranges are
    /// further kept only if produced inside `producedRanges`.
    public static func visibleWriteRanges(device: SRDevice, context: FetchContext, source: any SampleSource) -> IntervalSet {
        let stored = storedWriteRanges(device: device, context: context, source: source)
            .intersection(TimeRange(after: ageCutoff(at: context.now, sensor: context.sensor, switches: context.switches),
                                    through: context.now))
        return stored.subtracting(deletedRanges(device: device, context: context, asOf: context.now))
    }

    /// Everything removed by scenario deletions and no-interested-clients purges by `time`.
    private static func deletedRanges(device: SRDevice, context: FetchContext, asOf time: Double) -> IntervalSet {
        var ranges = context.deletions.events(for: context.sensor, device: device, asOf: time).map(\.range)
        if context.switches.purgeWhenNoInterestedClients {
            for stop in context.recording.lastStakeholderStops(context.sensor, until: time) {
                ranges.append(TimeRange(after: -.infinity, through: stop))
            }
        }
        return IntervalSet(ranges)
    }

    /// Every deletion record of `device`'s tombstone stream written by now (contract §8.3),
    /// ordered by write time: scenario deletions, no-interested-clients purges and
    /// age-limit purges, each covering only data that existed and was not yet deleted
    /// (one record per contiguous deleted range).
    public static func deletionRecords(device: SRDevice, context: FetchContext, source: any SampleSource) -> [SRDeletionRecord] {
        let sw = context.switches, sensor = context.sensor, now = context.now
        let data = storedWriteRanges(device: device, context: context, source: source)
        guard let dataStart = data.lowerBound else { return [] }

        struct Action { var at: Double; var order: Int; var range: IntervalSet; var reason: SRDeletionReason }
        var actions: [Action] = []
        for (i, e) in context.deletions.events(for: sensor, device: device, asOf: now).enumerated() {
            actions.append(Action(at: e.at, order: i, range: IntervalSet([e.range]), reason: e.reason))
        }
        if sw.purgeWhenNoInterestedClients {
            for stop in context.recording.lastStakeholderStops(sensor, until: now) {
                actions.append(Action(at: stop, order: 1_000_000, range: IntervalSet(after: -.infinity, through: stop),
                                      reason: .noInterestedClients))
            }
        }
        let interval = sw.agePurgeInterval
        if interval > 0 {
            let keep = sw.retentionPeriod(sensor) + sw.hold(sensor)
            var k = ((dataStart + keep) / interval).rounded(.down)
            let last = (now / interval).rounded(.down)
            while k <= last {
                let at = k * interval
                actions.append(Action(at: at, order: 2_000_000, range: IntervalSet(after: -.infinity, through: at - keep),
                                      reason: .ageLimit))
                k += 1
            }
        }
        actions.sort { ($0.at, $0.order) < ($1.at, $1.order) }

        var deleted = IntervalSet()
        var records: [SRDeletionRecord] = []
        for a in actions {
            let existing = data.intersection(TimeRange(after: -.infinity, through: a.at))
            let piece = existing.intersection(a.range).subtracting(deleted)
            for r in piece.ranges {
                records.append(SRDeletionRecord(startTime: context.clock.srTime(atTrue: r.after),
                                                endTime: context.clock.srTime(atTrue: r.through),
                                                reason: a.reason, writeTime: a.at))
            }
            deleted = deleted.union(piece)
        }
        return records
    }
}

/// What a successful fetch delivers: the write-time ranges to read, streamed as
/// `FetchChunk`s in ascending write-time order. Iterating is lazy: each step asks the
/// source for one chunk-sized range, so memory is bounded by the chunk size, and throws
/// what the source's read throws (`SampleReadError`).
///
/// The runtime calls the delegate once per result (`FetchChunk.resultCount`) and stops
/// when it returns false; `didCompleteFetch` follows either way (contract §7.2).
public struct FetchPlan: Sendable {
    /// The request as delivered, with `device` filled in (contract §7.5 write-back).
    public let request: FetchRequest
    public let sensor: Sensor
    public let stream: FetchStream
    /// The device read; nil only for a device-less fetch in `decompiledEmpty` mode.
    public let device: SRDevice?
    /// Deliverable write-time ranges (true time, phone axis).
    public let ranges: IntervalSet
    /// For the tombstone stream: the records to deliver.
    public let tombstones: [SRDeletionRecord]
    /// For a syncing device (watch): only rows the device produced in these ranges
    /// (true time) are delivered (`FetchEngine.producedRanges`); nil: no such filter.
    public let produced: IntervalSet?
    /// Human-readable explanations (clamping, device substitution…), for logs and the REPL.
    public let notes: [String]
    /// Write times (true time) in the request whose data SensorKit's retention had already
    /// purged when the fetch ran (a fetch reaching back more than ~7 days); nil: none.
    public internal(set) var retentionLoss: TimeRange?

    let source: any SampleSource
    let participant: String
    let srEpoch: Double
    /// Fields newer than the simulated phone's OS (`switches.osVersion`): left out of every
    /// delivered sample, as that OS's SensorKit has no such property (contract §3.3:
    /// onWristDate/offWristDate and device usage `version` need iOS 16.4).
    let hiddenFields: Set<String>
    /// For array-shaped sensors (accelerometer, pressure…), written in batches that reach
    /// back before their write time: the recorded ranges (true time) a sample must have
    /// been measured in, so a batch written just after `startRecording` does not bring
    /// samples measured before it (contract §6.2). nil for other sensors.
    let measuredIn: IntervalSet?
    let chunkSpan: Double
    let duplicateRate: Double
    let jitter: Double
    let seed: UInt64

    init(request: FetchRequest, context: FetchContext, source: any SampleSource, device: SRDevice?,
         ranges: IntervalSet, tombstones: [SRDeletionRecord], notes: [String], injectDuplicates: Bool = true,
         produced: IntervalSet? = nil) {
        self.request = request
        self.produced = produced
        self.sensor = context.sensor
        self.stream = context.stream
        self.device = device
        self.ranges = ranges
        self.tombstones = tombstones
        self.notes = notes
        self.source = source
        self.participant = context.participant
        let os = context.switches.osVersion
        self.hiddenFields = Set(context.sensor.info.fields.filter { f in f.since.map { $0 > os } ?? false }.map(\.name))
        self.measuredIn = context.sensor.shape == .array && context.stream == .samples
            ? FetchEngine.recordedRanges(context: context) : nil
        self.srEpoch = context.clock.srEpoch
        if let d = context.chunkDuration, d > 0 {
            chunkSpan = d
        } else if let period = context.sensor.info.cadence.nominalPeriod {
            chunkSpan = Swift.min(Swift.max(Double(Swift.max(context.chunkRows, 1)) * period, 60), 86_400)
        } else {
            chunkSpan = 86_400
        }
        self.duplicateRate = injectDuplicates ? context.switches.duplicateRate : 0
        self.jitter = context.sensor.shape == .array ? (context.switches.outOfOrderJitter[context.sensor] ?? 0) : 0
        var h = StableHash(seed: context.seed)
        h.combine(context.participant)
        h.combine(context.sensor.rawValue)
        h.combine(device?.key ?? "")
        self.seed = h.state
    }

    /// The rows of `batch` measured (`times`) inside one of `ranges`, start included.
    /// A batch whose `timesWithin` lies inside one range is kept whole without a look at
    /// its rows; otherwise each row is judged.
    static func measured(_ batch: SampleBatch, within ranges: IntervalSet) -> SampleBatch {
        let rs = ranges.ranges
        if let w = batch.timesWithin, rs.contains(where: { w.lowerBound >= $0.after && w.upperBound <= $0.through }) {
            return batch
        }
        func range(of t: Double) -> TimeRange? { rs.first { t >= $0.after && t <= $0.through } }
        func inside(_ t: Double) -> Bool { range(of: t) != nil }
        guard let first = batch.times.first, let last = batch.times.last else { return batch }
        // Usually every row lies in the range of the first row, or (a batch written just after
        // recording started) the rows from some row on lie in the range of the last: counted
        // with one branch-free comparison per row (a NaN time is inside no range), then kept
        // as one slice when they are contiguous and no other row lies in another range.
        if let r = range(of: first) ?? range(of: last) {
            let a = r.after, b = r.through
            if batch.times.withUnsafeBufferPointer({ allWithin($0, a, b) }) { return batch }
            var count = 0
            for x in batch.times { count &+= (x >= a) && (x <= b) ? 1 : 0 }
            let times = batch.times
            if count > 0, let lo = times.firstIndex(where: { $0 >= a && $0 <= b }),
               let hi = times.lastIndex(where: { $0 >= a && $0 <= b }), hi - lo + 1 == count,
               !times[..<lo].contains(where: inside), !times[(hi + 1)...].contains(where: inside) {
                return batch.slice(lo..<(hi + 1))
            }
        }
        guard batch.times.contains(where: { !inside($0) }) else { return batch }
        return batch.gather(batch.times.indices.filter { inside(batch.times[$0]) })
    }

    /// Whether every value of `t` lies in [a, b] (NaN lies nowhere), four at a time.
    @inline(__always)
    static func allWithin(_ t: UnsafeBufferPointer<Double>, _ a: Double, _ b: Double) -> Bool {
        guard let base = t.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let lo = SIMD4<Double>(repeating: a), hi = SIMD4<Double>(repeating: b)
        var outside = SIMDMask<SIMD4<Int64>>(repeating: false)
        var i = 0
        while i + 4 <= t.count {
            let v = raw.loadUnaligned(fromByteOffset: i * 8, as: SIMD4<Double>.self)
            outside .|= .!((v .>= lo) .& (v .<= hi))
            i += 4
        }
        if any(outside) { return false }
        while i < t.count {
            if !(t[i] >= a && t[i] <= b) { return false }
            i += 1
        }
        return true
    }

    /// True when nothing can be delivered.
    public var isEmpty: Bool { stream == .samples ? ranges.isEmpty : tombstones.isEmpty }

    public func makeIterator() -> FetchChunkIterator { FetchChunkIterator(plan: self) }

    /// The plan's chunks holding at least the columns in `columns` (`ColumnProjection`) of
    /// those the sensor has, and the batch `identifier` of an array-shaped sensor, which cuts
    /// the rows into results; the source may leave other columns out. The rows, their times
    /// and the results are those `makeIterator()` delivers.
    public func makeIterator(columns: ColumnProjection) -> FetchChunkIterator {
        FetchChunkIterator(plan: self, columns: columns.isAll || sensor.shape != .array ? columns : columns.union(ColumnProjection(["identifier"])))
    }

    /// All results (at most `maxResults`) concatenated into one batch. For tests and small
    /// sensors — stream the chunks instead for dense ones.
    public func collect(maxResults: Int? = nil) throws -> SampleBatch {
        var out = stream == .samples ? SampleBatch.empty(for: sensor) : SampleBatch.deletionRecords([], sensor: sensor)
        var remaining = maxResults ?? Int.max
        var chunks = makeIterator()
        while remaining > 0, let chunk = try chunks.next() {
            let piece = chunk.resultCount > remaining ? chunk.prefix(results: remaining) : chunk
            remaining -= piece.resultCount
            out.append(piece.batch)
        }
        return out
    }

    /// Number of results delivered in full (iterates the whole plan).
    public func resultCount() throws -> Int {
        var n = 0
        var chunks = makeIterator()
        while let chunk = try chunks.next() { n += chunk.resultCount }
        return n
    }
}

/// Streams a `FetchPlan` chunk by chunk. Empty chunks are skipped. A step throws what the
/// source's read throws; the iterator is then spent for that range (callers stop).
public struct FetchChunkIterator: Sendable {
    let plan: FetchPlan
    /// The columns asked of the source (`FetchPlan.makeIterator(columns:)`).
    let columns: ColumnProjection
    private var rangeIndex = 0
    private var cursor: Double = -.infinity
    private var tombstonesDone = false

    init(plan: FetchPlan, columns: ColumnProjection = .all) {
        self.plan = plan
        self.columns = columns
    }

    public mutating func next() throws -> FetchChunk? {
        if plan.stream == .deletionRecords {
            guard !tombstonesDone, !plan.tombstones.isEmpty else { return nil }
            tombstonesDone = true
            return FetchChunk(batch: .deletionRecords(plan.tombstones, sensor: plan.sensor), resultStarts: nil,
                              srEpoch: plan.srEpoch)
        }
        guard let device = plan.device else { return nil }
        let ranges = plan.ranges.ranges
        while rangeIndex < ranges.count {
            let r = ranges[rangeIndex]
            let lo = max(cursor, r.after)
            guard lo.isFinite, r.through.isFinite else { rangeIndex += 1; cursor = -.infinity; continue }
            let hi = min(r.through, lo + plan.chunkSpan)
            let (batch, answered) = try plan.source.samplePiece(participant: plan.participant, sensor: plan.sensor, device: device,
                                                            writtenAfter: lo, through: hi, producedIn: plan.produced,
                                                            columns: columns)
            // A source may answer less than asked (up to the end of one of its chunks), never nothing.
            let reached = answered > lo && answered <= hi ? answered : hi
            if reached >= r.through { rangeIndex += 1; cursor = -.infinity } else { cursor = reached }
            if batch.count == 0 { continue }
            var delivered = plan.hiddenFields.isEmpty ? batch : batch.removingColumns(plan.hiddenFields)
            if let measured = plan.measuredIn {
                delivered = FetchPlan.measured(delivered, within: measured)
                if delivered.count == 0 { continue }
            }
            return FetchChunk.make(delivered, plan: plan)
        }
        return nil
    }
}

/// One piece of a fetch: a batch of rows in delivery order and where each result begins.
///
/// A *result* is one `SRFetchResult`: one row for object-shaped sensors, the run of
/// rows written together for array-shaped ones. Chunks never split a result.
public struct FetchChunk: Sendable {
    /// Rows in delivery order; `writeTimes` are true time on the phone axis.
    public let batch: SampleBatch
    /// Row index where each result starts; nil means one row per result.
    public let resultStarts: [Int]?
    /// True time of SR 0, to turn write times into `SRFetchResult.timestamp`.
    public let srEpoch: Double

    public init(batch: SampleBatch, resultStarts: [Int]?, srEpoch: Double) {
        self.batch = batch
        self.resultStarts = resultStarts
        self.srEpoch = srEpoch
    }

    public var resultCount: Int { resultStarts?.count ?? batch.count }

    /// The rows of result `i`.
    public func rows(ofResult i: Int) -> Range<Int> {
        guard let starts = resultStarts else { return i..<(i + 1) }
        return starts[i]..<(i + 1 < starts.count ? starts[i + 1] : batch.count)
    }

    /// `SRFetchResult.timestamp` of result `i` (SR time of its write).
    public func timestamp(ofResult i: Int) -> SRAbsoluteTime {
        SRAbsoluteTime(batch.writeTimes[rows(ofResult: i).lowerBound] - srEpoch)
    }

    /// The first `n` results only (delegate stopped after `n`).
    public func prefix(results n: Int) -> FetchChunk {
        let k = max(0, min(n, resultCount))
        let end = k == resultCount ? batch.count : rows(ofResult: k).lowerBound
        return FetchChunk(batch: batch.slice(0..<end), resultStarts: resultStarts.map { Array($0.prefix(k)) }, srEpoch: srEpoch)
    }

    /// Where each result of an array-shaped batch starts: a result is a run of rows with
    /// the same write time and batch identifier (when the batch has one).
    static func resultStarts(_ batch: SampleBatch) -> [Int] {
        var s: [Int] = []
        s.reserveCapacity(batch.writeTimes.runCount)
        switch batch.column("identifier")?.data {
        case .intRuns(let ids)? where ids.count == batch.count:
            // Both in runs: the union of their run starts, in order.
            var j = 0
            batch.writeTimes.forEachRun { rows, _ in
                s.append(rows.lowerBound)
                while j < ids.runCount && ids.ends[j] < rows.upperBound {
                    if ids.ends[j] > rows.lowerBound { s.append(ids.ends[j]) }
                    j += 1
                }
            }
        case .int(let ids)? where ids.count == batch.count:
            ids.withUnsafeBufferPointer { id in
                batch.writeTimes.forEachRun { rows, _ in
                    s.append(rows.lowerBound)
                    for i in rows.dropFirst() where id[i] != id[i - 1] { s.append(i) }
                }
            }
        default:
            batch.writeTimes.forEachRun { rows, _ in s.append(rows.lowerBound) }
        }
        return s
    }

    /// Splits a source batch into results, then applies injected duplicates and jitter.
    static func make(_ batch: SampleBatch, plan: FetchPlan) -> FetchChunk {
        let n = batch.count
        var starts: [Int]? = nil
        if plan.sensor.shape == .array {
            // A result is a run of rows with the same write time and batch identifier.
            starts = FetchChunk.resultStarts(batch)
        }
        guard plan.duplicateRate > 0 || plan.jitter > 0 else {
            return FetchChunk(batch: batch, resultStarts: starts, srEpoch: plan.srEpoch)
        }
        let resultCount = starts?.count ?? n
        func range(_ r: Int) -> Range<Int> {
            guard let s = starts else { return r..<(r + 1) }
            return s[r]..<(r + 1 < s.count ? s[r + 1] : n)
        }
        // Rows in delivery order and result starts, built only from the first result that
        // is reordered or duplicated: a chunk without either is passed on as it is.
        var indices: [Int]? = nil
        var newStarts: [Int] = []
        var ordinal = 0
        var previousWrite = Double.nan
        for r in 0..<resultCount {
            let rows = range(r)
            let w = batch.writeTimes[rows.lowerBound]
            ordinal = (r > 0 && previousWrite == w) ? ordinal + 1 : 0
            previousWrite = w
            var order: [Int]? = nil
            if plan.jitter > 0 && rows.count > 1 {
                let keys = rows.map { i -> Double in
                    var h = StableHash(seed: plan.seed)
                    h.combine(w)
                    h.combine(UInt64(ordinal))
                    h.combine(UInt64(i - rows.lowerBound))
                    return batch.times[i] + h.unitValue * plan.jitter
                }
                let sorted = keys.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }
                if sorted != Array(keys.indices) { order = sorted.map { rows.lowerBound + $0 } }
            }
            var duplicate = false
            if plan.duplicateRate > 0 {
                var h = StableHash(seed: plan.seed ^ 0xD0D0_D0D0)
                h.combine(w)
                h.combine(UInt64(ordinal))
                duplicate = h.unitValue < plan.duplicateRate
            }
            if indices == nil && (order != nil || duplicate) {
                var head: [Int] = []
                head.reserveCapacity(n + n / 50 + 4)
                head += 0..<rows.lowerBound
                indices = head
                newStarts = (0..<r).map { range($0).lowerBound }
            }
            guard indices != nil else { continue }
            newStarts.append(indices!.count)
            if let order { indices! += order } else { indices! += rows }
            if duplicate {
                newStarts.append(indices!.count)
                if let order { indices! += order } else { indices! += rows }
            }
        }
        guard let indices else { return FetchChunk(batch: batch, resultStarts: starts, srEpoch: plan.srEpoch) }
        return FetchChunk(batch: batch.gather(indices), resultStarts: starts == nil && newStarts.count == indices.count ? nil : newStarts,
                          srEpoch: plan.srEpoch)
    }
}
