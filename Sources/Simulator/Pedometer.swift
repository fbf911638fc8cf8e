import Foundation
import SensorKitModel

extension Participant {
    /// Metres per step at a cadence (steps/s): longer steps when faster (walking speed ≈
    /// cadence × step length; 1.85 steps/s × 0.70 m ≈ 1.3 m/s, the usual walking speed).
    func stepLength(cadence: Double) -> Double {
        if cadence >= 2.3 { return profile.stepLength * 1.5 }
        return profile.stepLength * clamp((cadence / 1.85).squareRoot(), 0.75, 1.1)
    }
}

/// Pedometer: one record per `pedometerBin` (150 s) grid bin in which steps were taken
/// (contract §3.2 "one per ~1–5 min with steps > 0"), written a few seconds after the bin ends.
/// Step counts are whole steps of each walking block, so bins add up exactly.
func pedometerBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    let sensor = Sensor.pedometerData
    let bin = p.settings.pedometerBin
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return Schema.empty(sensor) }
    let dk = p.key.with("pedometer-delay")
    let maxDelay = 8.0
    let firstBin = Int(((rl - maxDelay) / bin).rounded(.down)) - 1
    let lastBin = Int((rh / bin).rounded(.up))
    let view = RangeView(p, from: Double(firstBin) * bin, to: Double(lastBin + 1) * bin)
    let on = complement(view.phoneOff, from: Double(firstBin) * bin, to: Double(lastBin + 1) * bin)
    let walks = view.blocks.filter { $0.cadence > 0 }
    var starts: [Double] = [], ends: [Double] = [], steps: [Int64] = [], dist: [Double] = [], up: [Int64] = []
    var down: [Int64] = [], pace: [Double] = [], cad: [Double] = [], avgPace: [Double] = [], writes: [Double] = []
    var wi = 0, oi = 0
    for k in firstBin...lastBin {
        let b0 = Double(k) * bin, b1 = b0 + bin
        let ready = b1 + 1 + (maxDelay - 1) * dk.unit(k)
        guard ready > rl && ready <= rh else { continue }
        while wi < walks.count && walks[wi].end <= b0 { wi += 1 }
        while oi < on.count && on[oi].end <= b0 { oi += 1 }
        var n = 0, d = 0.0, fu = 0, fd = 0, active = 0.0
        var first = Double.infinity, lastEnd = 0.0, lastCadence = 0.0, lastLength = 0.0
        var j = wi
        while j < walks.count && walks[j].start < b1 {
            let w = walks[j]
            var o = oi
            while o < on.count && on[o].start < min(b1, w.end) {
                let s = max(b0, w.start, on[o].start), e = min(b1, w.end, on[o].end)
                if e > s {
                    let c = w.cadence
                    let ns = Int((c * (e - w.start)).rounded(.down)) - Int((c * (s - w.start)).rounded(.down))
                    if ns > 0 {
                        n += ns
                        let len = p.stepLength(cadence: c)
                        d += Double(ns) * len
                        active += e - s
                        first = min(first, s)
                        lastEnd = e
                        lastCadence = c
                        lastLength = len
                        let dur = w.end - w.start
                        if w.floorsUp > 0 {
                            fu += Int((Double(w.floorsUp) * (e - w.start) / dur).rounded(.down))
                                - Int((Double(w.floorsUp) * (s - w.start) / dur).rounded(.down))
                        }
                        if w.floorsDown > 0 {
                            fd += Int((Double(w.floorsDown) * (e - w.start) / dur).rounded(.down))
                                - Int((Double(w.floorsDown) * (s - w.start) / dur).rounded(.down))
                        }
                    }
                }
                o += 1
            }
            j += 1
        }
        guard n > 0 else { continue }
        let w = ctx.write(ready: ready)
        guard ctx.accepts(w, ready: ready) else { continue }
        starts.append(first)
        ends.append(lastEnd)
        steps.append(Int64(n))
        dist.append((d * 100).rounded() / 100)
        up.append(Int64(fu))
        down.append(Int64(fd))
        pace.append(1 / (lastCadence * lastLength))
        cad.append(lastCadence)
        avgPace.append(active / d)
        writes.append(w)
    }
    return SampleBatch(sensor: sensor, writeTimes: writes, times: starts, columns: [
        Column(name: "endDate", data: .double(ends)),
        Column(name: "numberOfSteps", data: .int(steps)),
        Column(name: "distance", data: .double(dist)),
        Column(name: "floorsAscended", data: .int(up)),
        Column(name: "floorsDescended", data: .int(down)),
        Column(name: "currentPace", data: .double(pace)),
        Column(name: "currentCadence", data: .double(cad)),
        Column(name: "averageActivePace", data: .double(avgPace)),
    ])
}
