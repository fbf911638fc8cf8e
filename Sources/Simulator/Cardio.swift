import Foundation
import SensorKitModel

/// One synthetic ECG beat (lead I), µV, at phase φ ∈ [0, 1) of the beat: Gaussian P, Q, R,
/// S and T waves (after McSharry et al. 2003, "A dynamical model for generating synthetic
/// electrocardiogram signals"), R ≈ 1.1 mV.
@inline(__always)
func ecgBeat(_ phi: Double) -> Double {
    func g(_ a: Double, _ c: Double, _ w: Double) -> Double { let d = (phi - c) / w; return a * exp(-d * d) }
    return g(150, 0.16, 0.025) + g(-100, 0.26, 0.008) + g(1_100, 0.28, 0.009) + g(-250, 0.30, 0.01) + g(300, 0.55, 0.05)
}

/// A short on-demand or background recording on the watch.
struct WatchRecording {
    var start: Double
    var end: Double
    var key: RandomKey
    var heartRate: Double
    /// PPG only: `SRPhotoplethysmogramSample.Usage` of the window.
    var usage = "backgroundSystem"
    /// PPG only: steps per second of the activity during the window (0 when still).
    var cadence = 0.0
}

extension RangeView {
    /// Whether the watch is worn and on through [a, b).
    func worn(_ a: Double, _ b: Double) -> Bool {
        let w = wornIntervals(self, from: a, to: b)
        return w.count == 1 && w[0].start == a && w[0].end == b
    }

    /// ECG recordings: on 15 % of days (seeded), 30 s while sitting, if the watch is worn.
    func ecgRecordings() -> [WatchRecording] {
        stories.compactMap { s in
            var r = Draws(p.key.with("ecg").with(s.day))
            guard r.chance(0.15) else { return nil }
            let sitting = WeightedTime(s.blocks) { $0.activity == .sedentary && $0.duration > 120 ? 1 : 0 }
            guard let t0 = sitting.pick(r.unit()) else { return nil }
            let start = t0.rounded(.down)
            guard worn(start, start + 30), let bi = blockIndex(s.blocks, at: start) else { return nil }
            return WatchRecording(start: start, end: start + 30, key: p.key.with("ecg").with(s.day).with(1),
                                  heartRate: p.heartRateTarget(s.blocks[bi]))
        }
    }

    /// PPG windows while the watch is worn (contract §3.2: "short windows (e.g. 2–60 s) several
    /// times per hour", background and foreground), sorted by end:
    /// - background (`backgroundSystem`): one window in every 20-min slot at a seeded
    ///   offset, 2–60 s long, most of them short (length 2 + 58·u² s);
    /// - workouts (`foregroundHeartRate`): during runs and walks of 20 min or more, the
    ///   Workout app's optical heart rate, a 60-s window every 5 min;
    /// - on demand: a 60-s `deepBreathing` session (Mindfulness) on 20 % of days and a
    ///   15-s `foregroundBloodOxygen` spot check on 10 % of days, both while seated.
    func ppgWindows(from a: Double, to b: Double) -> [WatchRecording] {
        var out: [WatchRecording] = []
        func add(_ start: Double, _ length: Double, _ key: RandomKey, _ usage: String) {
            let end = start + length
            guard end > a, start < b, worn(start, end), let bi = blockIndex(blocks, at: start) else { return }
            let block = blocks[bi]
            out.append(WatchRecording(start: start, end: end, key: key, heartRate: p.heartRateTarget(block),
                                      usage: usage, cadence: block.cadence))
        }
        // Background slots.
        let slot = 1_200.0
        var k = Int(((a - 60) / slot).rounded(.down))
        while Double(k) * slot < b {
            defer { k += 1 }
            let key = p.key.with("ppg").with(k)
            let u = key.unit(0)
            let length = (2 + 58 * u * u).rounded()
            add(Double(k) * slot + (key.unit(1) * (slot - length)).rounded(.down), length, key, "backgroundSystem")
        }
        // Workouts.
        for block in blocks where block.end > a - 60 && block.start < b
            && (block.activity == .run || (block.activity == .walk && block.duration >= 1_200)) {
            var t = block.start + 60
            while t + 60 <= block.end {
                add(t.rounded(.down), 60, RandomKey(block.key).with("ppg").with(Int(t)), "foregroundHeartRate")
                t += 300
            }
        }
        // On demand, while seated.
        for s in stories {
            for (name, chance, length) in [("deepBreathing", 0.2, 60.0), ("foregroundBloodOxygen", 0.1, 15.0)] {
                var r = Draws(p.key.with("ppg-" + name).with(s.day))
                guard r.chance(chance) else { continue }
                let sitting = WeightedTime(s.blocks) { $0.activity == .sedentary && $0.duration > 2 * length ? 1 : 0 }
                guard let t0 = sitting.pick(r.unit()) else { continue }
                add(t0.rounded(.down), length, p.key.with("ppg-" + name).with(s.day).with(1), name)
            }
        }
        out.sort { ($0.end, $0.start) < ($1.end, $1.start) }
        return out
    }
}

/// Electrocardiogram (contract §3.3.17): 30-s recordings at 512 Hz split into 1-s samples whose
/// session state runs begin → active… → end, written together when the watch syncs.
func ecgBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.electrocardiogram)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let view = RangeView(p, from: rl - 2 * 86_400, to: rh + 86_400)
    let hz = 512.0
    let left = p.profile.wristLocation == 0
    for rec in view.ecgRecordings() where rec.end > rl && rec.end <= rh {
        let w = ctx.write(ready: rec.end)
        guard ctx.accepts(w, ready: rec.end) else { continue }
        let period = 60 / rec.heartRate
        let session = uuidString(rec.key, 0)
        let count = Int(rec.end - rec.start)
        for i in 0..<count {
            var data: [FieldValue] = []
            data.reserveCapacity(Int(hz))
            for j in 0..<Int(hz) {
                let n = i * Int(hz) + j
                let t = Double(n) / hz
                let phi = (t / period).truncatingRemainder(dividingBy: 1)
                var v = ecgBeat(phi) + 40 * sin(2 * Double.pi * 0.3 * t) + 10 * gaussianish(rec.key.bits(n))
                if !left { v = -v }
                data.append(obj([("flags", .int(2)), ("value", .double(rounded(v, 10)))]))
            }
            out.row(write: w, time: rec.start + Double(i))
            out.set("frequency", hz)
            out.set("sessionState", Int64(i == 0 ? 1 : i == count - 1 ? 3 : 2))
            out.set("sessionGuidance", Int64(1))
            out.set("sessionIdentifier", session)
            out.set("lead", Int64(left ? 2 : 1))
            out.set("data", value: .array(data))
        }
    }
    return out.batch()
}

/// Photoplethysmogram (contract §3.3.18): windows of `RangeView.ppgWindows` while worn, 32 Hz;
/// two green (525 nm) channels whose normalised reflectance pulses ~2 % with each heartbeat,
/// the watch's accelerometer alongside (arm swing at the step rate when walking or
/// running, when the optical channels are also flagged `unreliableNoise` a third of the
/// time), skin temperature ~33 °C.
func ppgBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.photoplethysmogram)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let hz = 32.0
    let view = RangeView(p, from: rl - 120, to: rh + 60)
    for rec in view.ppgWindows(from: rl - 61, to: rh) where rec.end > rl && rec.end <= rh {
        let w = ctx.write(ready: rec.end)
        guard ctx.accepts(w, ready: rec.end) else { continue }
        let period = 60 / rec.heartRate
        let temperature = rounded(33 + 0.5 * rec.key.normal(0), 100)
        let swing = rec.cadence > 2.2 ? 0.8 : rec.cadence > 0 ? 0.3 : 0
        let noisy = swing > 0 && rec.key.chance(1, 1.0 / 3)
        let conditions: FieldValue = .array(noisy ? [.string("unreliableNoise")] : [])
        let usage: FieldValue = .array([.string(rec.usage)])
        for n in 0..<Int((rec.end - rec.start) * hz) {
            let t = Double(n) / hz
            let ns = Int64((t * 1e9).rounded())
            let phi = (t / period).truncatingRemainder(dividingBy: 1)
            let pulse = exp(-pow((phi - 0.2) / 0.08, 2)) + 0.4 * exp(-pow((phi - 0.45) / 0.1, 2))
            let optical: [FieldValue] = (0..<2).map { c in
                let h = rec.key.bits(n * 4 + c)
                return obj([
                    ("emitter", .int(Int64(c + 1))), ("activePhotodiodeIndexes", .array([.int(Int64(2 * c)), .int(Int64(2 * c + 1))])),
                    ("signalIdentifier", .int(Int64(c + 1))), ("nominalWavelength", .double(525)),
                    ("effectiveWavelength", .double(527)), ("samplingFrequency", .double(hz)),
                    ("nanosecondsSinceStart", .int(ns)),
                    ("normalizedReflectance", .double(rounded(1 - 0.02 * pulse + 0.001 * gaussianish(h), 1_000_000))),
                    ("whiteNoise", .double(0.001)), ("pinkNoise", .double(0.002)), ("backgroundNoise", .double(0.0005)),
                    ("backgroundNoiseOffset", .double(0.0001)), ("conditions", conditions),
                ])
            }
            let h = rec.key.bits(n * 4 + 3)
            let arm = swing * sin(2 * Double.pi * rec.cadence / 2 * t)   // one arm swing per two steps
            let accel = obj([("nanosecondsSinceStart", .int(ns)), ("samplingFrequency", .double(hz)),
                             ("x", .double(rounded(-0.2 + arm + 0.01 * gaussianish(h), 10_000))),
                             ("y", .double(rounded(0.1 + 0.3 * arm + 0.01 * gaussianish(h &* 3), 10_000))),
                             ("z", .double(rounded(-0.97 + 0.01 * gaussianish(h &* 5), 10_000)))])
            out.row(write: w, time: rec.start)
            out.set("nanosecondsSinceStart", ns)
            out.set("usage", value: usage)
            out.set("opticalSamples", value: .array(optical))
            out.set("accelerometerSamples", value: .array([accel]))
            out.set("temperature", temperature)
        }
    }
    return out.batch()
}
