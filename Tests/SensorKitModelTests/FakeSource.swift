import SensorKitModel

/// 2026-01-01T00:00:00Z — a whole number of hours since the Unix epoch.
let T0: Double = 1_767_225_600
let hour: Double = 3_600
let day: Double = 86_400

/// A deterministic `SampleSource` for tests: as if recording never stopped.
///
/// - Object-shaped sensors: one sample written at every whole minute `w`, sample time `w − 30`.
/// - Array-shaped sensors: at every whole minute `w`, one batch of three elements with
///   sample times `w − 40`, `w − 20`, `w`, sharing `identifier = w / 60`.
/// - Watch records are reported at their phone-store write time, as the `SampleSource`
///   contract says: sample times lie `watchLag` before the write (the sync delay).
/// Columns follow the catalogue schema; values are functions of the write time.
/// Counts how many times it was asked (to check streaming).
struct MinuteSource: SampleSource {
    var ownedDevices: [SRDevice] = [.defaultPhone, .defaultWatch]
    var watchLag: Double = 3_600
    let calls = CallCounter()

    func devices(participant: String) -> [SRDevice] { ownedDevices }

    func samples(participant: String, sensor: Sensor, device: SRDevice, writtenAfter after: Double,
                 through: Double) -> SampleBatch {
        calls.increment()
        guard ownedDevices.contains(device), sensor.deviceKinds.contains(device.kind) else { return .empty(for: sensor) }
        let first = Int64((after / 60).rounded(.down)) + 1
        let last = Int64((through / 60).rounded(.down))
        guard last >= first else { return .empty(for: sensor) }
        var writes: [Double] = [], times: [Double] = []
        let perWrite = sensor.shape == .array ? 3 : 1
        let lag = device.kind == .watch ? watchLag : 0
        for m in first...last {
            let w = Double(m) * 60
            for e in 0..<perWrite {
                writes.append(w)
                times.append((perWrite == 1 ? w - 30 : w - Double(40 - 20 * e)) - lag)
            }
        }
        let deviceSalt = device.kind == .watch ? 0.5 : 0
        let columns = sensor.info.columnFields.map { field -> Column in
            let data: ColumnData
            switch field.type.columnKind {
            case .double: data = .double(times.map { ($0 - T0) / 60 + deviceSalt })
            case .int: data = field.name == "identifier" ? .int(writes.map { Int64($0 / 60) }) : .int(times.map { Int64($0) % 7 })
            case .bool: data = .bool(times.map { Int64($0) % 120 == 0 })
            case .string: data = .string(times.map { "s\(Int64($0))" })
            case .value: data = .value(times.map { .double($0) })
            }
            return Column(name: field.name, data: data)
        }
        return SampleBatch(sensor: sensor, writeTimes: writes, times: times, columns: columns)
    }
}

final class CallCounter: @unchecked Sendable {
    private var n = 0
    func increment() { n += 1 }
    var count: Int { n }
}

/// A participant with every sensor entitled and detailed, activated at T0, duplicates off.
func makeModel(switches configure: (inout WorldSwitches) -> Void = { _ in }, seed: UInt64 = 42) -> ParticipantModel {
    var sw = WorldSwitches()
    sw.duplicateRate = 0
    configure(&sw)
    return ParticipantModel(participant: "p1", study: .permissive, switches: sw, activation: T0, seed: seed)
}

/// Authorizes `sensors` and starts recording them at the model's current time.
func authorizeAndRecord(_ model: inout ParticipantModel, _ sensors: [Sensor]) {
    let r = model.requestAuthorization(Set(sensors), policy: .allowAll)
    precondition(r.error == nil, "authorization failed: \(String(describing: r.error))")
    for s in sensors { precondition(model.startRecording(s) == .willStart) }
}

extension ParticipantModel {
    /// SR time of true time `t`.
    func sr(_ t: Double) -> SRAbsoluteTime { clock.srTime(atTrue: t) }
}

extension FetchResponse {
    /// The collected batch, failing loudly otherwise.
    func batch(maxResults: Int? = nil, file: StaticString = #filePath, line: UInt = #line) -> SampleBatch {
        guard let plan else { preconditionFailure("expected results, got \(self)") }
        do { return try plan.collect(maxResults: maxResults) } catch { preconditionFailure("the read failed: \(error)") }
    }
}
