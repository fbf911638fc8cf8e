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

    /// Background PPG windows: 10 s every 30 min (seeded phase) while the watch is worn.
    func ppgWindows(from a: Double, to b: Double) -> [WatchRecording] {
        let period = 1_800.0
        let phase = (unitDouble(p.key.with("ppg-phase").bits(0)) * period).rounded(.down)
        var k = Int(((a - phase) / period).rounded(.down))
        var out: [WatchRecording] = []
        while Double(k) * period + phase < b {
            defer { k += 1 }
            let s = Double(k) * period + phase
            guard s + 10 > a, worn(s, s + 10) else { continue }
            let bi = blockIndex(blocks, at: s)
            out.append(WatchRecording(start: s, end: s + 10, key: p.key.with("ppg").with(k),
                                      heartRate: bi.map { p.heartRateTarget(blocks[$0]) } ?? p.profile.restingHeartRate))
        }
        return out
    }
}

/// Electrocardiogram (§3.3.17): 30-s recordings at 512 Hz split into 1-s samples whose
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

/// Photoplethysmogram (§3.3.18): background windows of 10 s every 30 min while worn, 32 Hz;
/// two green (525 nm) channels whose normalised reflectance pulses ~2 % with each heartbeat,
/// the watch's accelerometer alongside, skin temperature ~33 °C.
func ppgBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.photoplethysmogram)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let hz = 32.0
    let view = RangeView(p, from: rl - 60, to: rh + 60)
    for rec in view.ppgWindows(from: rl - 10, to: rh) where rec.end > rl && rec.end <= rh {
        let w = ctx.write(ready: rec.end)
        guard ctx.accepts(w, ready: rec.end) else { continue }
        let period = 60 / rec.heartRate
        let temperature = rounded(33 + 0.5 * rec.key.normal(0), 100)
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
                    ("backgroundNoiseOffset", .double(0.0001)), ("conditions", .array([])),
                ])
            }
            let h = rec.key.bits(n * 4 + 3)
            let accel = obj([("nanosecondsSinceStart", .int(ns)), ("samplingFrequency", .double(hz)),
                             ("x", .double(rounded(-0.2 + 0.01 * gaussianish(h), 10_000))),
                             ("y", .double(rounded(0.1 + 0.01 * gaussianish(h &* 3), 10_000))),
                             ("z", .double(rounded(-0.97 + 0.01 * gaussianish(h &* 5), 10_000)))])
            out.row(write: w, time: rec.start)
            out.set("nanosecondsSinceStart", ns)
            out.set("usage", value: .array([.string("backgroundSystem")]))
            out.set("opticalSamples", value: .array(optical))
            out.set("accelerometerSamples", value: .array([accel]))
            out.set("temperature", temperature)
        }
    }
    return out.batch()
}
