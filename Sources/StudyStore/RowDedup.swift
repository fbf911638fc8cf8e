import SensorKitModel

/// Exact-duplicate detection over rows: same write time, same sample time, same values
/// (bit for bit; a missing value equals a missing value).
enum RowDedup {
    /// Keeps the first of each group of identical rows. Input ordered by write time.
    static func dropDuplicates(_ b: SampleBatch) -> (SampleBatch, Int) {
        let n = b.count
        // Pairs (earlier, later) of rows with the same write and sample time bits.
        var pairs: [(Int, Int)] = []
        b.writeTimes.forEachRun { run, _ in
            guard run.count > 1 else { return }
            // Strictly increasing sample times in the run: no two rows can be equal.
            var increasing = true
            for k in run.dropFirst() where !(b.times[k] > b.times[k - 1]) { increasing = false; break }
            if !increasing { pairSameTimes(b.times, run, &pairs) }
        }
        guard !pairs.isEmpty else { return (b, 0) }
        // Equal rows are an equivalence: dropping the later row of each equal pair keeps
        // the first of each group.
        var alive = [Bool](repeating: true, count: pairs.count)
        for c in b.columns { compare(c, c, pairs, &alive) }
        var drop = [Bool](repeating: false, count: n)
        for k in pairs.indices where alive[k] { drop[pairs[k].1] = true }
        let rows = drop.indices.filter { drop[$0] }
        guard !rows.isEmpty else { return (b, 0) }
        return (remove(rows, from: b), rows.count)
    }

    /// Appends the pairs (i, j), i < j, of rows of `r` with bit-identical times.
    static func pairSameTimes(_ t: [Double], _ r: Range<Int>, _ pairs: inout [(Int, Int)]) {
        let order = r.sorted { (t[$0].bitPattern, $0) < (t[$1].bitPattern, $1) }
        var x = 0
        while x < order.count {
            var e = x + 1
            while e < order.count && t[order[e]].bitPattern == t[order[x]].bitPattern { e += 1 }
            for p in x..<e { for q in (p + 1)..<e { pairs.append((order[p], order[q])) } }
            x = e
        }
    }

    /// Removes the rows of `b` that equal a row of one of `stored` (re-imported data).
    ///
    /// `b` and every batch of `stored` are ordered by write time (as chunks are). For each
    /// stored batch, a merge on write time, then on sample time inside a write time, pairs
    /// the rows with the same (write time, sample time) bits; the columns are then compared
    /// column by column over those pairs only. Linear in the rows for the usual input (a
    /// write time's rows ordered by sample time); a write time whose rows are not so ordered
    /// costs a sort of its rows.
    static func dropRows(of b: SampleBatch, presentIn stored: [SampleBatch]) -> (SampleBatch, Int) {
        var drop = [Bool](repeating: false, count: b.count)
        for s in stored { markRows(of: b, equalTo: s, &drop) }
        let rows = drop.indices.filter { drop[$0] }
        guard !rows.isEmpty else { return (b, 0) }
        return (remove(rows, from: b), rows.count)
    }

    /// Sets `drop[i]` for each row i of `b` equal to a row of `s`.
    static func markRows(of b: SampleBatch, equalTo s: SampleBatch, _ drop: inout [Bool]) {
        let pairs = samePlaceInTime(b, s)
        guard !pairs.isEmpty else { return }
        var alive = [Bool](repeating: true, count: pairs.count)
        for ca in b.columns {
            guard let cb = s.column(ca.name) else { return }
            compare(ca, cb, pairs, &alive)
        }
        for k in pairs.indices where alive[k] { drop[pairs[k].0] = true }
    }

    /// The pairs (row of a, row of b) with bit-identical write and sample times.
    static func samePlaceInTime(_ a: SampleBatch, _ b: SampleBatch) -> [(Int, Int)] {
        var pairs: [(Int, Int)] = []
        // A merge over the runs of equal write times.
        let aw = a.writeTimes, bw = b.writeTimes
        var i = 0, j = 0
        while i < aw.runCount && j < bw.runCount {
            let wi = aw.values[i], wj = bw.values[j]
            if wi < wj { i += 1; continue }
            if wj < wi { j += 1; continue }
            if wi.bitPattern == wj.bitPattern { pairTimes(a.times, aw.rows(ofRun: i), b.times, bw.rows(ofRun: j), &pairs) }
            i += 1
            j += 1
        }
        return pairs
    }

    /// Appends the pairs of rows of `ra` and `rb` with bit-identical times.
    static func pairTimes(_ at: [Double], _ ra: Range<Int>, _ bt: [Double], _ rb: Range<Int>, _ pairs: inout [(Int, Int)]) {
        if ra.count * rb.count <= 64 {
            for i in ra { for j in rb where at[i].bitPattern == bt[j].bitPattern { pairs.append((i, j)) } }
            return
        }
        // The same write batch again (a re-import): the same time bits row by row, strictly
        // ascending, so all distinct: each row pairs with its counterpart and no other.
        if ra.count == rb.count {
            let same: Bool = at.withUnsafeBufferPointer { a in
                bt.withUnsafeBufferPointer { b in
                    let i0 = ra.lowerBound, j0 = rb.lowerBound
                    var previous = a[i0].bitPattern
                    guard previous == b[j0].bitPattern else { return false }
                    for k in 1..<ra.count {
                        let x = a[i0 + k].bitPattern
                        guard x > previous, x == b[j0 + k].bitPattern else { return false }
                        previous = x
                    }
                    return true
                }
            }
            if same {
                for k in 0..<ra.count { pairs.append((ra.lowerBound + k, rb.lowerBound + k)) }
                return
            }
        }
        // Rows ordered by the times' bits (already so for ascending positive times).
        func ordered(_ t: [Double], _ r: Range<Int>) -> [Int] {
            var ascending = true
            for k in r.dropFirst() where t[k].bitPattern < t[k - 1].bitPattern { ascending = false; break }
            return ascending ? Array(r) : r.sorted { t[$0].bitPattern < t[$1].bitPattern }
        }
        let oa = ordered(at, ra), ob = ordered(bt, rb)
        var x = 0, y = 0
        while x < oa.count && y < ob.count {
            let ka = at[oa[x]].bitPattern, kb = bt[ob[y]].bitPattern
            if ka < kb { x += 1; continue }
            if kb < ka { y += 1; continue }
            var xe = x + 1, ye = y + 1
            while xe < oa.count && at[oa[xe]].bitPattern == ka { xe += 1 }
            while ye < ob.count && bt[ob[ye]].bitPattern == kb { ye += 1 }
            for p in x..<xe { for q in y..<ye { pairs.append((oa[p], ob[q])) } }
            x = xe
            y = ye
        }
    }

    /// Clears `alive[k]` when the values of `pairs[k]` differ in column `a` (of the first
    /// rows) and `b` (of the second): presence, then the value bits (missing equals missing).
    static func compare(_ a: Column, _ b: Column, _ pairs: [(Int, Int)], _ alive: inout [Bool]) {
        let pa = a.present, pb = b.present
        let n = pairs.count
        pairs.withUnsafeBufferPointer { pairs in
            alive.withUnsafeMutableBufferPointer { alive in
                // Plain index loops: this runs over every row of a re-import.
                if pa != nil || pb != nil {
                    var k = 0
                    while k < n {
                        let (i, j) = pairs[k]
                        if alive[k] && (pa?[i] ?? true) != (pb?[j] ?? true) { alive[k] = false }
                        k += 1
                    }
                }
                @inline(__always) func check(_ same: (Int, Int) -> Bool) {
                    var k = 0
                    while k < n {
                        let (i, j) = pairs[k]
                        if alive[k] && (pa?[i] ?? true) && !same(i, j) { alive[k] = false }
                        k += 1
                    }
                }
                switch (a.data, b.data) {
                case let (.double(x), .double(y)):
                    x.withUnsafeBufferPointer { x in y.withUnsafeBufferPointer { y in check { x[$0].bitPattern == y[$1].bitPattern } } }
                case let (.int(x), .int(y)):
                    x.withUnsafeBufferPointer { x in y.withUnsafeBufferPointer { y in check { x[$0] == y[$1] } } }
                case (.int, .intRuns), (.intRuns, .int), (.intRuns, .intRuns):
                    // A stored batch identifier comes back in runs: compare the rows it stands for.
                    a.data.ints!.withUnsafeBufferPointer { x in b.data.ints!.withUnsafeBufferPointer { y in check { x[$0] == y[$1] } } }
                case let (.bool(x), .bool(y)): check { x[$0] == y[$1] }
                case let (.string(x), .string(y)): check { x[$0] == y[$1] }
                case let (.value(x), .value(y)): check { x[$0] == y[$1] }
                default: for k in 0..<n { alive[k] = false }
                }
            }
        }
    }

    static func remove(_ drop: [Int], from b: SampleBatch) -> SampleBatch {
        var keep: [Int] = []
        keep.reserveCapacity(b.count - drop.count)
        var j = 0
        let sortedDrop = drop.sorted()
        for i in 0..<b.count {
            if j < sortedDrop.count && sortedDrop[j] == i { j += 1; continue }
            keep.append(i)
        }
        return b.gather(keep)
    }
}
