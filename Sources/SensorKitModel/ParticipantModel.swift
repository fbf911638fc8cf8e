/// One participant's SensorKit world as the study app sees it: clock, switches,
/// study configuration, authorization, recording stakeholders, deletions and lock
/// state — with the app-facing operations of `SRSensorReader` as pure functions.
///
/// Value type, no callbacks: every operation returns what to deliver (errors, status
/// changes, fetch plans) and the runtime schedules the delegate calls (contract §11: always
/// asynchronous, never re-entrant). The model does not know readers: status changes
/// go to every live reader of the sensor (contract §5.3); a reader on the tombstone stream
/// shares its parent's state (contract §3.1).
public struct ParticipantModel: Sendable {
    public let participant: String
    public var study: ResolvedStudy
    public var switches: WorldSwitches
    /// The phone's SR clock; `clock.now` is the virtual now.
    public var clock: SRClock
    public var authorization = AuthorizationStore()
    public var recording = RecordingLedger()
    public var deletions = DeletionLog()
    /// Protected data unavailable: fetches fail with `lockedFetchError` (contract §7.2, T15).
    public var deviceLocked = false
    /// Another SensorKit sheet is on screen: `requestAuthorization` fails with 4/8195.
    public var sheetBusy = false
    /// The study seed (duplicates and jitter depend on it).
    public var seed: UInt64
    /// Rows per fetch chunk.
    public var chunkRows = 65_536

    /// A participant whose phone was activated at true time `activation` (Unix seconds).
    /// The clock takes `switches.epochMode` now: set `epochMode` before creating the model.
    public init(participant: String, study: ResolvedStudy, switches: WorldSwitches = WorldSwitches(),
                activation: Double, seed: UInt64 = 0) {
        self.participant = participant
        self.study = study
        self.switches = switches
        self.clock = SRClock(activation: activation, epochMode: switches.epochMode)
        self.seed = seed
    }

    public var now: Double { clock.now }

    /// Moves the virtual clock forward to true time `t`.
    public mutating func advance(to t: Double) { clock.advance(to: t) }

    // MARK: Authorization (contract §5)

    /// `reader.authorizationStatus` (the global switch off reads denied).
    public func status(_ sensor: Sensor) -> SRAuthorizationStatus {
        authorization.status(sensor, researchDataCollectionEnabled: switches.researchDataCollectionEnabled)
    }

    /// `SRSensorReader.requestAuthorization(sensors:completion:)` — see `AuthorizationStore.requestAuthorization`.
    public mutating func requestAuthorization(_ sensors: Set<Sensor>, policy: ConsentPolicy) -> AuthorizationResult {
        authorization.requestAuthorization(sensors, study: study, policy: policy, switches: switches, sheetBusy: sheetBusy)
    }

    /// The participant turns the sensor off in Settings (contract §5.4): its usage group becomes
    /// denied and the study app stops being a stakeholder of those sensors now.
    public mutating func revoke(_ sensor: Sensor) -> [StatusChange] {
        let before = effectiveStatuses()
        _ = authorization.revoke(sensor)
        for s in sensor.authorizationGroup { recording.end(s, by: .studyApp, at: now) }
        return AuthorizationStore.changes(from: before, to: effectiveStatuses())
    }

    /// The participant turns the sensor back on in Settings. Recording does not resume
    /// by itself: the app must call `startRecording()` again.
    public mutating func grant(_ sensor: Sensor) -> [StatusChange] {
        let before = effectiveStatuses()
        _ = authorization.grant(sensor)
        return AuthorizationStore.changes(from: before, to: effectiveStatuses())
    }

    /// Flips the system-wide Research Sensor & Usage Data switch (contract §5.1).
    public mutating func setResearchDataCollection(enabled: Bool) -> [StatusChange] {
        let before = effectiveStatuses()
        switches.researchDataCollectionEnabled = enabled
        return AuthorizationStore.changes(from: before, to: effectiveStatuses())
    }

    private func effectiveStatuses() -> [Sensor: SRAuthorizationStatus] {
        authorization.statuses(researchDataCollectionEnabled: switches.researchDataCollectionEnabled)
    }

    // MARK: Recording (contract §6)

    /// `startRecording()`: `willStart`, or failure 0 / 1; ignored on tombstone streams and catalyst.
    public mutating func startRecording(_ sensor: Sensor, stream: FetchStream = .samples) -> RecordingOutcome {
        if switches.platform.ignoresCalls || stream == .deletionRecords { return .ignored }
        return withGlobalSwitchCause(recording.startRecording(sensor, at: now, entitled: study.isEntitled(sensor),
                                                              status: status(sensor)))
    }

    /// `stopRecording()`: `didStop` (idempotent), or failure 0 / 1; ignored on tombstone streams and catalyst.
    public mutating func stopRecording(_ sensor: Sensor, stream: FetchStream = .samples) -> RecordingOutcome {
        if switches.platform.ignoresCalls || stream == .deletionRecords { return .ignored }
        return withGlobalSwitchCause(recording.stopRecording(sensor, at: now, entitled: study.isEntitled(sensor),
                                                             status: status(sensor)))
    }

    private func withGlobalSwitchCause(_ outcome: RecordingOutcome) -> RecordingOutcome {
        guard case .failed(var e) = outcome, e.code == .noAuthorization, !switches.researchDataCollectionEnabled else { return outcome }
        e.underlying = SensorKitError(.researchDataCollectionOff)
        return .failed(e)
    }

    // MARK: Deletions (contract §8.3)

    /// The participant (or the system) deletes the samples of `sensor` written in
    /// `range` (true time) now; `device` nil means every device.
    public mutating func deleteData(_ sensor: Sensor, device: SRDevice? = nil, range: TimeRange,
                                    reason: SRDeletionReason = .userInitiated) {
        deletions.add(DeletionEvent(sensor: sensor, device: device, range: range, at: now, reason: reason))
    }

    // MARK: Fetching (contract §7, §9)

    /// The rules' view of this participant for one sensor stream, as of now.
    public func fetchContext(_ sensor: Sensor, stream: FetchStream = .samples) -> FetchContext {
        FetchContext(participant: participant, sensor: sensor, stream: stream, clock: clock, switches: switches,
                     entitled: study.isEntitled(sensor), status: status(sensor), recording: recording,
                     deletions: deletions, deviceLocked: deviceLocked, seed: seed, chunkRows: chunkRows)
    }

    /// `fetch(_:)` — see `FetchEngine.fetch`.
    public func fetch(_ request: FetchRequest, sensor: Sensor, stream: FetchStream = .samples,
                      source: any SampleSource) -> FetchResponse {
        let response = FetchEngine.fetch(request, context: fetchContext(sensor, stream: stream), source: source)
        if case .failed(var e) = response, e.code == .noAuthorization, !switches.researchDataCollectionEnabled {
            e.underlying = SensorKitError(.researchDataCollectionOff)
            return .failed(e)
        }
        return response
    }

    /// `fetchDevices()` — see `FetchEngine.fetchDevices`.
    public func fetchDevices(_ sensor: Sensor, stream: FetchStream = .samples, source: any SampleSource) throws -> FetchDevicesResponse {
        try FetchEngine.fetchDevices(context: fetchContext(sensor, stream: stream), source: source)
    }

    /// `SRDevice.current`.
    public func currentDevice(source: any SampleSource) -> SRDevice {
        FetchEngine.currentDevice(participant: participant, source: source)
    }
}
