import Foundation
import SensorKitModel

extension RangeView {
    /// Illuminance around the participant at `t` inside block `b`, lux, and the CIE 1931
    /// xy chromaticity of the dominant light source.
    ///
    /// Indoor levels follow lighting practice: offices 300–500 lx (EN 12464-1 asks 500 lx
    /// at desks), homes 50–300 lx in the evening, 10–50 lx dimmed before bed, a bedroom at
    /// night < 1 lx; outdoors the clear-sky illuminance for the sun's elevation scaled by
    /// the day's cloud cover (overcast skies pass 10–30 %).
    func environmentLight(_ b: Block, at t: Double, cloud: Double) -> (lux: Double, x: Double, y: Double) {
        let k = RandomKey(b.key).with(40)
        let elevation = solarElevation(t, latitude: p.profile.latitude, longitude: p.profile.longitude)
        let outdoor = max(clearSkyLux(elevation: elevation) * cloud, elevation < -4 ? k.uniform(1, 4, 15) : 0)
        // Daylight: D65 in sun, slightly bluer under cloud; warm 2700 K lamps; 4000 K offices.
        let day: (Double, Double) = cloud > 0.6 ? (0.3127, 0.3290) : (0.3040, 0.3170)
        let warm = (0.4599, 0.4106), neutral = (0.3805, 0.3768), dim = (0.5010, 0.4140)
        func mix(_ a: Double, _ ca: (Double, Double), _ b: Double, _ cb: (Double, Double)) -> (Double, Double, Double) {
            let l = a + b
            guard l > 0 else { return (0, 0, 0) }
            return (l, (a * ca.0 + b * cb.0) / l, (a * ca.1 + b * cb.1) / l)
        }
        let r: (Double, Double, Double)
        switch b.place {
        case .bedroomDark: r = (k.uniform(2, 0.05, 0.8), warm.0, warm.1)
        case .bedroom:
            r = mix(k.uniform(3, 15, 60), warm, 0.01 * outdoor, day)
        case .home:
            let lamps = outdoor < 2_000 ? k.uniform(4, 80, 220) : k.uniform(5, 0, 60)
            r = mix(lamps, warm, 0.02 * outdoor, day)
        case .homeDim: r = mix(k.uniform(6, 8, 45), dim, 0, day)
        case .office: r = mix(k.uniform(7, 300, 550), neutral, 0.01 * outdoor, day)
        case .indoorPublic: r = mix(k.uniform(8, 250, 700), neutral, 0.01 * outdoor, day)
        case .outdoors: r = (outdoor, day.0, day.1)
        case .car, .transit: r = mix(b.place == .transit ? 150 : 0, neutral, 0.3 * outdoor, day)
        }
        return r
    }
}

/// Ambient light: on the phone every `ambientLightPeriod` s while the screen is on (contract
/// §3.2, §14.3); on the watch `watchAmbientLightBatch`.
func ambientLightBatch(_ p: Participant, kind: DeviceKind, ctx: WriteContext) -> SampleBatch {
    if kind == .watch { return watchAmbientLightBatch(p, ctx: ctx) }
    let sensor = Sensor.ambientLightSensor
    let delay = 0.5
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return Schema.empty(sensor) }
    let view = RangeView(p, from: rl - delay - 1, to: rh + 1)
    let period = p.settings.ambientLightPeriod
    let key = p.key.with("als")
    var lux: [Double] = [], cx: [Double] = [], cy: [Double] = [], writes: [Double] = []
    let storyCloud: (Double) -> Double = { t in
        view.stories.first { t >= $0.spanStart && t < $0.spanEnd }?.cloud ?? 0.6
    }
    var bi = 0
    for s in view.screens where s.end > rl - delay && s.start <= rh - delay {
        let facing = RandomKey(s.key).uniform(41, 0.3, 1.0)
        var j = max(0, Int(((rl - delay - s.start - 0.25) / period).rounded(.down)))
        while true {
            let t = s.start + 0.25 + Double(j) * period
            j += 1
            if t >= s.end || t > rh - delay { break }
            let ready = t + delay
            guard ready > rl, containing(view.phoneOff, t) == nil else { continue }
            let w = ctx.write(ready: ready)
            guard ctx.accepts(w, ready: ready) else { continue }
            while bi < view.blocks.count && view.blocks[bi].end <= t { bi += 1 }
            while bi > 0 && view.blocks[bi].start > t { bi -= 1 }
            guard bi < view.blocks.count else { break }
            let env = view.environmentLight(view.blocks[bi], at: t, cloud: storyCloud(t))
            let n = Int((t * 4).rounded())
            let l = min(60_000, env.lux * facing * exp(0.08 * gaussianish(key.bits(n))))
            lux.append((l * 100).rounded() / 100)
            if l < 1 {
                cx.append(0); cy.append(0)
            } else {
                cx.append(Double(Float(env.x + 0.004 * gaussianish(key.bits(n &+ 1)))))
                cy.append(Double(Float(env.y + 0.004 * gaussianish(key.bits(n &+ 2)))))
            }
            writes.append(w)
        }
    }
    // The ALS sample has no date of its own: the batch's times are the write times.
    return SampleBatch(sensor: sensor, writeTimes: writes, times: writes, columns: [
        Column(name: "lux", data: .double(lux)),
        Column(name: "placement", data: .int(Array(repeating: 1, count: lux.count))),  // frontTop
        Column(name: "chromaticityX", data: .double(cx)),
        Column(name: "chromaticityY", data: .double(cy)),
    ])
}

/// Seconds between two ambient-light readings of the watch (undocumented; a real MyDataHelps
/// export holds watch ambient light, `recorded-formats.md` §2).
let watchAmbientLightPeriod = 60.0

/// Ambient light on the Apple Watch: one reading a minute while the watch is worn, of the
/// light around the wrist (a sleeve or the other arm covers the sensor at times). The watch
/// measures no colour: chromaticity is 0 (as in the real export's row), placement
/// `frontTopRight`. Rows are timed when measured and written when the watch syncs.
func watchAmbientLightBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    let sensor = Sensor.ambientLightSensor
    let period = watchAmbientLightPeriod
    let (rl, rh) = ctx.readyRange
    let first = Int((rl / period).rounded(.down)) + 1, last = Int((rh / period).rounded(.down))
    guard last >= first else { return Schema.empty(sensor) }
    let view = RangeView(p, from: Double(first) * period - 1, to: Double(last) * period + 1)
    let worn = wornIntervals(view, from: Double(first) * period, to: Double(last) * period + 1)
    let key = p.key.with("als-watch")
    let storyCloud: (Double) -> Double = { t in
        view.stories.first { t >= $0.spanStart && t < $0.spanEnd }?.cloud ?? 0.6
    }
    var lux: [Double] = [], times: [Double] = [], writes: [Double] = []
    var syncMemo = WriteContext.WriteMemo()
    var bi = 0
    for w in worn {
        var n = max(first, Int((w.start / period).rounded(.up)))
        while Double(n) * period < w.end && n <= last {
            defer { n += 1 }
            let t = Double(n) * period
            while bi < view.blocks.count && view.blocks[bi].end <= t { bi += 1 }
            guard bi < view.blocks.count else { break }
            let write = ctx.write(ready: t, memo: &syncMemo)
            guard ctx.accepts(write, ready: t) else { continue }
            let env = view.environmentLight(view.blocks[bi], at: t, cloud: storyCloud(t))
            // Covered by a sleeve about a fifth of the time: a tenth of the light or less.
            let covered = unitDouble(key.bits(n)) < 0.2
            let l = min(60_000, env.lux * (covered ? 0.1 * unitDouble(key.bits(n &+ 1)) : 1) * exp(0.1 * gaussianish(key.bits(n &+ 2))))
            lux.append((l * 100).rounded() / 100)
            times.append(t)
            writes.append(write)
        }
    }
    let zeros = [Double](repeating: 0, count: lux.count)
    return SampleBatch(sensor: sensor, writeTimes: writes, times: times, columns: [
        Column(name: "lux", data: .double(lux)),
        Column(name: "placement", data: .int(Array(repeating: 5, count: lux.count))),  // frontTopRight
        Column(name: "chromaticityX", data: .double(zeros)),
        Column(name: "chromaticityY", data: .double(zeros)),
    ])
}
