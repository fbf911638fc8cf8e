import CLua
import CLuaShim
import Foundation

/// Limits applied to every top-level call into Lua.
public struct LuaLimits: Sendable, Equatable {
    /// Bytes of Lua heap a script may use (0 = unlimited). Default 256 MiB.
    public var memoryBytes: Int
    /// Wall-clock milliseconds one top-level call may run (0 = unlimited). Default 10 s.
    /// Costs nothing until it fires; not deterministic (use `instructionBudget` for that).
    public var timeLimitMilliseconds: Int
    /// Lua VM instructions one top-level call may execute (0 = unlimited, the default).
    /// Deterministic, but a set budget makes tight loops about 2x slower.
    public var instructionBudget: Int

    /// Limits of `memoryBytes` (0: none), `timeLimitMilliseconds` per call (0: none) and `instructionBudget` per call (0: none).
    public init(memoryBytes: Int = 256 << 20, timeLimitMilliseconds: Int = 10_000, instructionBudget: Int = 0) {
        self.memoryBytes = memoryBytes
        self.timeLimitMilliseconds = timeLimitMilliseconds
        self.instructionBudget = instructionBudget
    }

    /// No memory, time or instruction limit.
    public static let unlimited = LuaLimits(memoryBytes: 0, timeLimitMilliseconds: 0, instructionBudget: 0)
}

/// An owned Lua 5.4 state: the one door between Swift and Lua.
///
/// Swift reaches Lua only through protected calls (`execute`, `call`, `pcall`)
/// with a traceback handler; Lua reaches Swift through functions registered
/// here, whose errors are raised by C after the Swift frame has returned.
/// Not thread-safe: use a state from one thread at a time.
public final class LuaState {
    /// The raw state. Not exported: embedders use the typed, stack-balanced API here
    /// (`push`, `value(at:)`, `makeReference(at:)`, `pcall`, `withStackGuard`), and host
    /// functions the `LuaCall` they are given.
    let L: OpaquePointer
    /// The limits in force (`setLimits`).
    public private(set) var limits: LuaLimits
    /// Where `print` writes. Default: standard output.
    public var output: (String) -> Void = { FileHandle.standardOutput.write(Data($0.utf8)) }
    /// When set, where `print` writes its line's bytes unchanged (non-UTF-8 bytes
    /// included, as stock Lua does); otherwise `output` gets the line as text, with
    /// invalid UTF-8 as U+FFFD (a study run's output is text: it goes into reports).
    public var outputBytes: (([UInt8]) -> Void)?
    /// The clock behind `os.time`, `os.clock` and `os.date`.
    public var clock: any HostClock = FixedClock()
    /// Options the sandbox was installed with (nil: no sandbox).
    public private(set) var sandbox: SandboxOptions?

    private var depth = 0
    /// Tables of results not computed yet, in the order they were pushed (`pushDeferred`):
    /// each table's registry reference and what computes it.
    var deferredTables: [(ref: Int32, deferred: any LuaDeferred)] = []
    /// True while `settleDeferred` runs (it is not re-entered).
    var settlingDeferred = false
    /// The sandbox's deterministic pretty-printer (`inspect`).
    var inspector: LuaReference?
    var classes: [ObjectIdentifier: Int32] = [:]
    var classNames: [String: ObjectIdentifier] = [:]
    /// The `LuaClass` of each Swift type registered with `register(class:name:_:)`, by type.
    var objectClasses: [ObjectIdentifier: ObjectClass] = [:]
    /// The class of uncatchable error values (`LuaUncatchableError`), registered on first use.
    lazy var uncatchableClass = UncatchableBox.makeClass()
    /// The class of a failed deferred table's error box (`luashim_fail_deferred_table`).
    lazy var failedResultClass = FailedResultBox.makeClass()
    /// Objects that must outlive the Lua state (class releasers): dropped after lua_close.
    private var keptAlive: [AnyObject] = []

    func keepAlive(_ object: AnyObject) { keptAlive.append(object) }

    /// Every host function registered in this state, named as a script reaches it
    /// (`study`, `sensorkit.reader`, `SRSensorReader:fetch`), the Swift metamethods of
    /// classes (`SampleSet.__len`, see `metamethod(named:)`) and class properties
    /// (`SRSensorReader.delegate`), in registration order. The hostile-arguments test
    /// drives each.
    @_spi(Bindings) public private(set) var hostFunctions: [String] = []

    /// Notes a host function in `hostFunctions`.
    func noteHostFunction(_ name: String) { hostFunctions.append(name) }

    /// The Swift metamethods of registered classes, by their `hostFunctions` name.
    private var metamethods: [String: LuaReference] = [:]

    /// Notes the metamethod on top of the stack in `hostFunctions` as `name` and keeps a
    /// reference to it for `metamethod(named:)`. [-0, +0]
    func noteMetamethod(_ name: String) {
        noteHostFunction(name)
        metamethods[name] = makeReference(at: -1)
    }

    /// A class's Swift metamethod by its `hostFunctions` name (`SampleSet.__len`,
    /// `SRSensorReader.__index`): a script reaches it only through operators and field
    /// access, with the object first; the hostile-arguments test calls it directly, with
    /// any arguments. Nil for other names.
    @_spi(Testing) public func metamethod(named name: String) -> LuaReference? { metamethods[name] }

    /// Creates a state and sets it up in one protected call, as `lua.c`'s `pmain`:
    /// opens the standard libraries, installs the sandbox unless `sandbox` is nil, then
    /// runs `setUp` (an embedder's registrations and its own Lua) under the same call.
    /// The memory limit holds from the start; the time limit too, the instruction
    /// budget only after set-up. Throws a `LuaError` when the state cannot be created or
    /// set-up fails (out of memory, a limit, an error in the set-up's Lua, or what
    /// `setUp` throws): no Lua error escapes as a longjmp through a Swift frame.
    public init(limits: LuaLimits = LuaLimits(), sandbox: SandboxOptions? = SandboxOptions(),
                setUp: ((LuaState) throws -> Void)? = nil) throws {
        guard let L = luashim_newstate(limits.memoryBytes > 0 ? limits.memoryBytes : 0) else {
            let why = luashim_newstate_error().map { String(cString: $0) } ?? "cannot create a Lua state: out of memory"
            throw LuaError(kind: .memory, message: why)
        }
        self.L = L
        self.limits = LuaLimits(memoryBytes: limits.memoryBytes, timeLimitMilliseconds: limits.timeLimitMilliseconds,
                                instructionBudget: 0)
        self.sandbox = sandbox
        luashim_set_context(L, Unmanaged.passUnretained(self).toOpaque())
        luashim_set_dispatcher(L, dispatchClosure, releaseClosure)
        luashim_set_userdata_release(L, releaseUserdata)
        // From here on, deinit closes the state if set-up throws.
        do {
            try runSetUp { state in
                state.installSettle()
                if let sandbox { state.inspector = try Sandbox.install(in: state, options: sandbox) }
                try setUp?(state)
            }
        } catch let error as LuaError {
            var failed = error
            failed.message = "Lua set-up failed: " + error.message
            throw failed
        }
        setLimits(limits)
    }

    /// Runs the host's set-up (`luashim_push_host_main`: the libraries, then `body` as a
    /// host function) in one call through `pcall`. Rethrows what `body` threw, or the
    /// Lua error that ended the call.
    private func runSetUp(_ body: @escaping (LuaState) throws -> Void) throws {
        var thrown: Error?
        let box = Unmanaged.passRetained(ClosureBox { call in
            do { try body(call.state) } catch {
                thrown = error
                throw error
            }
            return 0
        }).toOpaque()
        defer { Unmanaged<ClosureBox>.fromOpaque(box).release() }
        luashim_push_host_main(L, box)
        do {
            try pcall(arguments: 1, results: 0)
        } catch {
            throw thrown ?? error
        }
    }

    deinit {
        luashim_close(L)
    }

    /// Changes the limits for the next top-level calls.
    public func setLimits(_ limits: LuaLimits) {
        self.limits = limits
        applyLimits(limits)
    }

    private func applyLimits(_ limits: LuaLimits) {
        luashim_set_memory_limit(L, limits.memoryBytes > 0 ? limits.memoryBytes : 0)
        luashim_set_instruction_budget(L, Int64(limits.instructionBudget), 1000)
    }

    /// Bytes of Lua heap in use, and the peak since the last reset.
    public var memoryInUse: Int { luashim_memory_used(L) }
    /// The most memory the state held since creation or `resetPeakMemory()` (bytes).
    public var peakMemory: Int { luashim_memory_peak(L) }
    /// Starts `peakMemory` again from the memory in use.
    public func resetPeakMemory() { luashim_reset_memory_peak(L) }

    /// Runs a full garbage collection.
    public func collectGarbage() { _ = luashim_gc_collect(L) }

    static func owner(of L: OpaquePointer) -> LuaState {
        Unmanaged<LuaState>.fromOpaque(luashim_get_context(L)!).takeUnretainedValue()
    }

    // MARK: - running code

    /// Compiles a text chunk (bytecode is refused) and pushes it as a function. [-0, +1 on success, +0 on error]
    public func load(_ source: [UInt8], chunkName: String) throws {
        try load(source + [0], count: source.count, chunkName: chunkName)
    }

    /// Compiles `source` as chunk `chunkName` (see the byte form).
    public func load(_ source: String, chunkName: String) throws {
        try load(Array(source.utf8) + [0], count: source.utf8.count, chunkName: chunkName)
    }

    private func load(_ bytes: [UInt8], count: Int, chunkName: String) throws {
        let status = bytes.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buf.count) {
                luashim_load_text(L, $0, count, chunkName)
            }
        }
        if status != LUA_OK { throw takeError(status: status) }
    }

    /// Compiles and runs a chunk; returns its results.
    @discardableResult
    public func execute(_ source: String, chunkName: String = "=chunk", arguments: [LuaValue] = []) throws -> [LuaValue] {
        let top = lua_gettop(L)
        try load(source, chunkName: chunkName)
        for a in arguments { push(a) }
        try pcall(arguments: Int32(arguments.count), results: LUA_MULTRET)
        return popResults(from: top)
    }

    /// Reads a file and runs it with chunk name `@path`; the file's folder is searched by `require`.
    @discardableResult
    public func executeFile(_ path: String, arguments: [LuaValue] = []) throws -> [LuaValue] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LuaError(kind: .syntax, message: "cannot read \(path): no such file or not readable")
        }
        let top = lua_gettop(L)
        try load(Array(data), chunkName: "@" + path)
        for a in arguments { push(a) }
        try pcall(arguments: Int32(arguments.count), results: LUA_MULTRET)
        return popResults(from: top)
    }

    /// Calls a function held by reference, protected. Returns `results` values (all when LUA_MULTRET).
    @discardableResult
    @_spi(Bindings) public func call(_ function: LuaReference, _ args: [LuaValue] = [], results: Int32 = LUA_MULTRET) throws -> [LuaValue] {
        let top = lua_gettop(L)
        function.push(L)
        for a in args { push(a) }
        try pcall(arguments: Int32(args.count), results: results)
        return popResults(from: top)
    }

    /// Calls the global function `name`, protected.
    @discardableResult
    public func callGlobal(_ name: String, _ args: [LuaValue] = []) throws -> [LuaValue] {
        let top = lua_gettop(L)
        lua_getglobal(L, name)
        guard lua_type(L, -1) == LUA_TFUNCTION else {
            lua_settop(L, top)
            throw LuaError(kind: .runtime, message: "'\(name)' is not a function")
        }
        for a in args { push(a) }
        try pcall(arguments: Int32(args.count), results: LUA_MULTRET)
        return popResults(from: top)
    }

    private func popResults(from top: Int32) -> [LuaValue] {
        let n = lua_gettop(L) - top
        var out: [LuaValue] = []
        out.reserveCapacity(Int(max(n, 0)))
        if n > 0 { for i in 1...n { out.append(value(at: top + i)) } }
        lua_settop(L, top)
        return out
    }

    /// The protected call every path into Lua goes through: the function and
    /// `arguments` values are on the stack; on success `results` values replace
    /// them, on error nothing is left and a `LuaError` is thrown. The outermost
    /// call arms the deadline and clears any earlier stop.
    @_spi(Bindings) public func pcall(arguments: Int32, results: Int32) throws {
        let outermost = depth == 0
        if outermost {
            luashim_clear_stop(L)
            luashim_set_instruction_budget(L, Int64(limits.instructionBudget), 1000)
            if limits.timeLimitMilliseconds > 0 { luashim_deadline_arm(L, Int64(limits.timeLimitMilliseconds)) }
        }
        let base = lua_gettop(L) - arguments - 1
        depth += 1
        let status = luashim_pcall(L, arguments, results)
        depth -= 1
        guard status != LUA_OK else {
            if outermost {
                // Results the script asked for and never used are computed before the
                // call returns to Swift: their side effects and errors belong to it.
                if !deferredTables.isEmpty {
                    luashim_push_settle(L)
                    let settled = luashim_pcall(L, 0, 0)
                    if settled != LUA_OK {
                        let error = takeError(status: settled)
                        lua_settop(L, base)
                        luashim_deadline_disarm(L)
                        luashim_clear_stop(L)
                        throw error
                    }
                }
                luashim_deadline_disarm(L)
                luashim_clear_stop(L)
            }
            return
        }
        // The deadline (and a stop in force) still hold while the error is read:
        // an error object's __tostring that loops is stopped too.
        let error = takeError(status: status)
        if outermost {
            luashim_deadline_disarm(L)
            luashim_clear_stop(L)
            if error.kind == .stopped || error.kind == .memory { collectGarbage() }
        }
        throw error
    }

    /// Pops the error value left by a failed load or call and turns it into a `LuaError`.
    func takeError(status: Int32) -> LuaError {
        let stopReason = luashim_stop_reason(L)
        var traceback: String?
        luashim_push_last_traceback(L)
        if lua_type(L, -1) == LUA_TSTRING { traceback = LuaState.readString(L, -1) }
        lua_settop(L, -2)
        var message: String
        var value: LuaValue?
        let hostError = uncatchableClass.object(in: L, at: -1)?.error
        switch lua_type(L, -1) {
        case LUA_TSTRING:
            message = LuaState.readString(L, -1)
        case LUA_TNIL, LUA_TNONE:
            message = "(error object is a nil value)"
        default:
            value = LuaState.readValue(L, -1)
            if luaL_getmetafield(L, -1, "__tostring") != LUA_TNIL {
                lua_settop(L, -2)
                if luashim_tolstring_protected(L, -1) == LUA_OK, lua_type(L, -1) == LUA_TSTRING {
                    message = LuaState.readString(L, -1)
                } else {
                    message = "(error object is a \(value?.typeName ?? "?") value)"
                }
                lua_settop(L, -2)
            } else if let text = value?.tableValue?["message"]?.stringValue {
                message = text            // a table error with a message field: { message = "…" }
            } else if let value, case .table = value {
                message = "(error object is a table without __tostring: \(value.shortDescription()))"   // never an address
            } else {
                message = "(error object is a \(value?.typeName ?? "?") value)"   // never an address
            }
        }
        lua_settop(L, -2)
        // An error raised inside the sandbox's own wrappers is placed at the script's line.
        if message.hasPrefix("sandbox:"), let tb = traceback, let (chunk, line) = LuaError.firstScriptFrame(in: tb),
           let colon = message.dropFirst("sandbox:".count).firstIndex(of: ":") {
            message = "\(chunk):\(line)" + message[colon...]
        }
        if status == LUA_ERRMEM {
            if stopReason == LUASHIM_STOP_MEMORY.rawValue {
                let refused = luashim_refused_allocation(L)
                message = "stopped: memory limit of \(LuaState.formatBytes(limits.memoryBytes)) exceeded"
                    + (refused > 0 ? " (a single allocation of \(LuaState.formatBytes(refused)) was refused)" : "")
                return LuaError(kind: .stopped, message: message, traceback: traceback, stop: .memoryLimit)
            }
            return LuaError(kind: .memory, message: message, traceback: traceback)
        }
        if let stop = LuaState.stop(for: stopReason), message.contains("stopped: ") {
            return LuaError(kind: .stopped, message: message, traceback: traceback, stop: stop, value: value)
        }
        let kind: LuaError.Kind = switch status {
        case LUA_ERRSYNTAX: .syntax
        case LUA_ERRERR: .errorHandler
        default: .runtime
        }
        return LuaError(kind: kind, message: message, traceback: traceback, value: value, hostError: hostError)
    }

    static func stop(for reason: Int32) -> LuaError.Stop? {
        switch UInt32(bitPattern: reason) {
        case LUASHIM_STOP_BUDGET.rawValue: .instructionBudget
        case LUASHIM_STOP_DEADLINE.rawValue: .timeLimit
        case LUASHIM_STOP_MEMORY.rawValue: .memoryLimit
        case LUASHIM_STOP_INTERRUPT.rawValue: .interrupted
        default: nil
        }
    }

    static func formatBytes(_ n: Int) -> String {
        if n >= 1 << 30, n % (1 << 30) == 0 { return "\(n >> 30) GiB" }
        if n >= 1 << 20 { return n % (1 << 20) == 0 ? "\(n >> 20) MiB" : String(format: "%.1f MiB", Double(n) / 1048576) }
        if n >= 1 << 10 { return "\(n >> 10) KiB" }
        return "\(n) bytes"
    }

    /// Formats values with the deterministic pretty-printer (`inspect` in scripts):
    /// tables nested with sorted keys, cycles marked, no addresses.
    public func inspect(_ values: [LuaValue]) throws -> String {
        guard let inspector else { return values.map { "\($0)" }.joined(separator: "\t") }
        return try values.map { try call(inspector, [$0], results: 1).first?.stringValue ?? "" }.joined(separator: "\t")
    }

    /// Formats the `count` values from stack index `first` with the pretty-printer,
    /// tab-separated (the values themselves are left in place).
    @_spi(Bindings) public func inspectStack(from first: Int32, count: Int32) throws -> String {
        var parts: [String] = []
        for i in 0..<count {
            let top = lua_gettop(L)
            if let inspector { inspector.push(L) } else { lua_getglobal(L, "tostring") }
            lua_pushvalue(L, first + i)
            try pcall(arguments: 1, results: 1)
            parts.append(LuaState.readString(L, -1))
            lua_settop(L, top)
        }
        return parts.joined(separator: "\t")
    }

    /// Asks a running script to stop with "interrupted" (safe from another thread).
    public func interrupt() { luashim_request_interrupt(L) }

    /// Makes SIGINT (Ctrl-C) interrupt this state's running script, as `lua.c`'s
    /// `laction` does; with no script running it only raises the flag
    /// `takeInterruptSignal` reads. One state at a time holds the handler.
    public func catchInterruptSignal() { luashim_install_sigint(L) }

    /// Restores SIGINT's default action (the process ends).
    public static func releaseInterruptSignal() { luashim_install_sigint(nil) }

    /// Whether SIGINT arrived since the last call, while a state caught it (clears the flag).
    public static func takeInterruptSignal() -> Bool { luashim_take_sigint() != 0 }

    /// Registers the host's bare call paths as globals, for `sensorium bench lua` to
    /// compare with a registered closure: `c_function` (a plain C function) and
    /// `swift_function` (a Swift function through the trampoline, no closure), each
    /// returning its first argument.
    @_spi(Benchmarks) public func registerCallBaselines() {
        luashim_push_c_identity(L)
        lua_setglobal(L, "c_function")
        luashim_push_swiftfn(L, swiftIdentity)
        lua_setglobal(L, "swift_function")
    }

    // MARK: - globals and functions

    /// Sets a global to a value.
    public func setGlobal(_ name: String, _ value: LuaValue) {
        push(value)
        lua_setglobal(L, name)
    }

    /// Reads a global (raw copy).
    public func global(_ name: String) -> LuaValue {
        lua_getglobal(L, name)
        defer { lua_settop(L, -2) }
        return value(at: -1)
    }

    /// Registers a Swift closure as the global function `name` (`settles`: see `pushFunction`).
    @_spi(Bindings) public func register(_ name: String, settles: Bool = true, _ function: @escaping LuaFunction) {
        noteHostFunction(name)
        pushFunction(settles: settles, function)
        lua_setglobal(L, name)
    }

    /// Pushes a Swift closure as a Lua function. [-0, +1] `settles`: whether a call first
    /// computes the results pending in deferred tables (`pushDeferred`); false only for
    /// functions that may be called while results are pending without observing them
    /// (those that ask for more deferred results).
    @_spi(Bindings) public func pushFunction(settles: Bool = true, _ function: @escaping LuaFunction) {
        let box = Unmanaged.passRetained(ClosureBox(function, settles: settles)).toOpaque()
        luashim_push_closure(L, box)
    }

    /// Pushes a table of Swift functions (a module). [-0, +1]
    @_spi(Bindings) public func pushModule(_ functions: [(String, LuaFunction)]) {
        lua_createtable(L, 0, Int32(functions.count))
        for (name, fn) in functions {
            pushFunction(fn)
            lua_setfield(L, -2, name)
        }
    }

    /// Registers `functions` as the global table `name`.
    @_spi(Bindings) public func registerModule(_ name: String, _ functions: [(String, LuaFunction)]) {
        for (function, _) in functions { noteHostFunction(name + "." + function) }
        pushModule(functions)
        lua_setglobal(L, name)
    }

    /// A table of Swift functions (a module) that is not a global, held by reference: for
    /// Lua the host runs, which receives it as an argument. Its functions are listed in
    /// `hostFunctions` as `name.function`. [-0, +0]
    @_spi(Bindings) public func makeModule(_ name: String, _ functions: [(String, LuaFunction)]) -> LuaReference {
        for (function, _) in functions { noteHostFunction(name + "." + function) }
        pushModule(functions)
        defer { lua_settop(L, -2) }
        return makeReference(at: -1)
    }

    // MARK: - values

    /// Pushes a Swift value. [-0, +1]
    @_spi(Bindings) public func push(_ value: LuaValue) { LuaState.pushValue(L, value) }

    /// Copies the value at `index` into Swift. [-0, +0]
    @_spi(Bindings) public func value(at index: Int32) -> LuaValue { LuaState.readValue(L, index) }

    /// Pushes a copy of the value at `index`. [-0, +1]
    @_spi(Bindings) public func pushCopy(of index: Int32) { lua_pushvalue(L, index) }

    /// Stack top (number of values on the stack); read-only: `withStackGuard` restores it.
    @_spi(Bindings) public var top: Int32 { lua_gettop(L) }

    /// Runs `body` and then puts the stack back as it found it, whether `body` returns or
    /// throws (mlua's stack guard): values `body` pushes are dropped, a reference taken
    /// to them (`makeReference(at:)`) stays valid. `body` must not pop values it did not
    /// push. [-0, +0]
    @_spi(Bindings) public func withStackGuard<T>(_ body: () throws -> T) rethrows -> T {
        let top = lua_gettop(L)
        defer { lua_settop(L, top) }
        return try body()
    }

    /// A reference to the value at `index`, kept alive until the reference is released.
    @_spi(Bindings) public func makeReference(at index: Int32) -> LuaReference {
        lua_pushvalue(L, index)
        let ref = luaL_ref(L, luashim_registryindex())
        return LuaReference(state: self, ref: ref)
    }

    static func pushString(_ L: OpaquePointer, _ s: String) {
        var s = s
        s.withUTF8 { buf in
            buf.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
        }
    }

    static func readString(_ L: OpaquePointer, _ index: Int32) -> String {
        var len = 0
        guard let p = luashim_tolstring_raw(L, index, &len) else { return "" }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) {
            String(decoding: UnsafeBufferPointer(start: $0, count: len), as: UTF8.self)
        }
    }

    static func readBytes(_ L: OpaquePointer, _ index: Int32) -> [UInt8] {
        var len = 0
        guard let p = luashim_tolstring_raw(L, index, &len) else { return [] }
        return p.withMemoryRebound(to: UInt8.self, capacity: len) { Array(UnsafeBufferPointer(start: $0, count: len)) }
    }

    static func pushValue(_ L: OpaquePointer, _ value: LuaValue) {
        switch value {
        case .nil, .opaque: lua_pushnil(L)
        case .boolean(let b): lua_pushboolean(L, b ? 1 : 0)
        case .integer(let i): lua_pushinteger(L, lua_Integer(i))
        case .number(let d): lua_pushnumber(L, d)
        case .string(let s): pushString(L, s)
        case .bytes(let b):
            b.withUnsafeBufferPointer { buf in
                buf.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
            }
        case .table(let t):
            _ = lua_checkstack(L, 3)
            let n = t.arrayValue?.count ?? 0
            lua_createtable(L, Int32(n), Int32(t.entries.count - n))
            for e in t.entries {
                if case .nil = e.key { continue }
                pushValue(L, e.key)
                pushValue(L, e.value)
                lua_rawset(L, -3)
            }
        case .function(let ref), .reference(let ref): ref.push(L)
        }
    }

    static func readValue(_ L: OpaquePointer, _ index: Int32) -> LuaValue {
        var visiting = Set<UnsafeRawPointer>()
        return readValue(L, lua_absindex(L, index), &visiting)
    }

    private static func readValue(_ L: OpaquePointer, _ index: Int32, _ visiting: inout Set<UnsafeRawPointer>) -> LuaValue {
        switch lua_type(L, index) {
        case LUA_TNIL, LUA_TNONE: return .nil
        case LUA_TBOOLEAN: return .boolean(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            if lua_isinteger(L, index) != 0 {
                var ok: Int32 = 0
                return .integer(Int64(luashim_tointeger(L, index, &ok)))
            }
            return .number(luashim_tonumber(L, index))
        case LUA_TSTRING:
            let bytes = readBytes(L, index)
            if let s = String(validating: bytes, as: UTF8.self) { return .string(s) }
            return .bytes(bytes)
        case LUA_TTABLE:
            guard let p = lua_topointer(L, index), !visiting.contains(p), visiting.count < 200,
                  lua_checkstack(L, 3) != 0 else { return .opaque("table (cycle)") }
            visiting.insert(p)
            defer { visiting.remove(p) }
            var entries: [(key: LuaValue, value: LuaValue)] = []
            lua_pushnil(L)
            while lua_next(L, index) != 0 {
                let top = lua_gettop(L)
                let k = readValue(L, top - 1, &visiting)
                let v = readValue(L, top, &visiting)
                entries.append((k, v))
                lua_settop(L, -2)
            }
            entries.sort { LuaState.keyPrecedes($0.key, $1.key) }
            return .table(LuaTable(entries: entries))
        case LUA_TFUNCTION:
            return .function(owner(of: L).makeReference(at: index))
        default:
            return .opaque(String(cString: lua_typename(L, lua_type(L, index))))
        }
    }

    /// The stable key order of `pairs`: numbers, strings (bytewise), booleans, the rest.
    static func keyPrecedes(_ a: LuaValue, _ b: LuaValue) -> Bool {
        func rank(_ v: LuaValue) -> Int {
            switch v {
            case .integer, .number: 0
            case .string, .bytes: 1
            case .boolean: 2
            default: 3
            }
        }
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb }
        switch (a, b) {
        case let (.integer(x), .integer(y)): return x < y
        case (.integer, _), (.number, _): return (a.doubleValue ?? 0) < (b.doubleValue ?? 0)
        case (.string, _), (.bytes, _):
            let x: [UInt8] = if case .bytes(let bb) = a { bb } else { Array(a.stringValue!.utf8) }
            let y: [UInt8] = if case .bytes(let bb) = b { bb } else { Array(b.stringValue!.utf8) }
            return x.lexicographicallyPrecedes(y)
        case let (.boolean(x), .boolean(y)): return !x && y
        default: return false
        }
    }
}

/// A Lua value kept alive in the registry for Swift (functions, tables).
/// Releasing the last Swift reference releases the Lua value.
public final class LuaReference: @unchecked Sendable, Equatable, CustomStringConvertible {
    weak var state: LuaState?
    let ref: Int32

    init(state: LuaState, ref: Int32) {
        self.state = state
        self.ref = ref
    }

    deinit {
        if let state { luaL_unref(state.L, luashim_registryindex(), ref) }
    }

    /// Pushes the referenced value. [-0, +1]
    func push(_ L: OpaquePointer) {
        if state != nil { lua_rawgeti(L, luashim_registryindex(), lua_Integer(ref)) } else { lua_pushnil(L) }
    }

    public static func == (a: LuaReference, b: LuaReference) -> Bool { a === b }
    public var description: String { "function" }
}

final class ClosureBox {
    let body: LuaFunction
    /// Whether pending deferred tables are settled before `body` runs.
    let settles: Bool
    init(_ body: @escaping LuaFunction, settles: Bool = true) {
        self.body = body
        self.settles = settles
    }
}

/// A Swift function for the call benchmark (`registerCallBaselines`): returns its first argument.
private func swiftIdentity(_ L: OpaquePointer?) -> Int32 {
    lua_settop(L, 1)
    return 1
}

/// The one dispatcher for Swift closures (called by C's closure trampoline).
private func dispatchClosure(_ L: OpaquePointer?, _ box: UnsafeMutableRawPointer?) -> Int32 {
    let closure = Unmanaged<ClosureBox>.fromOpaque(box!).takeUnretainedValue()
    guard closure.settles, luashim_deferred_any(L) != 0 else { return invokeSwift(L!, closure.body) }
    if luashim_deferred_failed(L) > 0, let error = LuaState.owner(of: L!).failedDeferredArgumentError() {
        // Given a result whose computing failed: its error, never an empty table.
        return invokeSwift(L!) { _ in throw error }
    }
    if luashim_deferred_pending(L) != 0, !LuaState.owner(of: L!).deferredTables.isEmpty {
        // A host function sees every result the script asked for before it: computed now.
        return invokeSwift(L!) { call in
            try call.state.settleDeferred()
            return try closure.body(call)
        }
    }
    return invokeSwift(L!, closure.body)
}

private func releaseClosure(_ box: UnsafeMutableRawPointer?) {
    Unmanaged<ClosureBox>.fromOpaque(box!).release()
}

/// Runs a Swift function for Lua and turns a thrown error into the RAISE sentinel
/// with the error value on the stack. Never raises itself.
func invokeSwift(_ L: OpaquePointer, _ body: LuaFunction) -> Int32 {
    do {
        return try body(LuaCall(L))
    } catch let e as LuaArgumentError {
        luashim_push_argerror(L, e.index, e.message)
    } catch let e as LuaRaisable {
        e.pushErrorValue(LuaCall(L))
    } catch let e as LuaUncatchableError {
        LuaState.owner(of: L).uncatchableClass.push(UncatchableBox(e), in: L)
        return LUASHIM_RAISE_NOPREFIX
    } catch let e as LuaError {
        // A Lua error from a nested protected call: re-raise it unchanged in spirit (an
        // uncatchable one as a new value carrying the same Swift error).
        if let carried = e.hostError as? LuaUncatchableError {
            LuaState.owner(of: L).uncatchableClass.push(UncatchableBox(carried), in: L)
        } else if let v = e.value { LuaState.pushValue(L, v) } else { LuaState.pushString(L, e.message) }
        return LUASHIM_RAISE_NOPREFIX
    } catch {
        LuaState.pushString(L, String(describing: error))
    }
    return LUASHIM_RAISE
}




/// What Lua tells of a function without running it: its parameter names and where
/// it is defined. Host (C) functions have no named parameters (`isHost`).
public struct LuaFunctionInfo: Sendable, Equatable {
    /// The named parameters, in order (empty for a host function).
    public var parameters: [String]
    /// Whether the function takes `...`.
    public var isVararg: Bool
    /// True for a C or Swift function: Lua knows nothing of its parameters.
    public var isHost: Bool
    /// The chunk name it was loaded under (`@path` for a file), empty for a host function.
    public var source: String
    /// The line of its `function` keyword (0 for a host function).
    public var line: Int
}

extension LuaState {
    /// The parameters and definition site of `function`; nil when the reference is not a
    /// function. Reads debug information only: `lua_getinfo(">Su")` and
    /// `lua_getlocal(NULL, n)` neither raise nor allocate. [-0, +0]
    public func functionInfo(_ function: LuaReference) -> LuaFunctionInfo? {
        withStackGuard {
            function.push(L)
            guard lua_type(L, -1) == LUA_TFUNCTION else { return nil }
            var ar = lua_Debug()
            lua_pushvalue(L, -1)
            _ = lua_getinfo(L, ">Su", &ar)
            let isHost = ar.what.map { String(cString: $0) == "C" } ?? true
            var parameters: [String] = []
            if !isHost && ar.nparams > 0 {
                for n in 1...Int32(ar.nparams) {
                    guard let name = lua_getlocal(L, nil, n) else { break }
                    parameters.append(String(cString: name))
                }
            }
            return LuaFunctionInfo(parameters: parameters, isVararg: ar.isvararg != 0, isHost: isHost,
                                   source: isHost ? "" : ar.source.map { String(cString: $0) } ?? "",
                                   line: isHost ? 0 : Int(ar.linedefined))
        }
    }

    /// The `__name` of the metatable of the value `path` names (`"light"`, `"a.b"`), read
    /// raw from the globals without running any metamethod; nil when a step is not a
    /// plain table field or the value has no named metatable. Nothing is allocated (keys
    /// are found by walking the tables), so it cannot raise, not even at the memory limit:
    /// the REPL calls it from the terminal's completion hook. [-0, +0]
    public func className(ofGlobalPath path: [String]) -> String? {
        guard !path.isEmpty else { return nil }
        return withStackGuard {
            guard pushGlobalPath(path), lua_getmetatable(L, -1) != 0, pushRawField("__name"),
                  lua_type(L, -1) == LUA_TSTRING else { return nil }
            return LuaState.readString(L, -1)
        }
    }

    /// The string keys of the table `path` names in the globals (the globals themselves
    /// for an empty path), read raw, sorted; empty when it is not a table. Allocates nothing
    /// in Lua, as `className(ofGlobalPath:)`. [-0, +0]
    public func tableKeys(atGlobalPath path: [String]) -> [String] {
        withStackGuard {
            guard pushGlobalPath(path), lua_type(L, -1) == LUA_TTABLE else { return [] }
            var keys: [String] = []
            lua_pushnil(L)
            while lua_next(L, -2) != 0 {
                if lua_type(L, -2) == LUA_TSTRING { keys.append(LuaState.readString(L, -2)) }
                lua_settop(L, -2)
            }
            return keys.sorted()
        }
    }

    /// Pushes the value `path` names in the globals, step by step through plain tables;
    /// false (with something pushed) when a step is missing. [-0, +k]
    private func pushGlobalPath(_ path: [String]) -> Bool {
        // Room for the path, a metatable and a key/value pair; lua_checkstack reports, never raises.
        guard lua_checkstack(L, Int32(path.count) + 6) != 0 else { return false }
        lua_rawgeti(L, luashim_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
        for key in path {
            guard lua_type(L, -1) == LUA_TTABLE, pushRawField(key) else { return false }
        }
        return true
    }

    /// Pushes the field `key` of the table on top, found by `lua_next` (no string is
    /// created, so nothing can raise); false, with nothing pushed, when it has none. [-0, +(0|1)]
    private func pushRawField(_ key: String) -> Bool {
        guard lua_type(L, -1) == LUA_TTABLE else { return false }
        let table = lua_gettop(L)
        lua_pushnil(L)
        while lua_next(L, table) != 0 {
            if lua_type(L, -2) == LUA_TSTRING, LuaState.readString(L, -2) == key {
                lua_copy(L, -1, table + 1)        // the value where the key was
                lua_settop(L, table + 1)
                return true
            }
            lua_settop(L, -2)
        }
        return false
    }
}
