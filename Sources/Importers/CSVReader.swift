import Foundation
import StudyStore
#if canImport(Glibc)
import Glibc
#endif

/// A streaming RFC 4180 reader over bytes: no per-row String, fields are byte ranges in
/// the reader's window (valid until the next `nextRecord()`).
final class CSVReader {
    let path: String
    let window: ByteWindow
    /// 1-based line number where the current record starts.
    private(set) var line = 0
    /// 1-based line number where the next record starts.
    private(set) var nextLine = 1
    /// Field i is `window.base[fieldStart[i]..<fieldEnd[i]]`; `fieldQuoted[i]` when it was
    /// quoted (then `""` inside stands for `"`). Raw buffers: no per-field bookkeeping cost.
    private(set) var fieldStart: UnsafeMutablePointer<Int>
    private(set) var fieldEnd: UnsafeMutablePointer<Int>
    private(set) var fieldQuoted: UnsafeMutablePointer<Bool>
    private var fieldCapacity = 256
    private(set) var fieldCount = 0

    /// `firstLine`: the line number of the source's first byte (a reader of the rest of a
    /// file; a reader from line 1 passes over a UTF-8 byte-order mark).
    init(path: String, source: ByteSource, firstLine: Int = 1) {
        self.path = path
        nextLine = firstLine
        window = ByteWindow(source, atFileStart: firstLine == 1)
        fieldStart = .allocate(capacity: 256)
        fieldEnd = .allocate(capacity: 256)
        fieldQuoted = .allocate(capacity: 256)
    }

    deinit {
        fieldStart.deallocate()
        fieldEnd.deallocate()
        fieldQuoted.deallocate()
    }

    @inline(__always) private func addField(_ n: inout Int, _ s: Int, _ e: Int, _ q: Bool) {
        if n == fieldCapacity { grow() }
        fieldStart[n] = s
        fieldEnd[n] = e
        fieldQuoted[n] = q
        n += 1
    }

    private func grow() {
        let c = fieldCapacity * 2
        let a = UnsafeMutablePointer<Int>.allocate(capacity: c), b = UnsafeMutablePointer<Int>.allocate(capacity: c)
        let q = UnsafeMutablePointer<Bool>.allocate(capacity: c)
        a.update(from: fieldStart, count: fieldCapacity)
        b.update(from: fieldEnd, count: fieldCapacity)
        q.update(from: fieldQuoted, count: fieldCapacity)
        fieldStart.deallocate(); fieldEnd.deallocate(); fieldQuoted.deallocate()
        fieldStart = a; fieldEnd = b; fieldQuoted = q
        fieldCapacity = c
    }

    /// When set: the exact bytes (quotes included) the last field of most records holds.
    /// A record whose text after its first `tailAfter` fields is exactly these bytes and a
    /// line end takes them as its last field without scanning them (MyHeartCounts repeats
    /// a long device description on every row).
    var expectedTail: [UInt8] = []
    var tailAfter = 0

    /// Why the file is not CSV text, when its first bytes are not text (compressed, or
    /// binary): "the file is not UTF-8 text (binary data at byte 3)"; nil otherwise.
    var contentProblem: String? { window.contentProblem }

    /// Why the current record (a header line, read just before) is not text: nil when every
    /// field is UTF-8 text without control bytes; otherwise what the file is ("the file is
    /// not UTF-8 text (binary data at byte 3)", "… is zstd-compressed"), to say instead of
    /// printing the header's names. Only the header is checked: rows are checked by the
    /// parsing of their fields, and an error quoting one escapes its control bytes.
    var headerProblem: String? {
        for i in 0..<fieldCount where LeadingBytes(bytes(i), complete: true) != .text {
            return contentProblem ?? "the header line is not UTF-8 text (binary data in column \(i + 1))"
        }
        return nil
    }

    /// The error to throw for a malformed record: what the file is instead when it is not
    /// text (a binary file fails as a malformed CSV file; its bytes are never printed).
    private func malformed(line: Int, field: String? = nil, _ message: String) -> ImportError {
        if let problem = contentProblem { return ImportError(file: path, "not a CSV text file: \(problem)") }
        return ImportError(file: path, line: line, field: field, message)
    }

    /// Reads the next record; false at the end of input. Blank lines are skipped.
    func nextRecord() throws -> Bool {
        while true {
            if try parseRecord() {
                if fieldCount == 1 && fieldEnd[0] == fieldStart[0] && !fieldQuoted[0] { continue }
                return true
            }
            return false
        }
    }

    private func parseRecord() throws -> Bool {
        while true {
            var n = 0
            fieldCount = 0
            let w = window
            if w.start >= w.end {
                if !(try w.refill()) { return false }
            }
            let p = w.base
            let end = w.end
            var i = w.start
            var newlines = 0
            var complete = false
            record: while true {
                if n == tailAfter && n > 0 && !expectedTail.isEmpty {
                    let k = expectedTail.count
                    if i + k < end && p[i + k] == UInt8(ascii: "\n")
                        && expectedTail.withUnsafeBufferPointer({ memcmp($0.baseAddress!, p + i, k) == 0 }) {
                        let quoted = p[i] == UInt8(ascii: "\"")
                        addField(&n, quoted ? i + 1 : i, quoted ? i + k - 1 : i + k, quoted)
                        i += k + 1
                        complete = true
                        break record
                    }
                }
                // One field starting at i.
                if i < end && p[i] == UInt8(ascii: "\"") {
                    let s = i + 1
                    var j = s
                    var closed = false
                    while j < end {
                        // Jump to the next quote; count the line breaks skipped.
                        if let q = memchr(p + j, Int32(UInt8(ascii: "\"")), end - j) {
                            let qi = UnsafeMutablePointer<UInt8>(q.assumingMemoryBound(to: UInt8.self)) - p
                            var k = j
                            while let nl = memchr(p + k, 10, qi - k) {
                                newlines += 1
                                k = UnsafeMutablePointer<UInt8>(nl.assumingMemoryBound(to: UInt8.self)) - p + 1
                            }
                            j = qi
                        } else {
                            j = end
                            break
                        }
                        let c = p[j]
                        if c == UInt8(ascii: "\"") {
                            if j + 1 < end && p[j + 1] == UInt8(ascii: "\"") { j += 2; continue }
                            if j + 1 >= end && !w.eof { break }
                            closed = true
                            break
                        }
                        if c == UInt8(ascii: "\n") { newlines += 1 }
                        j += 1
                    }
                    if !closed {
                        if w.eof { throw malformed(line: nextLine, "a quoted field is not closed: expected a closing '\"' before the end of the file") }
                        break record
                    }
                    addField(&n, s, j, true)
                    i = j + 1
                    if i >= end { if w.eof { complete = true }; break record }
                    let c = p[i]
                    if c == UInt8(ascii: ",") { i += 1; continue record }
                    if c == UInt8(ascii: "\n") { i += 1; complete = true; break record }
                    if c == UInt8(ascii: "\r") {
                        if i + 1 >= end && !w.eof { break record }
                        i += (i + 1 < end && p[i + 1] == UInt8(ascii: "\n")) ? 2 : 1
                        complete = true
                        break record
                    }
                    throw malformed(line: nextLine + newlines, field: "#\(n)",
                                    "unexpected character after a closing quote: expected ',' or the end of the line")
                } else {
                    let s = i
                    while i < end {
                        let c = p[i]
                        if c == UInt8(ascii: ",") || c == UInt8(ascii: "\n") { break }
                        i += 1
                    }
                    if i >= end {
                        if !w.eof { break record }
                        var e = i
                        if e > s && p[e - 1] == UInt8(ascii: "\r") { e -= 1 }
                        addField(&n, s, e, false)
                        complete = true
                        break record
                    }
                    var e = i
                    if p[i] == UInt8(ascii: "\n") && e > s && p[e - 1] == UInt8(ascii: "\r") { e -= 1 }
                    addField(&n, s, e, false)
                    if p[i] == UInt8(ascii: ",") { i += 1; continue record }
                    i += 1
                    complete = true
                    break record
                }
            }
            if complete {
                fieldCount = n
                w.start = i
                line = nextLine
                nextLine += 1 + newlines
                return true
            }
            // The record runs past the window: read more and parse it again.
            if !(try w.refill()) {
                if w.start >= w.end { return false }
            }
        }
    }

    /// Fast path for runs of the common record of a batched stream: `fields` plain numbers
    /// (`-12.345`: no quotes, no exponent, ≤ 15 digits, each followed by `,`), then exactly
    /// `expectedTail` and `\n`. Reads up to `maxRows` such records and stops before the first
    /// other one (consuming nothing of it: the caller reads it with `nextRecord()`, which
    /// handles everything and reports errors). Field f of row r goes to `out[f][r]`, except
    /// `intField`, a plain whole number, which goes exactly to `ints[r]`. Returns the rows
    /// read; `line` is then the line of the last one. Only whole records in the window are
    /// read (0 when the next record is not complete in it, or is not of this shape).
    ///
    /// The value of a number is `Double(digits) / 10^decimals`, correctly rounded: the same
    /// double `NumberParser.double` gives for the same text.
    func fastNumericRows(_ fields: Int, intField: Int, out: UnsafePointer<UnsafeMutablePointer<Double>>,
                         ints: UnsafeMutablePointer<Int64>, maxRows: Int) -> Int {
        let k = expectedTail.count
        guard k > 0, tailAfter == fields, maxRows > 0 else { return 0 }
        let w = window
        let p = w.base
        let end = w.end
        var i = w.start
        var rows = 0
        NumberParser.exact.withUnsafeBufferPointer { pow10 in
            expectedTail.withUnsafeBufferPointer { tail in
                let tp = tail.baseAddress!
                record: while rows < maxRows {
                    let rowStart = i
                    for f in 0..<fields {
                        // p[end] is a 0 byte: the digit loops stop there.
                        let negative = p[i] == UInt8(ascii: "-")
                        if negative { i += 1 }
                        let s = i
                        var m: UInt64 = 0
                        Self.digits(p, &i, &m)
                        var digits = i - s
                        var decimals = 0
                        if p[i] == UInt8(ascii: ".") && f != intField {
                            i += 1
                            let fs = i
                            Self.digits(p, &i, &m)
                            decimals = i - fs
                            digits += decimals
                        }
                        guard i < end, p[i] == UInt8(ascii: ","), digits > 0, digits <= 15 else {
                            i = rowStart
                            break record
                        }
                        i += 1
                        if f == intField {
                            guard !negative else { i = rowStart; break record }
                            ints[rows] = Int64(m)
                        } else {
                            var v = Double(m)
                            if decimals > 0 { v /= pow10[decimals] }
                            out[f][rows] = negative ? -v : v
                        }
                    }
                    guard i + k < end, p[i + k] == UInt8(ascii: "\n"), memcmp(tp, p + i, k) == 0 else {
                        i = rowStart
                        break record
                    }
                    i += k + 1
                    rows += 1
                }
            }
        }
        guard rows > 0 else { return 0 }
        w.start = i
        line = nextLine + rows - 1
        nextLine += rows
        fieldCount = 0
        return rows
    }

    /// Fast path for rows of plain numbers (native sample files): `fields` numbers, each
    /// `-?digits[.digits][e±digits]` (`wholeNumber[f]`: `-?digits` only, ≤ 18 digits), with at most
    /// 19 significant digits, separated by `,` and ended by `\n` (or `\r\n`). Field f of row r
    /// goes to `targets[f] + 8r` (a Double, or an Int64 for whole numbers). Reads up to
    /// `maxRows` such records and stops before the first other one (an empty field, a quote,
    /// `nan`, a record not complete in the window…), consuming nothing of it: the caller
    /// reads it with `nextRecord()`, which handles everything and reports errors. Values are
    /// the ones `NumberParser.double`/`int` give for the same text (both correctly rounded).
    /// `repeating` (a field index, or -1): a field whose text often repeats the previous row's
    /// (a write time, shared by a whole write batch); when its bytes and the separator after
    /// them equal the previous row's, the previous value is copied instead of parsed again.
    /// Returns the rows read; `line` is then the line of the last one.
    func fastNumberRows(_ fields: Int, targets: UnsafePointer<UnsafeMutableRawPointer>, wholeNumber: UnsafePointer<Bool>,
                        repeating: Int = -1, maxRows: Int) -> Int {
        let w = window
        let (rows, next) = Self.numberRows(w.base, from: w.start, end: w.end, fields, targets: targets, wholeNumber: wholeNumber,
                                           repeating: repeating, maxRows: maxRows)
        guard rows > 0 else { return 0 }
        w.start = next
        line = nextLine + rows - 1
        nextLine += rows
        fieldCount = 0
        return rows
    }

    /// `fastNumberRows` over any bytes: the rows of plain numbers in `p[start..<end]` (`p[end]`
    /// must be a 0 byte), at most `maxRows`. Returns the rows read and the offset after the
    /// last of them (`start` when none). Safe on any thread (touches only its arguments).
    static func numberRows(_ p: UnsafeMutablePointer<UInt8>, from start: Int, end: Int, _ fields: Int,
                           targets: UnsafePointer<UnsafeMutableRawPointer>, wholeNumber: UnsafePointer<Bool>,
                           repeating: Int, maxRows: Int) -> (rows: Int, next: Int) {
        guard fields > 0, maxRows > 0 else { return (0, start) }
        var i = start
        var rows = 0
        // The previous row's text of field `repeating` with its separator: p[lastStart..<lastStart+lastCount].
        var lastStart = 0, lastCount = 0
        NumberParser.exact.withUnsafeBufferPointer { pow10 in
            record: while rows < maxRows {
                let rowStart = i
                for f in 0..<fields {
                    let out = targets[f] + 8 * rows
                    if f == repeating {
                        if lastCount > 0 && i + lastCount <= end && sameBytes(p + lastStart, p + i, lastCount) {
                            // Same text, same value; i stops at the separator, as after parsing.
                            out.storeBytes(of: (out - 8).load(as: UInt64.self), as: UInt64.self)
                            i += lastCount - 1
                        } else {
                            let s = i
                            guard plainNumber(p, &i, end: end, whole: wholeNumber[f], pow10: pow10.baseAddress!, into: out) else {
                                i = rowStart
                                break record
                            }
                            lastStart = s
                            lastCount = i < end ? i - s + 1 : 0
                        }
                    } else if !plainNumber(p, &i, end: end, whole: wholeNumber[f], pow10: pow10.baseAddress!, into: out) {
                        i = rowStart
                        break record
                    }
                    let c = p[i]
                    if f + 1 < fields {
                        guard c == UInt8(ascii: ",") else { i = rowStart; break record }
                        i += 1
                    } else if c == UInt8(ascii: "\n") {
                        i += 1
                    } else if c == UInt8(ascii: "\r") && i + 1 < end && p[i + 1] == UInt8(ascii: "\n") {
                        i += 2
                    } else {
                        i = rowStart
                        break record
                    }
                }
                rows += 1
            }
        }
        return (rows, i)
    }

    /// Whether the `n` bytes at `a` and `b` are equal (eight at a time; short texts such as
    /// a write time, where a `memcmp` call costs more than the comparison).
    @inline(__always)
    static func sameBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        var k = 0
        while k + 8 <= n {
            if UnsafeRawPointer(a + k).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(b + k).loadUnaligned(as: UInt64.self) { return false }
            k += 8
        }
        while k < n {
            if a[k] != b[k] { return false }
            k += 1
        }
        return true
    }

    /// One plain number at `p[i...]` (see `fastNumberRows`) stored at `out`; false (with `i`
    /// anywhere) when the text is not one. Reads only below `end` or the 0 byte at `p[end]`.
    @inline(__always)
    static func plainNumber(_ p: UnsafeMutablePointer<UInt8>, _ i: inout Int, end: Int, whole: Bool,
                            pow10: UnsafePointer<Double>, into out: UnsafeMutableRawPointer) -> Bool {
        let negative = p[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let start = i
        var m: UInt64 = 0
        while p[i] == UInt8(ascii: "0") { i += 1 }
        var s = i
        eightDigits(p, &i, end: end, &m)
        digits(p, &i, &m)
        var significant = i - s
        var scale = 0
        var dot = false
        if p[i] == UInt8(ascii: ".") && !whole {
            dot = true
            i += 1
            let z = i
            if significant == 0 { while p[i] == UInt8(ascii: "0") { i += 1 } }
            let zeros = i - z
            s = i
            eightDigits(p, &i, end: end, &m)
            digits(p, &i, &m)
            significant += i - s
            scale = zeros + (i - s)
        }
        guard i - start > (dot ? 1 : 0), significant <= 19 else { return false }
        var e10 = -scale
        let c = p[i]
        if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            if whole { return false }
            i += 1
            var eneg = false
            if p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+") { eneg = p[i] == UInt8(ascii: "-"); i += 1 }
            let es = i
            var e = 0
            while p[i] &- 48 < 10 && i - es < 5 { e = e * 10 + Int(p[i] &- 48); i += 1 }
            guard i > es, p[i] &- 48 >= 10 else { return false }
            e10 += eneg ? -e : e
        }
        if whole {
            guard significant <= 18 else { return false }
            let v = Int64(m)
            out.storeBytes(of: negative ? -v : v, as: Int64.self)
            return true
        }
        var v: Double
        if m == 0 {
            v = 0
        } else if m < (1 << 53) && e10 >= -22 && e10 <= 22 {
            v = Double(m)
            if e10 < 0 { v /= pow10[-e10] } else if e10 > 0 { v *= pow10[e10] }
        } else if let x = EiselLemire.double(m, e10) {
            v = x
        } else {
            return false
        }
        out.storeBytes(of: negative ? -v : v, as: Double.self)
        return true
    }

    /// Appends runs of eight decimal digits at `p[i...]` to `m` (mod 2^64), eight at a time
    /// (SWAR: one 8-byte load, no per-digit loop), while eight bytes before `end` are all digits.
    @inline(__always)
    static func eightDigits(_ p: UnsafeMutablePointer<UInt8>, _ i: inout Int, end: Int, _ m: inout UInt64) {
        while i + 8 <= end {
            let v = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self))
            // All eight bytes in '0'...'9'?
            guard (v & 0xF0F0_F0F0_F0F0_F0F0) | (((v &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4) == 0x3333_3333_3333_3333 else { return }
            var x = v &- 0x3030_3030_3030_3030
            x = (x &* 10) &+ (x >> 8)
            x = (((x & 0x0000_00FF_0000_00FF) &* (100 &+ (1_000_000 << 32)))
                 &+ (((x >> 16) & 0x0000_00FF_0000_00FF) &* (1 &+ (10_000 << 32)))) >> 32
            m = m &* 100_000_000 &+ x
            i += 8
        }
    }

    /// Appends the decimal digits at `p[i...]` to `m` (mod 2^64), two at a time (half the
    /// multiply chain); stops at the first other byte. The byte after a digit is always
    /// readable (the window ends with a 0 sentinel).
    @inline(__always)
    static func digits(_ p: UnsafeMutablePointer<UInt8>, _ i: inout Int, _ m: inout UInt64) {
        while true {
            let d0 = p[i] &- 48
            if d0 >= 10 { return }
            let d1 = p[i + 1] &- 48
            if d1 >= 10 {
                m = m &* 10 &+ UInt64(d0)
                i += 1
                return
            }
            m = m &* 100 &+ UInt64(d0 &* 10 &+ d1)
            i += 2
        }
    }

    // MARK: Field access

    @inline(__always) func isEmpty(_ i: Int) -> Bool { fieldEnd[i] == fieldStart[i] && !fieldQuoted[i] }

    /// The field as text (quotes undone).
    func string(_ i: Int) -> String {
        let s = fieldStart[i], e = fieldEnd[i]
        let buf = UnsafeBufferPointer(start: window.base + s, count: e - s)
        guard fieldQuoted[i], buf.contains(UInt8(ascii: "\"")) else { return String(decoding: buf, as: UTF8.self) }
        // Inside quotes, `""` stands for `"`.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(buf.count)
        var k = 0
        while k < buf.count {
            bytes.append(buf[k])
            k += buf[k] == UInt8(ascii: "\"") && k + 1 < buf.count && buf[k + 1] == UInt8(ascii: "\"") ? 2 : 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The field as a message quotes it (`ImportError.excerpt` of `string(i)`).
    func quoted(_ i: Int) -> String { ImportError.excerpt(string(i)) }

    /// The field as text, checked to be UTF-8: a field that is not is an error naming the
    /// file, line and column (`string(i)` would put U+FFFD in its place). Only a field holding
    /// a byte ≥ 0x80 is looked at byte by byte. `column`: the column's name for the error.
    func text(_ i: Int, column: String? = nil) throws -> String {
        if let problem = LeadingBytes.notUTF8(bytes(i)) {
            throw ImportError(file: path, line: line, field: column, "the field is \(problem): expected UTF-8 text")
        }
        return string(i)
    }

    /// The raw bytes of field i.
    @inline(__always) func bytes(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: window.base + fieldStart[i], count: fieldEnd[i] - fieldStart[i])
    }

    /// Progress: bytes of the file consumed.
    var fileBytesRead: Int64 { window.source.fileBytesRead }
}

/// Number parsing over bytes, without Strings.
enum NumberParser {
    static let exact: [Double] = (0...22).map { Foundation.pow(10.0, Double($0)) }

    /// A decimal number (`-12.5`, `1.5e-3`, `nan`, `inf`); nil when the bytes are not one.
    /// Exact (correctly rounded): a fast path for ≤ 15 significant digits, Eisel-Lemire up to
    /// 19, `strtod` for the rest.
    @inline(__always)
    static func double(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        let n = b.count
        guard n > 0, let p = b.baseAddress else { return nil }
        var i = 0
        var negative = false
        if p[0] == UInt8(ascii: "-") { negative = true; i = 1 } else if p[0] == UInt8(ascii: "+") { i = 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var sigDigits = 0
        var fracDigits = 0
        var sawDot = false
        while i < n {
            let c = p[i]
            let d = c &- UInt8(ascii: "0")
            if d < 10 {
                if mantissa == 0 && d == 0 {
                    // leading zeros are not significant
                } else {
                    sigDigits += 1
                }
                if sigDigits <= 19 { mantissa = mantissa &* 10 &+ UInt64(d) } else { return slow(b) }
                digits += 1
                if sawDot { fracDigits += 1 }
            } else if c == UInt8(ascii: ".") && !sawDot {
                sawDot = true
            } else {
                break
            }
            i += 1
        }
        guard digits > 0 else { return special(b) }
        var exp10 = -fracDigits
        if i < n {
            let c = p[i]
            guard c == UInt8(ascii: "e") || c == UInt8(ascii: "E") else { return nil }
            i += 1
            var eneg = false
            if i < n && (p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+")) { eneg = p[i] == UInt8(ascii: "-"); i += 1 }
            var e = 0
            var edigits = 0
            while i < n {
                let d = p[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                if e < 100_000 { e = e * 10 + Int(d) }
                edigits += 1
                i += 1
            }
            guard edigits > 0 else { return nil }
            exp10 += eneg ? -e : e
        }
        if sigDigits <= 15 && mantissa < (1 << 53) && exp10 >= -22 && exp10 <= 22 {
            var v = Double(mantissa)
            if exp10 < 0 { v /= exact[-exp10] } else if exp10 > 0 { v *= exact[exp10] }
            return negative ? -v : v
        }
        if mantissa == 0 { return negative ? -0.0 : 0.0 }
        if let v = EiselLemire.double(mantissa, exp10) { return negative ? -v : v }
        return slow(b)
    }

    private static func special(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        let s = String(decoding: b, as: UTF8.self).lowercased()
        switch s {
        case "nan", "+nan", "-nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: return nil
        }
    }

    private static func slow(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        // Validate the shape first: strtod accepts more (hex, leading spaces) than we do.
        let n = b.count
        guard n < 512, let p = b.baseAddress else { return nil }
        var i = 0
        while i < n {
            let c = p[i]
            if !((c >= 48 && c <= 57) || c == 46 || c == 101 || c == 69 || c == 45 || c == 43) { return nil }
            i += 1
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: n + 1) { tmp -> Double? in
            let t = tmp.baseAddress!
            UnsafeMutableRawPointer(t).copyMemory(from: p, byteCount: n)
            t[n] = 0
            var endp: UnsafeMutablePointer<CChar>? = nil
            let v = strtod(t, &endp)
            guard let e = endp, e - t == n else { return nil }
            return v
        }
    }

    /// A whole number (optionally signed); values above Int64.max up to UInt64.max keep their bit pattern.
    @inline(__always)
    static func int(_ b: UnsafeBufferPointer<UInt8>) -> Int64? {
        let n = b.count
        guard n > 0, let p = b.baseAddress else { return nil }
        var i = 0
        var negative = false
        if p[0] == UInt8(ascii: "-") { negative = true; i = 1 } else if p[0] == UInt8(ascii: "+") { i = 1 }
        guard i < n else { return nil }
        var v: UInt64 = 0
        while i < n {
            let d = p[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            v = a
            i += 1
        }
        if negative {
            guard v <= UInt64(Int64.max) + 1 else { return nil }
            return v == UInt64(Int64.max) + 1 ? Int64.min : -Int64(v)
        }
        return Int64(bitPattern: v)
    }
}
