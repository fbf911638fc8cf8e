import Foundation
import SensorKitModel

/// The simulated world as a `SampleSource`: deterministic participants whose every sample
/// is a pure function of (seed, participant, sensor, device, time).
///
/// Each participant lives one story per local day (sleep, commute, work, walks, phone use,
/// watch wear) drawn from the seed; every sensor is a view of that story. Asking for any
/// range — a week at once or hour by hour, in any order — gives the same rows, at a cost
/// proportional to the range.
public struct SimulatedSource: SampleSource {
    public let seed: UInt64
    public let settings: SimulationSettings
    /// Participant ids in scenario order.
    public let participantIDs: [String]
    private(set) var participants: [String: Participant]
    /// Day stories kept per participant when participants run interleaved in one source.
    public static let storiesPerParticipant = 48

    /// The sensors this simulator generates (the others answer with empty batches).
    public static let implementedSensors: [Sensor] = [
        .ambientLightSensor, .accelerometer, .rotationRate, .onWristState, .heartRate, .pedometerData,
        .deviceUsageReport, .keyboardMetrics, .visits, .odometer, .messagesUsageReport, .phoneUsageReport,
        .siriSpeechMetrics, .telephonySpeechMetrics, .ambientPressure, .mediaEvents, .wristTemperature, .faceMetrics,
        .electrocardiogram, .photoplethysmogram, .acousticSettings, .sleepSessions,
    ]

    /// Throws `SimulationError` for an unknown time zone, a duplicate id or a bad event.
    public init(seed: UInt64, participants: [ParticipantDescription], settings: SimulationSettings = SimulationSettings()) throws {
        self.seed = seed
        self.settings = settings
        var map: [String: Participant] = [:]
        var ids: [String] = []
        let stories = StoryCache(capacity: SimulatedSource.storiesPerParticipant * max(1, participants.count))
        for d in participants {
            guard map[d.id] == nil else { throw SimulationError(participant: d.id, message: "duplicate participant id") }
            map[d.id] = try Participant(d, index: ids.count, seed: seed, settings: settings, stories: stories)
            ids.append(d.id)
        }
        self.participants = map
        participantIDs = ids
    }

    /// The same world with a memo of day stories of its own holding at most `stories` of them,
    /// whatever the number of participants: for a worker that runs one participant after
    /// another (memory bounded per worker, and no memo shared between threads). Samples are
    /// the same as the original's.
    public func withPrivateStoryCache(stories: Int = 2 * storiesPerParticipant) -> SimulatedSource {
        var copy = self
        let cache = StoryCache(capacity: stories)
        copy.participants = participants.mapValues { p in
            var p = p
            p.stories = cache
            return p
        }
        return copy
    }

    /// Day stories held by this source's memo now.
    public var cachedStoryCount: Int { participants.first?.value.stories.count ?? 0 }

    public func devices(participant: String) -> [SRDevice] {
        guard let p = participants[participant] else { return [] }
        return [p.phone] + (p.watch.map { [$0] } ?? [])
    }

    /// The participant's habits with every number filled in (nil for an unknown id).
    public func profile(participant: String) -> ResolvedProfile? { participants[participant]?.profile }

    /// Whether `sensor` produces data on a device of `kind` in this simulator (contract §3.1 "Src").
    public static func produces(_ sensor: Sensor, on kind: DeviceKind) -> Bool {
        implementedSensors.contains(sensor) && Schema.produces(sensor, on: kind)
    }

    public func samples(participant: String, sensor: Sensor, device: SRDevice,
                        writtenAfter after: Double, through: Double) -> SampleBatch {
        samples(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through, produced: nil)
    }

    /// Rows written in (after, through] whose *ready* time — when the device wrote them to
    /// its own store, before a watch sync — lies in `produced` (see `WriteContext`).
    public func samples(participant: String, sensor: Sensor, device: SRDevice,
                        writtenAfter after: Double, through: Double, producedIn produced: IntervalSet) -> SampleBatch {
        samples(participant: participant, sensor: sensor, device: device, writtenAfter: after, through: through,
                produced: produced)
    }

    /// The sync that carries the last record the device produced by `t`: for a watch the
    /// first sync opportunity at or after `t + watchSyncLag` (the simulator's own lag,
    /// which the runtime sets from the `watchSyncLag` switch); `t` for a phone.
    public func storeWriteBound(participant: String, device: SRDevice, producedThrough t: Double, syncLag: Double) -> Double {
        guard t.isFinite, let p = participants[participant], let kind = p.device(for: device) else { return t + syncLag }
        guard kind == .watch else { return t }
        let ctx = WriteContext(p, kind: .watch, after: t, through: t + p.settings.watchSyncLag + 86_400)
        return ctx.firstSync(atOrAfter: t + p.settings.watchSyncLag)
    }

    func samples(participant: String, sensor: Sensor, device: SRDevice,
                 writtenAfter after: Double, through: Double, produced: IntervalSet?) -> SampleBatch {
        guard through > after, let p = participants[participant], let kind = p.device(for: device),
              SimulatedSource.produces(sensor, on: kind) else { return Schema.empty(sensor) }
        let ctx = WriteContext(p, kind: kind, after: after, through: through, produced: produced)
        switch sensor {
        case .accelerometer, .rotationRate: return motionBatch(p, kind: kind, sensor: sensor, ctx: ctx)
        case .ambientLightSensor: return ambientLightBatch(p, kind: kind, ctx: ctx)
        case .heartRate: return heartRateBatch(p, ctx: ctx)
        case .onWristState: return onWristBatch(p, ctx: ctx)
        case .pedometerData: return pedometerBatch(p, ctx: ctx)
        case .deviceUsageReport: return deviceUsageBatch(p, ctx: ctx)
        case .keyboardMetrics: return keyboardBatch(p, ctx: ctx)
        case .visits: return visitsBatch(p, ctx: ctx)
        case .odometer: return odometerBatch(p, ctx: ctx)
        case .messagesUsageReport: return messagesUsageBatch(p, ctx: ctx)
        case .phoneUsageReport: return phoneUsageBatch(p, ctx: ctx)
        case .siriSpeechMetrics, .telephonySpeechMetrics: return speechBatch(p, sensor: sensor, ctx: ctx)
        case .ambientPressure: return pressureBatch(p, ctx: ctx)
        case .mediaEvents: return mediaEventsBatch(p, ctx: ctx)
        case .wristTemperature: return wristTemperatureBatch(p, ctx: ctx)
        case .faceMetrics: return faceMetricsBatch(p, ctx: ctx)
        case .electrocardiogram: return ecgBatch(p, ctx: ctx)
        case .photoplethysmogram: return ppgBatch(p, ctx: ctx)
        case .acousticSettings: return acousticSettingsBatch(p, ctx: ctx)
        case .sleepSessions: return sleepSessionsBatch(p, ctx: ctx)
        }
    }
}
