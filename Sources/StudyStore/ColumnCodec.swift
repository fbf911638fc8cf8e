import Foundation
import SensorKitModel

// Column blobs of the recorded store: one BLOB per column per chunk.
//
// Every blob starts with a one-byte encoding tag; all numbers are little-endian.
// - double: 0 raw Float64s · 1 decimal-scaled (byte d, then zigzag varint deltas of
//   round(v·10^d), used only when every value comes back bit-exact) · 2 constant (one Float64)
//   · 3 Float32s (every value is a Float32 widened) · 4 decimal-scaled delta runs (byte d,
//   then the runs form of round(v·10^d)) · 5 the runs form of the Float64 bit patterns
//   · 6 offsets from the chunk's sample times (varint r, then r × (varint length, Float64 c):
//   the value is `time − c`, bit-exact; never used for the time columns themselves)
// - int: 0 zigzag varint deltas · 1 the runs form · 2 constant (one Int64)
// - bool: 0 one byte per value
// - string: 0 varint length + UTF-8 per value · 1 dictionary (varint n, n strings, varint index per value)
// - value: 0 one `FieldValue` per value in the binary form below
// The runs form of n ≥ 1 integers: varint r, zigzag varint of the first value, then r runs
// of (zigzag varint delta d, varint length k): k more values, each d above the one before
// (the lengths add up to n − 1). Arithmetic progressions (50 Hz times) and constant
// stretches (write times of one batch) take a few bytes.
//
// Presence masks are a separate BLOB (NULL when every value is present). Chunk encoding 1:
// one byte per row. Chunk encoding 2 (`chunk.encoding`, this version): a tag byte, then
// 0 one byte per row · 1 a bitmap, row k in bit k % 8 of byte k / 8 · 2 nothing (every
// value missing).

enum ColumnCodec {
    // MARK: Writing

    /// The chunk encoding this Sensorium writes (`chunk.encoding`), and those it reads.
    static let chunkEncoding = 2
    static let readableChunkEncodings = 1...2

    /// One column's blob. `times`: the chunk's sample times (lets a column that is the
    /// sample time minus a constant, such as CoreMotion's uptime, be stored as offsets).
    static func encode(_ data: ColumnData, times: [Double]? = nil) -> [UInt8] {
        var w = ByteWriter()
        switch data {
        case .double(let v): encodeDoubles(v, times: times, into: &w)
        case .int(let v): encodeInts(v, into: &w)
        case .intRuns(let v): encodeInts(v.array, into: &w)
        case .bool(let v):
            w.bytes.reserveCapacity(v.count + 1)
            w.byte(0)
            for b in v { w.byte(b ? 1 : 0) }
        case .string(let v): encodeStrings(v, into: &w)
        case .value(let v):
            w.byte(0)
            for x in v { encodeValue(x, into: &w) }
        }
        return w.bytes
    }

    /// The smallest of the double encodings that gives every value back bit-exact.
    static func encodeDoubles(_ v: [Double], times: [Double]? = nil, into w: inout ByteWriter) {
        let n = v.count
        if let first = v.first, v.allSatisfy({ $0.bitPattern == first.bitPattern }) {
            w.byte(2)
            w.u64(first.bitPattern)
            return
        }
        let float32 = isFloat32Exact(v)
        if let dec = decimalEncoding(v), dec.count < n * 8, dec.count <= n * 4 || !float32 {
            w.append(dec)
            return
        }
        if float32 {
            w.append(float32Encoding(v))
            return
        }
        if let times, times.count == n, let off = timeOffsetEncoding(v, times: times) {
            w.append(off)
            return
        }
        let runs = v.withUnsafeBytes { raw in
            deltaRunCount(raw.bindMemory(to: Int64.self).baseAddress!, n)
        }
        if runs <= n / 8 {
            w.byte(5)
            v.withUnsafeBytes { raw in writeRuns(raw.bindMemory(to: Int64.self).baseAddress!, n, runs: runs, into: &w) }
            return
        }
        w.bytes.reserveCapacity(w.bytes.count + n * 8 + 1)
        w.byte(0)
        v.withUnsafeBytes { w.bytes.append(contentsOf: $0) }
    }

    /// True when every value is a Float32 widened (bit-exact; NaN payloads aside, which fail).
    static func isFloat32Exact(_ v: [Double]) -> Bool {
        v.withUnsafeBufferPointer { b in
            var ok = true
            var k = 0
            let n = b.count
            // Blocks of 64 without an early exit vectorise; stop at the first failing block.
            while k < n && ok {
                let e = min(n, k + 64)
                for i in k..<e { ok = ok && Double(Float(b[i])).bitPattern == b[i].bitPattern }
                k = e
            }
            return ok
        }
    }

    /// Tag 3: the values as Float32s (call only when `isFloat32Exact`).
    static func float32Encoding(_ v: [Double]) -> [UInt8] {
        let n = v.count
        return [UInt8](unsafeUninitializedCapacity: n * 4 + 1) { buf, done in
            buf[0] = 3
            let out = UnsafeMutableRawPointer(buf.baseAddress! + 1)
            v.withUnsafeBufferPointer { b in
                for i in 0..<n { out.storeBytes(of: Float(b[i]).bitPattern.littleEndian, toByteOffset: i * 4, as: UInt32.self) }
            }
            done = n * 4 + 1
        }
    }

    /// Tag 1 or 4 (whichever is smaller): the values as decimal-scaled integers, when
    /// sampled values suggest few decimals and every value comes back bit-exact.
    static func decimalEncoding(_ v: [Double]) -> [UInt8]? {
        let n = v.count
        // Sampled values suggest the decimals; a value needing more raises them and retries.
        var scaleDigits = decimalScale(v)
        while let d = scaleDigits {
            var failed: Double? = nil
            let out = withUnsafeTemporaryAllocation(of: Int64.self, capacity: max(n, 1)) { ints -> [UInt8]? in
                let bad = v.withUnsafeBufferPointer { scaledIntegers($0, digits: d, into: ints.baseAddress!) }
                if let bad { failed = v[bad]; return nil }
                let runs = deltaRunCount(ints.baseAddress!, n)
                if runs <= n / 8 {
                    var w = ByteWriter()
                    w.byte(4)
                    w.byte(UInt8(d))
                    writeRuns(ints.baseAddress!, n, runs: runs, into: &w)
                    return w.bytes
                }
                return [UInt8](unsafeUninitializedCapacity: n * 10 + 2) { buf, done in
                    buf[0] = 1
                    buf[1] = UInt8(d)
                    done = zigzagDeltas(ints.baseAddress!, n, into: buf.baseAddress! + 2) + 2
                }
            }
            if let out { return out }
            guard let x = failed, let need = decimals(x), need > d else { return nil }
            scaleDigits = need
        }
        return nil
    }

    /// Tag 6: `v[k] == times[k] − c` bit-exact, with c constant over few runs; nil otherwise.
    static func timeOffsetEncoding(_ v: [Double], times: [Double]) -> [UInt8]? {
        let n = v.count
        var runs: [(length: Int, c: UInt64)] = []
        let ok = v.withUnsafeBufferPointer { vb in
            times.withUnsafeBufferPointer { tb -> Bool in
                var k = 0
                while k < n {
                    let c = tb[k] - vb[k]
                    guard c.isFinite, (tb[k] - c).bitPattern == vb[k].bitPattern else { return false }
                    var e = k + 1
                    while e < n && (tb[e] - c).bitPattern == vb[e].bitPattern { e += 1 }
                    runs.append((e - k, c.bitPattern))
                    if runs.count > n / 16 + 1 { return false }
                    k = e
                }
                return true
            }
        }
        guard ok, !runs.isEmpty else { return nil }
        var w = ByteWriter()
        w.byte(6)
        w.varint(UInt64(runs.count))
        for r in runs {
            w.varint(UInt64(r.length))
            w.u64(r.c)
        }
        return w.bytes
    }

    /// The number of runs of equal consecutive deltas among `n` integers (0 when n ≤ 1).
    static func deltaRunCount(_ p: UnsafePointer<Int64>, _ n: Int) -> Int {
        guard n > 2 else { return n - 1 < 0 ? 0 : n - 1 }
        var runs = 1
        var prev = p[1] &- p[0]
        for k in 2..<n {
            let d = p[k] &- p[k - 1]
            runs += d == prev ? 0 : 1
            prev = d
        }
        return runs
    }

    /// Appends the runs form (see the top of the file) of `n` ≥ 1 integers with `runs` runs.
    static func writeRuns(_ p: UnsafePointer<Int64>, _ n: Int, runs: Int, into w: inout ByteWriter) {
        w.varint(UInt64(runs))
        w.zigzag(p[0])
        var k = 1
        while k < n {
            let d = p[k] &- p[k - 1]
            var e = k + 1
            while e < n && p[e] &- p[e - 1] == d { e += 1 }
            w.zigzag(d)
            w.varint(UInt64(e - k))
            k = e
        }
    }

    /// The zigzag varints of the deltas of `n` integers at `out` (room for 10 bytes a value);
    /// returns the bytes written.
    static func zigzagDeltas(_ p: UnsafePointer<Int64>, _ n: Int, into out: UnsafeMutablePointer<UInt8>) -> Int {
        var prev: Int64 = 0
        var o = 0
        for k in 0..<n {
            o += writeZigzag(p[k] &- prev, out + o)
            prev = p[k]
        }
        return o
    }

    /// `round(v·10^d)` of every value into `ints`, two at a time (the divisions that check
    /// the way back overlap); returns the index of the first value that would not come back
    /// bit-exact as `Double(int) / 10^d` (or is -0.0, or too large), if any.
    @inline(__always)
    static func scaledIntegers(_ v: UnsafeBufferPointer<Double>, digits d: Int, into ints: UnsafeMutablePointer<Int64>) -> Int? {
        let scale = pow10[d]
        let negativeZero = (-0.0).bitPattern
        let n = v.count
        // The nearest integer (halves away from zero: no libm call); the check keeps only
        // values that come back bit-exact, whatever the rounding.
        @inline(__always) func nearest(_ m: Double) -> Int64 { Int64(m + (m < 0 ? -0.5 : 0.5)) }
        var k = 0
        while k + 2 <= n {
            let x0 = v[k], x1 = v[k + 1]
            let m0 = x0 * scale, m1 = x1 * scale
            guard abs(m0) < 9.0e15 else { return k }
            guard abs(m1) < 9.0e15 else { return k + 1 }
            let i0 = nearest(m0), i1 = nearest(m1)
            let back = SIMD2<Double>(Double(i0), Double(i1)) / SIMD2<Double>(repeating: scale)
            guard back[0].bitPattern == x0.bitPattern, x0.bitPattern != negativeZero else { return k }
            guard back[1].bitPattern == x1.bitPattern, x1.bitPattern != negativeZero else { return k + 1 }
            ints[k] = i0
            ints[k + 1] = i1
            k += 2
        }
        if k < n {
            let x = v[k], m = x * scale
            guard abs(m) < 9.0e15 else { return k }
            let i = nearest(m)
            guard (Double(i) / scale).bitPattern == x.bitPattern, x.bitPattern != negativeZero else { return k }
            ints[k] = i
        }
        return nil
    }

    /// One zigzag varint at `p`; returns its length (≤ 10). Writes up to 4 bytes even for a
    /// shorter varint: the caller leaves room for 10.
    @inline(__always)
    static func writeZigzag(_ v: Int64, _ p: UnsafeMutablePointer<UInt8>) -> Int {
        var u = UInt64(bitPattern: (v << 1) ^ (v >> 63))
        if u < 1 << 21 {
            // Up to 3 bytes without a data-dependent branch (random deltas mispredict).
            let more1: UInt64 = u >= 0x80 ? 1 : 0, more2: UInt64 = u >= 0x4000 ? 1 : 0
            let w = (u & 0x7F) | ((u >> 7) & 0x7F) << 8 | ((u >> 14) & 0x7F) << 16 | more1 << 7 | more2 << 15
            UnsafeMutableRawPointer(p).storeBytes(of: UInt32(truncatingIfNeeded: w).littleEndian, as: UInt32.self)
            return 1 + Int(more1 + more2)
        }
        var k = 0
        while u >= 0x80 {
            p[k] = UInt8(truncatingIfNeeded: u) | 0x80
            u >>= 7
            k += 1
        }
        p[k] = UInt8(truncatingIfNeeded: u)
        return k + 1
    }

    static let pow10: [Double] = (0...15).map { Foundation.pow(10.0, Double($0)) }

    /// The decimals (≤ 9) with which `x` comes back exactly, if any.
    static func decimals(_ x: Double) -> Int? {
        guard x.isFinite, abs(x) < 1e15, x.bitPattern != (-0.0).bitPattern else { return nil }
        for d in 0...9 {
            let s = pow10[d]
            let m = (x * s).rounded(.toNearestOrEven)
            if abs(m) < 9.0e15 && (m / s).bitPattern == x.bitPattern { return d }
        }
        return nil
    }

    /// The smallest number of decimals d ≤ 9 with which sampled values come back exactly, if any.
    static func decimalScale(_ v: [Double]) -> Int? {
        guard v.count >= 8 else { return nil }
        var need = 0
        let step = max(1, v.count / 64)
        var i = 0
        while i < v.count {
            let x = v[i]
            guard x.isFinite, abs(x) < 1e15, x.bitPattern != (-0.0).bitPattern else { return nil }
            var found = -1
            var d = need
            while d <= 9 {
                let s = pow10[d]
                let m = (x * s).rounded(.toNearestOrEven)
                if abs(m) < 9.0e15 && (m / s).bitPattern == x.bitPattern { found = d; break }
                d += 1
            }
            if found < 0 { return nil }
            need = max(need, found)
            i += step
        }
        return need
    }

    static func encodeInts(_ v: [Int64], into w: inout ByteWriter) {
        let n = v.count
        if let first = v.first, n > 1, v.allSatisfy({ $0 == first }) {
            w.byte(2)
            w.u64(UInt64(bitPattern: first))
            return
        }
        v.withUnsafeBufferPointer { b in
            guard let p = b.baseAddress else { w.byte(0); return }
            let runs = deltaRunCount(p, n)
            if runs <= n / 8 {
                w.byte(1)
                writeRuns(p, n, runs: runs, into: &w)
                return
            }
            w.append([UInt8](unsafeUninitializedCapacity: n * 10 + 1) { buf, done in
                buf[0] = 0
                done = zigzagDeltas(p, n, into: buf.baseAddress! + 1) + 1
            })
        }
    }

    static func encodeStrings(_ v: [String], into w: inout ByteWriter) {
        var index: [String: Int] = [:]
        var distinct: [String] = []
        for s in v where index[s] == nil {
            index[s] = distinct.count
            distinct.append(s)
            if distinct.count > v.count / 2 + 1 { break }
        }
        if distinct.count <= v.count / 2 + 1 && v.count > 2 {
            w.byte(1)
            w.varint(UInt64(distinct.count))
            for s in distinct { w.string(s) }
            for s in v { w.varint(UInt64(index[s]!)) }
        } else {
            w.byte(0)
            for s in v { w.string(s) }
        }
    }

    // FieldValue binary form: tag byte 0 null, 1 false, 2 true, 3 int (zigzag varint),
    // 4 double (Float64), 5 string (varint length + UTF-8), 6 array (varint count + items),
    // 7 object (varint count + (key string, value) pairs, in order).
    static func encodeValue(_ v: FieldValue, into w: inout ByteWriter) {
        switch v {
        case .null: w.byte(0)
        case .bool(let b): w.byte(b ? 2 : 1)
        case .int(let i): w.byte(3); w.zigzag(i)
        case .double(let d): w.byte(4); w.u64(d.bitPattern)
        case .string(let s): w.byte(5); w.string(s)
        case .array(let a):
            w.byte(6)
            w.varint(UInt64(a.count))
            for x in a { encodeValue(x, into: &w) }
        case .object(let o):
            w.byte(7)
            w.varint(UInt64(o.count))
            for (k, x) in o { w.string(k); encodeValue(x, into: &w) }
        }
    }

    /// The presence mask of chunk encoding 2; nil when every value is present.
    static func encodePresent(_ present: [Bool]?) -> [UInt8]? {
        guard let p = present, p.contains(false) else { return nil }
        if !p.contains(true) { return [2] }
        let n = p.count
        return [UInt8](unsafeUninitializedCapacity: 1 + (n + 7) / 8) { buf, done in
            buf[0] = 1
            for k in 0..<(n + 7) / 8 { buf[1 + k] = 0 }
            for k in 0..<n where p[k] { buf[1 + k >> 3] |= 1 << UInt8(k & 7) }
            done = 1 + (n + 7) / 8
        }
    }

    /// A presence mask of `n` rows written with chunk encoding `encoding`.
    static func decodePresent(_ bytes: UnsafeRawBufferPointer, count n: Int, encoding: Int) throws -> [Bool] {
        let b = bytes.bindMemory(to: UInt8.self)
        var body = b[...]
        var tag: UInt8 = 0
        if encoding >= 2 {
            guard let t = b.first else { throw StoreCorruption("empty presence mask") }
            tag = t
            body = b[1...]
        }
        switch tag {
        case 0:
            guard body.count == n else { throw StoreCorruption("presence mask of \(body.count) bytes for \(n) rows") }
            return [Bool](unsafeUninitializedCapacity: n) { buf, done in
                for k in 0..<n { buf[k] = body[body.startIndex + k] != 0 }
                done = n
            }
        case 1:
            guard body.count == (n + 7) / 8 else { throw StoreCorruption("presence bitmap of \(body.count) bytes for \(n) rows") }
            let base = body.startIndex
            return [Bool](unsafeUninitializedCapacity: n) { buf, done in
                for k in 0..<n { buf[k] = b[base + k >> 3] & (1 << UInt8(k & 7)) != 0 }
                done = n
            }
        case 2:
            guard body.isEmpty else { throw StoreCorruption("presence mask 'none present' with \(body.count) more bytes") }
            return [Bool](repeating: false, count: n)
        default:
            throw StoreCorruption("unknown presence mask encoding \(tag)")
        }
    }

    // MARK: Reading

    /// Decodes one column blob of `n` rows. `times`: the chunk's sample times (needed by
    /// time-offset columns). Throws `StoreCorruption` when the bytes are not such a blob.
    static func decode(_ bytes: UnsafeRawBufferPointer, kind: ColumnKind, count n: Int, times: [Double]? = nil) throws -> ColumnData {
        var r = ByteReader(bytes)
        let tag = try r.byte()
        switch kind {
        case .double:
            return .double(try decodeDoubles(&r, tag: tag, count: n, times: times))
        case .int:
            let out: [Int64]
            switch tag {
            case 0:
                var failed = false
                out = [Int64](unsafeUninitializedCapacity: n) { buf, done in
                    var prev: Int64 = 0
                    failed = !r.decodeZigzagDeltas(n) { k, v in
                        prev = prev &+ v
                        buf[k] = prev
                    }
                    done = failed ? 0 : n
                }
                if failed { throw StoreCorruption("blob ends early") }
            case 1:
                if let runs = try decodeIntRuns(&r, n) { return .intRuns(runs) }
                out = try [Int64](unsafeUninitializedCapacity: n) { buf, done in
                    try decodeRuns(&r, n) { k, v in buf[k] = v }
                    done = n
                }
            case 2:
                let v = Int64(bitPattern: try r.u64())
                guard r.remaining == 0 else { throw StoreCorruption("int column of \(n) rows has \(r.remaining) bytes too many") }
                return .intRuns(RunArray(repeating: v, count: n))
            default: throw StoreCorruption("unknown int encoding \(tag)")
            }
            guard r.remaining == 0 else { throw StoreCorruption("int column of \(n) rows has \(r.remaining) bytes too many") }
            return .int(out)
        case .bool:
            var out = [Bool]()
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(try r.byte() != 0) }
            return .bool(out)
        case .string:
            var out = [String]()
            out.reserveCapacity(n)
            if tag == 1 {
                let k = Int(try r.varint())
                var dict: [String] = []
                for _ in 0..<k { dict.append(try r.string()) }
                for _ in 0..<n {
                    let i = Int(try r.varint())
                    guard i < dict.count else { throw StoreCorruption("string index out of range") }
                    out.append(dict[i])
                }
            } else {
                for _ in 0..<n { out.append(try r.string()) }
            }
            return .string(out)
        case .value:
            var out = [FieldValue]()
            out.reserveCapacity(n)
            for _ in 0..<n { out.append(try decodeValue(&r)) }
            return .value(out)
        }
    }

    static func decodeValue(_ r: inout ByteReader, depth: Int = 0) throws -> FieldValue {
        guard depth < 64 else { throw StoreCorruption("value nested too deeply") }
        switch try r.byte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(try r.zigzag())
        case 4: return .double(Double(bitPattern: try r.u64()))
        case 5: return .string(try r.string())
        case 6:
            let k = Int(try r.varint())
            var a: [FieldValue] = []
            a.reserveCapacity(min(k, 1 << 16))
            for _ in 0..<k { a.append(try decodeValue(&r, depth: depth + 1)) }
            return .array(a)
        case 7:
            let k = Int(try r.varint())
            var o: [(String, FieldValue)] = []
            for _ in 0..<k { o.append((try r.string(), try decodeValue(&r, depth: depth + 1))) }
            return .object(o)
        case let t: throw StoreCorruption("unknown value tag \(t)")
        }
    }

    static func decodeDoubles(_ bytes: UnsafeRawBufferPointer, count n: Int, times: [Double]? = nil) throws -> [Double] {
        var r = ByteReader(bytes)
        let tag = try r.byte()
        return try decodeDoubles(&r, tag: tag, count: n, times: times)
    }

    /// The `n` doubles after the tag byte; the whole blob must be used.
    static func decodeDoubles(_ r: inout ByteReader, tag: UInt8, count n: Int, times: [Double]?) throws -> [Double] {
        let out: [Double]
        switch tag {
        case 0:
            guard r.remaining == n * 8 else { throw StoreCorruption("double column of \(n) rows has \(r.remaining) bytes") }
            let src = r.base.baseAddress.map { $0 + r.offset }
            out = [Double](unsafeUninitializedCapacity: n) { buf, done in
                if n > 0, let src { UnsafeMutableRawPointer(buf.baseAddress!).copyMemory(from: src, byteCount: n * 8) }
                done = n
            }
            r.offset += n * 8
        case 1, 4:
            let d = Int(try r.byte())
            guard d < pow10.count else { throw StoreCorruption("bad decimal scale \(d)") }
            let scale = pow10[d]
            if tag == 4 {
                out = try [Double](unsafeUninitializedCapacity: n) { buf, done in
                    _ = try decodeDecimalRuns(&r, n, scale: scale, into: buf)
                    done = n
                }
            } else {
                var failed = false
                out = [Double](unsafeUninitializedCapacity: n) { buf, done in
                    var prev: Int64 = 0
                    failed = !r.decodeZigzagDeltas(n) { k, v in
                        prev = prev &+ v
                        buf[k] = Double(prev) / scale
                    }
                    done = failed ? 0 : n
                }
                if failed { throw StoreCorruption("blob ends early") }
            }
        case 2:
            out = [Double](repeating: Double(bitPattern: try r.u64()), count: n)
        case 3:
            guard r.remaining == n * 4 else { throw StoreCorruption("float32 column of \(n) rows has \(r.remaining) bytes") }
            let src = r.base.baseAddress.map { UnsafeRawPointer($0 + r.offset) }
            out = [Double](unsafeUninitializedCapacity: n) { buf, done in
                if let src { widenFloat32s(src, n, into: buf) }
                done = n
            }
            r.offset += n * 4
        case 5:
            out = try [Double](unsafeUninitializedCapacity: n) { buf, done in
                try decodeRuns(&r, n) { k, v in buf[k] = Double(bitPattern: UInt64(bitPattern: v)) }
                done = n
            }
        case 6:
            guard let times, times.count == n else { throw StoreCorruption("time-offset column without the chunk's times") }
            let runs = try r.varint()
            guard runs <= UInt64(n) else { throw StoreCorruption("time-offset column of \(n) rows has \(runs) runs") }
            out = try times.withUnsafeBufferPointer { t in
                try [Double](unsafeUninitializedCapacity: n) { buf, done in
                    var k = 0
                    for _ in 0..<runs {
                        let len = try r.varint()
                        guard len <= UInt64(n - k) else { throw StoreCorruption("time-offset runs longer than the chunk") }
                        let c = Double(bitPattern: try r.u64())
                        for j in k..<k + Int(len) { buf[j] = t[j] - c }
                        k += Int(len)
                    }
                    guard k == n else { throw StoreCorruption("time-offset runs cover \(k) of \(n) rows") }
                    done = n
                }
            }
        default: throw StoreCorruption("unknown double encoding \(tag)")
        }
        guard r.remaining == 0 else { throw StoreCorruption("double column of \(n) rows has \(r.remaining) bytes too many") }
        return out
    }

    /// A chunk's sample times, and the closed range every one of them lies in when the
    /// encoding gives it without a look at each value (constant, decimal runs: the least and
    /// greatest integers of the runs, scaled; nil for other encodings, a NaN constant, or
    /// runs whose arithmetic overflows). Throws `StoreCorruption` as `decodeDoubles` does.
    static func decodeTimes(_ bytes: UnsafeRawBufferPointer, count n: Int) throws -> (values: [Double], within: ClosedRange<Double>?) {
        var r = ByteReader(bytes)
        let tag = try r.byte()
        guard tag == 4 else {
            let values = try decodeDoubles(&r, tag: tag, count: n, times: nil)
            guard tag == 2, let v = values.first, !v.isNaN else { return (values, nil) }
            return (values, v...v)
        }
        let d = Int(try r.byte())
        guard d < pow10.count else { throw StoreCorruption("bad decimal scale \(d)") }
        let scale = pow10[d]
        var extremes: (least: Int64, greatest: Int64)?
        let values = try [Double](unsafeUninitializedCapacity: n) { buf, done in
            extremes = try decodeDecimalRuns(&r, n, scale: scale, into: buf)
            done = n
        }
        guard r.remaining == 0 else { throw StoreCorruption("double column of \(n) rows has \(r.remaining) bytes too many") }
        // Int64 → Double and division by a positive scale never reverse an order.
        return (values, extremes.map { (Double($0.least) / scale)...(Double($0.greatest) / scale) })
    }

    /// Tag 4's values after the scale byte: the runs form of `n` integers, each written to
    /// `buf` as `Double(v) / scale`. Returns the least and greatest integer, nil when a run's
    /// arithmetic overflows (its values then wrap, as `&+` and `&*` do).
    static func decodeDecimalRuns(_ r: inout ByteReader, _ n: Int, scale: Double,
                                  into buf: UnsafeMutableBufferPointer<Double>) throws -> (least: Int64, greatest: Int64)? {
        var k = 0
        var least = Int64.max, greatest = Int64.min, overflow = false
        try decodeRunSpans(&r, n) { first, d, len in
            let (step, o1) = Int64(len - 1).multipliedReportingOverflow(by: d)
            let (last, o2) = first.addingReportingOverflow(step)
            overflow = overflow || o1 || o2
            least = Swift.min(least, first, last)
            greatest = Swift.max(greatest, first, last)
            writeScaledSpan(buf.baseAddress! + k, first: first, step: d, count: len, exact: !o1 && !o2, scale: scale)
            k += len
        }
        return overflow ? nil : (least, greatest)
    }

    /// Writes `Double(first &+ j &* step) / scale` for j in 0..<count to `out`. When the span
    /// does not overflow (`exact`) and its ends lie within ±2^52, every value is an integer a
    /// Double holds exactly, and so is each sum of `step`s on the way from one to another:
    /// eight running numerators (`first + j · step`, stepped by `8 · step`) are exact, and
    /// their divisions are correctly rounded as the scalar one, bit for bit.
    @inline(__always)
    static func writeScaledSpan(_ out: UnsafeMutablePointer<Double>, first: Int64, step: Int64, count: Int,
                                exact: Bool, scale: Double) {
        var j = 0
        let limit: Int64 = 1 << 52
        let last = first &+ Int64(count - 1) &* step
        if exact && count >= 8 && first.magnitude <= limit && last.magnitude <= limit {
            let s = Double(step)
            var numerators = Double(first) + SIMD8<Double>(0, 1, 2, 3, 4, 5, 6, 7) * s
            let stride = SIMD8<Double>(repeating: 8 * s), sc = SIMD8<Double>(repeating: scale)
            var p = UnsafeMutableRawPointer(out)
            let blocks = count / 8
            for _ in 0..<blocks {
                p.storeBytes(of: numerators / sc, as: SIMD8<Double>.self)
                numerators += stride
                p += 64
            }
            j = blocks &* 8
        }
        while j < count {
            out[j] = Double(first &+ Int64(j) &* step) / scale
            j += 1
        }
    }

    /// The `n` little-endian Float32s at `src`, widened into `out`, eight at a time.
    @inline(__always)
    static func widenFloat32s(_ src: UnsafeRawPointer, _ n: Int, into out: UnsafeMutableBufferPointer<Double>) {
        let dst = UnsafeMutableRawPointer(out.baseAddress!)
        var k = 0
        #if _endian(little)
        while k + 8 <= n {
            let v = src.loadUnaligned(fromByteOffset: k * 4, as: SIMD8<Float>.self)
            dst.storeBytes(of: SIMD8<Double>(v), toByteOffset: k * 8, as: SIMD8<Double>.self)
            k += 8
        }
        #endif
        while k < n {
            out[k] = Double(Float(bitPattern: UInt32(littleEndian: src.loadUnaligned(fromByteOffset: k * 4, as: UInt32.self))))
            k += 1
        }
    }

    /// The runs form of `n` integers as runs of equal values, when they make at most one run
    /// in 8 rows (a batch identifier); nil otherwise, with `r` left where it was.
    static func decodeIntRuns(_ r: inout ByteReader, _ n: Int) throws -> RunArray<Int64>? {
        let start = r
        var out = RunArray<Int64>()
        var fits = true
        try decodeRunSpans(&r, n) { first, d, len in
            guard fits else { return }
            if d == 0 { out.append(first, count: len) } else { for j in 0..<len { out.append(first &+ Int64(j) &* d) } }
            fits = out.runCount <= n / 8 + 1
        }
        guard fits else { r = start; return nil }
        guard r.remaining == 0 else { throw StoreCorruption("int column of \(n) rows has \(r.remaining) bytes too many") }
        return out
    }

    /// Reads the runs form of `n` integers, calling `store(index, value)` for each in order.
    @inline(__always)
    static func decodeRuns(_ r: inout ByteReader, _ n: Int, _ store: (Int, Int64) -> Void) throws {
        var k = 0
        try decodeRunSpans(&r, n) { first, d, len in
            for j in 0..<len { store(k + j, first &+ Int64(j) &* d) }
            k += len
        }
    }

    /// Reads the runs form of `n` integers as spans, in order: `span(first, d, count)` stands
    /// for the `count` values first, first + d, first + 2d, … (the first value is a span of 1).
    @inline(__always)
    static func decodeRunSpans(_ r: inout ByteReader, _ n: Int, _ span: (Int64, Int64, Int) -> Void) throws {
        let runs = try r.varint()
        guard n > 0, runs < UInt64(n) else { throw StoreCorruption("\(runs) runs for \(n) values") }
        var v = try r.zigzag()
        span(v, 0, 1)
        var k = 1
        for _ in 0..<runs {
            let d = try r.zigzag()
            let len = try r.varint()
            guard len <= UInt64(n - k) else { throw StoreCorruption("runs longer than the column") }
            if len > 0 { span(v &+ d, d, Int(len)) }
            v = v &+ Int64(len) &* d
            k += Int(len)
        }
        guard k == n else { throw StoreCorruption("runs cover \(k) of \(n) values") }
    }

    /// A chunk's write times, one value per run of equal times: the constant and runs
    /// encodings decode straight into runs (a run of zero deltas is one run), the others
    /// through `decodeDoubles`. Throws `StoreCorruption` as `decodeDoubles` does.
    static func decodeWriteTimes(_ bytes: UnsafeRawBufferPointer, count n: Int) throws -> WriteTimes {
        var r = ByteReader(bytes)
        let tag = try r.byte()
        var out = WriteTimes()
        switch tag {
        case 2:
            out = WriteTimes(repeating: Double(bitPattern: try r.u64()), count: n)
        case 4, 5:
            var scale = 1.0
            if tag == 4 {
                let d = Int(try r.byte())
                guard d < pow10.count else { throw StoreCorruption("bad decimal scale \(d)") }
                scale = pow10[d]
            }
            let decimal = tag == 4
            @inline(__always) func value(_ v: Int64) -> Double { decimal ? Double(v) / scale : Double(bitPattern: UInt64(bitPattern: v)) }
            try decodeRunSpans(&r, n) { first, d, len in
                if d == 0 { out.append(value(first), count: len) } else { for j in 0..<len { out.append(value(first &+ Int64(j) &* d)) } }
            }
        default:
            return WriteTimes(try decodeDoubles(&r, tag: tag, count: n, times: nil))
        }
        guard r.remaining == 0 else { throw StoreCorruption("write times of \(n) rows have \(r.remaining) bytes too many") }
        return out
    }
}

/// A store whose bytes do not decode: names what was wrong.
public struct StoreCorruption: Error, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { "corrupt recorded store: \(message)" }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    @inline(__always) mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// Appends `b` (takes it over when nothing was written yet).
    mutating func append(_ b: [UInt8]) {
        if bytes.isEmpty { bytes = b } else { bytes.append(contentsOf: b) }
    }

    @inline(__always) mutating func u64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always) mutating func varint(_ v: UInt64) {
        var x = v
        while x >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: x) | 0x80)
            x >>= 7
        }
        bytes.append(UInt8(x))
    }

    @inline(__always) mutating func zigzag(_ v: Int64) {
        varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { u in
            varint(UInt64(u.count))
            bytes.append(contentsOf: u)
        }
    }
}

struct ByteReader {
    let base: UnsafeRawBufferPointer
    var offset = 0

    init(_ base: UnsafeRawBufferPointer) { self.base = base }

    var remaining: Int { base.count - offset }

    @inline(__always) mutating func byte() throws -> UInt8 {
        guard offset < base.count else { throw StoreCorruption("blob ends early") }
        defer { offset += 1 }
        return base[offset]
    }

    mutating func u64() throws -> UInt64 {
        guard offset + 8 <= base.count else { throw StoreCorruption("blob ends early") }
        var v: UInt64 = 0
        withUnsafeMutableBytes(of: &v) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: base[offset..<offset + 8])) }
        offset += 8
        return UInt64(littleEndian: v)
    }

    @inline(__always) mutating func varint() throws -> UInt64 {
        var shift: UInt64 = 0
        var out: UInt64 = 0
        while true {
            guard offset < base.count else { throw StoreCorruption("blob ends early") }
            let b = base[offset]
            offset += 1
            out |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return out }
            shift += 7
            if shift > 63 { throw StoreCorruption("varint too long") }
        }
    }

    /// Decodes `n` zigzag varints, calling `body(index, value)`; false when the blob ends early.
    @inline(__always)
    mutating func decodeZigzagDeltas(_ n: Int, _ body: (Int, Int64) -> Void) -> Bool {
        guard let p = base.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return n == 0 }
        let count = base.count
        var o = offset
        var k = 0
        while k < n {
            var u: UInt64
            if o + 10 <= count {
                // Fast path: no bounds checks inside one varint; up to 3 bytes without a
                // data-dependent branch.
                let w = UInt32(littleEndian: UnsafeRawPointer(p + o).loadUnaligned(as: UInt32.self))
                let stops = ~w & 0x80_8080
                if stops != 0 {
                    let len = (stops.trailingZeroBitCount + 1) >> 3
                    let all = (w & 0x7F) | (w >> 1) & (0x7F << 7) | (w >> 2) & (0x7F << 14)
                    u = UInt64(all & ((1 << (7 * len)) - 1))
                    o += len
                    body(k, Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1))))
                    k += 1
                    continue
                }
                var b = p[o]; o += 1
                u = UInt64(b & 0x7F)
                if b >= 0x80 {
                    var shift: UInt64 = 7
                    repeat {
                        b = p[o]; o += 1
                        u |= UInt64(b & 0x7F) << shift
                        shift += 7
                    } while b >= 0x80 && shift < 64
                }
            } else {
                u = 0
                var shift: UInt64 = 0
                while true {
                    guard o < count else { return false }
                    let b = p[o]; o += 1
                    u |= UInt64(b & 0x7F) << shift
                    if b < 0x80 { break }
                    shift += 7
                    if shift > 63 { return false }
                }
            }
            body(k, Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1))))
            k += 1
        }
        offset = o
        return true
    }

    @inline(__always) mutating func zigzag() throws -> Int64 {
        let u = try varint()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    mutating func string() throws -> String {
        let n = Int(try varint())
        guard n <= remaining else { throw StoreCorruption("string runs past the blob") }
        let s = String(decoding: UnsafeRawBufferPointer(rebasing: base[offset..<offset + n]), as: UTF8.self)
        offset += n
        return s
    }
}
