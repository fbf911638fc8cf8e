import Foundation
import SensorKitModel

// Column blobs of the recorded store: one BLOB per column per chunk.
//
// Every blob starts with a one-byte encoding tag; all numbers are little-endian.
// - double: 0 raw Float64s · 1 decimal-scaled (byte d, then zigzag varint deltas of
//   round(v·10^d), used only when every value comes back bit-exact) · 2 constant (one Float64)
// - int: 0 zigzag varint deltas · 2 constant (one Int64)
// - bool: 0 one byte per value
// - string: 0 varint length + UTF-8 per value · 1 dictionary (varint n, n strings, varint index per value)
// - value: 0 one `FieldValue` per value in the binary form below
// Presence masks are a separate BLOB of one byte per row (NULL when every value is present).

enum ColumnCodec {
    // MARK: Writing

    static func encode(_ data: ColumnData) -> [UInt8] {
        var w = ByteWriter()
        switch data {
        case .double(let v): encodeDoubles(v, into: &w)
        case .int(let v): encodeInts(v, into: &w)
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

    static func encodeDoubles(_ v: [Double], into w: inout ByteWriter) {
        if let first = v.first, v.allSatisfy({ $0.bitPattern == first.bitPattern }) {
            w.byte(2)
            w.u64(first.bitPattern)
            return
        }
        // Sampled values suggest the decimals; a value needing more raises them and retries.
        var scaleDigits = decimalScale(v)
        while let d = scaleDigits {
            var failed: Double? = nil
            let out = [UInt8](unsafeUninitializedCapacity: v.count * 10 + 2) { buf, done in
                buf[0] = 1
                buf[1] = UInt8(d)
                let r = v.withUnsafeBufferPointer { scaledDeltas($0, digits: d, into: buf.baseAddress! + 2) }
                failed = r.failed
                done = r.failed == nil ? r.count + 2 : 0
            }
            if let x = failed {
                guard let need = decimals(x), need > d else { break }
                scaleDigits = need
                continue
            }
            if out.count < v.count * 8 {
                w.append(out)
                return
            }
            break
        }
        w.bytes.reserveCapacity(w.bytes.count + v.count * 8 + 1)
        w.byte(0)
        v.withUnsafeBytes { w.bytes.append(contentsOf: $0) }
    }

    /// Writes the zigzag varints of the deltas of `round(v·10^d)` at `out` (room for 10
    /// bytes a value). Returns the bytes written, or the first value that would not come
    /// back bit-exact (then the output is unusable).
    static func scaledDeltas(_ v: UnsafeBufferPointer<Double>, digits d: Int, into out: UnsafeMutablePointer<UInt8>) -> (count: Int, failed: Double?) {
        let n = v.count
        return withUnsafeTemporaryAllocation(of: Int64.self, capacity: max(n, 1)) { ints -> (count: Int, failed: Double?) in
            if let bad = scaledIntegers(v, digits: d, into: ints.baseAddress!) { return (0, v[bad]) }
            var prev: Int64 = 0
            var o = 0
            for k in 0..<n {
                o += writeZigzag(ints[k] &- prev, out + o)
                prev = ints[k]
            }
            return (o, nil)
        }
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
        if let first = v.first, v.count > 1, v.allSatisfy({ $0 == first }) {
            w.byte(2)
            w.u64(UInt64(bitPattern: first))
            return
        }
        let out = [UInt8](unsafeUninitializedCapacity: v.count * 10 + 1) { buf, done in
            let p = buf.baseAddress!
            p[0] = 0
            var o = 1
            var prev: Int64 = 0
            for x in v {
                o += writeZigzag(x &- prev, p + o)
                prev = x
            }
            done = o
        }
        w.append(out)
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

    static func encodePresent(_ present: [Bool]?) -> [UInt8]? {
        guard let p = present, p.contains(false) else { return nil }
        return p.map { $0 ? 1 : 0 }
    }

    // MARK: Reading

    static func decode(_ bytes: UnsafeRawBufferPointer, kind: ColumnKind, count n: Int) throws -> ColumnData {
        var r = ByteReader(bytes)
        let tag = try r.byte()
        switch kind {
        case .double:
            switch tag {
            case 0:
                guard r.remaining == n * 8 else { throw StoreCorruption("double column of \(n) rows has \(r.remaining) bytes") }
                let out = [Double](unsafeUninitializedCapacity: n) { buf, done in
                    if n > 0 { UnsafeMutableRawBufferPointer(buf).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[1...])) }
                    done = n
                }
                return .double(out)
            case 1:
                let d = Int(try r.byte())
                guard d < pow10.count else { throw StoreCorruption("bad decimal scale \(d)") }
                let scale = pow10[d]
                var failed = false
                let out = [Double](unsafeUninitializedCapacity: n) { buf, done in
                    var prev: Int64 = 0
                    failed = !r.decodeZigzagDeltas(n) { k, v in
                        prev = prev &+ v
                        buf[k] = Double(prev) / scale
                    }
                    done = failed ? 0 : n
                }
                if failed { throw StoreCorruption("blob ends early") }
                return .double(out)
            case 2:
                return .double([Double](repeating: Double(bitPattern: try r.u64()), count: n))
            default: throw StoreCorruption("unknown double encoding \(tag)")
            }
        case .int:
            switch tag {
            case 0:
                var failed = false
                let out = [Int64](unsafeUninitializedCapacity: n) { buf, done in
                    var prev: Int64 = 0
                    failed = !r.decodeZigzagDeltas(n) { k, v in
                        prev = prev &+ v
                        buf[k] = prev
                    }
                    done = failed ? 0 : n
                }
                if failed { throw StoreCorruption("blob ends early") }
                return .int(out)
            case 2:
                return .int([Int64](repeating: Int64(bitPattern: try r.u64()), count: n))
            default: throw StoreCorruption("unknown int encoding \(tag)")
            }
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

    static func decodeDoubles(_ bytes: UnsafeRawBufferPointer, count n: Int) throws -> [Double] {
        guard case .double(let v) = try decode(bytes, kind: .double, count: n) else { return [] }
        return v
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
