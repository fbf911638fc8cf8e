import Foundation
import JSONText
import SensorKitModel
import StudyStore

/// A streaming JSON reader: objects and arrays can be walked item by item (so a `samples`
/// array of millions of items never sits in memory at once), or read whole as `FieldValue`
/// (object keys keep their order). Also accepts `NaN`, `Infinity` and `-Infinity`.
/// Errors name the file, the line and the JSON path.
final class JSONReader {
    let file: String
    let window: ByteWindow
    private(set) var line = 1
    enum PathPart { case key(String), index(Int) }
    private(set) var pathParts: [PathPart] = []
    private var scratch: [UInt8] = []

    init(file: String, source: ByteSource) {
        self.file = file
        window = ByteWindow(source)
    }

    init(file: String, window: ByteWindow) {
        self.file = file
        self.window = window
    }

    var path: String {
        var s = "$"
        for p in pathParts {
            switch p {
            case .key(let k): s += k.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) ? ".\(ImportError.excerpt(k))" : "[\"\(ImportError.excerpt(k))\"]"
            case .index(let i): s += "[\(i)]"
            }
        }
        return s
    }

    /// The error for what the reader met: what the file is instead when its first bytes are
    /// not text (compressed twice, or binary), so that binary bytes are never printed.
    func error(_ message: String, field: String? = nil) -> ImportError {
        if let problem = window.contentProblem { return ImportError(file: file, "not JSON text: \(problem)") }
        return ImportError(file: file, line: line, jsonPath: path, field: field, message)
    }

    var fileBytesRead: Int64 { window.fileBytesRead }

    /// Counts `n` line breaks consumed by a reader of the window's bytes (`MDHFastItems`).
    func skippedLines(_ n: Int) { line += n }

    /// Items of the innermost array being walked consumed by its body besides the one it was
    /// called for (the array's later indices count them).
    private var extraItems = 0

    /// Called from an `array` body that consumed `n` more items after its own (and left the
    /// position after the last of them).
    func skippedItems(_ n: Int) { extraItems += n }

    // MARK: Bytes

    @inline(__always) private func peekRaw() throws -> UInt8? {
        if window.start >= window.end { if !(try window.refill()) { return nil } }
        return window.base[window.start]
    }

    /// The next non-blank byte (not consumed).
    @inline(__always) func peek() throws -> UInt8? {
        while true {
            guard let c = try peekRaw() else { return nil }
            switch c {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): window.start += 1
            case UInt8(ascii: "\n"): window.start += 1; line += 1
            default: return c
            }
        }
    }

    @inline(__always) private func advance() { window.start += 1 }

    private func describe(_ c: UInt8?) -> String {
        guard let c else { return "the end of the file" }
        if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return String(format: "byte 0x%02X", c)
    }

    func expect(_ c: UInt8, _ what: String) throws {
        let got = try peek()
        guard got == c else { throw error("expected \(what), found \(describe(got))") }
        advance()
    }

    /// True at the end of the input (only blanks left).
    func atEnd() throws -> Bool { try peek() == nil }

    // MARK: Walking

    /// Walks an object: `body` gets each key and must read its value.
    func object(_ body: (String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "'{' (an object)")
        if try peek() == UInt8(ascii: "}") { advance(); return }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw error("expected a key in quotes, found \(describe(try peek()))") }
            let key = try string()
            try expect(UInt8(ascii: ":"), "':' after the key \"\(key)\"")
            pathParts.append(.key(key))
            try body(key)
            pathParts.removeLast()
            let c = try peek()
            if c == UInt8(ascii: ",") { advance(); continue }
            if c == UInt8(ascii: "}") { advance(); return }
            throw error("expected ',' or '}' after a value, found \(describe(c))")
        }
    }

    /// Walks an array: `body` gets each index and must read the item.
    func array(_ body: (Int) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "'[' (an array)")
        if try peek() == UInt8(ascii: "]") { advance(); return }
        var i = 0
        while true {
            pathParts.append(.index(i))
            try body(i)
            pathParts.removeLast()
            i += 1 + extraItems
            extraItems = 0
            let c = try peek()
            if c == UInt8(ascii: ",") { advance(); continue }
            if c == UInt8(ascii: "]") { advance(); return }
            throw error("expected ',' or ']' after an array item, found \(describe(c))")
        }
    }

    // MARK: Values

    func value(depth: Int = 0) throws -> FieldValue {
        guard depth < 200 else { throw error("nested too deeply") }
        guard let c = try peek() else { throw error("expected a value, found the end of the file (is the file cut short?)") }
        switch c {
        case UInt8(ascii: "{"):
            var items: [(String, FieldValue)] = []
            try object { key in items.append((key, try value(depth: depth + 1))) }
            return .object(items)
        case UInt8(ascii: "["):
            var items: [FieldValue] = []
            try array { _ in items.append(try value(depth: depth + 1)) }
            return .array(items)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "N"): try literal("NaN"); return .double(.nan)
        case UInt8(ascii: "I"): try literal("Infinity"); return .double(.infinity)
        default: return try number()
        }
    }

    /// Skips a value without building it.
    func skip() throws { _ = try value() }

    private func literal(_ word: String) throws {
        for b in word.utf8 {
            guard try peekRaw() == b else { throw error("expected a JSON value (\(word)?), found \(describe(try peekRaw()))") }
            advance()
        }
    }

    private func number() throws -> FieldValue {
        scratch.removeAll(keepingCapacity: true)
        var isInt = true
        while let c = try peekRaw() {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"): scratch.append(c)
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): scratch.append(c); isInt = false
            case UInt8(ascii: "I"):
                if scratch == [UInt8(ascii: "-")] { try literal("Infinity"); return .double(-.infinity) }
                throw error("expected a number, found \(describe(c))")
            default:
                if scratch.isEmpty { throw error("expected a value, found \(describe(c))") }
                return try finishNumber(isInt)
            }
            advance()
        }
        if scratch.isEmpty { throw error("expected a value, found the end of the file") }
        return try finishNumber(isInt)
    }

    private func finishNumber(_ isInt: Bool) throws -> FieldValue {
        try scratch.withUnsafeBufferPointer { b in
            if isInt, let i = NumberParser.int(b), !(b.first != UInt8(ascii: "-") && i < 0) { return .int(i) }
            guard let d = NumberParser.double(b) else {
                throw error("expected a number, found '\(ImportError.excerpt(String(decoding: b, as: UTF8.self)))'")
            }
            return .double(d)
        }
    }

    /// A string's text. Throws when it is not UTF-8 (its bytes, or a lone UTF-16 surrogate
    /// escape), naming the line and the JSON path: text is never replaced in silence.
    func string() throws -> String {
        try expect(UInt8(ascii: "\""), "'\"' (a string)")
        // Fast path: no escapes, all in the window. Only a string holding a byte ≥ 0x80 is
        // checked for UTF-8 (`bytesOr`: every byte or'ed together).
        while true {
            let p = window.base
            var i = window.start
            let end = window.end
            var bytesOr: UInt8 = 0
            while i < end {
                let c = p[i]
                if c == UInt8(ascii: "\"") {
                    let text = UnsafeBufferPointer(start: p + window.start, count: i - window.start)
                    if bytesOr >= 0x80 { try checkUTF8(text, controls: text.contains(where: Self.isControl)) }
                    let s = String(decoding: text, as: UTF8.self)
                    window.start = i + 1
                    return s
                }
                if c == UInt8(ascii: "\\") || c == UInt8(ascii: "\n") { break }
                bytesOr |= c
                i += 1
            }
            if i < end { break }
            if !(try window.refill()) { throw error("a string is not closed: expected '\"' before the end of the file") }
        }
        // Slow path with escapes.
        scratch.removeAll(keepingCapacity: true)
        var controls = false
        while true {
            guard let c = try peekRaw() else { throw error("a string is not closed: expected '\"' before the end of the file") }
            advance()
            switch c {
            case UInt8(ascii: "\""):
                try scratch.withUnsafeBufferPointer { try checkUTF8($0, controls: controls) }
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\n"): throw error("a string runs past the end of the line: expected '\"'")
            case UInt8(ascii: "\\"):
                guard let e = try peekRaw() else { throw error("a string is not closed") }
                advance()
                switch e {
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: "\""): scratch.append(e)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if code >= 0xD800 && code < 0xDC00 {
                        // A high surrogate: a low one, \uDC00–\uDFFF, must follow.
                        let high = code
                        guard try peekRaw() == UInt8(ascii: "\\") else { throw loneSurrogate(high) }
                        advance()
                        guard try peekRaw() == UInt8(ascii: "u") else { throw loneSurrogate(high) }
                        advance()
                        let low = try hex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw loneSurrogate(high) }
                        code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw loneSurrogate(code) }
                    scratch.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error("unknown escape '\\\(Character(Unicode.Scalar(e)))' in a string")
                }
            default:
                controls = controls || Self.isControl(c)
                scratch.append(c)
            }
        }
    }

    /// A control byte written as itself (not escaped) in a string: a binary file's, not text's.
    private static func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != 0x09) || c == 0x7F }

    /// Throws when `text` is not UTF-8: "a string is not UTF-8 text (byte 0xFF at byte 2 of
    /// it)", naming the line and the JSON path (the string's bytes are not printed). A string
    /// that held control bytes as themselves too (`controls`), in a file whose first bytes are
    /// not text, is a binary file's bytes: then the error says what the file is (`error`).
    private func checkUTF8(_ text: UnsafeBufferPointer<UInt8>, controls: Bool) throws {
        guard let problem = LeadingBytes.notUTF8(text) else { return }
        if window.contentProblem != nil, controls {
            throw error("a string is \(problem)")
        }
        throw ImportError(file: file, line: line, jsonPath: path, "a string is \(problem): expected UTF-8 text")
    }

    /// The error for a UTF-16 surrogate escape without its pair (`\uD800` not followed by a
    /// `\uDC00`–`\uDFFF`, or a low one alone): it stands for no character.
    private func loneSurrogate(_ code: UInt32) -> ImportError {
        error("a lone UTF-16 surrogate escape \\u\(String(code, radix: 16, uppercase: true)) in a string is not valid: expected a \\uD800–\\uDBFF escape followed by a \\uDC00–\\uDFFF one (a pair), or another character")
    }

    private func hex4() throws -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let c = try peekRaw() else { throw error("a \\u escape is cut short") }
            advance()
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("expected four hex digits after \\u")
            }
            v = v * 16 + d
        }
        return v
    }
}

/// Writes `FieldValue`s as JSON (keys in order; non-finite doubles as NaN / Infinity /
/// -Infinity; a double always carries a '.' or an exponent so it reads back as a double).
enum JSONWriter {
    static func write(_ v: FieldValue, into s: inout String) {
        switch v {
        case .null: s += "null"
        case .bool(let b): s += b ? "true" : "false"
        case .int(let i): s += String(i)
        case .double(let d): s += number(d)
        case .string(let t): string(t, into: &s)
        case .array(let a):
            s += "["
            for (i, x) in a.enumerated() {
                if i > 0 { s += "," }
                write(x, into: &s)
            }
            s += "]"
        case .object(let o):
            s += "{"
            for (i, (k, x)) in o.enumerated() {
                if i > 0 { s += "," }
                string(k, into: &s)
                s += ":"
                write(x, into: &s)
            }
            s += "}"
        }
    }

    static func number(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d > 0 ? "Infinity" : "-Infinity" }
        let t = "\(d)"
        return t
    }

    /// `v` as JSON text, as a message quotes it (`ImportError.excerpt`).
    static func excerpt(_ v: FieldValue) -> String {
        var s = ""
        write(v, into: &s)
        return ImportError.excerpt(s)
    }

    /// Appends `t` as a JSON string literal (`JSONText.string`).
    static func string(_ t: String, into s: inout String) { JSONText.string(t, into: &s) }
}
