import CLua
import CLuaShim

/// What a Swift function sees while Lua calls it: its arguments on the Lua stack.
///
/// Everything here uses only the parts of the C API that do not raise (type
/// checks, raw reads, pushes under the soft memory cap), because a Swift frame
/// is on the stack. Report a problem by throwing: the trampoline raises it as a
/// Lua error once this frame has returned.
@_spi(Bindings) public struct LuaCall {
    /// The raw state, for LuaHost only (embedders use the typed API below).
    let L: OpaquePointer

    init(_ L: OpaquePointer) { self.L = L }

    /// Number of arguments passed.
    public var count: Int32 { lua_gettop(L) }

    /// The `LuaState` that owns this call.
    public var state: LuaState { LuaState.owner(of: L) }

    /// Lua's type name of argument `i` (`"no value"` past the end).
    public func typeName(_ i: Int32) -> String { String(cString: lua_typename(L, lua_type(L, i))) }

    public func isNil(_ i: Int32) -> Bool { luashim_isnoneornil(L, i) != 0 }

    /// `"file:line"` of the innermost running Lua function with line information (the
    /// script line that called this Swift function, through any C frames), the file as
    /// the chunk was named when loaded (its path, not shortened); nil when no such frame
    /// exists. Reads the stack only:
    /// `lua_getstack`/`lua_getinfo("Sl")` neither raise nor allocate.
    public func scriptPosition() -> String? {
        var ar = lua_Debug()
        var level: Int32 = 1
        while lua_getstack(L, level, &ar) != 0 {
            _ = lua_getinfo(L, "Sl", &ar)
            if ar.currentline > 0, let source = ar.source {
                var name = String(cString: source)
                if name.hasPrefix("@") || name.hasPrefix("=") { name.removeFirst() }
                return "\(name):\(ar.currentline)"
            }
            level += 1
        }
        return nil
    }

    /// Whether table argument `i` holds a value other than nil under `key`, read raw (no
    /// metamethods run). Stack: unchanged. A non-table argument answers false.
    public func hasRawField(_ i: Int32, _ key: String) -> Bool {
        guard lua_type(L, i) == LUA_TTABLE else { return false }
        let table = lua_absindex(L, i)
        push(key)
        let type = lua_rawget(L, table)
        lua_settop(L, -2)
        return type != LUA_TNIL
    }

    // MARK: reading arguments (throwing Lua-style "bad argument" errors)

    public func double(_ i: Int32) throws -> Double {
        guard lua_type(L, i) == LUA_TNUMBER else { throw argumentError(i, expected: "number") }
        return luashim_tonumber(L, i)
    }

    public func optionalDouble(_ i: Int32) throws -> Double? { isNil(i) ? nil : try double(i) }

    public func integer(_ i: Int32) throws -> Int64 {
        var ok: Int32 = 0
        let v = luashim_tointeger(L, i, &ok)
        guard ok != 0, lua_type(L, i) == LUA_TNUMBER else {
            if lua_type(L, i) == LUA_TNUMBER { throw LuaArgumentError(index: i, message: "number has no integer representation") }
            throw argumentError(i, expected: "integer")
        }
        return Int64(v)
    }

    public func string(_ i: Int32) throws -> String {
        guard lua_type(L, i) == LUA_TSTRING else { throw argumentError(i, expected: "string") }
        return LuaState.readString(L, i)
    }

    public func optionalString(_ i: Int32) throws -> String? { isNil(i) ? nil : try string(i) }

    public func boolean(_ i: Int32) -> Bool { lua_toboolean(L, i) != 0 }

    /// Argument `i` copied into Swift (tables deeply, in stable key order).
    public func value(_ i: Int32) -> LuaValue { LuaState.readValue(L, i) }

    /// A reference to argument `i` that keeps it alive (for functions and tables Swift keeps).
    public func reference(_ i: Int32) -> LuaReference { state.makeReference(at: i) }

    /// Requires argument `i` to be a function and returns a reference to it.
    public func function(_ i: Int32) throws -> LuaReference {
        guard lua_type(L, i) == LUA_TFUNCTION else { throw argumentError(i, expected: "function") }
        return reference(i)
    }

    /// Requires argument `i` to be a table.
    public func table(_ i: Int32) throws -> LuaTable {
        guard lua_type(L, i) == LUA_TTABLE else { throw argumentError(i, expected: "table") }
        return LuaState.readValue(L, i).tableValue ?? LuaTable()
    }

    /// The Swift object in argument `i` when it is a userdata of `type`.
    public func object<T: AnyObject>(_ i: Int32, _ type: LuaClass<T>) -> T? { type.object(in: L, at: i) }

    /// Like `object`, but throws a "bad argument" error naming the expected type.
    public func requireObject<T: AnyObject>(_ i: Int32, _ type: LuaClass<T>) throws -> T {
        if let o = type.object(in: L, at: i) { return o }
        if type.isClosedInstance(in: L, at: i) { throw LuaArgumentError(index: i, message: "\(type.name) is closed") }
        throw argumentError(i, expected: type.name)
    }

    /// "bad argument #i to 'f' (expected expected, got X)".
    public func argumentError(_ i: Int32, expected: String) -> LuaArgumentError {
        LuaArgumentError(index: i, message: "\(expected) expected, got \(lua_type(L, i) == LUA_TNONE ? "no value" : typeName(i))")
    }

    // MARK: results

    public func push(_ value: LuaValue) { LuaState.pushValue(L, value) }
    public func push(_ d: Double) { lua_pushnumber(L, d) }
    public func push(_ i: Int64) { lua_pushinteger(L, lua_Integer(i)) }
    public func push(_ i: Int) { lua_pushinteger(L, lua_Integer(i)) }
    public func push(_ s: String) { LuaState.pushString(L, s) }
    /// Pushes bytes as a Lua string, unchanged (no UTF-8 check). [-0, +1]
    public func push(bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress {
                _ = lua_pushlstring(L, base.assumingMemoryBound(to: CChar.self), raw.count)
            } else {
                _ = lua_pushstring(L, "")
            }
        }
    }
    public func push(_ b: Bool) { lua_pushboolean(L, b ? 1 : 0) }
    public func pushNil() { lua_pushnil(L) }
    public func push<T: AnyObject>(_ object: T, as type: LuaClass<T>) { type.push(object, in: L) }
    public func push(_ reference: LuaReference) { reference.push(L) }

    /// Returns the first `n` arguments (0 to 20) as the function's results, missing
    /// ones as nil: `return call.returnArguments(1)`. Allocates nothing.
    public func returnArguments(_ n: Int32) -> Int32 {
        let n = max(0, min(n, 20))      // LUA_MINSTACK: a C function's guaranteed slots
        lua_settop(L, n)
        return n
    }

    /// Pushes a Swift closure as a Lua function.
    public func push(function: @escaping LuaFunction) { state.pushFunction(function) }

    /// Calls a Lua function from inside a Swift callback, protected: a Lua error
    /// comes back as a thrown `LuaError`, never as a longjmp through this frame.
    public func call(_ function: LuaReference, _ args: [LuaValue], results: Int32 = 1) throws -> [LuaValue] {
        try state.call(function, args, results: results)
    }
}

/// The signature of a Swift function callable from Lua: read arguments from the
/// call, push results, return how many were pushed (or throw).
@_spi(Bindings) public typealias LuaFunction = (LuaCall) throws -> Int32

/// A "bad argument" error: raised as `bad argument #n to 'name' (message)`.
@_spi(Bindings) public struct LuaArgumentError: Error, Sendable {
    public var index: Int32
    public var message: String
    public init(index: Int32, message: String) {
        self.index = index
        self.message = message
    }
}

/// A plain error message raised from a Swift function (the caller's `file:line:` is prefixed).
public struct LuaScriptError: Error, Sendable, CustomStringConvertible {
    /// The message, raised with the caller's `file:line:` prefixed.
    public var message: String
    /// An error raised with `message`.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// An error a Swift function raises as a Lua value of its own (a table or userdata).
@_spi(Bindings) public protocol LuaRaisable: Error {
    /// Pushes the error value. [-0, +1]
    func pushErrorValue(_ call: LuaCall)
}

/// A Swift error that ends the script, whatever the script catches: for failures that are
/// no fault of the script and must not be taken for an answer (a recorded store that
/// cannot be read). A host function throws it like any error; the trampoline raises a
/// value that carries the Swift error itself (`tostring` gives its description), which the
/// script's `pcall`, `xpcall` (its message handler not run), `coroutine.resume` and
/// `coroutine.close` pass on instead of catching (`CLuaShim`'s guards), as the limits'
/// stops cannot be caught either. The protected
/// call Swift made throws it back as a `LuaError` whose `hostError` is this very value;
/// Swift code between (a host function that called Lua) passes it on the same way.
public protocol LuaUncatchableError: Error, CustomStringConvertible {}

/// The Swift side of an uncatchable error value: a userdata of the class named
/// `LUASHIM_UNCATCHABLE_MT`, holding the error.
final class UncatchableBox {
    let error: any LuaUncatchableError
    init(_ error: any LuaUncatchableError) { self.error = error }

    /// The class of these values in one state (its metatable is the one the C guards look for).
    static func makeClass() -> LuaClass<UncatchableBox> {
        let c = LuaClass<UncatchableBox>(LUASHIM_UNCATCHABLE_MT)
        c.describe = { $0.error.description }
        return c
    }
}

