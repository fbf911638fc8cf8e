import Foundation
import XCTest
@_spi(Bindings) @testable import LuaHost
import SensorKitModel
import Simulator
import ApiReference
@testable import StudyRuntime
@testable import StudyWorlds

/// `docs/lua-api.md` is the Lua API reference. These tests keep it complete and true:
/// every name the runtime exposes has an entry, and every entry's example runs as a
/// protocol with its assertions executed.
final class DocumentationTests: XCTestCase {

    // MARK: Finding the files

    /// A file of the project, found by walking up from this test file (also through a symlinked checkout).
    static func projectFile(_ relative: String) throws -> URL {
        let here = URL(fileURLWithPath: #filePath)
        for start in [here, here.resolvingSymlinksInPath()] {
            var dir = start.deletingLastPathComponent()
            while dir.path != "/" {
                let candidate = dir.appendingPathComponent(relative)
                if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
                dir = dir.deletingLastPathComponent()
            }
        }
        throw XCTSkip("\(relative) not found above \(here.path)")
    }

    static func read(_ relative: String) throws -> String {
        try String(contentsOf: try projectFile(relative), encoding: .utf8)
    }

    lazy var markdown: String = (try? DocumentationTests.read("docs/lua-api.md")) ?? ""
    lazy var entries: [DocEntry] = Documentation.parse(markdown)
    lazy var names: Set<String> = Set(entries.map(\.name))

    func entry(_ name: String) -> DocEntry? { entries.first { $0.name == name } }

    // MARK: Structure

    func testReferenceIsWellFormed() throws {
        XCTAssertFalse(markdown.isEmpty, "docs/lua-api.md is missing or empty")
        XCTAssertEqual(Documentation.validate(markdown), [], "structural problems in docs/lua-api.md")
        XCTAssertGreaterThan(entries.count, 100)
        for e in entries {
            XCTAssertFalse(e.module.isEmpty, "\(e.name): not under a ## module heading")
            XCTAssertFalse(e.text.isEmpty, "\(e.name): no description")
            XCTAssertFalse(e.name.contains(" "), "\(e.name): a heading must be exactly the name as typed")
            XCTAssertTrue(e.exampleProtocol.contains("assert("), "\(e.name): the example asserts nothing")
            for f in e.exampleFiles {
                XCTAssertTrue(f.name.hasSuffix(".lua"), "\(e.name): example file \(f.name) is not a .lua file")
            }
        }
    }

    // MARK: Completeness

    /// Lua's own globals: documented only where the sandbox changes them.
    static let standardGlobals: Set<String> = [
        "_G", "_VERSION", "assert", "collectgarbage", "coroutine", "debug", "error", "getmetatable", "ipairs",
        "load", "math", "next", "os", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset",
        "require", "select", "setmetatable", "string", "table", "tonumber", "tostring", "type", "utf8",
        "warn", "xpcall",
    ]

    /// A run of a protocol, prepared (top level not yet run), for looking at the live API.
    func preparedRun(protocolSource: String = "", scenario: String? = nil) throws -> (StudyRunner, ParticipantRun) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doc-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("protocol.lua")
        try protocolSource.write(to: path, atomically: true, encoding: .utf8)
        var scenarioPath: String?
        if let scenario {
            let s = dir.appendingPathComponent("scenario.lua")
            try scenario.write(to: s, atomically: true, encoding: .utf8)
            scenarioPath = s.path
        }
        var options = StudyOptions(protocolPath: path.path, scenarioPath: scenarioPath, moduleDirectories: [dir.path])
        options.days = 2
        options.participants = 1
        options.seed = 7
        let runner = StudyRunner(options: options)
        let runs = try runner.prepare { _ in }
        return (runner, try XCTUnwrap(runs.first))
    }

    /// Every global function and every field of every global module table the runtime
    /// installs, as `name` or `module.field`; plus the helpers that are the same function
    /// as a global (`time.days` is `days`), as `(alias, global)`.
    func luaNames(in run: ParticipantRun) throws -> (names: [String], aliases: [(String, String)]) {
        let standard = DocumentationTests.standardGlobals.sorted().map { "[\"\($0)\"] = true" }.joined(separator: ", ")
        let result = try run.state.execute("""
        local standard = { \(standard) }
        local names, aliases = {}, {}
        for k, v in pairs(_G) do
          if type(k) == "string" and not standard[k] and k:sub(1, 1) ~= "_" then
            if type(v) == "table" then
              for field, value in pairs(v) do
                if type(field) == "string" and field:sub(1, 1) ~= "_" then
                  names[#names + 1] = k .. "." .. field
                  if type(value) == "function" and _G[field] == value then
                    aliases[#aliases + 1] = k .. "." .. field .. "=" .. field
                  end
                end
              end
            else
              names[#names + 1] = k
            end
          end
        end
        return table.concat(names, "\\n"), table.concat(aliases, "\\n")
        """, chunkName: "=doc-names")
        let names = (result.first?.stringValue ?? "").split(separator: "\n").map(String.init)
        let aliases = (result.dropFirst().first?.stringValue ?? "").split(separator: "\n").map { line -> (String, String) in
            let parts = line.split(separator: "=").map(String.init)
            return (parts[0], parts[1])
        }
        return (names, aliases)
    }

    func testEveryGlobalAndModuleFunctionIsDocumented() throws {
        let (_, run) = try preparedRun()
        let (found, aliases) = try luaNames(in: run)
        XCTAssertTrue(found.contains("sensorkit.reader") && found.contains("schedule.daily") && found.contains("study"),
                      "the API enumeration found too little: \(found)")
        for module in ["sensorkit", "schedule", "time", "report", "log"] {
            XCTAssertTrue(found.contains { $0.hasPrefix(module + ".") }, "no functions found in module \(module)")
        }
        let aliasOf = Dictionary(aliases, uniquingKeysWith: { a, _ in a })
        var missing: [String] = []
        for name in found where !names.contains(name) {
            if let global = aliasOf[name], names.contains(global) { continue }
            missing.append(name)
        }
        XCTAssertEqual(missing, [], "API without a `### name` entry in docs/lua-api.md")
    }

    func testEveryReaderAndSampleSetMemberIsDocumented() throws {
        let (_, run) = try preparedRun()
        let bindings = try XCTUnwrap(run.bindings)
        var expected: [String] = []
        expected += bindings.readerClass.methods.map { "reader:" + $0.0 }
        expected += bindings.readerClass.getters.keys.sorted().map { "reader." + $0 }
        expected += bindings.sampleSetClass.methods.map { "SampleSet:" + $0.0 }
        expected += bindings.sampleSetClass.getters.keys.sorted().map { "SampleSet." + $0 }
        expected += bindings.groupsClass.methods.map { "GroupedSampleSet:" + $0.0 }
        expected += bindings.groupsClass.getters.keys.sorted().map { "GroupedSampleSet." + $0 }
        expected += ["SampleSet", "GroupedSampleSet"]
        XCTAssertTrue(expected.contains("reader:samples") && expected.contains("SampleSet:mean") && expected.contains("reader.delegate"))
        XCTAssertEqual(expected.filter { !names.contains($0) }, [], "members without a `### name` entry")

        // Metamethods a protocol can use (`#set`) are explained in the type's entry.
        let operators = ["__len": "#", "__concat": "..", "__call": "(", "__add": "+", "__lt": "<", "__le": "<="]
        let metamethods: [(type: String, entry: String, events: [String])] = [
            ("SRSensorReader", "sensorkit.reader", bindings.readerClass.metamethods.map(\.0)),
            ("SampleSet", "SampleSet", bindings.sampleSetClass.metamethods.map(\.0)),
            ("GroupedSampleSet", "GroupedSampleSet", bindings.groupsClass.metamethods.map(\.0)),
        ]
        for (type, entryName, events) in metamethods {
            let text = entry(entryName)?.text ?? ""
            for event in events where event != "__inspect" {
                let op = operators[event] ?? event
                XCTAssertTrue(text.contains(op), "\(type) has metamethod \(event), but `### \(entryName)` never mentions `\(op)`")
            }
            if events.contains("__inspect") {
                XCTAssertTrue(text.contains("inspect"), "\(type) prints itself for inspect(); say so in `### \(entryName)`")
            }
        }
    }

    /// Delegate callback names: asked for at runtime by a probing delegate, and named in the sources.
    func testEveryDelegateCallbackIsDocumented() throws {
        let probe = """
        study {
          id = "probe", title = "Probe", usage = "Probe.", privacy_policy = "https://example.org/privacy",
          entitlements = { "ambient-light-sensor" },
          sensors = { ambientLightSensor = { detail = "Probe." } },
        }
        asked = {}
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = setmetatable({}, { __index = function(_, name)
          asked[name] = true
          if name == "didFetchResult" then return function() return false end end
        end })
        light:startRecording(); light:stopRecording(); light:fetch { from = 0, to = 1 }; light:fetchDevices()
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function()
          light:startRecording(); light:stopRecording(); light:startRecording(); light:fetchDevices()
        end)
        schedule.after("26h", function(now) light:fetch { from = time.studyStart(), to = now } end)
        """
        let (_, run) = try preparedRun(protocolSource: probe)
        try run.run()
        var callbacks = Set<String>()
        if case .table(let t) = run.state.global("asked") {
            for e in t.entries { if let k = e.key.stringValue { callbacks.insert(k) } }
        }
        XCTAssertTrue(callbacks.contains("didFetchResult") && callbacks.contains("fetchDevicesDidFailWithError"),
                      "the probe saw too few callbacks: \(callbacks.sorted())")
        // Callbacks the probe cannot provoke are still named in the sources.
        for file in ["Sources/StudyRuntime/Bindings.swift", "Sources/StudyRuntime/ParticipantRun.swift"] {
            let source = try DocumentationTests.read(file)
            for pattern in [#"callDelegate\([^,]+,\s*"(\w+)""#, #"(?:success|failure):\s*"(\w+)""#] {
                let regex = try NSRegularExpression(pattern: pattern)
                for m in regex.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
                    if let r = Range(m.range(at: 1), in: source) { callbacks.insert(String(source[r])) }
                }
            }
        }
        let missing = callbacks.sorted().map { "delegate." + $0 }.filter { !names.contains($0) }
        XCTAssertEqual(missing, [], "delegate callbacks without a `### delegate.NAME` entry")
    }

    func testEveryScenarioKeyEventAndSwitchIsDocumented() throws {
        var expected = Scenario.topKeys.sorted().map { "scenario." + $0 } + ["scenario"]
        expected += Scenario.participantKeys.sorted().map { "participant." + $0 }
        // Event kinds, from the scenario reader's own error message.
        do {
            _ = try preparedRun(scenario: "return { participants = { { id = \"P1\", events = { {} } } } }")
            XCTFail("an empty event should be refused")
        } catch let e as ScenarioError {
            let list = try XCTUnwrap(e.message.range(of: "exactly one of ").map { e.message[$0.upperBound...] }, e.message)
            let kinds = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            XCTAssertGreaterThan(kinds.count, 5, e.message)
            expected += kinds.map { "event." + $0 }
        }
        XCTAssertEqual(expected.filter { !names.contains($0) }, [], "scenario format without a `### name` entry")

        // scenario.switches lists every switch as the switch tables make it (`sensorium
        // switches --markdown`): names, defaults and summaries, in table order.
        let switchesText = try XCTUnwrap(entry("scenario.switches")).text
        let listed = switchesText.split(separator: "\n").map(String.init).filter { $0.hasPrefix("- `") }
        XCTAssertEqual(listed, (WorldSwitches.knobs + SimulationSettings.knobs).map(\.markdownLine),
                       "`### scenario.switches` differs from the switch tables: paste `sensorium switches --markdown`")

        // Every simulation setting and profile field is named in its entry.
        let simulationText = try XCTUnwrap(entry("scenario.simulation")).text
        do {
            _ = try preparedRun(scenario: "return { simulation = { nonsense = 1 } }")
            XCTFail("an unknown simulation setting should be refused")
        } catch let e as ScenarioError {
            let known = try XCTUnwrap(e.message.range(of: "known: ").map { e.message[$0.upperBound...] }, e.message)
            let settings = known.trimmingCharacters(in: CharacterSet(charactersIn: ")")).split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            // simulation.watchSyncLag is accepted but overridden by switches.watchSyncLag (reported; left out on purpose).
            let missing = settings.filter { !simulationText.contains("`\($0)`") && $0 != "watchSyncLag" }
            XCTAssertEqual(missing, [], "simulation settings not named in `### scenario.simulation`")
        }
        let profileText = try XCTUnwrap(entry("participant.profile")).text
        do {
            _ = try preparedRun(scenario: "return { participants = { { profile = { nonsense = 1 } } } }")
            XCTFail("an unknown profile field should be refused")
        } catch let e as ScenarioError {
            let known = try XCTUnwrap(e.message.range(of: "known: ").map { e.message[$0.upperBound...] }, e.message)
            let fields = known.trimmingCharacters(in: CharacterSet(charactersIn: ")")).split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            XCTAssertGreaterThan(fields.count, 5)
            XCTAssertEqual(fields.filter { !profileText.contains("`\($0)`") }, [], "profile fields not named in `### participant.profile`")
        }
    }

    // MARK: Examples

    /// Records which lines of protocol.lua ran an `assert`, so an assertion that never runs
    /// (in a callback that never fires) fails the example instead of passing silently.
    static let assertProbe = #"""
    local traceback, select, error = debug.traceback, select, error
    __doc_assert_lines = {}
    assert = function(...)
      local line = traceback("", 2):match("\n%s*[^\n]-protocol%.lua:(%d+):")
      if line then __doc_assert_lines[tonumber(line)] = true end
      if not (...) then error(select("#", ...) > 1 and select(2, ...) or "assertion failed!", 2) end
      return ...
    end
    """#

    /// Runs one example as a protocol (with its scenario and modules); returns what went wrong, or nil.
    func runExample(_ entry: DocEntry) -> String? {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doc-example-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        var output = ""
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for file in entry.exampleFiles {
                try file.source.write(to: dir.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
            }
            let protocolPath = dir.appendingPathComponent("protocol.lua").path
            let scenarioPath = entry.exampleScenario == nil ? nil : dir.appendingPathComponent("scenario.lua").path
            // As under `sensorium run`, the standard library (stdlib/) is on the module path.
            let stdlib = (try? DocumentationTests.projectFile("stdlib/plot.lua"))?.deletingLastPathComponent().path
            var options = StudyOptions(protocolPath: protocolPath, scenarioPath: scenarioPath, moduleDirectories: [dir.path] + (stdlib.map { [$0] } ?? []))
            if let scenarioPath {
                let scenario = try Scenario.load(scenarioPath)
                if (scenario.days ?? StudyRunner.defaultDays) > 3 { return "the example's scenario runs more than 3 days" }
                if (scenario.participantCount ?? scenario.participants.count) > 4 { return "the example's scenario has more than 4 participants" }
                if scenario.seed == nil { options.seed = 7 }
            } else {
                options.days = 3
                options.participants = 1
                options.seed = 7
            }
            let runner = StudyRunner(options: options)
            var executed = Set<Int>()
            for run in try runner.prepare(output: { output += $0 }) {
                _ = try run.state.execute(DocumentationTests.assertProbe, chunkName: "=doc-assert-probe")
                try run.run()
                if case .table(let t) = run.state.global("__doc_assert_lines") {
                    for e in t.entries { if let n = e.key.integerValue { executed.insert(Int(n)) } }
                }
            }
            let lines = entry.exampleProtocol.split(separator: "\n", omittingEmptySubsequences: false)
            let assertLines = lines.enumerated().filter { _, line in
                line.contains("assert(") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("--")
            }.map { $0.offset + 1 }
            if assertLines.isEmpty { return "the example has no assert(...)" }
            let dead = assertLines.filter { !executed.contains($0) }
            if !dead.isEmpty { return "assert(...) never executed on protocol.lua line(s) \(dead.map(String.init).joined(separator: ", "))" }
            return nil
        } catch {
            let tail = output.split(separator: "\n").suffix(5).joined(separator: "\n")
            return "\(error)" + (tail.isEmpty ? "" : "\noutput:\n" + tail)
        }
    }

    func testEveryExampleRunsAsAProtocol() throws {
        XCTAssertFalse(entries.isEmpty)
        var failures = 0
        for e in entries {
            if let problem = runExample(e) {
                failures += 1
                XCTFail("example of `### \(e.name)` (\(e.module)) fails: \(problem)")
            }
        }
        XCTAssertEqual(failures, 0, "\(failures) of \(entries.count) examples fail")
    }

    func testAnExampleWhoseAssertionFailsOrNeverRunsIsCaught() {
        let failing = DocEntry(name: "x", module: "m", text: "t", example: "assert(1 + 1 == 3)")
        XCTAssertNotNil(runExample(failing))
        let dead = DocEntry(name: "x", module: "m", text: "t", example: """
        schedule.at(time.studyEnd() + 1, function() assert(true) end)
        assert(true)
        """)
        XCTAssertEqual(runExample(dead)?.contains("line(s) 1"), true)
        let fine = DocEntry(name: "x", module: "m", text: "t", example: "-- file: scenario.lua\nreturn { days = 1 }\n-- file: protocol.lua\nassert(days(1) == 86400)")
        XCTAssertNil(runExample(fine))
    }

    // MARK: Parser, lookup and rendering

    static let sample = """
    # Title

    Introduction, not an entry.

    ## SRSensorReader

    ### reader:samples

    Fetches at once.
    Second line.

    ```lua
    assert(true)
    ```

    ### reader.delegate

    The callbacks.

    ```lua
    -- file: scenario.lua
    return { days = 1 }
    -- file: protocol.lua
    assert(1)
    ```

    ## SampleSet

    ### SampleSet:mean

    The mean.

    - a list item
    - another

    ```lua
    assert(2)
    ```

    ## GroupedSampleSet

    ### GroupedSampleSet:mean

    Per group.

    ```lua
    assert(3)
    ```
    """

    func testParserReadsEntriesModulesTextAndExamples() {
        let parsed = Documentation.parse(DocumentationTests.sample)
        XCTAssertEqual(parsed.map(\.name), ["reader:samples", "reader.delegate", "SampleSet:mean", "GroupedSampleSet:mean"])
        XCTAssertEqual(parsed.map(\.module), ["SRSensorReader", "SRSensorReader", "SampleSet", "GroupedSampleSet"])
        XCTAssertEqual(parsed[0].text, "Fetches at once.\nSecond line.")
        XCTAssertEqual(parsed[0].example, "assert(true)")
        XCTAssertEqual(parsed[0].exampleFiles.map(\.name), ["protocol.lua"])
        XCTAssertEqual(parsed[1].exampleScenario, "return { days = 1 }\n")
        XCTAssertEqual(parsed[1].exampleProtocol, "assert(1)\n")
        XCTAssertEqual(Documentation.validate(DocumentationTests.sample), [])
    }

    func testValidateReportsMalformedEntries() {
        let bad = """
        ### orphan

        Text.

        ```lua
        assert(1)
        ```

        ## m

        ### noexample

        Only text.

        ### twice

        Text.

        ```lua
        assert(1)
        ```

        ```lua
        assert(2)
        ```

        ### twice

        Text.

        ```lua
        assert(1)
        ```
        trailing words

        ### open

        ```lua
        never closed
        """
        let problems = Documentation.validate(bad).joined(separator: "\n")
        XCTAssertTrue(problems.contains("`### orphan` is not under a `## module` heading"), problems)
        XCTAssertTrue(problems.contains("`### noexample` has no ```lua example"), problems)
        XCTAssertTrue(problems.contains("`### twice` has 2 ```lua examples"), problems)
        XCTAssertTrue(problems.contains("is a duplicate"), problems)
        XCTAssertTrue(problems.contains("has text after its example"), problems)
        XCTAssertTrue(problems.contains("never closed"), problems)
        XCTAssertTrue(problems.contains("`### open` has no description"), problems)
    }

    func testLookupIsForgiving() {
        let parsed = Documentation.parse(DocumentationTests.sample)
        for spelling in ["reader:samples", "reader.samples", "samples", "READER:SAMPLES", "SRSensorReader:samples",
                         "samples()", " reader:samples ", "reader:samples{ from = 0 }"] {
            XCTAssertEqual(Documentation.lookup(spelling, in: parsed)?.name, "reader:samples", spelling)
        }
        XCTAssertEqual(Documentation.lookup("delegate", in: parsed)?.name, "reader.delegate")
        XCTAssertEqual(Documentation.lookup("mean", in: parsed)?.name, "SampleSet:mean", "first in document order")
        XCTAssertEqual(Documentation.lookup("set:mean", in: parsed)?.name, "SampleSet:mean")
        XCTAssertEqual(Documentation.lookup("groups:mean", in: parsed)?.name, "GroupedSampleSet:mean")
        XCTAssertEqual(Documentation.lookup("grouped.mean", in: parsed)?.name, "GroupedSampleSet:mean")
        XCTAssertNil(Documentation.lookup("nothing", in: parsed))
        XCTAssertNil(Documentation.lookup("", in: parsed))
        XCTAssertEqual(Documentation.suggestions(for: "reader:sample", in: parsed).first, "reader:samples")
        XCTAssertEqual(Documentation.suggestions(for: "maen", in: parsed).first, "SampleSet:mean")
        XCTAssertEqual(Documentation.suggestions(for: "zzzzzz", in: parsed), [])
        XCTAssertTrue(Documentation.help("maen", in: parsed).contains("No help for 'maen' — did you mean 'SampleSet:mean'"))
    }

    func testLookupInTheRealReference() {
        XCTAssertEqual(Documentation.lookup("reader.samples", in: entries)?.name, "reader:samples")
        XCTAssertEqual(Documentation.lookup("samples", in: entries)?.name, "reader:samples")
        XCTAssertEqual(Documentation.lookup("daily", in: entries)?.name, "schedule.daily")
        XCTAssertEqual(Documentation.lookup("didfetchresult", in: entries)?.name, "delegate.didFetchResult")
        XCTAssertEqual(Documentation.lookup("time.days", in: entries)?.name, "days")
        XCTAssertEqual(Documentation.lookup("study", in: entries)?.name, "study")
        XCTAssertEqual(Documentation.lookup("SRFetchRequest", in: entries)?.name, "request")
        XCTAssertEqual(Documentation.lookup("consent", in: entries)?.name, "participant.consent")
        XCTAssertTrue(Documentation.suggestions(for: "schedule.dayly", in: entries).contains("schedule.daily"))
    }

    func testRenderForTheTerminal() throws {
        let parsed = Documentation.parse(DocumentationTests.sample)
        let text = Documentation.render(parsed[2], width: 40)
        XCTAssertTrue(text.hasPrefix("SampleSet:mean"), text)
        XCTAssertTrue(text.contains("(SampleSet)"), text)
        XCTAssertTrue(text.contains("- a list item"), text)
        XCTAssertTrue(text.contains("Example:\n\n    assert(2)"), text)
        XCTAssertFalse(text.contains("```"), text)
        let real = try XCTUnwrap(Documentation.lookup("reader:samples", in: entries))
        let rendered = Documentation.render(real)
        XCTAssertFalse(rendered.contains("`"), "markup left in the terminal text")
        for line in rendered.split(separator: "\n") where !line.hasPrefix("    ") {
            XCTAssertLessThanOrEqual(line.count, 78, "line too long: \(line)")
        }
        XCTAssertTrue(Documentation.index(entries).contains("schedule.daily"))
    }
}

/// Statements of the introduction and the README that no example executes, checked against the program.
final class DocumentationClaimsTests: XCTestCase {
    func testTheSimulatorCountIsTrue() throws {
        let markdown = try DocumentationTests.read("docs/lua-api.md")
        let n = SimulatedSource.implementedSensors.count
        XCTAssertEqual(n, Sensor.allCases.count, "every SensorKit sensor is simulated")
        XCTAssertTrue(markdown.contains("The simulator generates data for all \(n) SensorKit sensors"), "docs/lua-api.md states the simulated sensors")
        let readme = try DocumentationTests.read("README.md")
        XCTAssertTrue(readme.contains("all \(n) SensorKit"), "README states the simulated sensors")
    }

    /// The README says os.time/os.clock/os.date read the virtual clock: they do, also far from the host's time.
    func testOsClockFunctionsReadTheVirtualClock() throws {
        let readme = try DocumentationTests.read("README.md")
        XCTAssertTrue(readme.contains("`os.time/os.date` read the host's virtual\n  clock"), "README")
        XCTAssertTrue(readme.contains("`os.clock()` is the virtual time elapsed plus one microsecond per call"), "README")
        XCTAssertFalse(readme.contains("read the host's clock"))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("doc-claims-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("protocol.lua")
        try """
        assert(os.time() == time.studyStart() and os.time() == time.parse("2031-07-01 00:00"))
        assert(os.clock() < 0.001 and os.date("%Y-%m-%d") == "2031-07-01")
        schedule.after("3h", function(now) assert(os.time() == now and math.abs(os.clock() - 10800) < 0.001 and os.date("%H") == "03") report.row("ok", { t = now }) end)
        """.write(to: path, atomically: true, encoding: .utf8)
        var options = StudyOptions(protocolPath: path.path)
        options.start = "2031-07-01"
        options.days = 1
        options.participants = 1
        let runner = StudyRunner(options: options)
        try runner.run { _ in }
        XCTAssertEqual(runner.report.table("ok")?.rows.count, 1)
    }
}
