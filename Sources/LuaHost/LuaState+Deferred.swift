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
            if let error = state.failedDeferredError(at: 1) { throw error }
            return 0
        }
        luashim_set_settle(L)
    }

    /// Failed deferred tables the script still holds (they go with the table, when the
    /// collector takes it). For diagnostics and tests.
    @_spi(Bindings) public var failedDeferredTables: Int { Int(luashim_deferred_failed(L)) }

    /// The error of the failed deferred table at `index` (`luashim_fail_deferred_table`),
    /// nil for any other value. [-0, +0]
    func failedDeferredError(at index: Int32) -> (any Error)? {
        guard luashim_push_failed_box(L, index) != 0 else { return nil }
        defer { lua_settop(L, -2) }
        return failedResultClass.object(in: L, at: -1)?.error
    }

    /// The error of the first argument of a host function that is a failed deferred table
    /// (a host function never sees one as an empty table). Costs a load while no failed
    /// table is alive. [-0, +0]
    func failedDeferredArgumentError() -> (any Error)? {
        guard luashim_deferred_failed(L) > 0 else { return nil }
        let top = lua_gettop(L)
        guard top > 0 else { return nil }
        for i in 1...top { if let error = failedDeferredError(at: i) { return error } }
        return nil
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
    /// is) —; that table is then failed (`fail`: looking at it raises the error again)
    /// and later ones stay pending. Not re-entered: a call while settling returns at once.
    func settleDeferred() throws {
        guard !settlingDeferred else { return }
        settlingDeferred = true
        defer {
            settlingDeferred = false
            luashim_set_deferred_pending(L, deferredTables.isEmpty ? 0 : 1)
        }
        while let (ref, deferred) = deferredTables.first {
            deferredTables.removeFirst()
            let value: LuaValue
            do {
                value = try deferred.resolve()
            } catch {
                let raised = LuaState.raisable(error, at: deferred.position)
                fail(ref, with: raised)
                throw raised
            }
            fill(ref, with: value)
        }
    }

    /// Makes the table at registry reference `ref` a failed one, holding `error` in its
    /// own metatable (collected with it), and releases the reference. [-0, +0]
    private func fail(_ ref: Int32, with error: any Error) {
        lua_rawgeti(L, luashim_registryindex(), lua_Integer(ref))
        failedResultClass.push(FailedResultBox(error), in: L)
        luashim_fail_deferred_table(L)
        luaL_unref(L, luashim_registryindex(), ref)
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

/// The error of a failed deferred table, kept in the table's metatable as a userdata.
final class FailedResultBox {
    let error: any Error
    init(_ error: any Error) { self.error = error }

    static func makeClass() -> LuaClass<FailedResultBox> {
        let c = LuaClass<FailedResultBox>("failed result")
        c.describe = { String(describing: $0.error) }
        return c
    }
}
