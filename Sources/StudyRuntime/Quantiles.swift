/// Quantiles by selection, never by sorting.
///
/// R type 7: for `n` values and `q` in 0…1, `h = (n − 1)·q` and the quantile is
/// `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])` over the values in ascending order. Only
/// the order statistics at `⌊h⌋` and `⌊h⌋+1` are needed, so they are *selected*:
/// large inputs go through one radix pass on the float bits (a histogram of the
/// high bits above the minimum, then a gather of just the buckets holding a wanted
/// rank), and the small remainder through a three-way quickselect that recurses
/// only into parts holding wanted ranks (introselect: sorting a part that stalls).
/// Every order statistic equals the sorted array's element at that rank, so the
/// result is the same number the sort-based computation gives (±0 aside).
public enum Quantiles {
    /// R type 7 quantile of `values` (NaN-free; reordered in place); NaN when empty or q ∉ 0…1.
    public static func of(_ values: inout [Double], _ q: Double) -> Double {
        of(&values, [q])[0]
    }

    /// Several R type 7 quantiles of `values` (NaN-free; reordered in place) from one
    /// selection; NaN for each q outside 0…1, and for all when `values` is empty.
    public static func of(_ values: inout [Double], _ qs: [Double]) -> [Double] {
        interpolated(count: values.count, qs) { orderStatistics(&values, $0) }
    }

    /// The same quantiles of the values in `pool`, selected where they lie: a large pool is
    /// never joined into one array (its radix pass reads the segments), a small one is.
    static func of(_ pool: ValuePool, _ qs: [Double]) -> [Double] {
        interpolated(count: pool.count, qs) { ranks in
            if pool.count >= radixThreshold { return radixSelect(segments: pool.segments, ranks) }
            var values = pool.segments.flatMap { $0 }
            return orderStatistics(&values, ranks)
        }
    }

    /// R type 7 interpolation between the order statistics that `select` returns for the
    /// ranks it is given (ascending, distinct); NaN for each q outside 0…1, and for all when
    /// `count` is 0.
    private static func interpolated(count n: Int, _ qs: [Double], _ select: ([Int]) -> [Double]) -> [Double] {
        guard n > 0 else { return qs.map { _ in .nan } }
        var ranks: [Int] = []
        for q in qs where q >= 0 && q <= 1 {
            let lo = Int((Double(n - 1) * q).rounded(.down))
            ranks.append(lo)
            ranks.append(Swift.min(lo + 1, n - 1))
        }
        let wanted = Array(Set(ranks)).sorted()
        let stats = select(wanted)
        var at: [Int: Double] = [:]
        for (k, v) in zip(wanted, stats) { at[k] = v }
        return qs.map { q in
            guard q >= 0, q <= 1 else { return .nan }
            let h = Double(n - 1) * q
            let lo = Int(h.rounded(.down))
            let a = at[lo]!, b = at[Swift.min(lo + 1, n - 1)]!
            return a + (h - Double(lo)) * (b - a)
        }
    }

    /// The values of rank `ranks[i]` (0-based, ascending, distinct, each < count) in
    /// ascending order of `values` (NaN-free; reordered in place).
    static func orderStatistics(_ values: inout [Double], _ ranks: [Int]) -> [Double] {
        guard !ranks.isEmpty else { return [] }
        if values.count >= radixThreshold { return radixSelect(values, ranks) }
        return values.withUnsafeMutableBufferPointer { buf in
            select(buf, 0, buf.count, ranks[...], depth: 2 * (Int.bitWidth - buf.count.leadingZeroBitCount))
            return ranks.map { buf[$0] }
        }
    }

    /// From this many values on, a radix pass first narrows each rank to one bucket.
    static let radixThreshold = 1 << 14

    /// An unsigned key with the same order as the double (NaN excluded; −0 sorts before +0).
    @inline(__always) static func key(_ x: Double) -> UInt64 {
        let b = x.bitPattern
        return b & (1 << 63) != 0 ? ~b : b | (1 << 63)
    }

    /// One radix step: buckets of the 16 bits below the keys' common high bits, counted;
    /// the buckets holding wanted ranks gathered; each finished by quickselect.
    static func radixSelect(_ values: [Double], _ ranks: [Int]) -> [Double] {
        radixSelect(segments: [values], ranks)
    }

    /// `radixSelect` over values kept in segments (read only, never joined).
    static func radixSelect(segments: [[Double]], _ ranks: [Int]) -> [Double] {
        var lo = UInt64.max, hi = UInt64.min
        var first = Double.nan
        for segment in segments {
            segment.withUnsafeBufferPointer { v in
                for x in v { let k = key(x); lo = Swift.min(lo, k); hi = Swift.max(hi, k) }
            }
            if first.isNaN, let x = segment.first { first = x }
        }
        let span = hi - lo
        if span == 0 { return ranks.map { _ in first } }
        let shift = UInt64(Swift.max(0, (UInt64.bitWidth - span.leadingZeroBitCount) - 16))
        let buckets = Int(span >> shift) + 1
        var counts = [Int](repeating: 0, count: buckets)
        counts.withUnsafeMutableBufferPointer { c in
            for segment in segments {
                segment.withUnsafeBufferPointer { v in
                    for x in v { c[Int((key(x) &- lo) >> shift)] += 1 }
                }
            }
        }
        // Which bucket holds each rank, and how many values lie in lower buckets.
        var slotOf = [Int32](repeating: -1, count: buckets)
        var slotBase: [Int] = [], slotSize: [Int] = []
        var rankSlot: [Int] = []
        var b = 0, below = 0
        for r in ranks {
            while below + counts[b] <= r { below += counts[b]; b += 1 }
            if slotOf[b] < 0 {
                slotOf[b] = Int32(slotBase.count)
                slotBase.append(below)
                slotSize.append(counts[b])
            }
            rankSlot.append(Int(slotOf[b]))
        }
        var gathered = slotSize.map { size -> [Double] in
            var a: [Double] = []
            a.reserveCapacity(size)
            return a
        }
        slotOf.withUnsafeBufferPointer { s in
            for segment in segments {
                segment.withUnsafeBufferPointer { v in
                    for x in v {
                        let slot = s[Int((key(x) &- lo) >> shift)]
                        if slot >= 0 { gathered[Int(slot)].append(x) }
                    }
                }
            }
        }
        var out = [Double](repeating: .nan, count: ranks.count)
        for slot in gathered.indices {
            let mine = ranks.indices.filter { rankSlot[$0] == slot }
            let local = mine.map { ranks[$0] - slotBase[slot] }
            gathered[slot].withUnsafeMutableBufferPointer { buf in
                select(buf, 0, buf.count, local[...], depth: 2 * (Int.bitWidth - buf.count.leadingZeroBitCount))
                for (i, r) in zip(mine, local) { out[i] = buf[r] }
            }
        }
        return out
    }

    /// Rearranges `p[lo..<hi]` so that every rank in `ranks` (ascending, within lo..<hi)
    /// holds the value it has in sorted order. Three-way partitions, so ties cost nothing
    /// extra; after `depth` partitions a part is sorted instead (introselect's guarantee).
    static func select(_ p: UnsafeMutableBufferPointer<Double>, _ lo: Int, _ hi: Int, _ ranks: ArraySlice<Int>, depth: Int) {
        var lo = lo, hi = hi, ranks = ranks, depth = depth
        while !ranks.isEmpty {
            let n = hi - lo
            if n <= 24 {
                insertionSort(p, lo, hi)
                return
            }
            if depth <= 0 {
                var part = UnsafeMutableBufferPointer(rebasing: p[lo..<hi])
                part.sort()
                return
            }
            depth -= 1
            let pivot = ninther(p, lo, hi)
            // [lo, lt) < pivot, [lt, i) == pivot, [gt, hi) > pivot.
            var lt = lo, i = lo, gt = hi
            while i < gt {
                let x = p[i]
                if x < pivot {
                    p.swapAt(lt, i)
                    lt += 1
                    i += 1
                } else if x > pivot {
                    gt -= 1
                    p.swapAt(i, gt)
                } else {
                    i += 1
                }
            }
            let left = ranks.prefix { $0 < lt }
            let right = ranks.drop { $0 < gt }
            if !left.isEmpty && !right.isEmpty {
                select(p, lo, lt, left, depth: depth)
                lo = gt
                ranks = right
            } else if !left.isEmpty {
                hi = lt
                ranks = left
            } else if !right.isEmpty {
                lo = gt
                ranks = right
            } else {
                return
            }
        }
    }

    static func insertionSort(_ p: UnsafeMutableBufferPointer<Double>, _ lo: Int, _ hi: Int) {
        guard hi - lo > 1 else { return }
        for i in (lo + 1)..<hi {
            let x = p[i]
            var j = i
            while j > lo && p[j - 1] > x {
                p[j] = p[j - 1]
                j -= 1
            }
            p[j] = x
        }
    }

    /// Median of three medians of three, spread over `p[lo..<hi]`.
    static func ninther(_ p: UnsafeMutableBufferPointer<Double>, _ lo: Int, _ hi: Int) -> Double {
        func med(_ a: Double, _ b: Double, _ c: Double) -> Double {
            Swift.max(Swift.min(a, b), Swift.min(Swift.max(a, b), c))
        }
        let n = hi - lo, s = n / 8
        let m = lo + n / 2
        return med(med(p[lo], p[lo + s], p[lo + 2 * s]), med(p[m - s], p[m], p[m + s]),
                   med(p[hi - 1 - 2 * s], p[hi - 1 - s], p[hi - 1]))
    }
}

/// Values gathered for quantiles, in segments of fixed size: growing never copies what is
/// held, and never holds the values twice (a doubling Array does, briefly, at every growth:
/// a day of 50 Hz magnitudes, 35 MB, would reach ~100 MB).
struct ValuePool {
    static let segmentSize = 1 << 16
    private var full: [[Double]] = []
    /// The segment being filled: `segmentSize` slots (or none before the first value), of
    /// which the first `filled` hold values; the others are never read.
    private var tail: [Double] = []
    private var filled = 0
    private(set) var count = 0

    init() {}

    /// Every segment, the one being filled last (its values only).
    var segments: [[Double]] { filled == 0 ? full : full + [Array(tail[..<filled])] }

    @inline(__always)
    mutating func append(_ x: Double) {
        if filled == tail.count { startSegment() }
        tail[filled] = x
        filled += 1
        count += 1
    }

    /// Appends the present (non-NaN) values of `v[rows]`, in order; returns how many. One
    /// loop per segment, four values at a time: four present values are copied as one,
    /// others one by one without a branch (each value is written to the next slot, which
    /// only a present value keeps).
    mutating func appendPresent(_ v: UnsafeBufferPointer<Double>, _ rows: Range<Int>) -> Int {
        let before = count
        var i = rows.lowerBound
        while i < rows.upperBound {
            if filled == tail.count { startSegment() }
            let take = Swift.min(rows.upperBound - i, tail.count - filled)
            var f = filled
            tail.withUnsafeMutableBufferPointer { t in
                let out = t.baseAddress!, src = v.baseAddress!
                var k = i
                let end = i + take
                while k &+ 4 <= end {
                    let x = UnsafeRawPointer(src + k).loadUnaligned(as: SIMD4<Double>.self)
                    if all(x .== x) {
                        UnsafeMutableRawPointer(out + f).storeBytes(of: x, as: SIMD4<Double>.self)
                        f &+= 4
                    } else {
                        for m in 0..<4 {
                            out[f] = x[m]
                            f &+= x[m].isNaN ? 0 : 1
                        }
                    }
                    k &+= 4
                }
                while k < end {
                    let x = src[k]
                    out[f] = x
                    f &+= x.isNaN ? 0 : 1
                    k &+= 1
                }
            }
            count += f - filled
            filled = f
            i += take
        }
        return count - before
    }

    /// Keeps a full tail and opens a new one of `segmentSize` slots.
    private mutating func startSegment() {
        if filled > 0 { full.append(tail) }
        tail = [Double](unsafeUninitializedCapacity: ValuePool.segmentSize) { _, slots in slots = ValuePool.segmentSize }
        filled = 0
    }
}
