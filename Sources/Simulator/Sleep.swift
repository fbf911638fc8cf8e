import Foundation
import SensorKitModel

/// A night the watch saw: asleep → awake, and whether the end was observed.
struct WatchNight {
    var day: Int
    var start: Double
    var end: Double
    /// The watch left the wrist (or switched off) during the night: no end event.
    var interrupted: Bool
    var awakenings: [Interval]
}

extension RangeView {
    /// Nights in the view worn with the watch, whose session starts with the watch worn and on.
    func watchNights() -> [WatchNight] {
        stories.compactMap { s in
            let n = s.night
            guard n.watchWorn, n.wake > n.asleep else { return nil }
            let worn = intersect(complement(offWrist, from: n.asleep, to: n.wake), complement(watchOff, from: n.asleep, to: n.wake))
            guard let first = worn.first, first.start == n.asleep else { return nil }
            let interrupted = !(worn.count == 1 && first.end == n.wake)
            return WatchNight(day: s.day, start: n.asleep, end: n.wake, interrupted: interrupted, awakenings: n.awakenings)
        }
    }
}

/// Sleep sessions (contract §3.3.20): one per night slept with the watch, written at wake-up via
/// sync; `duration` 0 when the watch did not see the end (taken off or switched off).
func sleepSessionsBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.sleepSessions)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let view = RangeView(p, from: rl - 2 * 86_400, to: rh + 86_400)
    let k = p.key.with("sleep-session")
    for n in view.watchNights() where n.end > rl && n.end <= rh {
        let w = ctx.write(ready: n.end)
        guard ctx.accepts(w, ready: n.end) else { continue }
        out.row(write: w, time: n.start)
        out.set("duration", n.interrupted ? 0 : n.end - n.start)
        out.set("identifier", uuidString(k, n.day))
    }
    return out.batch()
}

/// Wrist temperature (contract §3.3.16): one session per night slept with the watch; a reading every
/// 5 min. Skin temperature at the wrist during sleep ≈ 33–36 °C, rising ~0.5 °C over the
/// first hours as the body's core temperature falls and distal skin warms (Kräuchi 2007).
func wristTemperatureBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.wristTemperature)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let view = RangeView(p, from: rl - 2 * 86_400, to: rh + 86_400)
    let k = p.key.with("wrist-temperature")
    let baseline = 34.6 + 0.4 * k.normal(0)
    for n in view.watchNights() where n.end > rl && n.end <= rh {
        let w = ctx.write(ready: n.end)
        guard ctx.accepts(w, ready: n.end) else { continue }
        let nk = k.with(n.day)
        let nightly = 0.2 * nk.normal(0)
        var readings: [FieldValue] = []
        var t = n.start + 300
        var i = 0
        while t <= n.end {
            var condition: Int64 = 0
            if containing(view.offWrist, t) != nil { condition |= 1 }
            if n.awakenings.contains(where: { t >= $0.start && t < $0.end }) { condition |= 4 }
            let rise = 0.6 * (1 - exp(-(t - n.start) / 5_400))
            let value = baseline + nightly + rise + 0.05 * nk.normal(i + 1) - (condition & 1 != 0 ? 3 : 0)
            readings.append(obj([("timestamp", .double(t)), ("value", .double(rounded(value, 100))),
                                 ("condition", .int(condition)),
                                 ("errorEstimate", .double(rounded(nk.uniform(i + 10_000, 0.05, 0.15), 100)))]))
            t += 300
            i += 1
        }
        out.row(write: w, time: n.start)
        out.set("duration", n.end - n.start)
        out.set("version", "1.0")
        out.set("temperatures", value: .array(readings))
    }
    return out.batch()
}
