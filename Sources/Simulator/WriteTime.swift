import Foundation
import SensorKitModel

/// When records reach the SensorKit store (contract §4.3, §14.3).
///
/// Every generator first computes a record's *ready* time — when the device would write
/// it: a batch's end plus a small delay, a report window's end plus a delay, an event's
/// own time. Then:
/// - phone records are written at the ready time, or, if the phone is off then, at the
///   moment it switched off (the last flush before power-down);
/// - watch records are written on the phone when the watch syncs: at the first sync
///   opportunity at or after ready + `watchSyncLag`. Sync opportunities come every
///   `watchSyncInterval` seconds and need both devices on.
/// Both maps are monotone, so rows ordered by ready time are ordered by write time.
///
/// With `produced` set, only rows whose ready time lies in it are accepted: the model
/// asks for the watch rows produced while the sensor was recording (a sync carries rows
/// from both sides of a start or stop, so write times cannot tell them apart).
struct WriteContext {
    let p: Participant
    let kind: DeviceKind
    let after: Double
    let through: Double
    let phoneOff: [Interval]
    let watchOff: [Interval]
    let lag: Double
    let period: Double
    let phase: Double
    /// Ready times (true time) whose rows are wanted; nil: all.
    let produced: IntervalSet?

    init(_ p: Participant, kind: DeviceKind, after: Double, through: Double, produced: IntervalSet? = nil) {
        self.p = p
        self.produced = produced
        self.kind = kind
        self.after = after
        self.through = through
        lag = p.settings.watchSyncLag
        period = max(1, p.settings.watchSyncInterval)
        phase = unitDouble(p.key.with("sync").bits(0)) * period
        let lo = after - lag - RangeView.bootLookBack - 2 * 86_400
        let hi = through + 2 * 86_400
        let clock = p.zones.clock(from: lo - 86_400, to: hi + 86_400)
        phoneOff = p.offIntervals(.phone, from: lo, to: hi, clock: clock)
        watchOff = kind == .watch ? p.offIntervals(.watch, from: lo, to: hi, clock: clock) : []
    }

    /// Ready-time range (exclusive, inclusive] whose records can be written in (after, through].
    var readyRange: (Double, Double) {
        switch kind {
        case .phone:
            let lo = min(after, containing(phoneOff, after)?.start ?? after) - 1
            let hi = containing(phoneOff, through)?.end ?? through
            return (lo, hi)
        case .watch:
            return (lastSync(atOrBefore: after) - lag, lastSync(atOrBefore: through) - lag)
        }
    }

    @inline(__always)
    func write(ready r: Double) -> Double {
        switch kind {
        case .phone: return containing(phoneOff, r)?.start ?? r
        case .watch: return firstSync(atOrAfter: r + lag)
        }
    }

    /// Whether a row written at `w`, ready at `ready`, belongs to the answer.
    @inline(__always)
    func accepts(_ w: Double, ready: Double) -> Bool {
        w > after && w <= through && (produced?.contains(ready) ?? true)
    }

    private func syncValid(_ s: Double) -> Interval? {
        containing(phoneOff, s) ?? containing(watchOff, s)
    }

    /// The last watch sync computed by `write(ready:memo:)`: its first candidate slot and result.
    struct WriteMemo {
        var slot = Double.nan
        var write = 0.0
    }

    /// `write(ready:)`, computing a watch sync once for all rows whose first candidate sync
    /// slot is the same (the search starts from that slot alone, so the result is the same
    /// to the bit); phone rows are passed on to `write(ready:)`.
    @inline(__always)
    func write(ready r: Double, memo: inout WriteMemo) -> Double {
        guard kind == .watch else { return write(ready: r) }
        let slot = syncSlot(atOrAfter: r + lag)
        if slot == memo.slot { return memo.write }
        memo = WriteMemo(slot: slot, write: firstSync(fromSlot: slot))
        return memo.write
    }

    /// The index of the first sync opportunity at or after `x` (whether the devices are on or not).
    @inline(__always)
    func syncSlot(atOrAfter x: Double) -> Double { ((x - phase) / period).rounded(.up) }

    func firstSync(atOrAfter x: Double) -> Double { firstSync(fromSlot: syncSlot(atOrAfter: x)) }

    /// The first sync opportunity with both devices on, from slot `slot` on.
    func firstSync(fromSlot slot: Double) -> Double {
        var s = slot * period + phase
        var guardCount = 0
        while let off = syncValid(s), guardCount < 10_000 {
            s = ((off.end - phase) / period).rounded(.up) * period + phase
            guardCount += 1
        }
        return s
    }

    func lastSync(atOrBefore x: Double) -> Double {
        var s = ((x - phase) / period).rounded(.down) * period + phase
        var guardCount = 0
        while let off = syncValid(s), guardCount < 10_000 {
            s = ((off.start - phase) / period).rounded(.up) * period + phase - period
            guardCount += 1
        }
        return s
    }

    /// Seconds since the device last booted, at `t`.
    func bootTime(_ kind: DeviceKind, before t: Double) -> Double {
        let offs = kind == .phone ? phoneOff : watchOff
        var lo = 0, hi = offs.count - 1, best: Double? = nil
        while lo <= hi {
            let mid = (lo + hi) / 2
            if offs[mid].end <= t { best = offs[mid].end; lo = mid + 1 } else { hi = mid - 1 }
        }
        if let b = best { return b }
        // No restart in the look-back window (automatic restarts disabled): a fixed boot
        // some 3–40 days before the window.
        let k = p.key.with(kind == .phone ? "boot-phone" : "boot-watch")
        let epoch = 30 * 86_400.0
        let slot = (t / epoch).rounded(.down)
        return slot * epoch - k.uniform(Int(slot), 3 * 86_400, 10 * 86_400)
    }
}
