import Foundation
import SensorKitModel

/// Where a block is, as a place the phone could recognise; nil while travelling.
enum PlaceKind: Equatable {
    case home, work, school, other(Int)
}

extension Participant {
    func placeKind(_ b: Block, workday: Bool) -> PlaceKind? {
        switch b.place {
        case .bedroom, .bedroomDark, .home, .homeDim: return .home
        case .office: return .work
        case .indoorPublic:
            if profile.preset == .student && workday { return .school }
            return .other(0)
        case .outdoors:
            return b.activity == .walk || b.activity == .run || b.activity == .light ? nil : .other(0)
        case .car, .transit: return nil
        }
    }
}

/// Visits (contract §3.3.8): one record per stay of 10 min or more at home, work/school or another
/// place, written 1–10 min after departure. Arrival and departure are given as windows of
/// up to ±10 min around the true times (SensorKit blurs them on purpose). Other places come
/// from a pool of six per participant.
func visitsBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.visits)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let view = RangeView(p, from: rl - 3 * 86_400, to: rh + 3_600)
    struct Stay { var place: PlaceKind; var start: Double; var end: Double; var key: UInt64 }
    var stays: [Stay] = []
    for s in view.stories {
        for b in s.blocks {
            guard let kind = p.placeKind(b, workday: s.workday) else {
                if let last = stays.last, last.end > 0 { stays.append(Stay(place: .other(-1), start: b.start, end: b.end, key: 0)) }
                continue
            }
            if let last = stays.last, last.place == kind, last.end == b.start {
                stays[stays.count - 1].end = b.end
            } else {
                stays.append(Stay(place: kind, start: b.start, end: b.end, key: b.key))
            }
        }
    }
    let k = p.key.with("visits")
    for (i, s) in stays.enumerated() where i > 0 && s.place != .other(-1) && s.end - s.start >= 600 {
        guard i + 1 < stays.count else { continue }          // not left yet
        let vk = RandomKey(s.key).with("visit")
        let ready = s.end + vk.uniform(0, 60, 600)
        guard ready > rl && ready <= rh else { continue }
        let w = ctx.write(ready: ready)
        guard ctx.accepts(w, ready: ready) else { continue }
        let category: Int64, distance: Double, placeID: Int
        switch s.place {
        case .home: category = 1; distance = 0; placeID = 0
        case .work: category = 2; distance = p.profile.workDistance; placeID = 1
        case .school: category = 3; distance = p.profile.workDistance; placeID = 1
        case .other:
            placeID = 2 + Int(vk.bits(1) % 6)
            category = 0
            distance = k.uniform(placeID, 300, 5_000)
        }
        let a0 = s.start - vk.uniform(2, 0, 600), a1 = s.start + vk.uniform(3, 0, 600)
        let d0 = s.end - vk.uniform(4, 0, 600), d1 = s.end + vk.uniform(5, 0, 600)
        out.row(write: w, time: rounded(a0))
        out.set("distanceFromHome", rounded(distance, 10))
        out.set("arrivalEnd", rounded(a1))
        out.set("departureStart", rounded(max(d0, a1)))
        out.set("departureEnd", rounded(d1))
        out.set("locationCategory", category)
        out.set("identifier", uuidString(k, placeID))
    }
    return out.batch()
}

/// Odometer (contract §3.3.6): one record per 10-s grid bin of locomotion (walks of a minute or
/// more, runs, car and transit rides). Speeds: walking cadence × step length; cars 0–20 m/s
/// around 11 m/s; trains and buses 4–16 m/s. GPS accuracy 3–10 m outdoors; transit
/// underground sometimes has none (accuracy −1).
func odometerBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    var out = RowBuilder(.odometer)
    let (rl, rh) = ctx.readyRange
    guard rh > rl else { return out.batch() }
    let bin = 10.0, delay = 1.0
    let view = RangeView(p, from: rl - bin - delay - 1, to: rh + 1)
    // The phone measures while it is on; the watch while it is worn, and only on foot
    // (its odometer is a workout companion: it does not track rides).
    let onWatch = ctx.kind == .watch
    let on = onWatch ? wornIntervals(view, from: view.lo, to: view.hi) : complement(view.phoneOff, from: view.lo, to: view.hi)
    let speedKey = p.key.with(onWatch ? "odometer-speed-watch" : "odometer-speed")
    let moving = view.blocks.filter {
        ($0.activity == .walk && $0.duration >= 60 && $0.place == .outdoors) || $0.activity == .run
            || ($0.activity == .vehicle && !onWatch)
    }
    for b in moving {
        for piece in intersect([Interval(start: b.start, end: b.end)], on) {
            var k = Int((piece.start / bin).rounded(.down))
            while Double(k) * bin < piece.end {
                defer { k += 1 }
                let s = max(piece.start, Double(k) * bin), e = min(piece.end, Double(k + 1) * bin)
                let ready = e + delay
                guard e > s, ready > rl, ready <= rh else { continue }
                let w = ctx.write(ready: ready)
                guard ctx.accepts(w, ready: ready) else { continue }
                let bk = onWatch ? RandomKey(b.key).with(k).with("watch") : RandomKey(b.key).with(k)
                let raw: Double
                switch (b.activity, b.place) {
                case (.vehicle, .car): raw = clamp(11 + 5 * smoothNoise(speedKey, e, period: 90), 0, 20)
                case (.vehicle, _): raw = clamp(10 + 4 * smoothNoise(speedKey, e, period: 60), 0, 16)
                default: raw = b.cadence * p.stepLength(cadence: b.cadence) * (1 + 0.03 * bk.normal(0))
                }
                let speed = rounded(raw, 100)
                let underground = b.place == .transit && RandomKey(b.key).chance(1, 0.3)
                let climb = b.floorsUp > 0 || b.floorsDown > 0
                    ? Double(b.floorsUp - b.floorsDown) * 3 * (e - s) / b.duration : 0.2 * bk.normal(1)
                out.row(write: w, time: s)
                out.set("endDate", e)
                out.set("deltaDistance", rounded(speed * (e - s), 10_000))
                out.set("deltaDistanceAccuracy", underground ? -1 : rounded(bk.uniform(2, 3, 10), 10))
                out.set("speed", speed)
                out.set("speedAccuracy", underground ? -1 : rounded(bk.uniform(3, 0.3, 1.5), 100))
                out.set("gpsDate", rounded(underground ? b.start : e - bk.uniform(4, 0, 3)))
                out.set("deltaAltitude", rounded(climb, 100))
                out.set("verticalAccuracy", rounded(bk.uniform(5, 2, 8), 10))
                out.set("originDevice", Int64(1))
                let onFoot = b.activity != .vehicle
                let slope = 2 * bk.normal(6)
                out.set("slope", onFoot ? rounded(slope, 10) : nil)
                out.set("maxAbsSlope", onFoot ? rounded(abs(slope) + bk.uniform(7, 0, 2), 10) : nil)
            }
        }
    }
    return out.batch()
}

/// Ambient pressure (contract §3.3.4): 1 Hz while the phone is on, 60-s write batches. Sea-level
/// pressure drifts with the weather (±1 kPa over days, slower and faster components around
/// 101.3 kPa); the barometric formula p = p₀·exp(−h / 8 434 m) converts altitude: home
/// altitude from the profile, 3 m per storey, the office on its floor, stairs interpolated.
/// Temperature: the phone's own, ~25 °C on a table, ~31 °C in a pocket or hand.
func pressureBatch(_ p: Participant, ctx: WriteContext) -> SampleBatch {
    let sensor = Sensor.ambientPressure
    let rate = 1.0
    let seconds = p.settings.writeBatch(for: sensor)
    let slots = ctx.batches(seconds: seconds, stream: 300)
    guard let firstSlot = slots.first, let lastSlot = slots.last else { return Schema.empty(sensor) }
    let from = Double(firstSlot.index) * seconds, to = Double(lastSlot.index + 1) * seconds
    let view = RangeView(p, from: from - 3_600, to: to + 3_600)
    let prof = p.profile
    func altitude(_ b: Block) -> Double {
        switch b.place {
        case .bedroom, .bedroomDark, .home, .homeDim: return prof.homeAltitude + 3
        case .office: return prof.homeAltitude + RandomKey(p.key.raw).with("office-alt").uniform(0, -20, 20) + 3 * Double(prof.workFloor)
        default: return prof.homeAltitude + RandomKey(b.key).uniform(60, -15, 15)
        }
    }
    let blocks = view.blocks
    var alt0: [Double] = blocks.map(altitude), alt1 = alt0
    for i in blocks.indices where blocks[i].floorsUp > 0 || blocks[i].floorsDown > 0 {
        alt0[i] = i > 0 ? alt0[i - 1] : alt0[i]
        alt1[i] = i + 1 < blocks.count ? altitude(blocks[i + 1]) : alt0[i]
    }
    let on = complement(view.phoneOff, from: from, to: to)
    var spans: [(start: Double, end: Double, origin: Double)] = []
    var spanBlock: [Int] = []
    for (i, b) in blocks.enumerated() where b.end > from && b.start < to {
        for piece in intersect([Interval(start: max(b.start, from), end: min(b.end, to))], on) {
            spans.append((piece.start, piece.end, b.start))
            spanBlock.append(i)
        }
    }
    let perBatch = Int((seconds * rate).rounded())
    let (ps, total) = pieces(slots: slots, perBatch: perBatch, rate: rate, spans: spans) { ctx.bootTime(.phone, before: $0) }
    let weather = p.key.with("weather")
    let noise = p.key.with("pressure-noise"), heat = p.key.with("phone-heat")
    var pressure = [Double](), temperature = [Double]()
    pressure.reserveCapacity(total)
    temperature.reserveCapacity(total)
    for piece in ps {
        let bi = spanBlock[piece.span]
        let b = blocks[bi]
        let warm = b.activity == .walk || b.activity == .run || b.activity == .vehicle || b.place == .outdoors
        for n in piece.n0..<(piece.n0 + piece.count) {
            let t = Double(n)
            let f = b.duration > 0 ? clamp((t - b.start) / b.duration, 0, 1) : 0
            let h = alt0[bi] + (alt1[bi] - alt0[bi]) * f
            let p0 = 101.325 + 0.9 * smoothNoise(weather, t, period: 86_400) + 0.25 * smoothNoise(weather.with(1), t, period: 10_800)
            pressure.append(rounded(p0 * exp(-h / 8_434) + 0.0015 * gaussianish(noise.bits(n)), 100_000))
            temperature.append(rounded((warm ? 31 : 25.5) + 0.8 * smoothNoise(heat, t, period: 1_800), 100))
        }
    }
    let tc = arrayTimeColumns(ps, total: total, rate: rate)
    return SampleBatch(sensor: sensor, writeTimes: tc.writes, times: tc.times, columns: [
        Column(name: "pressure", data: .double(pressure)),
        Column(name: "temperature", data: .double(temperature)),
        Column(name: "identifier", data: .intRuns(tc.ids)),
        Column(name: "timestamp", data: .double(tc.uptime)),
    ])
}
