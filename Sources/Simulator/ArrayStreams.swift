import Foundation
import SensorKitModel

/// One write batch of an array stream that falls in the asked write range.
struct BatchSlot {
    var index: Int
    var write: Double
}

/// A run of consecutive samples from one span inside one batch.
struct Piece {
    var span: Int
    var spanFirst: Int
    var n0: Int
    var count: Int
    var offset: Int
    var boot: Double
    var write: Double
    var id: Int64
}

extension WriteContext {
    /// Batches of `seconds` whose write time lies in (after, through]. Phone batches are
    /// ready a fraction of a second to ~2 s after their last sample; watch batches at their end.
    func batches(seconds: Double, stream: UInt64) -> [BatchSlot] {
        let (rl, rh) = readyRange
        guard rh > rl else { return [] }
        let dk = p.key.with(stream).with("batch-delay")
        let first = Int(((rl - 3) / seconds).rounded(.down)) - 1
        let last = Int((rh / seconds).rounded(.up))
        var out: [BatchSlot] = []
        out.reserveCapacity(max(0, last - first + 1))
        for b in first...max(first, last) {
            let end = Double(b + 1) * seconds
            let ready = kind == .phone ? end + 0.2 + 2 * dk.unit(b) : end
            guard ready > rl && ready <= rh else { continue }
            let w = write(ready: ready)
            if accepts(w, ready: ready) { out.append(BatchSlot(index: b, write: w)) }
        }
        return out
    }
}

/// Cuts the samples of the given batches into pieces, one per (batch, span) overlap.
/// `spans` are sorted, non-overlapping [start, end) intervals; sample n is at n / rate.
func pieces(slots: [BatchSlot], perBatch: Int, rate: Double, spans: [(start: Double, end: Double, origin: Double)],
            boot: (Double) -> Double) -> ([Piece], Int) {
    var out: [Piece] = []
    var total = 0
    var si = 0
    let dt = 1 / rate
    for slot in slots {
        let n0 = slot.index * perBatch, n1 = n0 + perBatch
        let t0 = Double(n0) * dt, t1 = Double(n1) * dt
        while si > 0 && spans[si - 1].end > t0 { si -= 1 }
        while si < spans.count && spans[si].end <= t0 { si += 1 }
        var k = si
        while k < spans.count && spans[k].start < t1 {
            let spanFirst = Int((spans[k].origin * rate).rounded(.up))
            let a = max(n0, Int((spans[k].start * rate).rounded(.up))), b = min(n1, Int((spans[k].end * rate).rounded(.up)))
            if b > a {
                out.append(Piece(span: k, spanFirst: spanFirst, n0: a, count: b - a, offset: total,
                                 boot: boot(Double(a) * dt), write: slot.write, id: Int64(slot.index)))
                total += b - a
            }
            k += 1
        }
    }
    return (out, total)
}

/// The shared columns of array streams: sample times, uptime, write times, batch ids.
func arrayTimeColumns(_ ps: [Piece], total: Int, rate: Double) -> (times: [Double], uptime: [Double], writes: WriteTimes, ids: RunArray<Int64>) {
    // Sample n is at n / rate, correctly rounded (at 50 Hz: the double nearest a whole number of
    // hundredths, so the times print with at most two decimals); n is carried as a Double
    // (exact below 2⁵³) so the loop vectorises.
    let times = [Double](unsafeUninitializedCapacity: total) { buf, n in
        let b = buf.baseAddress!
        for p in ps {
            let o = b + p.offset, first = Double(p.n0)
            for i in 0..<p.count { o[i] = (first + Double(i)) / rate }
        }
        n = total
    }
    let uptime = [Double](unsafeUninitializedCapacity: total) { buf, n in
        let b = buf.baseAddress!
        for p in ps {
            let o = b + p.offset, first = Double(p.n0), boot = p.boot
            for i in 0..<p.count { o[i] = (first + Double(i)) / rate - boot }
        }
        n = total
    }
    // The write time and identifier once per piece (a piece is one write batch).
    var writes = WriteTimes(), ids = RunArray<Int64>()
    writes.reserveCapacity(runs: ps.count)
    ids.reserveCapacity(runs: ps.count)
    for p in ps {
        writes.append(p.write, count: p.count)
        ids.append(p.id, count: p.count)
    }
    return (times, uptime, writes, ids)
}

/// Accelerometer or rotation rate: 50 Hz while the device is on, in 60-s write batches.
func motionBatch(_ p: Participant, kind: DeviceKind, sensor: Sensor, ctx: WriteContext, rate: Double = 50) -> SampleBatch {
    let ms: MotionSensor = sensor == .accelerometer ? .accelerometer : .gyroscope
    let seconds = p.settings.writeBatch(for: sensor)
    let stream: UInt64 = (ms == .accelerometer ? 100 : 200) + (kind == .phone ? 0 : 1)
    let slots = ctx.batches(seconds: seconds, stream: stream)
    guard let firstSlot = slots.first, let lastSlot = slots.last else { return Schema.empty(sensor) }
    let from = Double(firstSlot.index) * seconds, to = Double(lastSlot.index + 1) * seconds
    let view = RangeView(p, from: from, to: to)
    let spans = view.motionStates(kind, from: from, to: to).map { motionSpan($0, kind: kind, sensor: ms, rate: rate) }
    let perBatch = Int((seconds * rate).rounded())
    let (ps, total) = pieces(slots: slots, perBatch: perBatch, rate: rate, spans: spans.map { ($0.start, $0.end, $0.origin) }) {
        ctx.bootTime(kind, before: $0)
    }
    let noiseKey = p.key.with(stream).with("noise").raw
    var ys: [Double] = [], zs: [Double] = []
    let xs = sineTable.withUnsafeBufferPointer { table in
      noiseTable1.withUnsafeBufferPointer { g1 in
       noiseTable2.withUnsafeBufferPointer { g2 in
        [Double](unsafeUninitializedCapacity: total) { xb, xn in
            ys = [Double](unsafeUninitializedCapacity: total) { yb, yn in
                zs = [Double](unsafeUninitializedCapacity: total) { zb, zn in
                    for piece in ps {
                        fillMotion(spans[piece.span], spanFirst: piece.spanFirst, n0: piece.n0, count: piece.count,
                                   noiseKey: noiseKey, table: table.baseAddress!, g1: g1.baseAddress!, g2: g2.baseAddress!,
                                   x: xb.baseAddress! + piece.offset, y: yb.baseAddress! + piece.offset,
                                   z: zb.baseAddress! + piece.offset)
                    }
                    // CoreMotion records motion samples as 32-bit floats: values are Float32s widened.
                    for i in 0..<total {
                        xb[i] = Double(Float(xb[i]))
                        yb[i] = Double(Float(yb[i]))
                        zb[i] = Double(Float(zb[i]))
                    }
                    zn = total
                }
                yn = total
            }
            xn = total
        }
       }
      }
    }
    let t = arrayTimeColumns(ps, total: total, rate: rate)
    var columns = [
        Column(name: "x", data: .double(xs)), Column(name: "y", data: .double(ys)), Column(name: "z", data: .double(zs)),
        Column(name: "timestamp", data: .double(t.uptime)),
    ]
    if sensor == .accelerometer { columns.append(Column(name: "identifier", data: .intRuns(t.ids))) }
    return SampleBatch(sensor: sensor, writeTimes: t.writes, times: t.times, columns: columns)
}
