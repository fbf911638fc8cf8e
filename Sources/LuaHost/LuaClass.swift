import CLua
import CLuaShim

/// A Swift class exposed to Lua as a userdata type.
///
/// Each instance is a full userdata holding a retained pointer to the Swift
/// object. The metatable (registered under `name`) is locked, prints without
/// an address, supports `<close>` and `==`, and releases the object in `__gc`
/// or `__close`, whichever runs first; after that, methods report
/// "`name` is closed". Methods and properties are Swift closures.
@_spi(Bindings) public final class LuaClass<Object: AnyObject> {
    public typealias Method = (Object, LuaCall) throws -> Int32
    public typealias Getter = (Object, LuaCall) throws -> Void
    public typealias Setter = (Object, LuaCall, Int32) throws -> Void

    public let name: String
    var methods: [(String, Method)] = []
    /// Methods that may run while deferred results are pending without settling them
    /// (`method(_:settles:_:)`).
    var nonSettling: Set<String> = []
    var getters: [String: Getter] = [:]
    var setters: [String: Setter] = [:]
    var metamethods: [(String, Method)] = []
    /// The text `tostring` shows (default: the class name); what it throws is raised by `tostring`.
    public var describe: (Object) throws -> String
    /// Called once when an instance is closed or collected.
    public var onRelease: ((Object) -> Void)?
    /// Value equality for `==` (default: identity).
    public var equals: ((Object, Object) -> Bool)?

    public init(_ name: String) {
        self.name = name
        self.describe = { _ in name }
    }

    /// Adds a method, called as `obj:name(...)`; the object is argument 1. `settles`:
    /// whether pending deferred results are computed before it runs (`LuaDeferred`);
    /// false only for a method that observes none of them (one that asks for more, or
    /// builds the object that will).
    @discardableResult
    public func method(_ name: String, settles: Bool = true, _ body: @escaping Method) -> Self {
        methods.append((name, body))
        if !settles { nonSettling.insert(name) }
        return self
    }

    /// Adds a metamethod (`__len`, `__inspect`, …) called with the object as argument 1.
    /// `__index`, `__newindex`, `__gc`, `__close`, `__eq`, `__tostring` are the class's own.
    @discardableResult
    public func metamethod(_ name: String, _ body: @escaping Method) -> Self {
        metamethods.append((name, body))
        return self
    }

    /// Adds a property read as `obj.name` (the getter pushes one value) and, with a setter, written as `obj.name = v`.
    @discardableResult
    public func property(_ name: String, get: @escaping Getter, set: Setter? = nil) -> Self {
        getters[name] = get
        if let set { setters[name] = set }
        return self
    }

    // MARK: instances

    /// Pushes `object` as a new userdata of this class. The class must be registered with the state. [-0, +1]
    func push(_ object: Object, in L: OpaquePointer) {
        let state = LuaState.owner(of: L)
        if state.classes[ObjectIdentifier(self)] == nil { register(in: state) }
        let slot = lua_newuserdatauv(L, 2 * MemoryLayout<UnsafeMutableRawPointer?>.size, 0)!
        slot.storeBytes(of: Unmanaged.passRetained(object).toOpaque(), as: UnsafeMutableRawPointer?.self)
        slot.storeBytes(of: Unmanaged.passUnretained(releaser).toOpaque(), toByteOffset: MemoryLayout<UnsafeMutableRawPointer?>.size,
                        as: UnsafeMutableRawPointer?.self)
        _ = luashim_getmetatable_named(L, name)
        lua_setmetatable(L, -2)
    }

    /// The object at `index`, or nil when it is not a live instance of this class. [-0, +0]
    func object(in L: OpaquePointer, at index: Int32) -> Object? {
        guard let raw = slot(in: L, at: index), let p = raw.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<Object>.fromOpaque(p).takeUnretainedValue()
    }

    func isClosedInstance(in L: OpaquePointer, at index: Int32) -> Bool {
        guard let raw = slot(in: L, at: index) else { return false }
        return raw.load(as: UnsafeMutableRawPointer?.self) == nil
    }

    private func slot(in L: OpaquePointer, at index: Int32) -> UnsafeMutableRawPointer? {
        luaL_testudata(L, index, name)
    }

    /// Releases one retained object (called once per instance, by __gc or __close).
    /// It keeps the class alive: a class lives as long as any state that uses it.
    private lazy var releaser = UserdataReleaser { pointer in
        let object = Unmanaged<Object>.fromOpaque(pointer)
        self.onRelease?(object.takeUnretainedValue())
        object.release()
    }

    // MARK: the metatable

    /// Builds the metatable in the state's registry (once per state). Configure methods,
    /// properties and metamethods before the first instance is pushed: later additions are
    /// not seen. Two classes may not share a name in one state (a host programming error).
    func register(in state: LuaState) {
        let L = state.L
        if let owner = state.classNames[name] {
            precondition(owner == ObjectIdentifier(self), "two LuaClass types are named '\(name)' in one LuaState")
            return
        }
        state.classNames[name] = ObjectIdentifier(self)
        guard luaL_newmetatable(L, name) != 0 else {
            lua_settop(L, -2)
            return
        }
        state.classes[ObjectIdentifier(self)] = 1
        for (methodName, _) in methods { state.noteHostFunction("\(name):\(methodName)") }
        // The methods table, also consulted by __index.
        lua_createtable(L, 0, Int32(methods.count))
        for (methodName, body) in methods {
            state.pushFunction(settles: !nonSettling.contains(methodName)) { call in
                guard let object = self.object(in: call.L, at: 1) else {
                    if self.isClosedInstance(in: call.L, at: 1) { throw LuaScriptError("\(self.name) is closed") }
                    throw LuaArgumentError(index: 1, message: "\(self.name) expected, got \(call.typeName(1))")
                }
                return try body(object, call)
            }
            lua_setfield(L, -2, methodName)
        }
        let methodsRef = luaL_ref(L, luashim_registryindex())
        if getters.isEmpty {
            lua_rawgeti(L, luashim_registryindex(), lua_Integer(methodsRef))
        } else {
            state.pushFunction { call in
                lua_rawgeti(call.L, luashim_registryindex(), lua_Integer(methodsRef))
                lua_pushvalue(call.L, 2)
                if lua_rawget(call.L, -2) != LUA_TNIL { return 1 }
                lua_settop(call.L, 2)
                guard lua_type(call.L, 2) == LUA_TSTRING, let get = self.getters[LuaState.readString(call.L, 2)] else {
                    lua_pushnil(call.L)
                    return 1
                }
                guard let object = self.object(in: call.L, at: 1) else { throw LuaScriptError("\(self.name) is closed") }
                try get(object, call)
                return 1
            }
            state.noteMetamethod("\(name).__index")
        }
        lua_setfield(L, -2, "__index")
        state.pushFunction { call in
            let key = lua_type(call.L, 2) == LUA_TSTRING ? LuaState.readString(call.L, 2) : "?"
            guard let set = self.setters[key] else {
                throw LuaScriptError(self.getters[key] != nil ? "field '\(key)' of \(self.name) is read-only"
                                                                : "\(self.name) has no field '\(key)' to set")
            }
            guard let object = self.object(in: call.L, at: 1) else { throw LuaScriptError("\(self.name) is closed") }
            try set(object, call, 3)
            return 0
        }
        state.noteMetamethod("\(name).__newindex")
        lua_setfield(L, -2, "__newindex")
        state.pushFunction { call in
            if let object = self.object(in: call.L, at: 1) { call.push(try self.describe(object)) }
            else { call.push("\(self.name) (closed)") }
            return 1
        }
        state.noteMetamethod("\(name).__tostring")
        lua_setfield(L, -2, "__tostring")
        state.pushFunction { call in
            guard let a = self.object(in: call.L, at: 1), let b = self.object(in: call.L, at: 2) else {
                call.push(false)
                return 1
            }
            call.push(a === b || (self.equals?(a, b) ?? false))
            return 1
        }
        state.noteMetamethod("\(name).__eq")
        lua_setfield(L, -2, "__eq")
        state.keepAlive(releaser)
        luashim_push_userdata_release(L)
        lua_setfield(L, -2, "__close")
        luashim_push_userdata_release(L)
        lua_setfield(L, -2, "__gc")
        for (event, body) in metamethods {
            state.pushFunction { call in
                guard let object = self.object(in: call.L, at: 1) else { throw LuaScriptError("\(self.name) is closed") }
                return try body(object, call)
            }
            state.noteMetamethod("\(name).\(event)")
            lua_setfield(L, -2, event)
        }
        for property in getters.keys.sorted() { state.noteHostFunction("\(name).\(property)") }
        LuaState.pushString(L, name)
        lua_setfield(L, -2, "__name")
        LuaState.pushString(L, "locked")
        lua_setfield(L, -2, "__metatable")
        lua_settop(L, -2)
    }
}

extension LuaState {
    /// Registers a userdata class (its metatable) with this state.
    @_spi(Bindings) public func register<T>(_ type: LuaClass<T>) { type.register(in: self) }

    /// Pushes a Swift object as an instance of `type`. [-0, +1]
    @_spi(Bindings) public func push<T>(_ object: T, as type: LuaClass<T>) { type.push(object, in: L) }
}

/// The per-class token a userdata carries so its C `__gc` can release the Swift object.
final class UserdataReleaser {
    let release: (UnsafeMutableRawPointer) -> Void
    init(_ release: @escaping (UnsafeMutableRawPointer) -> Void) { self.release = release }
}

/// Called by C's userdata `__gc`/`__close`; never raises.
func releaseUserdata(_ object: UnsafeMutableRawPointer?, _ releaser: UnsafeMutableRawPointer?) {
    guard let object, let releaser else { return }
    Unmanaged<UserdataReleaser>.fromOpaque(releaser).takeUnretainedValue().release(object)
}
