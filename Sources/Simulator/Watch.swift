import Foundation
import SensorKitModel

extension Participant {
    /// Heart-rate level the body settles to in a block, bpm.
    ///
    /// Rest: resting HR + 3 seated; asleep ~6 bpm below resting (nocturnal dip); walking
    /// 10–40 % of the heart-rate reserve (HRR = max − rest, Karvonen) rising with cadence,
    /// stairs +15 % HRR; running 60–75 % HRR (ACSM intensity bands).
    func heartRateTarget(_ b: Block) -> Double {
        let rest = profile.restingHeartRate
        let reserve = profile.maxHeartRate - rest
        let personal = 2 * gaussianish(RandomKey(b.key).bits(50))
        switch b.activity {
        case .asleep: return rest - 6 + personal * 0.5
        case .inBed: return rest + 1 + personal
        case .sedentary: return rest + (b.place == .office ? 4 : 3) + personal
        case .light: return rest + 12 + personal
        case .vehicle: return rest + (b.place == .car ? 8 : 5) + personal
        case .walk:
            let f = clamp((b.cadence - 1.2) / 0.8, 0, 1)
            let stairs = b.floorsUp > 0 ? 0.15 : 0
            return rest + reserve * (0.10 + 0.30 * f + stairs) + personal
        case .run:
            return rest + reserve * clamp(0.62 + 0.3 * (b.cadence - 2.6), 0.55, 0.8) + personal
        }
    }
}

/// Wear intervals of the watch (on the wrist and switched on) within [lo, hi).
func wornIntervals(_ v: RangeView, from lo: Double, to hi: Double) -> [Interval] {
    intersect(complement(v.offWrist, from: lo, to: hi), complement(v.watchOff, from: lo, to: hi))
}

/// Heart rate: 1 Hz while the watch is worn (contract §3.3.7). The heart follows the activity's
/// target level as a first-order system (time constant 40 s), computed as a sum of step
/// responses so every second is a pure function of the schedule.
func heartRateBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    let sensor = Sensor.heartRate
    let (rl, rh) = ctx.readyRange
    let first = Int(rl.rounded(.down)) + 1, last = Int(rh.rounded(.down))
    guard last >= first else { return Schema.empty(sensor) }
    let tau = 40.0, horizon = 20 * tau
    let view = RangeView(p, from: Double(first) - horizon - 1, to: Double(last) + 1)
    let worn = wornIntervals(view, from: Double(first), to: Double(last) + 1)
    let blocks = view.blocks
    let targets = blocks.map { p.heartRateTarget($0) }
    let key = p.key.with("hr")
    let noiseKey = key.with(1), jitterKey = key.with(2), confKey = key.with(3)
    var hr: [Double] = [], conf: [Int64] = [], up: [Double] = [], times: [Double] = [], writes: [Double] = []
    let estimate = max(0, last - first + 1)
    hr.reserveCapacity(estimate); conf.reserveCapacity(estimate); up.reserveCapacity(estimate)
    times.reserveCapacity(estimate); writes.reserveCapacity(estimate)
    var bi = 0
    var boot = -Double.infinity, bootValidUntil = -Double.infinity
    var lastReady = -Double.infinity, lastWrite = 0.0
    var syncMemo = WriteContext.WriteMemo()
    for w in worn {
        var n = Int(w.start.rounded(.up))
        while Double(n) < w.end && n <= last {
            let t = Double(n)
            while bi < blocks.count && blocks[bi].end <= t { bi += 1 }
            guard bi < blocks.count else { break }
            let b = blocks[bi]
            let segEnd = min(b.end, w.end)
            let night = b.activity == .asleep
            let dropout = b.activity == .run ? 0.05 : b.activity == .walk ? 0.02 : 0.005
            while Double(n) < segEnd && n <= last {
                let t = Double(n)
                defer { n += 1 }
                let h = confKey.bits(n)
                if unitDouble(h) < dropout { continue }
                var v = targets[bi]
                var j = bi
                while j > 0 && t - blocks[j].start < horizon {
                    v += (targets[j - 1] - targets[j]) * exp(-(t - blocks[j].start) / tau)
                    j -= 1
                }
                v += 2.5 * smoothNoise(noiseKey, t, period: 45) + 0.7 * gaussianish(jitterKey.bits(n))
                if night { v += 3 * cos(2 * Double.pi * t / 5_400) }
                let u = Double((h &>> 20) & 0xFFFF) / 65_536
                let c: Int64
                switch b.activity {
                case .run: c = u < 0.3 ? 0 : u < 0.8 ? 1 : 2
                case .walk: c = u < 0.15 ? 0 : u < 0.5 ? 1 : 2
                case .asleep: c = u < 0.6 ? 3 : 2
                default: c = u < 0.1 ? 1 : u < 0.55 ? 2 : 3
                }
                if t >= bootValidUntil || t < boot {
                    boot = ctx.bootTime(.watch, before: t)
                    bootValidUntil = t + 60
                }
                if t != lastReady {
                    lastWrite = ctx.write(ready: t, memo: &syncMemo)
                    lastReady = t
                }
                guard ctx.accepts(lastWrite, ready: t) else { continue }
                hr.append((v * 10).rounded() / 10)
                conf.append(c)
                up.append(t - boot)
                times.append(t)
                writes.append(lastWrite)
            }
        }
    }
    return SampleBatch(sensor: sensor, writeTimes: writes, times: times, columns: [
        Column(name: "heartRate", data: .double(hr)),
        Column(name: "confidence", data: .int(conf)),
        Column(name: "timestamp", data: .double(up)),
    ])
}

/// On-wrist state: one record per change of wear (contract §3.3.12), with the start of the latest
/// on- and off-wrist periods (16.4 fields; absent until the first such change is known).
func onWristBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    let sensor = Sensor.onWristState
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return Schema.empty(sensor) }
    // Transitions with their state after the change; look back far enough to find the
    // previous change of each kind.
    var lookBack = 3 * 86_400.0
    var transitions: [(t: Double, on: Bool)] = []
    var watchOff: [Interval] = []
    while true {
        let view = RangeView(p, from: rl - lookBack - 2 * 86_400, to: rh + 2 * 86_400)
        watchOff = view.watchOff
        transitions = []
        for o in view.offWrist {
            if o.start > rl - lookBack && o.start <= rh { transitions.append((o.start, false)) }
            if o.end > rl - lookBack && o.end <= rh { transitions.append((o.end, true)) }
        }
        transitions.sort { $0.t < $1.t }
        let before = transitions.filter { $0.t <= rl }
        if (before.contains { $0.on } && before.contains { !$0.on }) || lookBack >= 40 * 86_400 { break }
        lookBack *= 2
    }
    var onWrist: [Bool] = [], onDate: [Double] = [], offDate: [Double] = [], writes: [Double] = []
    var onPresent: [Bool] = [], offPresent: [Bool] = []
    var lastOn: Double? = nil, lastOff: Double? = nil
    for tr in transitions {
        if tr.on { lastOn = tr.t } else { lastOff = tr.t }
        let ready = containing(watchOff, tr.t)?.end ?? tr.t
        guard ready > rl && ready <= rh else { continue }
        let w = ctx.write(ready: ready)
        guard ctx.accepts(w, ready: ready) else { continue }
        onWrist.append(tr.on)
        onDate.append(lastOn ?? 0); onPresent.append(lastOn != nil)
        offDate.append(lastOff ?? 0); offPresent.append(lastOff != nil)
        writes.append(w)
    }
    let n = writes.count
    return SampleBatch(sensor: sensor, writeTimes: writes, times: writes, columns: [
        Column(name: "onWrist", data: .bool(onWrist)),
        Column(name: "wristLocation", data: .int(Array(repeating: Int64(p.profile.wristLocation), count: n))),
        Column(name: "crownOrientation", data: .int(Array(repeating: Int64(p.profile.crownOrientation), count: n))),
        Column(name: "onWristDate", data: .double(onDate), present: onPresent.allSatisfy { $0 } ? nil : onPresent),
        Column(name: "offWristDate", data: .double(offDate), present: offPresent.allSatisfy { $0 } ? nil : offPresent),
    ])
}
