/// A Swift type that crosses between Lua and Swift by value: the arguments and results of
/// functions registered with `LuaState.register(_:function:)`.
///
/// Conforming: `Double`, `Int`, `Int64`, `String`, `Bool`, `LuaValue` (any value),
/// `LuaTable`, `Optional` of a conforming type (nil or absent ↔ `nil`), `Array` of one
/// (a Lua sequence), and classes registered with Lua (`LuaObject`), which cross as themselves.
public protocol LuaConvertible: SendableMetatype {
    /// `value` as this type, or nil when it holds another kind of value (the caller
    /// raises "bad argument #n to 'f' (`luaTypeName` expected, got …)").
    init?(luaValue value: LuaValue)
    /// The value Lua receives.
    var luaValue: LuaValue { get }
    /// The Lua type an argument must have, as argument errors name it (`"number"`).
    static var luaTypeName: String { get }
}

extension Double: LuaConvertible {
    /// A Lua number (integer or float).
    public init?(luaValue value: LuaValue) {
        guard let d = value.doubleValue, !value.isStringValue else { return nil }
        self = d
    }
    public var luaValue: LuaValue { .number(self) }
    public static var luaTypeName: String { "number" }
}

extension Int64: LuaConvertible {
    /// A Lua integer, or a float with an exact integer value.
    public init?(luaValue value: LuaValue) {
        switch value {
        case .integer(let i): self = i
        case .number(let d): guard let i = Int64(exactly: d) else { return nil }; self = i
        default: return nil
        }
    }
    public var luaValue: LuaValue { .integer(self) }
    public static var luaTypeName: String { "integer" }
}

extension Int: LuaConvertible {
    /// A Lua integer, or a float with an exact integer value.
    public init?(luaValue value: LuaValue) {
        guard let i = Int64(luaValue: value) else { return nil }
        self = Int(i)
    }
    public var luaValue: LuaValue { .integer(Int64(self)) }
    public static var luaTypeName: String { "integer" }
}

extension String: LuaConvertible {
    /// A Lua string (valid UTF-8; other bytes are replaced).
    public init?(luaValue value: LuaValue) {
        switch value {
        case .string(let s): self = s
        case .bytes(let b): self = String(decoding: b, as: UTF8.self)
        default: return nil
        }
    }
    public var luaValue: LuaValue { .string(self) }
    public static var luaTypeName: String { "string" }
}

extension Bool: LuaConvertible {
    /// A Lua boolean (not any value's truth: `0` and `""` are refused, as a type mistake).
    public init?(luaValue value: LuaValue) {
        guard let b = value.boolValue else { return nil }
        self = b
    }
    public var luaValue: LuaValue { .boolean(self) }
    public static var luaTypeName: String { "boolean" }
}

extension LuaValue: LuaConvertible {
    /// Any value, copied (tables deeply).
    public init?(luaValue value: LuaValue) { self = value }
    public var luaValue: LuaValue { self }
    public static var luaTypeName: String { "value" }
}

extension LuaTable: LuaConvertible {
    /// A Lua table, copied deeply.
    public init?(luaValue value: LuaValue) {
        guard let t = value.tableValue else { return nil }
        self = t
    }
    public var luaValue: LuaValue { .table(self) }
    public static var luaTypeName: String { "table" }
}

extension Optional: LuaConvertible where Wrapped: LuaConvertible {
    /// nil (or a missing argument) as `nil`, else the wrapped type's value.
    public init?(luaValue value: LuaValue) {
        if value.isNil { self = .none; return }
        guard let w = Wrapped(luaValue: value) else { return nil }
        self = .some(w)
    }
    public var luaValue: LuaValue { self?.luaValue ?? .nil }
    public static var luaTypeName: String { Wrapped.luaTypeName + " or nil" }
}

extension Array: LuaConvertible where Element: LuaConvertible {
    /// A Lua sequence (keys 1…n) whose every element is an `Element`.
    public init?(luaValue value: LuaValue) {
        guard let items = value.tableValue?.arrayValue else { return nil }
        var out: [Element] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let e = Element(luaValue: item) else { return nil }
            out.append(e)
        }
        self = out
    }
    public var luaValue: LuaValue { .array(map(\.luaValue)) }
    public static var luaTypeName: String { "sequence of \(Element.luaTypeName)s" }
}

extension LuaValue {
    /// Whether this is a string (Lua would convert it to a number; typed arguments do not).
    var isStringValue: Bool {
        switch self {
        case .string, .bytes: true
        default: false
        }
    }
}

/// Typed registration: Swift closures whose arguments and result are `LuaConvertible`
/// values become Lua globals. A wrong argument raises Lua's "bad argument #n to 'name'
/// (number expected, got string)"; an error the closure throws is raised as a Lua error
/// with its description (a `LuaScriptError`'s message gets the caller's `file:line:`), once
/// the Swift frame has returned — never a longjmp across it. Extra arguments are ignored,
/// as Lua does.
extension LuaState {
    /// Registers `body` as global function `name`, taking no arguments.
    public func register<R: LuaConvertible>(_ name: String, function body: @escaping () throws -> R) {
        register(name) { call in
            try call.returnTyped(body())
        }
    }

    /// Registers `body` as global function `name`, taking one argument.
    public func register<A: LuaConvertible, R: LuaConvertible>(_ name: String, function body: @escaping (A) throws -> R) {
        register(name) { call in
            try call.returnTyped(body(call.typed(1)))
        }
    }

    /// Registers `body` as global function `name`, taking two arguments.
    public func register<A: LuaConvertible, B: LuaConvertible, R: LuaConvertible>(
        _ name: String, function body: @escaping (A, B) throws -> R) {
        register(name) { call in
            try call.returnTyped(body(call.typed(1), call.typed(2)))
        }
    }

    /// Registers `body` as global function `name`, taking three arguments.
    public func register<A: LuaConvertible, B: LuaConvertible, C: LuaConvertible, R: LuaConvertible>(
        _ name: String, function body: @escaping (A, B, C) throws -> R) {
        register(name) { call in
            try call.returnTyped(body(call.typed(1), call.typed(2), call.typed(3)))
        }
    }
}
