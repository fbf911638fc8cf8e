import Foundation

/// Number text the exporter writes straight into a byte buffer, without a String per value.
///
/// Two fast paths cover what a study exports in bulk:
/// - `shortDecimal`: doubles with few fraction digits (times such as `1772409540.02`), the
///   text `Double.description` gives them;
/// - `float32`: Float32s widened to doubles (CoreMotion's accelerometer and gyroscope), the
///   text `Float.description` gives them — the shortest decimal that reads back to the same
///   Float32 when read as a double and then rounded to a Float32 (the native format's rule for
///   a column listed in a stream's `float32`, docs/native-format.md).
/// Other numbers fall back to the Swift descriptions (a String, rare in bulk data).
enum NumberText {
    /// `d` in fixed notation with the fewest fraction digits (≤ 9, at least one) that read back
    /// bit-exact (`Double(m) / 10^k == d`: what the parser computes), without a String: the
    /// text `Double.description` gives for such numbers with 1e-4 ≤ |d| < 2^53 (times such as
    /// `1772409540.02`). Writes at most 28 bytes at `p`; nil (nothing written) for other numbers.
    @inline(__always)
    static func shortDecimal(_ d: Double, into p: UnsafeMutablePointer<UInt8>) -> Int? {
        let a = abs(d)
        guard a >= 1e-4, a < 9.007_199_254_740_992e15 else { return nil }
        var k = 0
        var m = 0.0
        while true {
            let s = pow10(k)
            let x = a * s
            guard x < 4.503_599_627_370_496e15 else { return nil }
            m = roundedToEven(x)
            if m / s == a { break }
            k += 1
            if k > 9 { return nil }
        }
        return fixed(UInt64(m), fractionDigits: k, negative: d.sign == .minus, into: p)
    }

    /// Whether `d` is a finite Float32 widened to a double (one conversion each way).
    @inline(__always) static func isFloat32(_ d: Double) -> Bool {
        d.isFinite && Double(Float(d)).bitPattern == d.bitPattern
    }

    /// The shortest text of a Float32 widened to a double, as `Float.description` writes it, in
    /// fixed notation, for Float(1e-4) ≤ |f| < 2^25 and zeros (`0.0`, `-0.0`); at most 40 bytes
    /// at `p`. Nil (nothing written) when `d` is not a Float32 (see `isFloat32`) or outside that
    /// range. Contract: reading the text as a correctly rounded double and rounding that to a
    /// Float32 gives back `Float(d)` (every candidate is checked so, never assumed).
    @inline(__always)
    static func float32(_ d: Double, into p: UnsafeMutablePointer<UInt8>) -> Int? {
        guard isFloat32(d) else { return nil }
        let f = Float(d).magnitude
        let negative = d.sign == .minus
        if f == 0 { return fixed(0, fractionDigits: 0, negative: negative, into: p) }
        guard f >= 1e-4 as Float, f <= 16_777_216 as Float else { return nil }
        let a = Double(f)
        // Fraction digits at which decimals are at most one Float32 ulp (2^(e-23)) apart:
        // ⌈(23 - e) · log10 2⌉. One digit fewer often reads back too; more are never needed
        // except next to a power of two, where the gap below is half the gap above.
        let e = Int(f.exponent)
        let need = 23 - e
        let kmax = need <= 0 ? 0 : (need * 78_913 + (1 << 18) - 1) >> 18
        let powerOfTwo = f.significandBitPattern == 0
        var k = max(kmax - 1, 0)
        var m: UInt64
        if let c = candidate(a, f, k, powerOfTwo) {
            m = c
            while k > 0, let c = candidate(a, f, k - 1, powerOfTwo) {
                k -= 1
                m = c
            }
        } else {
            k += 1
            while true {
                guard k <= 12 else { return nil }
                if let c = candidate(a, f, k, powerOfTwo) { m = c; break }
                k += 1
            }
        }
        // The whole part is a's, or one more when rounding carried into it (no 64-bit division).
        let scale = UInt64(pow10(k))
        var whole = UInt64(a)
        var frac = m &- whole &* scale
        if frac >= scale { whole += 1; frac -= scale }
        var o = 0
        if negative { p[0] = UInt8(ascii: "-"); o = 1 }
        o += digits(whole, into: p + o)
        p[o] = UInt8(ascii: ".")
        if k == 0 {
            p[o + 1] = UInt8(ascii: "0")
            return o + 2
        }
        padded(frac, count: k, into: p + o + 1)
        return o + 1 + k
    }

    /// The k-fraction-digit decimal m / 10^k nearest to `a` (or, next to a power of two, where
    /// the gap below is half the gap above, a neighbour of it) that reads back to `f` as the
    /// reader reads it: m / 10^k correctly rounded to a double, then rounded to a Float32. Nil
    /// when none does. k ≤ 12, so that a · 10^k is exact (24 bits times 5^k < 2^29).
    @inline(__always)
    private static func candidate(_ a: Double, _ f: Float, _ k: Int, _ powerOfTwo: Bool) -> UInt64? {
        let s = pow10(k)
        let m = roundedToEven(a * s)
        if Float(m / s) == f { return UInt64(m) }
        guard powerOfTwo else { return nil }
        if Float((m + 1) / s) == f { return UInt64(m + 1) }
        if m >= 1, Float((m - 1) / s) == f { return UInt64(m - 1) }
        return nil
    }

    /// 10^k for 0 ≤ k ≤ 15, exact (a table in registers' reach: no lazy global, no bounds check).
    @inline(__always) static func pow10(_ k: Int) -> Double {
        withUnsafeBytes(of: powers) { $0.load(fromByteOffset: 8 * (k & 15), as: Double.self) }
    }

    private static let powers: (Double, Double, Double, Double, Double, Double, Double, Double,
                                Double, Double, Double, Double, Double, Double, Double, Double) =
        (1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15)

    /// `x` (0 ≤ x < 2^52) rounded to the nearest whole number, ties to even: adding and
    /// subtracting 2^52 leaves no fraction bits (one add each, no libm call as `rounded` may be).
    @inline(__always) static func roundedToEven(_ x: Double) -> Double {
        (x + 4_503_599_627_370_496) - 4_503_599_627_370_496
    }

    /// `m / 10^k` as `[-]whole.fraction` (fraction zero-padded to k digits; `.0` when k is 0).
    /// Returns the bytes written (at most 2 + 20 + 1 + max(k, 1)).
    @inline(__always)
    static func fixed(_ m: UInt64, fractionDigits k: Int, negative: Bool, into p: UnsafeMutablePointer<UInt8>) -> Int {
        var o = 0
        if negative { p[0] = UInt8(ascii: "-"); o = 1 }
        let scale = UInt64(pow10(k))
        let whole = m / scale, frac = m - whole * scale
        o += digits(whole, into: p + o)
        p[o] = UInt8(ascii: ".")
        o += 1
        if k == 0 {
            p[o] = UInt8(ascii: "0")
            return o + 1
        }
        padded(frac, count: k, into: p + o)
        return o + k
    }

    /// Decimal digits of `v` (at least one); returns how many.
    @inline(__always)
    static func digits(_ v: UInt64, into p: UnsafeMutablePointer<UInt8>) -> Int {
        var n = 1
        var t = v
        while t >= 10 { t /= 10; n += 1 }
        padded(v, count: n, into: p)
        return n
    }

    /// The low `count` decimal digits of `v`, zero-padded, two at a time.
    @inline(__always)
    static func padded(_ v: UInt64, count: Int, into p: UnsafeMutablePointer<UInt8>) {
        var v = v
        var i = count
        while i >= 2 {
            let r = Int(v % 100)
            v /= 100
            i -= 2
            p[i] = UInt8(truncatingIfNeeded: 48 + r / 10)
            p[i + 1] = UInt8(truncatingIfNeeded: 48 + r % 10)
        }
        if i == 1 { p[0] = UInt8(truncatingIfNeeded: 48 + v % 10) }
    }
}
