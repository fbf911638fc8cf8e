import CStudyLua
import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel

/// The study API of a protocol: `study`, `sensorkit`, `schedule`, `time`,
/// `report`, `log`, and the Reader and SampleSet types. Each function turns Lua
/// arguments into model operations; delegate callbacks are queued on the event
/// loop, never called from inside the API call (SensorKit delivers asynchronously).
final class Bindings {
    unowned let run: ParticipantRun
    let readerClass = LuaClass<Reader>("SRSensorReader")
    let sampleSetClass = LuaClass<SampleSet>("SampleSet")
    let groupsClass = LuaClass<GroupedSet>("GroupedSampleSet")
    /// The `report` module of this run (its closures hold it unowned: kept here).
    var report: ReportModule?
    /// The prelude's (`CStudyLua/lua/runtime.lua`) `deliver(id, method, ...)`: calls a delegate method if present.
    var deliver: LuaReference?
    /// The prelude's error constructor: `make_error(code, name, domain, message, underlying)`.
    var makeError: LuaReference?
    /// The prelude's `set_field(table, key, value)` (request write-back).
    var setField: LuaReference?
    /// The prelude's reader bookkeeping (see `Reader`): `register_reader(id, reader)`,
    /// `get_delegate(reader)`, `set_delegate(reader, delegate)`, `pin(id)`, `unpin(id)`.
    var registerReader: LuaReference?
    var getDelegate: LuaReference?
    var setDelegate: LuaReference?
    var pinReader: LuaReference?
    var unpinReader: LuaReference?
    /// The prelude's `guard_sensors(t)`: makes reading an undeclared sensor of study{}'s table an error.
    var guardSensors: LuaReference?
    /// The next reader's id.
    /// What the SampleSets of this run keep in memory between passes (`ChunkCache`).
    let chunkBudget = ChunkBudget(limit: 32 << 20)
    /// Grouped aggregates asked for and not yet used: answered together (`DeferredSummaries`).
    let summaries = DeferredSummaries()
    var nextReaderID: Int64 = 1

    init(run: ParticipantRun) { self.run = run }

    /// Registers the study API in `state` (the run's state, being set up: called from
    /// `LuaState`'s set-up, inside its one protected call) and runs the prelude.
    static func install(in run: ParticipantRun, state: LuaState) throws {
        let b = Bindings(run: run)
        run.bindings = b
        b.defineReader()
        b.defineSampleSet()
        b.defineSampleSetDisplay()
        b.defineSummarize()
        let report = ReportModule(book: run.report, participant: run.setup.id)
        b.report = report
        state.register(b.readerClass)
        state.register(b.sampleSetClass)
        state.register(b.groupsClass)
        state.register(report.tableClass)
        state.register("study") { call in try b.study(call) }
        state.registerModule("sensorkit", b.sensorkitFunctions() + b.catalogueFunctions())
        state.registerModule("schedule", b.scheduleFunctions())
        state.registerModule("report", report.functions() + [b.findingFunction()] + b.chartFunctions())
        state.registerModule("time", TimeBindings.functions(b.timeContext))   // completed by the prelude's require "time"
        b.installTestBuiltins(in: state)
        let prelude = try b.runPrelude(in: state)
        b.deliver = try prelude.function("deliver")
        b.makeError = try prelude.function("make_error")
        b.setField = try prelude.function("set_field")
        b.registerReader = try prelude.function("register_reader")
        b.getDelegate = try prelude.function("get_delegate")
        b.setDelegate = try prelude.function("set_delegate")
        b.pinReader = try prelude.function("pin")
        b.unpinReader = try prelude.function("unpin")
        b.guardSensors = try prelude.function("guard_sensors")
    }

    /// Runs the runtime prelude (`CStudyLua/lua/runtime.lua`, embedded at build time) with
    /// the runtime's host functions (`__runtime`) as its argument, and returns the table of
    /// functions it hands back. Throws the prelude's error (a `LuaError`), or when it does
    /// not return a table.
    func runPrelude(in state: LuaState) throws -> LuaTable {
        let runtime = state.makeModule("__runtime", runtimeFunctions())
        var size = 0
        let text = cstudylua_runtime_source(&size)!
        let source = String(decoding: UnsafeRawBufferPointer(start: text, count: size), as: UTF8.self)
        let results = try state.execute(source, chunkName: "=runtime", arguments: [.reference(runtime)])
        guard let table = results.first?.tableValue else {
            throw LuaError(kind: .runtime, message: "runtime: the prelude did not return a table of functions")
        }
        return table
    }
}

extension LuaTable {
    /// The function in field `name` of a table the runtime's own Lua returned; throws
    /// when the field is missing or not a function (runtime.lua and Swift disagree).
    func function(_ name: String) throws -> LuaReference {
        guard case .function(let f)? = self[name] else {
            throw LuaError(kind: .runtime, message: "runtime: the prelude's table has no function '\(name)'")
        }
        return f
    }
}
