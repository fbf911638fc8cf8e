/// A Lua value copied into Swift.
///
/// Integers and floats stay distinct (`3` vs `3.0`), strings are byte-exact
/// (embedded zeros survive; bytes that are not UTF-8 arrive as `.bytes`), and
/// tables arrive as a `LuaTable` whose entries are in the stable key order
/// scripts see. Functions come back as `.function(LuaReference)`, which keeps
/// the function alive in the registry until the reference is dropped.
public enum LuaValue: Sendable, Equatable {
    /// Lua's nil.
    case `nil`
    /// A boolean.
    case boolean(Bool)
    /// An integer (Lua 5.4's integer subtype).
    case integer(Int64)
    /// A float.
    case number(Double)
    /// A string that is valid UTF-8.
    case string(String)
    /// A string that is not valid UTF-8, byte for byte.
    case bytes([UInt8])
    /// A table, copied deeply.
    case table(LuaTable)
    /// A function, kept alive by reference.
    case function(LuaReference)
    /// Any value Swift keeps by reference (a userdata, a table it must not copy); pushes that very value.
    case reference(LuaReference)
    /// A userdata, thread or light userdata: only its type name survives the copy.
    case opaque(String)

    /// A Lua array (keys 1...n) from Swift values.
    public static func array(_ values: [LuaValue]) -> LuaValue { .table(LuaTable(array: values)) }

    /// A Lua table with string keys.
    public static func dictionary(_ values: [String: LuaValue]) -> LuaValue { .table(LuaTable(dictionary: values)) }

    /// Whether the value is nil.
    public var isNil: Bool { if case .nil = self { true } else { false } }

    /// The value as a Double when it is a number (integer or float).
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// The value as an integer when it is an integer or a float with an exact integer value.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i): i
        case .number(let d): (d.rounded() == d && abs(d) < 9.2e18) ? Int64(d) : nil
        default: nil
        }
    }

    /// The value as a String when it is a string.
    public var stringValue: String? {
        switch self {
        case .string(let s): s
        case .bytes(let b): String(decoding: b, as: UTF8.self)
        default: nil
        }
    }

    /// The value when it is a boolean.
    public var boolValue: Bool? { if case .boolean(let b) = self { b } else { nil } }
    /// The table when the value is one.
    public var tableValue: LuaTable? { if case .table(let t) = self { t } else { nil } }

    /// Lua's own name for the value's type (`"number"`, `"table"`, …).
    public var typeName: String {
        switch self {
        case .nil: "nil"
        case .boolean: "boolean"
        case .integer, .number: "number"
        case .string, .bytes: "string"
        case .table: "table"
        case .function: "function"
        case .reference: "reference"
        case .opaque(let name): name
        }
    }
}

extension LuaValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(nilLiteral: ()) { self = .nil }
}

/// A table copied out of Lua: entries in stable key order (numbers ascending,
/// then strings bytewise, then booleans), the order `pairs` uses in scripts.
public struct LuaTable: Sendable, Equatable {
    /// The entries, in stable key order.
    public var entries: [(key: LuaValue, value: LuaValue)]

    /// A table of `entries`.
    public init(entries: [(key: LuaValue, value: LuaValue)] = []) { self.entries = entries }

    /// A sequence: keys 1…n.
    public init(array: [LuaValue]) {
        entries = array.enumerated().map { (key: .integer(Int64($0.offset + 1)), value: $0.element) }
    }

    /// A table with string keys (sorted).
    public init(dictionary: [String: LuaValue]) {
        entries = dictionary.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { (key: .string($0), value: dictionary[$0]!) }
    }

    public static func == (a: LuaTable, b: LuaTable) -> Bool {
        a.entries.count == b.entries.count && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// The value at a string key.
    public subscript(key: String) -> LuaValue? {
        entries.first { if case .string(let k) = $0.key { k == key } else { false } }?.value
    }

    /// The values at keys 1...n when the table is a sequence and has nothing else.
    public var arrayValue: [LuaValue]? {
        for (i, e) in entries.enumerated() {
            guard case .integer(let k) = e.key, k == Int64(i + 1) else { return nil }
        }
        return entries.map(\.value)
    }

    /// String-keyed entries (other keys are skipped).
    public var dictionaryValue: [String: LuaValue] {
        var out: [String: LuaValue] = [:]
        for e in entries { if case .string(let k) = e.key { out[k] = e.value } }
        return out
    }
}

extension LuaValue {
    /// A short, deterministic rendering for messages (an error object that is a table):
    /// `{code = 42, reason = "late", 1, 2, …}` — integer keys first in order, then string keys
    /// sorted, at most `entries` of them, nested tables to `depth`; never an address.
    public func shortDescription(entries limit: Int = 8, depth: Int = 2) -> String {
        switch self {
        case .nil: return "nil"
        case .boolean(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .number(let d): return d.isFinite && d == d.rounded() && abs(d) < 1e15 ? String(format: "%.1f", d) : "\(d)"
        case .string(let s): return LuaValue.quoted(s)
        case .bytes(let b): return LuaValue.quoted(String(decoding: b, as: UTF8.self))
        case .function, .reference: return typeName
        case .opaque(let name): return name
        case .table(let t):
            guard depth > 0 else { return "{…}" }
            func rank(_ k: LuaValue) -> (Int, Double, String) {
                switch k {
                case .integer(let i): (0, Double(i), "")
                case .number(let d): (0, d, "")
                case .string(let s): (1, 0, s)
                default: (2, 0, k.typeName)
                }
            }
            let sorted = t.entries.sorted { rank($0.key) < rank($1.key) }
            var parts: [String] = []
            var next: Int64 = 1
            for (key, value) in sorted.prefix(limit) {
                let shown = value.shortDescription(entries: limit, depth: depth - 1)
                if case .integer(let i) = key, i == next {
                    parts.append(shown)
                    next += 1
                } else if case .string(let s) = key, s.range(of: "^[A-Za-z_][A-Za-z0-9_]*$", options: .regularExpression) != nil {
                    parts.append("\(s) = \(shown)")
                } else {
                    parts.append("[\(key.shortDescription(entries: limit, depth: 0))] = \(shown)")
                }
            }
            if sorted.count > limit { parts.append("…") }
            return "{" + parts.joined(separator: ", ") + "}"
        }
    }

    /// A string in double quotes, cut at 60 characters, with `"` and `\` escaped.
    static func quoted(_ s: String) -> String {
        let cut = s.count > 60 ? String(s.prefix(60)) + "…" : s
        return "\"" + cut.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
