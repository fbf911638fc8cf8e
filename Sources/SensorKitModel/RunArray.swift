/// A value that run-length storage can merge with its neighbour.
public protocol RunElement: Sendable, Equatable {
    /// True when `self` and `other` may share one run: the same bits, so nothing is
    /// lost (for doubles, -0.0 and 0.0 stay apart and a NaN keeps its payload).
    func sameRun(as other: Self) -> Bool
}

extension Double: RunElement {
    @inline(__always) public func sameRun(as other: Double) -> Bool { bitPattern == other.bitPattern }
}

extension Int64: RunElement {
    @inline(__always) public func sameRun(as other: Int64) -> Bool { self == other }
}

/// A column of values stored once per run of equal neighbours: what a sample batch
/// keeps for values written once per SensorKit result (a batch's write time, its
/// identifier), which repeat for the 3,000 rows of a 50 Hz batch.
///
/// Always canonical: neighbouring runs differ (`sameRun` is false), no run is empty;
/// so two arrays with the same elements have the same runs, and `==` compares elements.
/// Reading row `i` by subscript is a binary search over the runs (constant time with
/// one run); walk the runs (`forEachRun`, `runs`) or iterate in order (`makeIterator`,
/// constant time a step) where every row is read.
public struct RunArray<Element: RunElement>: RandomAccessCollection, Sendable, Equatable {
    /// The value of each run.
    public private(set) var values: [Element]
    /// The end (exclusive row index) of each run, increasing; the last is `count`.
    public private(set) var ends: [Int]

    public init() {
        values = []
        ends = []
    }

    /// `count` copies of `value` (one run).
    public init(repeating value: Element, count: Int) {
        precondition(count >= 0, "RunArray(repeating:count:) with a negative count")
        values = count > 0 ? [value] : []
        ends = count > 0 ? [count] : []
    }

    /// The elements of `elements`, in order, merged into runs.
    public init<S: Sequence>(_ elements: S) where S.Element == Element {
        self.init()
        for x in elements { append(x) }
    }

    /// The elements of an array, merged into runs (one pass over contiguous memory).
    public init(_ array: [Element]) {
        self.init()
        array.withUnsafeBufferPointer { b in
            var start = 0
            while start < b.count {
                let v = b[start]
                var end = start + 1
                while end < b.count && b[end].sameRun(as: v) { end += 1 }
                values.append(v)
                ends.append(end)
                start = end
            }
        }
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.last ?? 0 }
    public var runCount: Int { ends.count }
    public var first: Element? { values.first }
    public var last: Element? { values.last }

    public subscript(i: Int) -> Element {
        precondition(i >= 0 && i < endIndex, "RunArray index \(i) out of range 0..<\(endIndex)")
        return values[run(containing: i)]
    }

    /// The run holding row `i` (0 ≤ i < count).
    public func run(containing i: Int) -> Int {
        if ends.count == 1 || i < ends[0] { return 0 }
        var lo = 0, hi = ends.count - 1  // ends[lo] <= i < ends[hi]
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if ends[mid] <= i { lo = mid } else { hi = mid }
        }
        return hi
    }

    /// The rows of run `r`.
    public func rows(ofRun r: Int) -> Range<Int> { (r == 0 ? 0 : ends[r - 1])..<ends[r] }

    /// Calls `body` with each run's rows and value, in order.
    public func forEachRun(_ body: (Range<Int>, Element) throws -> Void) rethrows {
        var start = 0
        for r in 0..<ends.count {
            try body(start..<ends[r], values[r])
            start = ends[r]
        }
    }

    public struct Iterator: IteratorProtocol {
        let values: [Element], ends: [Int]
        var row = 0, run = 0
        public mutating func next() -> Element? {
            guard run < ends.count else { return nil }
            let v = values[run]
            row += 1
            if row == ends[run] { run += 1 }
            return v
        }
    }

    /// Walks the runs: constant time a step.
    public func makeIterator() -> Iterator { Iterator(values: values, ends: ends) }

    /// Every element, one per row.
    public var array: [Element] {
        [Element](unsafeUninitializedCapacity: count) { buf, done in
            var start = 0
            for r in 0..<ends.count {
                (buf.baseAddress! + start).initialize(repeating: values[r], count: ends[r] - start)
                start = ends[r]
            }
            done = start
        }
    }

    /// `transform` of every element, one per row; `transform` is called once per run
    /// (it must be a function of its argument alone).
    public func map<T>(_ transform: (Element) throws -> T) rethrows -> [T] {
        var out: [T] = []
        out.reserveCapacity(count)
        for r in 0..<ends.count {
            out.append(contentsOf: repeatElement(try transform(values[r]), count: ends[r] - (r == 0 ? 0 : ends[r - 1])))
        }
        return out
    }

    // MARK: Building

    /// Appends `value` once.
    public mutating func append(_ value: Element) { append(value, count: 1) }

    /// Appends `count` copies of `value`.
    public mutating func append(_ value: Element, count: Int) {
        guard count > 0 else { return }
        if let last = values.last, last.sameRun(as: value) {
            ends[ends.count - 1] += count
        } else {
            values.append(value)
            ends.append(endIndex + count)
        }
    }

    /// Appends every element of `other`.
    public mutating func append(contentsOf other: RunArray) {
        other.forEachRun { rows, v in append(v, count: rows.count) }
    }

    public static func += (a: inout RunArray, b: RunArray) { a.append(contentsOf: b) }

    public mutating func reserveCapacity(runs: Int) {
        values.reserveCapacity(runs)
        ends.reserveCapacity(runs)
    }

    // MARK: Taking rows

    /// The elements at `rows`.
    public func slice(_ rows: Range<Int>) -> RunArray {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= count, "RunArray.slice \(rows) out of range 0..<\(count)")
        var out = RunArray()
        guard !rows.isEmpty else { return out }
        let first = run(containing: rows.lowerBound), last = run(containing: rows.upperBound - 1)
        out.reserveCapacity(runs: last - first + 1)
        for r in first...last {
            out.values.append(values[r])
            out.ends.append(Swift.min(ends[r], rows.upperBound) - rows.lowerBound)
        }
        return out
    }

    /// The elements at `indices`, in that order (indices may repeat).
    public func gather(_ indices: [Int]) -> RunArray {
        var out = RunArray()
        var r = 0
        func holds(_ r: Int, _ i: Int) -> Bool { i >= (r == 0 ? 0 : ends[r - 1]) && i < ends[r] }
        for i in indices {
            precondition(i >= 0 && i < count, "RunArray.gather index \(i) out of range 0..<\(count)")
            // Indices usually go forward a row at a time: try this run and the next first.
            if !holds(r, i) { r = r + 1 < ends.count && holds(r + 1, i) ? r + 1 : run(containing: i) }
            out.append(values[r])
        }
        return out
    }
}

extension RunArray where Element == Double {
    /// The first row whose value is ≥ `x`; the values must be in increasing order.
    public func lowerBound(_ x: Double) -> Int {
        var lo = 0, hi = values.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if values[mid] < x { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? 0 : ends[lo - 1]
    }

    /// The first row whose value is > `x`; the values must be in increasing order.
    public func upperBound(_ x: Double) -> Int {
        var lo = 0, hi = values.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if values[mid] <= x { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? 0 : ends[lo - 1]
    }

    /// True when no value is below the one before it.
    public var isSorted: Bool {
        for r in values.indices.dropFirst() where values[r] < values[r - 1] { return false }
        return true
    }
}

/// When each row was written: one value per run of rows written together.
public typealias WriteTimes = RunArray<Double>

extension RunArray: ExpressibleByArrayLiteral {
    /// `[1.0, 1.0, 2.0]` is two runs.
    public init(arrayLiteral elements: Element...) { self.init(elements) }
}
