import Foundation

// Counter-based randomness: every random number the simulator uses is a hash of
// (seed, participant, stream, counter). There is no generator state to carry from one
// call to the next, so any range can be generated on its own, in any order.

/// SplitMix64's output function (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
@inline(__always)
func mix64(_ x: UInt64) -> UInt64 {
    var z = x
    z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z &>> 31)
}

/// The golden-ratio increment of SplitMix64.
let golden: UInt64 = 0x9E37_79B9_7F4A_7C15

/// A stream key: hashes of (seed, participant, stream, …). Combine more words with `with`.
struct RandomKey: Sendable, Hashable {
    var raw: UInt64

    init(_ raw: UInt64) { self.raw = raw }

    /// A derived key for a sub-stream.
    @inline(__always)
    func with(_ word: UInt64) -> RandomKey { RandomKey(mix64(raw ^ mix64(word &+ golden))) }
    @inline(__always)
    func with(_ word: Int) -> RandomKey { with(UInt64(bitPattern: Int64(word))) }
    func with(_ text: String) -> RandomKey { with(fnv1a(text)) }

    /// The `counter`-th 64-bit value of this stream.
    @inline(__always)
    func bits(_ counter: UInt64) -> UInt64 { mix64(raw &+ counter &* golden) }
    @inline(__always)
    func bits(_ counter: Int) -> UInt64 { bits(UInt64(bitPattern: Int64(counter))) }

    /// Uniform in [0, 1).
    @inline(__always)
    func unit(_ counter: Int) -> Double { unitDouble(bits(counter)) }
    /// Uniform in [lo, hi).
    @inline(__always)
    func uniform(_ counter: Int, _ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * unit(counter) }
    /// Standard normal (Box–Muller on two hashed uniforms).
    func normal(_ counter: Int) -> Double {
        let h = bits(counter)
        let u1 = (Double(h &>> 32) + 0.5) * 0x1p-32
        let u2 = Double(h & 0xFFFF_FFFF) * 0x1p-32
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
    /// True with probability `p`.
    @inline(__always)
    func chance(_ counter: Int, _ p: Double) -> Bool { unit(counter) < p }
    /// Uniform integer in lo...hi.
    func int(_ counter: Int, _ lo: Int, _ hi: Int) -> Int {
        lo + Int(bits(counter) % UInt64(hi - lo + 1))
    }
    /// Poisson-distributed count with mean `mean` (Knuth; small means only).
    func poisson(_ counter: Int, mean: Double) -> Int {
        let limit = exp(-mean)
        var p = 1.0
        var k = 0
        while k < 1000 {
            p *= unit(counter &* 1009 &+ k)
            if p <= limit { return k }
            k += 1
        }
        return k
    }
}

@inline(__always)
func unitDouble(_ h: UInt64) -> Double { Double(h &>> 11) * 0x1p-53 }

/// FNV-1a, 64-bit: a stable hash of a string (Swift's `Hasher` is seeded per process).
func fnv1a(_ text: String) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in text.utf8 {
        h ^= UInt64(b)
        h = h &* 0x0000_0100_0000_01B3
    }
    return mix64(h)
}

/// A smooth random function of time: value noise with knots every `period` seconds,
/// cosine-interpolated. Pure in `t`; roughly N(0, 1) at the knots.
@inline(__always)
func smoothNoise(_ key: RandomKey, _ t: Double, period: Double) -> Double {
    let x = t / period
    let k = x.rounded(.down)
    let f = x - k
    let i = Int(k)
    let a = gaussianish(key.bits(i))
    let b = gaussianish(key.bits(i + 1))
    let w = (1 - cos(Double.pi * f)) * 0.5
    return a + (b - a) * w
}

/// A cheap bell-shaped value with unit variance: the sum of four 16-bit uniforms, centred.
@inline(__always)
func gaussianish(_ h: UInt64) -> Double {
    let s = Double(h & 0xFFFF) + Double((h &>> 16) & 0xFFFF) + Double((h &>> 32) & 0xFFFF) + Double(h &>> 48)
    // Each lane is U(0, 65536): mean 32768, variance 65536²/12. Four lanes: sd = 65536 / √3.
    return (s - 131_070) * (1.7320508075688772 / 65_536)
}

/// A lowercase UUID-shaped string from two hashes (stable per key and counter).
func uuidString(_ key: RandomKey, _ counter: Int) -> String {
    let a = key.bits(counter &* 2), b = key.bits(counter &* 2 &+ 1)
    func hex(_ v: UInt64, _ digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s.suffix(digits)
    }
    let v4 = (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000
    let var1 = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
    return hex(v4 &>> 32, 8) + "-" + hex((v4 &>> 16) & 0xFFFF, 4) + "-" + hex(v4 & 0xFFFF, 4) + "-"
        + hex(var1 &>> 48, 4) + "-" + hex(var1 & 0xFFFF_FFFF_FFFF, 12)
}
