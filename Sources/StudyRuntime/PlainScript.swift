import CStudyLua
@_spi(Bindings) import LuaHost
import StudyReport

/// What a plain Lua script (a file with no `study{}`) gets from the study runtime: the one
/// `time` module over its state's clock (no study span), the one `report` module (tables
/// in `report`, printed after the script), the duration globals, and a `sensorkit` that
/// says it needs a study (`CStudyLua/lua/plain.lua`). `require "time"` and
/// `require "report"` return those same tables, as in a protocol and the REPL.
public final class PlainScript {
    /// The tables the script reported (no `participant` column).
    public let report = ReportBook()
    private var module: ReportModule?

    public init() {}

    /// Installs the runtime in `state` (made with `Stdlib.sandbox`, so that `require "time"`
    /// finds the stdlib); throws the `LuaError` of a failed set-up.
    public func install(in state: LuaState) throws {
        let reportModule = ReportModule(book: report, participant: nil)
        module = reportModule
        state.register(reportModule.tableClass)
        state.registerModule("report", reportModule.functions())
        let clock = { [unowned state] in state.clock }
        state.registerModule("time", TimeBindings.functions(TimeContext(now: { clock().now }, timeZone: { clock().timeZone }, study: nil)))
        var size = 0
        let text = cstudylua_plain_source(&size)!
        let source = String(decoding: UnsafeRawBufferPointer(start: text, count: size), as: UTF8.self)
        try state.execute(source, chunkName: "=plain")
    }
}
