import Foundation
import SensorKitModel

/// 4096-entry sine table; a 32-bit phase indexes it by its top 12 bits.
let sineTable: [Double] = (0..<4096).map { sin(Double($0) * 2 * Double.pi / 4096) }

/// A stretch of constant motion character for one device: a gravity (or bias) vector, two
/// oscillators locked together (stride at f/2, step at f) and white noise.
struct MotionSpan {
    var start: Double
    var end: Double
    /// Start of the underlying block: the oscillators' phase reference, so that clipping a
    /// span to a range or splitting it at a screen session never shifts the phase.
    var origin: Double
    /// Static part per axis (gravity in g, or gyro bias in rad/s).
    var ox = 0.0, oy = 0.0, oz = 0.0
    /// Amplitude vector of the step oscillator.
    var ax = 0.0, ay = 0.0, az = 0.0
    /// Amplitude vector of the stride oscillator (half the step frequency).
    var bx = 0.0, by = 0.0, bz = 0.0
    var sigma = 0.0
    /// Stride-oscillator phase increment per sample (2³² = one cycle) and start phase.
    var inc: UInt32 = 0
    var phase0: UInt32 = 0
}

/// The motion state of a device over time, before it becomes accelerometer or gyroscope.
struct MotionState {
    var start: Double
    var end: Double
    var origin: Double
    var activity: Activity
    var cadence: Double
    /// Phone: screen on (in the hand). Watch: on the charger (off the wrist).
    var flag: Bool
    var key: UInt64
}

extension RangeView {
    /// Motion states of the phone (blocks × screen sessions) or the watch (blocks × wear),
    /// restricted to the time the device is on.
    func motionStates(_ kind: DeviceKind, from a: Double, to b: Double) -> [MotionState] {
        let overlay: [Interval]
        var overlayKeys: [UInt64] = []
        if kind == .phone {
            let s = screens.filter { $0.end > a && $0.start < b }
            overlay = s.map { Interval(start: $0.start, end: $0.end) }
            overlayKeys = s.map(\.key)
        } else {
            overlay = offWrist.filter { $0.end > a && $0.start < b }
            // The watch lies the same way on its charger every time.
            overlayKeys = overlay.map { _ in p.key.with("charger").raw }
        }
        let on = complement(kind == .phone ? phoneOff : watchOff, from: a, to: b)
        var out: [MotionState] = []
        out.reserveCapacity(blocks.count + 2 * overlay.count)
        var j = 0
        for blk in blocks where blk.end > a && blk.start < b {
            var c = max(blk.start, a)
            let e = min(blk.end, b)
            while j > 0 && overlay[j - 1].end > c { j -= 1 }
            while j < overlay.count && overlay[j].end <= c { j += 1 }
            var k = j
            while c < e {
                if k < overlay.count && overlay[k].start <= c {
                    let oe = min(overlay[k].end, e)
                    out.append(MotionState(start: c, end: oe, origin: blk.start, activity: blk.activity,
                                           cadence: blk.cadence, flag: true, key: overlayKeys[k]))
                    c = oe
                    if overlay[k].end <= c { k += 1 }
                } else {
                    let ne = k < overlay.count ? min(overlay[k].start, e) : e
                    out.append(MotionState(start: c, end: ne, origin: blk.start, activity: blk.activity,
                                           cadence: blk.cadence, flag: false, key: blk.key))
                    c = ne
                }
            }
        }
        // Keep only the powered-on parts.
        var clipped: [MotionState] = []
        clipped.reserveCapacity(out.count + on.count)
        var oi = 0
        for s in out {
            while oi < on.count && on[oi].end <= s.start { oi += 1 }
            var k = oi
            while k < on.count && on[k].start < s.end {
                let cs = max(s.start, on[k].start), ce = min(s.end, on[k].end)
                if cs < ce {
                    var x = s
                    x.start = cs
                    x.end = ce
                    clipped.append(x)
                }
                k += 1
            }
        }
        return clipped
    }
}

/// A unit vector near `v` (a random tilt of a few degrees).
func jittered(_ v: (Double, Double, Double), _ k: RandomKey, _ spread: Double) -> (Double, Double, Double) {
    let x = v.0 + spread * k.normal(1), y = v.1 + spread * k.normal(2), z = v.2 + spread * k.normal(3)
    let n = (x * x + y * y + z * z).squareRoot()
    return (x / n, y / n, z / n)
}

/// A unit vector orthogonal to `g`.
func orthogonal(_ g: (Double, Double, Double)) -> (Double, Double, Double) {
    let ref: (Double, Double, Double) = abs(g.0) < 0.8 ? (1, 0, 0) : (0, 1, 0)
    var x = g.1 * ref.2 - g.2 * ref.1, y = g.2 * ref.0 - g.0 * ref.2, z = g.0 * ref.1 - g.1 * ref.0
    let n = (x * x + y * y + z * z).squareRoot()
    x /= n; y /= n; z /= n
    return (x, y, z)
}

enum MotionSensor { case accelerometer, gyroscope }

/// Turns a motion state into accelerometer or gyroscope parameters.
///
/// Magnitudes: a phone at rest reads 1 g with ~0.005 g noise; walking adds a vertical
/// oscillation of ~0.3–0.6 g at the step frequency and ~0.15 g sideways at the stride
/// frequency (pocket), running ~1–1.5 g; wrist arm swing during walking ~0.5 g at the
/// stride frequency. Gyroscope noise at rest ~0.002–0.005 rad/s; leg swing in a pocket
/// ~1–2 rad/s; arm swing on the wrist ~1.5 rad/s. (Orders of magnitude from published
/// smartphone HAR datasets, e.g. UCI HAR / WISDM.)
func motionSpan(_ s: MotionState, kind: DeviceKind, sensor: MotionSensor, rate: Double) -> MotionSpan {
    let k = RandomKey(s.key).with(kind == .phone ? 11 : 12)
    var m = MotionSpan(start: s.start, end: s.end, origin: s.origin)
    let up: (Double, Double, Double)
    var stepAmp = 0.0, strideAmp = 0.0, sigma = 0.005, freq = 0.0
    let walking = s.activity == .walk || s.activity == .run
    if kind == .phone {
        let screenOn = s.flag
        if screenOn {
            up = jittered((0, -0.72, -0.69), k, 0.12)
        } else if walking || s.activity == .vehicle {
            up = jittered(k.chance(9, 0.5) ? (0, -1, 0) : (0, 1, 0), k, 0.25)
        } else {
            let r = k.unit(8)
            up = r < 0.55 ? jittered((0, 0, -1), k, 0.02) : r < 0.7 ? jittered((0, 0, 1), k, 0.02) : jittered((0, -1, 0), k, 0.3)
        }
        switch s.activity {
        case .asleep, .inBed:
            sigma = screenOn ? 0.015 : 0.0035; strideAmp = screenOn ? 0.02 : 0; freq = 0.5
        case .sedentary:
            sigma = screenOn ? 0.015 : 0.006; strideAmp = screenOn ? 0.02 : 0.003; freq = 0.5
        case .light:
            sigma = screenOn ? 0.025 : 0.03; strideAmp = 0.05; freq = 0.8
        case .vehicle:
            sigma = 0.03; strideAmp = 0.05; freq = 0.8
        case .walk, .run:
            freq = s.cadence
            let intensity = clamp((s.cadence - 1.2) / 0.7, 0, 1)
            stepAmp = s.activity == .run ? 1.2 : 0.22 + 0.3 * intensity
            strideAmp = s.activity == .run ? 0.4 : 0.15
            if screenOn { stepAmp *= 0.4; strideAmp *= 0.5 }
            sigma = s.activity == .run ? 0.15 : 0.06
        }
        if sensor == .gyroscope {
            switch s.activity {
            case .walk: stepAmp = 0.3; strideAmp = screenOn ? 0.3 : 1.2; sigma = 0.08
            case .run: stepAmp = 0.6; strideAmp = 2.4; sigma = 0.2
            case .light, .vehicle: stepAmp = 0; strideAmp = 0.08; sigma = 0.03
            default: stepAmp = 0; strideAmp = screenOn ? 0.04 : 0; sigma = screenOn ? 0.02 : 0.003
            }
        }
    } else {
        let charging = s.flag
        if charging {
            up = jittered((0, 0, -1), k, 0.02)
            sigma = 0.003
        } else {
            up = jittered((-0.2, 0.1, -0.97), k, 0.35)
            switch s.activity {
            case .asleep: sigma = 0.006
            case .inBed: sigma = 0.03; strideAmp = 0.04; freq = 0.4
            case .sedentary: sigma = 0.03; strideAmp = 0.05; freq = 0.3
            case .light: sigma = 0.08; strideAmp = 0.15; freq = 0.6
            case .vehicle: sigma = 0.04; strideAmp = 0.04; freq = 0.8
            case .walk: freq = s.cadence; strideAmp = 0.5; stepAmp = 0.35; sigma = 0.06
            case .run: freq = s.cadence; strideAmp = 1.5; stepAmp = 1.0; sigma = 0.2
            }
        }
        if sensor == .gyroscope {
            switch (charging, s.activity) {
            case (true, _), (_, .asleep): stepAmp = 0; strideAmp = 0; sigma = charging ? 0.002 : 0.01
            case (_, .walk): stepAmp = 0.3; strideAmp = 1.5; sigma = 0.1
            case (_, .run): stepAmp = 0.8; strideAmp = 4; sigma = 0.3
            default: stepAmp = 0; strideAmp = 0.1; sigma = 0.05
            }
        }
    }
    let side = orthogonal(up)
    if sensor == .accelerometer {
        m.ox = up.0; m.oy = up.1; m.oz = up.2
        m.ax = stepAmp * up.0; m.ay = stepAmp * up.1; m.az = stepAmp * up.2
        m.bx = strideAmp * side.0; m.by = strideAmp * side.1; m.bz = strideAmp * side.2
    } else {
        // Gyroscope: a small per-span bias; rotation mostly about the sideways axis.
        m.ox = 0.002 * k.normal(20); m.oy = 0.002 * k.normal(21); m.oz = 0.002 * k.normal(22)
        m.ax = stepAmp * up.0; m.ay = stepAmp * up.1; m.az = stepAmp * up.2
        m.bx = strideAmp * side.0; m.by = strideAmp * side.1; m.bz = strideAmp * side.2
    }
    m.sigma = sigma
    // Stride oscillator runs at half the step frequency; the step phase is twice it.
    let strideFreq = freq / 2
    m.inc = UInt32(truncatingIfNeeded: Int64((strideFreq / rate * 4_294_967_296).rounded()))
    m.phase0 = UInt32(truncatingIfNeeded: k.bits(30))
    return m
}

/// White-noise tables for the 50 Hz streams: two tables of standard normals with
/// coprime prime lengths. Sample n of an axis reads G1[(n + o1) mod P1] + G2[(n + o2) mod P2]
/// (÷ √2): a pure function of n with a period of P1 × P2 ≈ 67 M samples (15 days at 50 Hz),
/// and sequential reads the compiler can vectorise. Offsets differ per stream and axis.
let noiseP1 = 8_191, noiseP2 = 8_209
let noiseTable1: [Double] = (0..<noiseP1).map { RandomKey(0x6E01_5E00_0000_0001).normal($0) * 0.7071067811865476 }
let noiseTable2: [Double] = (0..<noiseP2).map { RandomKey(0x6E01_5E00_0000_0002).normal($0) * 0.7071067811865476 }

@inline(__always)
func positiveMod(_ a: Int, _ m: Int) -> Int { let r = a % m; return r < 0 ? r + m : r }

/// Fills one axis: out[i] = base + sigma × noise(n0 + i).
@inline(__always)
func fillNoiseAxis(base: Double, sigma: Double, n0: Int, count: Int, o1: Int, o2: Int,
                   g1: UnsafePointer<Double>, g2: UnsafePointer<Double>, out: UnsafeMutablePointer<Double>) {
    var i1 = positiveMod(n0 &+ o1, noiseP1), i2 = positiveMod(n0 &+ o2, noiseP2)
    var done = 0
    while done < count {
        let run = min(count - done, noiseP1 - i1, noiseP2 - i2)
        let a = g1 + i1, b = g2 + i2, o = out + done
        for i in 0..<run { o[i] = base + sigma * (a[i] + b[i]) }
        done += run
        i1 += run; if i1 == noiseP1 { i1 = 0 }
        i2 += run; if i2 == noiseP2 { i2 = 0 }
    }
}

/// Fills `count` samples starting at global sample index `n0` for one span: pure in the
/// sample index (phase and noise are functions of it), so any split gives the same values.
@inline(__always)
func fillMotion(_ m: MotionSpan, spanFirst: Int, n0: Int, count: Int, noiseKey: UInt64,
                table: UnsafePointer<Double>, g1: UnsafePointer<Double>, g2: UnsafePointer<Double>,
                x: UnsafeMutablePointer<Double>, y: UnsafeMutablePointer<Double>, z: UnsafeMutablePointer<Double>) {
    let k = RandomKey(noiseKey)
    func off(_ i: Int, _ p: Int) -> Int { Int(k.bits(i) % UInt64(p)) }
    fillNoiseAxis(base: m.ox, sigma: m.sigma, n0: n0, count: count, o1: off(1, noiseP1), o2: off(2, noiseP2), g1: g1, g2: g2, out: x)
    fillNoiseAxis(base: m.oy, sigma: m.sigma, n0: n0, count: count, o1: off(3, noiseP1), o2: off(4, noiseP2), g1: g1, g2: g2, out: y)
    fillNoiseAxis(base: m.oz, sigma: m.sigma, n0: n0, count: count, o1: off(5, noiseP1), o2: off(6, noiseP2), g1: g1, g2: g2, out: z)
    let ax = m.ax, ay = m.ay, az = m.az, bx = m.bx, by = m.by, bz = m.bz
    guard ax != 0 || ay != 0 || az != 0 || bx != 0 || by != 0 || bz != 0 else { return }
    let inc = m.inc, p0 = m.phase0
    var ph = p0 &+ UInt32(truncatingIfNeeded: n0 - spanFirst) &* inc
    for i in 0..<count {
        let s1 = table[Int((ph &<< 1) &>> 20)]
        let s2 = table[Int(ph &>> 20)]
        x[i] += ax * s1 + bx * s2
        y[i] += ay * s1 + by * s2
        z[i] += az * s1 + bz * s2
        ph &+= inc
    }
}
