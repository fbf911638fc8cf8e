import Foundation
import SensorKitModel
import StudyStore

/// MyDataHelps sample items of array-shaped sensors whose fields are all plain numbers
/// (accelerometer, rotation rate, ambient pressure…) read straight from the bytes, without a
/// `FieldValue` or a String per element: `{"timestamp": w, "sample": [{…}, {…}, …]}` where every
/// element names each field once by Apple's property path (`acceleration.x`, `startDate`)
/// with a plain number. Anything else — another key, a missing or repeated field, a string
/// date, `NaN`, a `{value, unit}` measurement, an implausible date, a whole number past 2^53 —
/// leaves the item to the general reader (`SampleMapper`), which reads it or names the problem,
/// so the fast path changes no result and no message.
final class MDHFastItems {
    /// A key of an element object: its bytes `names[from..<from+count]`, and a value slot, or
    /// (slot -1) the keys `nested..<nested+nestedCount` of an object inside it. Plain values
    /// only, so the parser touches no reference counts.
    private struct Key {
        var from: Int
        var count: Int
        var slot: Int
        var nested = 0
        var nestedCount = 0
    }

    private let sensor: Sensor
    private let fields: [FieldSchema]
    /// Slot 0: the row time; slot 1 + k: field k.
    private let slots: Int
    /// Per slot: a whole number (an int field).
    private let whole: UnsafeMutablePointer<Bool>
    /// Keys of an element object: the top level first (`topCount`), then the nested ones.
    private let keys: UnsafeMutablePointer<Key>
    private let topCount: Int
    private let names: UnsafeMutablePointer<UInt8>
    /// Rows of `slots` 8-byte values, row-major.
    private var rows: UnsafeMutablePointer<UInt64>
    private var capacity = 4_096
    /// The layout of the last element read key by key, when it holds no line break: the text
    /// around its numbers (`{"acceleration": {"x": `, `, "y": `, …, `}`) in `templateBytes`,
    /// segment k at `templateFrom[k]..<templateFrom[k + 1]`, number k filling slot
    /// `templateSlot[k]`. An element with exactly that text around its numbers is read by
    /// comparing it (`elementLike`), not key by key; any other by keys, which makes it the template.
    private let templateBytes: UnsafeMutablePointer<UInt8>
    private let templateCapacity = 4_096
    private let templateFrom: UnsafeMutablePointer<Int>
    private let templateSlot: UnsafeMutablePointer<Int>
    private var hasTemplate = false
    /// The text of the longest item `read` so far, bytes.
    private(set) var largestItemBytes = 0
    /// What an item's `timestamp` is divided by to give seconds since 1970: 1000 for a file
    /// whose items are in milliseconds (`MDHItemTimes`, decided before the first fast read).
    var timestampDivisor = 1.0

    /// Nil when `sensor`'s items do not have the plain form.
    init?(sensor: Sensor) {
        let info = sensor.info
        guard info.shape == .array, let rowTime = info.rowTimeField, rowTime.type == .date else { return nil }
        let plain: Set<FieldType> = [.double, .duration, .absoluteTime, .date, .int]
        guard info.columnFields.allSatisfy({ plain.contains($0.type) }), info.columnFields.count < 63 else { return nil }
        // Apple's property paths, one or two keys deep, grouped by their first key.
        var top: [(name: [UInt8], slot: Int, nested: [([UInt8], Int)])] = []
        for (slot, path) in ([rowTime.appleName] + info.columnFields.map(\.appleName)).enumerated() {
            let parts = path.split(separator: ".").map { Array($0.utf8) }
            guard parts.count == 1 || parts.count == 2 else { return nil }
            if let k = top.firstIndex(where: { $0.name == parts[0] }) {
                guard parts.count == 2, top[k].slot < 0, !top[k].nested.contains(where: { $0.0 == parts[1] }) else { return nil }
                top[k].nested.append((parts[1], slot))
            } else {
                top.append(parts.count == 1 ? (parts[0], slot, []) : (parts[0], -1, [(parts[1], slot)]))
            }
        }
        self.sensor = sensor
        fields = info.columnFields
        slots = 1 + fields.count
        whole = .allocate(capacity: slots)
        whole.initialize(repeating: false, count: slots)
        for (k, f) in fields.enumerated() where f.type == .int { whole[k + 1] = true }
        var table: [Key] = []
        var bytes: [UInt8] = []
        func key(_ name: [UInt8], _ slot: Int) -> Key {
            defer { bytes += name }
            return Key(from: bytes.count, count: name.count, slot: slot)
        }
        for t in top { table.append(key(t.name, t.slot)) }
        for (k, t) in top.enumerated() where !t.nested.isEmpty {
            table[k].nested = table.count
            table[k].nestedCount = t.nested.count
            for (name, slot) in t.nested { table.append(key(name, slot)) }
        }
        topCount = top.count
        keys = .allocate(capacity: table.count)
        keys.initialize(from: table, count: table.count)
        names = .allocate(capacity: max(bytes.count, 1))
        names.initialize(from: bytes, count: bytes.count)
        rows = .allocate(capacity: capacity * slots)
        templateBytes = .allocate(capacity: templateCapacity)
        templateFrom = .allocate(capacity: slots + 2)
        templateSlot = .allocate(capacity: slots + 1)
    }

    deinit {
        templateBytes.deallocate()
        templateFrom.deallocate()
        templateSlot.deallocate()
        rows.deallocate()
        whole.deallocate()
        keys.deallocate()
        names.deallocate()
    }

    /// Appends the rows of the item at the reader's position (blanks skipped) to `buffer`
    /// (a buffer of this sensor), consuming it; false, nothing consumed or appended, when the
    /// item is not of the plain form.
    func read(_ reader: JSONReader, into buffer: StreamBuffer) throws -> Bool {
        let window = reader.window
        while true {
            switch parse(window.base, window.start, window.end) {
            case .item(let end, let lines, let n, let w):
                largestItemBytes = max(largestItemBytes, end - window.start)
                window.start = end
                reader.skippedLines(lines)
                append(rows: n, writeTime: w, to: buffer)
                return true
            case .notPlain:
                return false
            case .full:
                grow()
            case .cutShort:
                // Read on (the window grows to hold the item) and start the item again.
                guard try window.refill() else { return false }
            }
        }
    }

    /// What `readRun` read: `items` plain items (their row counts, in order), ending at
    /// `end` (just after the last one), with `lines` line breaks before `end`.
    struct Run {
        var items: [Int] = []
        var end = 0
        var lines = 0
    }

    /// Reads plain items `p[from...]`, `p[from]` the start of one, separated by ',' (and
    /// blanks), appending their rows to `buffer`, until one is not plain or not whole before
    /// `end` (`p[end]` is 0), the array ends, or an item ends at `stopAfter` or later.
    /// Touches only these bytes, never the reader: another thread's part of the window
    /// (`MDHPipeline`'s second reader).
    func readRun(_ p: UnsafeMutablePointer<UInt8>, from: Int, end: Int, stopAfter: Int, into buffer: StreamBuffer) -> Run {
        var run = Run(end: from)
        var i = from
        var lines = 0
        while true {
            switch parse(p, i, end) {
            case .item(let itemEnd, let itemLines, let n, let w):
                append(rows: n, writeTime: w, to: buffer)
                run.items.append(n)
                run.lines += lines + itemLines
                run.end = itemEnd
                if itemEnd >= stopAfter { return run }
                // The separator: blanks, ',', blanks.
                i = itemEnd
                lines = 0
                var comma = false
                while true {
                    let c = p[i]
                    if c == 0x20 || c == 0x09 || c == 0x0D { i += 1 } else if c == 0x0A { lines += 1; i += 1 }
                    else if c == UInt8(ascii: ","), !comma { comma = true; i += 1 } else { break }
                }
                guard comma else { return run }
            case .full:
                grow()
            case .notPlain, .cutShort:
                return run
            }
        }
    }

    private enum Outcome {
        case item(end: Int, lines: Int, rows: Int, writeTime: Double)
        case notPlain
        case cutShort
        /// More elements than `capacity` rows.
        case full
    }

    /// One item at `p[i...]`; `p[end]` is a 0 sentinel.
    private func parse(_ p: UnsafeMutablePointer<UInt8>, _ start: Int, _ end: Int) -> Outcome {
        // Locals, not properties: no exclusivity checks in the loops.
        let rows = self.rows, capacity = self.capacity, slots = self.slots, whole = self.whole
        let keys = self.keys, topCount = self.topCount, names = self.names
        let templateBytes = self.templateBytes, templateFrom = self.templateFrom, templateSlot = self.templateSlot
        var hasTemplate = self.hasTemplate
        defer { self.hasTemplate = hasTemplate }
        /// Where the numbers of the element being read by keys start and end, and their slots.
        var numberAt = [Int](repeating: 0, count: 2 * slots), numberSlot = [Int](repeating: 0, count: slots)
        var numbers = 0
        var i = start
        var lines = 0
        var n = 0
        var w = Double.nan
        var sawSample = false
        /// The outcome at a byte that does not fit: the end of the window, or not this form.
        func stop() -> Outcome { i >= end ? .cutShort : .notPlain }
        @inline(__always) func blanks() {
            while true {
                let c = p[i]
                if c == 0x20 || c == 0x09 || c == 0x0D { i += 1 } else if c == 0x0A { lines += 1; i += 1 } else { return }
            }
        }
        /// A key in quotes and its ':'; its bytes p[from..<to] (no escapes).
        @inline(__always) func key() -> (from: Int, to: Int)? {
            guard p[i] == UInt8(ascii: "\"") else { return nil }
            i += 1
            let from = i
            while p[i] != UInt8(ascii: "\"") {
                if p[i] == UInt8(ascii: "\\") || p[i] == 0 { return nil }
                i += 1
            }
            let to = i
            i += 1
            blanks()
            guard p[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            blanks()
            return (from, to)
        }
        @inline(__always) func matches(_ k: (from: Int, to: Int), _ bytes: [UInt8]) -> Bool {
            bytes.count == k.to - k.from && bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, p + k.from, bytes.count) == 0 }
        }
        /// The slot-table index of key `k` among `count` keys from `first`; -1 when none.
        @inline(__always) func find(_ k: (from: Int, to: Int), _ first: Int, _ count: Int) -> Int {
            let length = k.to - k.from
            for e in first..<first + count where keys[e].count == length && memcmp(names + keys[e].from, p + k.from, length) == 0 {
                return e
            }
            return -1
        }
        return NumberParser.exact.withUnsafeBufferPointer { pow10 -> Outcome in
            /// A plain number into row `row`, slot `s`.
            @inline(__always) func number(_ row: Int, _ s: Int) -> Bool {
                let at = i
                let out = rows + row * slots + s
                guard p[i] == UInt8(ascii: "-") || p[i] &- 48 < 10,
                      CSVReader.plainNumber(p, &i, end: end, whole: whole[s], pow10: pow10.baseAddress!, into: out) else { return false }
                if whole[s] {
                    // The general reader takes whole numbers through a double.
                    return Int64(bitPattern: out.pointee).magnitude <= 1 << 53
                }
                // "-0" is the integer 0 to the general reader, -0.0 here.
                if out.pointee == (-0.0 as Double).bitPattern {
                    var k = at
                    while k < i, p[k] != UInt8(ascii: "."), p[k] | 0x20 != UInt8(ascii: "e") { k += 1 }
                    return k < i
                }
                return true
            }
            @inline(__always) func noteNumber(_ at: Int, _ slot: Int) {
                numberAt[2 * numbers] = at
                numberAt[2 * numbers + 1] = i
                numberSlot[numbers] = slot
                numbers += 1
            }
            /// One element object into row `row`: like the template when it is, else by keys.
            @inline(__always) func element(_ row: Int) -> Bool {
                if hasTemplate {
                    let from = i
                    if elementLike(row) { return true }
                    i = from
                }
                return elementByKeys(row)
            }
            /// One element object laid out as the template into row `row`; false (`i` anywhere)
            /// when it is not.
            @inline(__always) func elementLike(_ row: Int) -> Bool {
                for k in 0...slots {
                    let a = templateFrom[k], length = templateFrom[k + 1] - a
                    guard i + length <= end, Self.same(p + i, templateBytes + a, length) else { return false }
                    i += length
                    if k < slots { guard number(row, templateSlot[k]) else { return false } }
                }
                return true
            }
            /// One element object into row `row`, key by key; on success it becomes the template
            /// when it holds no line break.
            func elementByKeys(_ row: Int) -> Bool {
                let first = i
                numbers = 0
                guard elementKeys(row) else { return false }
                hasTemplate = false
                var length = 0
                var from = first
                for k in 0...slots {
                    let to = k < slots ? numberAt[2 * k] : i
                    let n = to - from
                    guard length + n <= templateCapacity, memchr(p + from, 0x0A, n) == nil else { return true }
                    templateFrom[k] = length
                    (templateBytes + length).update(from: p + from, count: n)
                    length += n
                    if k < slots {
                        templateSlot[k] = numberSlot[k]
                        from = numberAt[2 * k + 1]
                    }
                }
                templateFrom[slots + 1] = length
                hasTemplate = true
                return true
            }
            func elementKeys(_ row: Int) -> Bool {
                guard p[i] == UInt8(ascii: "{") else { return false }
                i += 1
                blanks()
                var seen: UInt64 = 0
                if p[i] == UInt8(ascii: "}") { return false }
                while true {
                    guard let k = key() else { return false }
                    let e = find(k, 0, topCount)
                    guard e >= 0 else { return false }
                    let top = keys[e]
                    if top.slot >= 0 {
                        let at = i
                        guard seen & (1 << top.slot) == 0, number(row, top.slot) else { return false }
                        seen |= 1 << top.slot
                        noteNumber(at, top.slot)
                    } else {
                        guard p[i] == UInt8(ascii: "{") else { return false }
                        i += 1
                        blanks()
                        while true {
                            guard let k2 = key() else { return false }
                            let e2 = find(k2, top.nested, top.nestedCount)
                            guard e2 >= 0 else { return false }
                            let slot = keys[e2].slot
                            let at = i
                            guard seen & (1 << slot) == 0, number(row, slot) else { return false }
                            seen |= 1 << slot
                            noteNumber(at, slot)
                            blanks()
                            if p[i] == UInt8(ascii: ",") { i += 1; blanks(); continue }
                            guard p[i] == UInt8(ascii: "}") else { return false }
                            i += 1
                            break
                        }
                    }
                    blanks()
                    if p[i] == UInt8(ascii: ",") { i += 1; blanks(); continue }
                    guard p[i] == UInt8(ascii: "}") else { return false }
                    i += 1
                    return seen == (1 << slots) - 1
                }
            }
            guard p[i] == UInt8(ascii: "{") else { return stop() }
            i += 1
            blanks()
            while true {
                guard let k = key() else { return stop() }
                if matches(k, Self.timestampKey), w.isNaN {
                    var x = 0.0
                    guard p[i] == UInt8(ascii: "-") || p[i] &- 48 < 10,
                          CSVReader.plainNumber(p, &i, end: end, whole: false, pow10: pow10.baseAddress!, into: &x) else { return stop() }
                    x /= timestampDivisor
                    guard x >= Plausible.earliest && x <= Plausible.latest else { return .notPlain }
                    w = x
                } else if matches(k, Self.sampleKey), !sawSample {
                    sawSample = true
                    guard p[i] == UInt8(ascii: "[") else { return stop() }
                    i += 1
                    blanks()
                    if p[i] == UInt8(ascii: "]") { return .notPlain }
                    while true {
                        if n == capacity { return .full }
                        guard element(n) else { return stop() }
                        n += 1
                        blanks()
                        if p[i] == UInt8(ascii: ",") { i += 1; blanks(); continue }
                        guard p[i] == UInt8(ascii: "]") else { return stop() }
                        i += 1
                        break
                    }
                } else {
                    return stop()
                }
                blanks()
                if p[i] == UInt8(ascii: ",") { i += 1; blanks(); continue }
                guard p[i] == UInt8(ascii: "}") else { return stop() }
                i += 1
                break
            }
            guard sawSample, !w.isNaN, plausibleDates(n, rows) else { return .notPlain }
            return .item(end: i, lines: lines, rows: n, writeTime: w)
        }
    }

    /// Whether `a[0..<n]` and `b[0..<n]` are equal, eight bytes at a time (the texts between
    /// numbers are short: a call to memcmp each cost more than the comparison).
    @inline(__always) private static func same(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        @inline(__always) func word(_ p: UnsafePointer<UInt8>, _ k: Int) -> UInt64 { UnsafeRawPointer(p + k).loadUnaligned(as: UInt64.self) }
        if n >= 8 {
            var k = 0
            while k + 8 <= n {
                guard word(a, k) == word(b, k) else { return false }
                k += 8
            }
            return k == n || word(a, n - 8) == word(b, n - 8)
        }
        for k in 0..<n where a[k] != b[k] { return false }
        return true
    }

    private static let timestampKey = Array("timestamp".utf8)
    private static let sampleKey = Array("sample".utf8)

    /// Row times and date fields of rows 0..<n are plausible dates (else the general reader names the problem).
    private func plausibleDates(_ n: Int, _ rows: UnsafeMutablePointer<UInt64>) -> Bool {
        let slots = self.slots
        for s in 0..<slots where s == 0 || fields[s - 1].type == .date {
            for r in 0..<n {
                let x = Double(bitPattern: rows[r * slots + s])
                if !(x >= Plausible.earliest && x <= Plausible.latest) { return false }
            }
        }
        return true
    }

    private func grow() {
        let bigger = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 * capacity * slots)
        bigger.update(from: rows, count: capacity * slots)
        rows.deallocate()
        rows = bigger
        capacity *= 2
    }

    /// Appends rows 0..<n, written at `w`, to `buffer` (column by column, no batch in between).
    private func append(rows n: Int, writeTime w: Double, to buffer: StreamBuffer) {
        let rows = self.rows, slots = self.slots
        buffer.noteWrite(w)
        buffer.writeTimes.append(w, count: n)
        /// Slot `s` of rows 0..<n appended to `array` (one pass, straight into its storage).
        func slot<T>(_ s: Int, _ array: inout [T], _ value: (UInt64) -> T) {
            withoutActuallyEscaping(value) { value in
                array.append(contentsOf: (0..<n).lazy.map { value(rows[$0 * slots + s]) })
            }
        }
        slot(0, &buffer.times) { Double(bitPattern: $0) }
        for (k, c) in buffer.columns.enumerated() {
            if c.present != nil { c.present!.append(contentsOf: repeatElement(true, count: n)) }
            if whole[k + 1] { slot(k + 1, &c.i) { Int64(bitPattern: $0) } } else { slot(k + 1, &c.d) { Double(bitPattern: $0) } }
        }
    }
}
