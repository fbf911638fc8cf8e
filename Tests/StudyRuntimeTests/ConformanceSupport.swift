import Foundation
import XCTest
@testable import StudyRuntime
@testable import StudyWorlds

/// Writes small protocols (and scenarios) into a temporary folder and runs them
/// through `StudyRunner` with a fixed seed, capturing what they print.
///
/// Every protocol can `require "t"`: a helper module (written beside it) with
/// `T.study{…}` (a valid study declaration), `T.log(...)` (one printed line),
/// `T.err(e)` (`"4/8201"`-style code chain) and `T.recorder(name)` (a delegate
/// that prints every callback it receives, one line each).
final class ProtocolHarness {
    let folder: URL

    init(_ name: String = #function) throws {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("ConformanceTests-\(safe)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        _ = try write("t.lua", ProtocolHarness.helper)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// Writes `text` to `name` in the folder; returns the path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    struct Outcome {
        var runner: StudyRunner
        var output: String
        /// Printed lines (log lines excluded), in order.
        var lines: [String] {
            output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                .filter { !$0.isEmpty && !$0.hasPrefix("[") }
        }
        /// Log lines only (`[P1 2026-03-02 00:00] warn: …`).
        var logLines: [String] {
            output.split(separator: "\n").map(String.init).filter { $0.hasPrefix("[") }
        }
        var report: String { runner.report.renderText() }
    }

    /// Runs `source` as `protocol.lua` (with `scenario` as `scenario.lua` when given).
    /// With `stdlib`, the project's `stdlib/` folder is on the module path too.
    func run(_ source: String, scenario: String? = nil, days: Int? = 3, participants: Int? = 1,
             seed: Int64 = 42, start: String? = nil, file: String = "protocol.lua", stdlib: Bool = false,
             timeLimitMilliseconds: Int = 0) throws -> Outcome {
        let path = try write(file, source)
        var options = StudyOptions(protocolPath: path,
                                   moduleDirectories: [folder.path] + (stdlib ? [ProtocolHarness.stdlibFolder] : []))
        if let scenario { options.scenarioPath = try write("scenario.lua", scenario) }
        options.days = days
        options.participants = participants
        options.seed = seed
        options.start = start
        // No wall-clock limit by default: results must not depend on how busy the machine is.
        options.limits.timeLimitMilliseconds = timeLimitMilliseconds
        let runner = StudyRunner(options: options)
        let buffer = OutputCollector()
        try runner.run { buffer.text += $0 }
        return Outcome(runner: runner, output: buffer.text)
    }

    /// Runs a protocol that must fail; returns the error: the one the run threw, or the
    /// first participant's whose run an error stopped (the others ran on).
    func failure(_ source: String, scenario: String? = nil, days: Int? = 3, participants: Int? = 1,
                 file: StaticString = #filePath, line: UInt = #line) throws -> Error {
        do {
            let outcome = try run(source, scenario: scenario, days: days, participants: participants)
            if let stopped = outcome.runner.failures.first { return stopped }
            XCTFail("the run should have failed; it printed:\n\(outcome.output)", file: file, line: line)
            throw HarnessError.unexpectedSuccess
        } catch let e as HarnessError {
            throw e
        } catch {
            return error
        }
    }

    enum HarnessError: Error { case unexpectedSuccess }

    /// The project's `stdlib/` folder (Tests/StudyRuntimeTests/../../stdlib).
    static let stdlibFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("stdlib").path

    final class OutputCollector { var text = "" }

    /// The Lua helper module `t`.
    static let helper = #"""
    local T = {}

    -- One printed line: the arguments, tostring'ed, space-separated.
    function T.log(...)
      local parts = {}
      for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
      print(table.concat(parts, " "))
    end

    -- An error as its code chain: nil → "nil", 4 wrapping 8201 → "4/8201".
    function T.err(e)
      if e == nil then return "nil" end
      if type(e) ~= "table" then return "raw:" .. tostring(e) end
      local s = tostring(e.code)
      local u = e.underlying
      while u do s = s .. "/" .. tostring(u.code); u = u.underlying end
      return s
    end

    -- A valid study declaration for `sensors` (names double as entitlements). The
    -- conformance protocols ask and record by hand (enrol = "manual").
    -- opts.required = { sensor = true, ... }
    function T.study(sensors, opts)
      opts = opts or {}
      local details = {}
      for _, s in ipairs(sensors) do
        details[s] = { detail = "Used for " .. s .. ".", required = (opts.required or {})[s] or false }
      end
      study {
        id = "t", title = "Conformance", usage = "Conformance testing.",
        privacy_policy = "https://example.org/privacy",
        entitlements = sensors, sensors = details, enrol = "manual",
      }
    end

    -- Labels of fetch requests (request tables accept only SRFetchRequest fields).
    T.labels = setmetatable({}, { __mode = "k" })
    function T.fetch(reader, label, request)
      T.labels[request] = label
      reader:fetch(request)
      return request
    end

    -- A delegate that prints every callback. Fetch results are counted per request
    -- (the request table is the one passed to fetch); `complete` prints the count.
    -- opts.limit: didFetchResult returns false once this many results arrived.
    -- opts.onStatus(reader, status): extra work on a status change.
    -- opts.noResultMethod: leave didFetchResult out.
    function T.recorder(name, opts)
      opts = opts or {}
      local d = {}
      d.didChangeAuthorizationStatus = function(r, s)
        T.log(name, "didChange", s)
        if opts.onStatus then opts.onStatus(r, s) end
      end
      d.willStartRecording = function(r) T.log(name, "willStart") end
      d.startRecordingFailedWithError = function(r, e) T.log(name, "startFailed", T.err(e)) end
      d.didStopRecording = function(r) T.log(name, "didStop") end
      d.stopRecordingFailedWithError = function(r, e) T.log(name, "stopFailed", T.err(e)) end
      if not opts.noResultMethod then
        d.didFetchResult = function(r, req, res)
          req.n = (req.n or 0) + 1
          if opts.onResult then opts.onResult(r, req, res) end
          if opts.limit and req.n >= opts.limit then return false end
          return true
        end
      end
      d.didCompleteFetch = function(r, req)
        T.log(name, "complete", T.labels[req] or "-", req.n or 0)
        if opts.onComplete then opts.onComplete(r, req) end
      end
      d.fetchFailedWithError = function(r, req, e) T.log(name, "fetchFailed", T.labels[req] or "-", T.err(e)) end
      d.didFetchDevices = function(r, devices)
        local models = {}
        for i, dev in ipairs(devices) do models[i] = dev.model end
        T.log(name, "devices", table.concat(models, ","))
      end
      d.fetchDevicesDidFailWithError = function(r, e) T.log(name, "devicesFailed", T.err(e)) end
      return d
    end

    return T
    """#
}
