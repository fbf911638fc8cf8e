import Foundation
import LuaHost
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
    /// The prelude's `deliver(reader, method, ...)`: calls a delegate method if present.
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
    /// The next reader's id.
    /// What the SampleSets of this run keep in memory between passes (`ChunkCache`).
    let chunkBudget = ChunkBudget(limit: 32 << 20)
    var nextReaderID: Int64 = 1

    init(run: ParticipantRun) { self.run = run }

    static func install(in run: ParticipantRun) throws {
        let b = Bindings(run: run)
        run.bindings = b
        b.defineReader()
        b.defineSampleSet()
        b.defineSampleSetDisplay()
        b.defineSummarize()
        let state = run.state
        state.register(b.readerClass)
        state.register(b.sampleSetClass)
        state.register(b.groupsClass)
        state.register("study") { call in try b.study(call) }
        state.registerModule("sensorkit", b.sensorkitFunctions() + b.catalogueFunctions())
        state.registerModule("schedule", b.scheduleFunctions())
        state.registerModule("report", b.reportFunctions() + [b.findingFunction()] + b.chartFunctions())
        b.installTestBuiltins()
        state.registerModule("__runtime", b.runtimeFunctions())
        let prelude = try state.execute(Bindings.prelude, chunkName: "=runtime")
        func function(_ i: Int) -> LuaReference? {
            prelude.dropFirst(i).first.flatMap { if case .function(let f) = $0 { f } else { nil } }
        }
        b.deliver = function(0)
        b.makeError = function(1)
        b.setField = function(2)
        b.registerReader = function(3)
        b.getDelegate = function(4)
        b.setDelegate = function(5)
        b.pinReader = function(6)
        b.unpinReader = function(7)
    }

    /// Lua-side pieces of the runtime: delegate delivery, SensorKit error values, the
    /// `time` and `log` modules, and the duration helpers. Returns deliver, make_error, set_field.
    static let prelude = #"""
    local rt = __runtime
    __runtime = nil

    -- Readers. The runtime holds none strongly, so a reader the protocol drops is
    -- collected, with its delegate (even when the delegate's callbacks refer to the
    -- reader: `delegates` has weak keys). While a callback for a reader is queued the
    -- reader is pinned, so a fetch or recording the protocol started still reports.
    local live = setmetatable({}, { __mode = "v" })        -- id -> reader
    local delegates = setmetatable({}, { __mode = "k" })   -- reader -> delegate table
    local pinned = {}                                      -- id -> reader, callbacks queued
    local function register_reader(id, reader) live[id] = reader end
    local function get_delegate(reader) return delegates[reader] end
    local function set_delegate(reader, delegate) delegates[reader] = delegate end
    local function pin(id) pinned[id] = live[id] end
    local function unpin(id) pinned[id] = nil end

    -- deliver(id, method, ...): calls the reader's delegate[method](reader, ...) if present.
    -- Returns the method's first result and true, or nil and false when there is none
    -- (also when the reader was collected).
    local function deliver(id, method, ...)
      local reader = pinned[id] or live[id]
      if reader == nil then return nil, false end
      local delegate = delegates[reader]
      if delegate == nil then return nil, false end
      local fn = delegate[method]
      if fn == nil then return nil, false end
      return (fn(reader, ...)), true
    end

    -- SensorKit errors are tables: { code, name, domain, message, underlying }.
    local error_mt = {
      __tostring = function(e)
        local text = string.format("%s %d (%s): %s", e.domain, e.code, e.name, e.message)
        if e.underlying then text = text .. " [underlying: " .. tostring(e.underlying) .. "]" end
        return text
      end,
      __name = "SRError",
    }
    local function make_error(code, name, domain, message, underlying)
      return setmetatable({ code = code, name = name, domain = domain, message = message, underlying = underlying }, error_mt)
    end

    -- Error codes by name (SRErrorCode.known, defined in the model).
    local sk = sensorkit
    sk.errors = rt.error_codes()
    sk.isError = function(v) return getmetatable(v) == error_mt end

    -- Durations in seconds.
    function seconds(n) return n end
    function minutes(n) return n * 60 end
    function hours(n) return n * 3600 end
    function days(n) return n * 86400 end

    -- time: the participant's virtual wall clock and local calendar.
    time = {
      now = function() return os.time() end,
      day = rt.day,                       -- "YYYY-MM-DD" of a time (default now), local
      startOfDay = rt.start_of_day,       -- start of the local day of a time
      hour = function(t) return tonumber(os.date("%H", t or os.time())) end,
      format = function(t, fmt) return os.date(fmt or "%Y-%m-%d %H:%M", t) end,
      timezone = rt.timezone,
      duration = rt.duration,             -- "26h" → 93600
      parse = rt.parse,                   -- "2026-03-02 09:00" (local) → seconds
      studyStart = rt.study_start,
      studyEnd = rt.study_end,
      seconds = seconds, minutes = minutes, hours = hours, days = days,
    }

    -- log: lines in the run's output, stamped with participant and local time.
    local function logger(level)
      return function(fmt, ...)
        local text = tostring(fmt)
        if select("#", ...) > 0 then
          local ok, formatted = pcall(string.format, fmt, ...)
          if not ok then error("log." .. level .. ": " .. formatted, 2) end   -- at the protocol's line
          text = formatted
        end
        rt.log(level, text)
      end
    end
    log = { info = logger("info"), warn = logger("warn"), error = logger("error") }

    local function set_field(t, k, v) t[k] = v end

    return deliver, make_error, set_field, register_reader, get_delegate, set_delegate, pin, unpin
    """#
}
