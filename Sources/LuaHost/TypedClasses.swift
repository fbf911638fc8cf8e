import CLua
import CLuaShim

/// A Swift class whose instances Lua holds as userdata of a class registered with
/// `LuaState.register(class:name:_:)`. As an argument or result of a typed function, method
/// or property — also inside an `Optional` or an `Array` — an instance crosses as itself:
/// the very object, never a copy; Lua keeps it alive until the userdata is collected.
/// Conform with an empty extension: `extension Counter: LuaObject {}`.
///
/// Inside a `LuaValue` or a `LuaTable` (copies) an instance cannot travel: there it reads
/// as `.opaque(name)` and a `LuaObject`'s own `luaValue` pushes nil.
public protocol LuaObject: AnyObject, LuaConvertible {}

extension LuaObject {
    /// Never succeeds: a copied `LuaValue` cannot hold an instance (typed arguments read
    /// instances from the Lua userdata itself).
    public init?(luaValue value: LuaValue) { return nil }
    /// `.opaque` with the Swift type's name: an instance is pushed as itself only by typed
    /// functions, methods and properties.
    public var luaValue: LuaValue { .opaque(Self.luaTypeName) }
    /// The Swift type's name (argument errors name the registered Lua class instead).
    public static var luaTypeName: String { String(describing: Self.self) }
}

/// The methods and properties of a Swift class as Lua sees it: configured in the closure
/// of `LuaState.register(class:name:_:)`, before the class's metatable is built. Methods are
/// called `obj:name(…)`, properties read `obj.name` and (with a setter) written
/// `obj.name = v`. Arguments and results are `LuaConvertible` (instances of registered
/// classes included); a wrong argument is Lua's `bad argument #1 to 'add' (number expected,
/// got string)`; a thrown Swift error is raised as a Lua error once the Swift frame has
/// returned.
public final class LuaClassDefinition<Object: LuaObject> {
    let base: LuaClass<Object>

    init(name: String) { base = LuaClass<Object>(name) }

    /// The class's name in Lua (`tostring` of an instance, argument errors).
    public var name: String { base.name }

    /// What `tostring` shows for an instance (default: the class name); a thrown error is
    /// raised by `tostring`.
    public func describe(_ body: @escaping (Object) throws -> String) { base.describe = body }

    /// Value equality for `==` between two instances (default: the same object).
    public func equals(_ body: @escaping (Object, Object) -> Bool) { base.equals = body }

    /// Adds method `name`, called `obj:name()`.
    public func method<R: LuaConvertible>(_ name: String, _ body: @escaping (Object) throws -> R) {
        base.method(name) { object, call in try call.returnTyped(body(object)) }
    }

    /// Adds method `name` of one argument, called `obj:name(a)`.
    public func method<A: LuaConvertible, R: LuaConvertible>(_ name: String, _ body: @escaping (Object, A) throws -> R) {
        base.method(name) { object, call in try call.returnTyped(body(object, call.typed(2))) }
    }

    /// Adds method `name` of two arguments, called `obj:name(a, b)`.
    public func method<A: LuaConvertible, B: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping (Object, A, B) throws -> R) {
        base.method(name) { object, call in try call.returnTyped(body(object, call.typed(2), call.typed(3))) }
    }

    /// Adds method `name` of three arguments, called `obj:name(a, b, c)`.
    public func method<A: LuaConvertible, B: LuaConvertible, C: LuaConvertible, R: LuaConvertible>(
        _ name: String, _ body: @escaping (Object, A, B, C) throws -> R) {
        base.method(name) { object, call in try call.returnTyped(body(object, call.typed(2), call.typed(3), call.typed(4))) }
    }

    /// Adds read-only property `name`: `obj.name` is `get(obj)`; assigning it raises
    /// "field 'name' of Class is read-only".
    public func property<V: LuaConvertible>(_ name: String, get: @escaping (Object) throws -> V) {
        base.property(name, get: { object, call in try call.pushTyped(get(object)) })
    }

    /// Adds property `name`, read `obj.name` and written `obj.name = v`. A value that is not
    /// a `V` raises "field 'name' of Class: number expected, got string".
    public func property<V: LuaConvertible>(_ name: String, get: @escaping (Object) throws -> V,
                                            set: @escaping (Object, V) throws -> Void) {
        let className = self.name
        base.property(name, get: { object, call in try call.pushTyped(get(object)) }, set: { object, call, index in
            guard let value: V = try call.typedValue(index) else {
                throw LuaScriptError("field '\(name)' of \(className): \(call.expectation(V.self, index))")
            }
            try set(object, value)
        })
    }
}

extension LuaState {
    /// Registers Swift class `type` as Lua class `name`: `define` adds its methods and
    /// properties, then the class's metatable is built (locked; instances print as
    /// `describe` says, without an address, and support `==` and `<close>`). From then on
    /// typed functions, methods and properties of this state take and return `Object`s as
    /// instances of this class. Lua creates none by itself: give it a typed function that
    /// returns one (`register("Counter", function: { (n: Int) -> Counter in Counter(n) })`).
    ///
    /// Throws `LuaScriptError` when `type` or `name` is already registered in this state
    /// (each class and each name once), and what `define` throws.
    public func register<Object: LuaObject>(class type: Object.Type, name: String,
                                            _ define: (LuaClassDefinition<Object>) throws -> Void) throws {
        guard objectClasses[ObjectIdentifier(type)] == nil else {
            throw LuaScriptError("\(type) is already registered as a Lua class in this state")
        }
        guard classNames[name] == nil else { throw LuaScriptError("a Lua class named '\(name)' is already registered in this state") }
        let definition = LuaClassDefinition<Object>(name: name)
        try define(definition)
        definition.base.register(in: self)
        // The instances pushed so far, by object: a weak-valued table, so the same object
        // is the same userdata while Lua holds it (`rawequal`, table keys).
        lua_createtable(L, 0, 0)
        lua_createtable(L, 0, 1)
        LuaState.pushString(L, "v")
        lua_setfield(L, -2, "__mode")
        _ = lua_setmetatable(L, -2)
        objectClasses[ObjectIdentifier(type)] = ObjectClass(luaClass: definition.base, instances: luaL_ref(L, luashim_registryindex()))
    }

    /// The class registered for Swift type `O` (or nil).
    func luaClass<O: LuaObject>(of type: O.Type) -> LuaClass<O>? {
        objectClasses[ObjectIdentifier(type)]?.luaClass as? LuaClass<O>
    }
}

/// A Swift type's Lua class in one state, and the registry reference of its weak table of
/// live instances (object address → userdata).
struct ObjectClass {
    let luaClass: AnyObject
    let instances: Int32
}

// MARK: typed values at the stack

/// Types a typed call reads and pushes at the stack rather than as a copied `LuaValue`: an
/// `Optional` or `Array` of registered objects.
protocol LuaObjectContainer {
    /// Argument `i` as this type, or nil when it holds something else. [-0, +0]
    static func read(_ call: LuaCall, _ i: Int32) throws -> Self?
    /// Pushes `value` (of this type). [-0, +1]
    static func push(_ value: Any, _ call: LuaCall) throws
    /// The expected type as argument errors name it.
    static func expected(_ call: LuaCall) -> String
}

extension Optional: LuaObjectContainer where Wrapped: LuaObject {
    static func read(_ call: LuaCall, _ i: Int32) throws -> Self? {
        if call.isNil(i) { return .some(.none) }
        return try call.object(Wrapped.self, i).map { .some($0) }
    }
    static func push(_ value: Any, _ call: LuaCall) throws {
        if let object = value as! Wrapped? { try call.pushObject(object) } else { call.pushNil() }
    }
    static func expected(_ call: LuaCall) -> String { call.className(Wrapped.self) + " or nil" }
}

extension Array: LuaObjectContainer where Element: LuaObject {
    static func read(_ call: LuaCall, _ i: Int32) throws -> Self? {
        guard lua_type(call.L, i) == LUA_TTABLE, lua_checkstack(call.L, 2) != 0 else { return nil }
        let table = lua_absindex(call.L, i)
        let count = Int(lua_rawlen(call.L, table))
        var out: [Element] = []
        out.reserveCapacity(count)
        for n in 0..<count {
            lua_rawgeti(call.L, table, lua_Integer(n + 1))
            defer { lua_settop(call.L, -2) }
            guard let object = try call.object(Element.self, -1) else { return nil }
            out.append(object)
        }
        return out
    }
    static func push(_ value: Any, _ call: LuaCall) throws {
        let objects = value as! [Element]
        _ = lua_checkstack(call.L, 3)
        lua_createtable(call.L, Int32(clamping: objects.count), 0)
        for (n, object) in objects.enumerated() {
            try call.pushObject(object)
            lua_rawseti(call.L, -2, lua_Integer(n + 1))
        }
    }
    static func expected(_ call: LuaCall) -> String { "sequence of \(call.className(Element.self))s" }
}

extension LuaCall {
    /// Argument `i` as `T`, or the "bad argument" error naming `T`'s Lua type.
    func typed<T: LuaConvertible>(_ i: Int32) throws -> T {
        if let v: T = try typedValue(i) { return v }
        throw argumentError(i, expected: expectation(T.self, i, bare: true))
    }

    /// Argument `i` as `T`, or nil when it holds another kind of value. Instances of
    /// registered classes (and optionals and arrays of them) are read from the userdata.
    func typedValue<T: LuaConvertible>(_ i: Int32) throws -> T? {
        if let objectType = T.self as? any LuaObject.Type { return try object(objectType, i) as! T? }
        if let container = T.self as? any LuaObjectContainer.Type { return try container.read(self, i) as! T? }
        return T(luaValue: value(i))
    }

    /// "number expected, got string" for argument `i` of type `T` (`bare`: without ", got …").
    func expectation<T: LuaConvertible>(_ type: T.Type, _ i: Int32, bare: Bool = false) -> String {
        let expected: String
        if let objectType = T.self as? any LuaObject.Type { expected = className(objectType) }
        else if let container = T.self as? any LuaObjectContainer.Type { expected = container.expected(self) }
        else { expected = T.luaTypeName }
        return bare ? expected : "\(expected) expected, got \(lua_type(L, i) == LUA_TNONE ? "no value" : typeName(i))"
    }

    /// Pushes `value`: instances of registered classes as themselves, else its `luaValue`. [-0, +1]
    func pushTyped<T: LuaConvertible>(_ value: T) throws {
        if let objectType = T.self as? any LuaObject.Type { try pushObject(value, as: objectType) }
        else if let container = T.self as? any LuaObjectContainer.Type { try container.push(value, self) }
        else { push(value.luaValue) }
    }

    /// Pushes `value` as the function's one result.
    func returnTyped<T: LuaConvertible>(_ value: T) throws -> Int32 {
        try pushTyped(value)
        return 1
    }

    /// The live instance of `O`'s class at `i`, or nil when `i` holds something else.
    /// Throws when `O` has no class in this state, or the instance is closed.
    func object<O: LuaObject>(_ type: O.Type, _ i: Int32) throws -> O? {
        let c = try registeredClass(type)
        if let o = c.object(in: L, at: i) { return o }
        if c.isClosedInstance(in: L, at: i) { throw LuaArgumentError(index: i, message: "\(c.name) is closed") }
        return nil
    }

    /// Pushes `object` as an instance of its registered class: the userdata Lua already
    /// holds for it when there is a live one, else a new one. [-0, +1]
    func pushObject<O: LuaObject>(_ object: O) throws {
        let c = try registeredClass(O.self)
        guard let instances = state.objectClasses[ObjectIdentifier(O.self)]?.instances, lua_checkstack(L, 4) != 0 else {
            c.push(object, in: L)
            return
        }
        let key = Unmanaged.passUnretained(object).toOpaque()
        lua_rawgeti(L, luashim_registryindex(), lua_Integer(instances))     // instances
        lua_pushlightuserdata(L, key)
        lua_rawget(L, -2)                                                   // instances, userdata?
        if c.object(in: L, at: -1) === object {
            lua_copy(L, -1, -2)
            lua_settop(L, -2)                                               // userdata
            return
        }
        lua_settop(L, -2)                                                   // instances
        c.push(object, in: L)                                               // instances, userdata
        lua_pushlightuserdata(L, key)
        lua_pushvalue(L, -2)
        lua_rawset(L, -4)                                                   // instances[key] = userdata
        lua_copy(L, -1, -2)
        lua_settop(L, -2)                                                   // userdata
    }

    /// Pushes `value` (an `O`) as an instance of `O`'s registered class. [-0, +1]
    private func pushObject<O: LuaObject>(_ value: Any, as type: O.Type) throws { try pushObject(value as! O) }

    /// The Lua name of `O`'s class, or the Swift type's name when it has none.
    func className<O: LuaObject>(_ type: O.Type) -> String { state.luaClass(of: type)?.name ?? O.luaTypeName }

    private func registeredClass<O: LuaObject>(_ type: O.Type) throws -> LuaClass<O> {
        guard let c = state.luaClass(of: type) else {
            throw LuaScriptError("\(O.self) is not a Lua class of this state (register it with LuaState.register(class:name:_:))")
        }
        return c
    }
}
