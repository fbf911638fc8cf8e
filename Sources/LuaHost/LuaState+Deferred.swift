import CLua
import CLuaShim

/// A table of results a host function hands the script before computing them: the
/// host can then answer several requests together (one pass over data for several
/// aggregates) when the first of them is used.
///
/// The script sees an ordinary table. It is filled (`resolve`) the first time the
/// script reads, writes, measures or iterates it, or passes it — or anything — to a
/// host function that settles (every one but those that ask for more deferred
/// results, `pushFunction(settles: false)`), or when a `pcall`/`xpcall` starts (results
/// asked before it) or returns (results asked inside it, whether its function ended well
/// or in an error: theirs came first), or when the protected call from Swift that made it
/// ends: every
/// pending table is filled then, in the order they were pushed. So a result is
/// computed before anything could observe its absence, and an error computing it is
/// raised inside the same callback and the same `pcall`, naming the line that asked.
@_spi(Bindings) public protocol LuaDeferred: AnyObject {
    /// The table's contents: a table value whose entries are copied into it (anything
    /// else leaves it empty). Throws what computing it throws; it may be called again
    /// after it threw.
    func resolve() throws -> LuaValue
    /// `"file:line"` of the statement that asked for it (`LuaCall.scriptPosition`):
    /// an error computing it is raised with this prefix.
    var position: String? { get }
}

extension LuaState {
    /// Registers the function the deferred tables' metamethods, the settling base
    /// functions and `pcall` call (`luashim_set_settle`). Set-up only. [-0, +0]
    func installSettle() {
        pushFunction(settles: false) { call in
            let state = call.state
            try state.settleDeferred()
            // The table looked at, when its computing failed: its error again.
            if lua_type(state.L, 1) == LUA_TTABLE, let p = lua_topointer(state.L, 1), let failed = state.failedDeferred[p] {
                throw failed.error
            }
            return 0
        }
        luashim_set_settle(L)
    }

    /// Pushes a new, empty table that `deferred` fills when it is first needed (see
    /// `LuaDeferred`). [-0, +1]
    @_spi(Bindings) public func pushDeferred(_ deferred: any LuaDeferred) {
        luashim_push_deferred_table(L)
        lua_pushvalue(L, -1)
        let ref = luaL_ref(L, luashim_registryindex())
        deferredTables.append((ref, deferred))
        luashim_set_deferred_pending(L, 1)
    }

    /// Fills every pending deferred table, in the order they were pushed, and removes
    /// their metatable. Throws the first failure — a `LuaError` whose message is the
    /// request's position and the error (a raisable or uncatchable host error as it
    /// is) —; that table is then failed (`failedDeferred`: looking at it raises the
    /// error again) and later ones stay pending. Not re-entered: a call while settling
    /// returns at once.
    func settleDeferred() throws {
        guard !settlingDeferred else { return }
        settlingDeferred = true
        defer {
            settlingDeferred = false
            luashim_set_deferred_pending(L, deferredTables.isEmpty && failedDeferred.isEmpty ? 0 : 1)
        }
        while let (ref, deferred) = deferredTables.first {
            deferredTables.removeFirst()
            let value: LuaValue
            do {
                value = try deferred.resolve()
            } catch {
                let raised = LuaState.raisable(error, at: deferred.position)
                lua_rawgeti(L, luashim_registryindex(), lua_Integer(ref))
                if let p = lua_topointer(L, -1) { failedDeferred[p] = (ref, raised) }
                lua_settop(L, -2)
                throw raised
            }
            fill(ref, with: value)
        }
    }

    /// The error to raise for a deferred table whose computing threw `error`: a raisable
    /// or uncatchable host error or a Lua error as it is, any other as a `LuaError`
    /// with the asking statement's position prefixed (as a host function's error is
    /// prefixed with its caller's).
    private static func raisable(_ error: any Error, at position: String?) -> any Error {
        switch error {
        case is LuaUncatchableError, is LuaRaisable, is LuaError: return error
        default:
            let text = String(describing: error)
            return LuaError(kind: .runtime, message: position.map { "\($0): \(text)" } ?? text)
        }
    }

    /// Copies `value`'s entries into the table at registry reference `ref`, removes its
    /// metatable and releases the reference. [-0, +0]
    private func fill(_ ref: Int32, with value: LuaValue) {
        lua_rawgeti(L, luashim_registryindex(), lua_Integer(ref))
        if case .table(let table) = value {
            for entry in table.entries {
                LuaState.pushValue(L, entry.key)
                LuaState.pushValue(L, entry.value)
                lua_rawset(L, -3)
            }
        }
        lua_pushnil(L)
        lua_setmetatable(L, -2)
        lua_settop(L, -2)
        luaL_unref(L, luashim_registryindex(), ref)
    }
}
