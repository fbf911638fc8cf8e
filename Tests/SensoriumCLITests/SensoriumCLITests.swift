import Foundation
import XCTest

/// The `sensorium` executable, run as a separate process: `run`, `repl` through a pipe,
/// error reports, and byte-identical output across processes.
final class SensoriumCLITests: XCTestCase {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Standard output's bytes, as written.
        var stdoutBytes = Data()
    }

    /// The built `sensorium`, found beside the test bundle (the same build folder).
    static let executable: URL? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["SENSORIUM_EXECUTABLE"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        var folders: [URL] = []
        let bundle = Bundle(for: SensoriumCLITests.self).bundleURL
        folders.append(bundle.deletingLastPathComponent())
        folders.append(bundle)
        if let main = Bundle.main.executableURL { folders.append(main.deletingLastPathComponent()) }
        if let first = CommandLine.arguments.first {
            folders.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        folders.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        for folder in folders {
            // On macOS the bundle is X.xctest/Contents/MacOS/X: walk up a few levels.
            var dir = folder
            for _ in 0..<4 {
                let candidate = dir.appendingPathComponent("sensorium")
                var isDir: ObjCBool = false
                if fm.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue,
                   fm.isExecutableFile(atPath: candidate.path) {
                    return candidate
                }
                dir.deleteLastPathComponent()
            }
        }
        return nil
    }()

    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("SensoriumCLITests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    func write(_ relativePath: String, _ text: String) throws {
        let url = folder.appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    /// Runs `sensorium arguments…` in the test's folder, with `input` on a pipe as standard input.
    func sensorium(_ arguments: [String], input: String? = nil, timeout: TimeInterval = 30, environment extra: [String: String] = [:],
                           file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        guard let executable = SensoriumCLITests.executable else {
            XCTFail("the sensorium executable was not found beside the test bundle (build it with swift build --build-tests)",
                    file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["SENSORIUM_STDLIB"] = nil
        environment.merge(extra) { _, new in new }
        let outcome = try ChildProcess.run(executable.path, arguments, in: folder, environment: environment,
                                           input: input.map { Data($0.utf8) }, timeout: timeout)
        if outcome.timedOut {
            XCTFail("sensorium \(arguments.joined(separator: " ")) did not finish within \(timeout) s", file: file, line: line)
        }
        return Result(status: outcome.status,
                      stdout: String(decoding: outcome.stdout, as: UTF8.self),
                      stderr: String(decoding: outcome.stderr, as: UTF8.self), stdoutBytes: outcome.stdout)
    }

    func assertContains(_ text: String, _ part: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(text.contains(part), "expected \(String(reflecting: text)) to contain \(String(reflecting: part))",
                      file: file, line: line)
    }

    // MARK: - determinism

    func testOutputIsByteIdenticalAcrossProcesses() throws {
        try write("determinism.lua", """
            local t = {}
            for i = 1, 300 do t["key" .. i] = i end
            t.alpha, t.Zulu, t["with space"], t[""] = 1, 2, 3, 4
            local keys = {}
            for k in pairs(t) do keys[#keys + 1] = k end
            print(#keys)
            print(table.concat(keys, "|"))
            local r = {}
            for i = 1, 10 do r[i] = math.random(1, 1000000) end
            print(table.concat(r, " "))
            print(math.random())
            print(tostring({}), tostring({}), tostring(print), {})
            print(0/0, -(0/0), string.format("%f", 0/0))
            print(os.time(), os.date(), os.clock())
            """)
        let first = try sensorium(["run", "determinism.lua"])
        let second = try sensorium(["run", "determinism.lua"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.stderr, "")
        XCTAssertEqual(first.stdout, second.stdout, "two runs printed different output")
        XCTAssertEqual(Data(first.stdout.utf8), Data(second.stdout.utf8))

        let lines = first.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines.count, 8, first.stdout)
        guard lines.count >= 7 else { return }
        XCTAssertEqual(lines[0], "304")
        let keys = lines[1].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(keys.count, 304)
        // pairs() is Lua's own: hash order, the same in every process (compared above).
        XCTAssertEqual(Set(keys).count, 304)
        XCTAssertEqual(lines[2].split(separator: " ").count, 10)
        XCTAssertEqual(lines[4], "table: 1\ttable: 2\tfunction: 1\ttable: 3")
        XCTAssertFalse(first.stdout.contains("0x"), "an address leaked into the output")
        XCTAssertEqual(lines[5], "nan\tnan\tnan")
        XCTAssertEqual(lines[6], "1767225600\tThu Jan  1 00:00:00 2026\t1e-06")

        // The seed is the only input that changes the random numbers.
        let seeded = try sensorium(["run", "--seed", "2", "determinism.lua"])
        XCTAssertEqual(seeded.status, 0, seeded.stderr)
        let seededLines = seeded.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(seededLines.count, lines.count)
        if seededLines.count == lines.count {
            XCTAssertNotEqual(seededLines[2], lines[2])
            XCTAssertEqual(seededLines[1], lines[1])
            XCTAssertEqual(seededLines[4...], lines[4...])
        }
    }

    func testRunInstallsTheSandboxAndPassesArguments() throws {
        try write("args.lua", """
            print(select('#', ...), ...)
            print(rawget(_G, 'io'), rawget(_G, 'dofile'), rawget(_G, 'package'), getmetatable(''), rawget(debug, 'getinfo'))
            """)
        let result = try sensorium(["run", "args.lua", "first", "second arg"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "2\tfirst\tsecond arg\nnil\tnil\tnil\ttable: 1\tnil\n")
        XCTAssertEqual(result.stderr, "")
    }

    // MARK: - the REPL through a pipe

    func testReplThroughAPipe() throws {
        let input = """
            function f(x)
              local y = x * 2
              return y
            end
            =f(21)
            error('boom')
            =1 + 1
            t = { b = 2, a = { 1, 2 } }
            t
            :help
            print('printed', 1 + 2)
            :quit
            =99
            """ + "\n"
        let result = try sensorium(["repl"], input: input)
        XCTAssertEqual(result.status, 1, result.stderr)          // error('boom') failed: piped input fails
        let out = result.stdout
        XCTAssertTrue(out.hasPrefix("42\n2\n{ a = { 1, 2 }, b = 2 }\n"), out)
        assertContains(out, ":help")
        assertContains(out, ":quit")
        assertContains(out, "=expr")
        XCTAssertTrue(out.hasSuffix("printed\t3\n"), out)
        XCTAssertFalse(out.contains("99"), "lines after :quit were run")
        XCTAssertFalse(out.contains("> "), "no prompts when standard input is a pipe")
        XCTAssertTrue(result.stderr.hasPrefix("stdin:1: boom"), result.stderr)
        XCTAssertFalse(result.stderr.contains("unfinished"))
    }

    func testReplReportsUnfinishedChunkAndUnknownCommand() throws {
        let result = try sensorium(["repl"], input: ":nope\nx = 5\n=x\nfor i = 1, 3 do\n")
        XCTAssertEqual(result.status, 1, result.stderr)          // the unfinished chunk fails piped input
        XCTAssertEqual(result.stdout, "5\n")
        assertContains(result.stderr, "unknown command :nope; :help lists them")
        assertContains(result.stderr, "input ended inside an unfinished chunk")
        // A command that cannot do what it was asked fails piped input too, and the next lines still run.
        for (command, message) in [(":participant P9", "no participant 'P9' (participants: P1, P2, P3)"),
                                   (":advance to yesterday", "'yesterday' is not a time this reads\nusage: :advance DURATION"),
                                   (":advance soon", "'soon' is not a duration\nusage: :advance DURATION"),
                                   (":advance -5h", "-5h would move the clock back (now: 2026-03-02 00:00 GMT (study day 1), SR 2592000); the clock only moves forward"),
                                   (":advance to 2026-03-01 09:00", "2026-03-01 09:00 is in the past"),
                                   (":load", "usage: :load FILE")] {
            let failed = try sensorium(["repl"], input: "\(command)\n=6 * 7\n")
            XCTAssertEqual(failed.status, 1, command)
            XCTAssertEqual(failed.stdout, "42\n", command)
            assertContains(failed.stderr, message)
        }
    }

    // MARK: - errors from `run`

    func testSyntaxErrorPrintsFileLineAndFails() throws {
        try write("bad.lua", "print('never')\nlocal x = = 1\n")
        let result = try sensorium(["run", "bad.lua"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stdout, "", "nothing runs when the file does not compile")
        XCTAssertTrue(result.stderr.hasPrefix("bad.lua:2: unexpected symbol near '='"), result.stderr)
    }

    func testRuntimeErrorPrintsFileLineAndTraceback() throws {
        try write("crash.lua", """
            local function inner(x)
              return x.field
            end
            local function outer()
              return inner(nil) + 1
            end
            print("before")
            outer()
            print("after")
            """)
        let result = try sensorium(["run", "crash.lua"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stdout, "before\n")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "crash.lua:2: attempt to index a nil value (local 'x')")
        XCTAssertGreaterThanOrEqual(lines.count, 3, result.stderr)
        guard lines.count >= 3 else { return }
        XCTAssertEqual(lines[1], "stack traceback:")
        assertContains(result.stderr, "crash.lua:2:")
        assertContains(result.stderr, "crash.lua:5:")
        assertContains(result.stderr, "crash.lua:8: in main chunk")
        XCTAssertLessThanOrEqual(lines.count, 2 + 6, "the traceback is short")
        XCTAssertFalse(result.stderr.contains("sandbox:"), "the sandbox's own frames are hidden")
    }

    func testFolderRunsItsProtocol() throws {
        try write("study/protocol.lua", """
            local helper = require('helper')
            print('protocol ran: ' .. helper.greet('world'))
            """)
        try write("study/helper.lua", "return { greet = function(who) return 'hello ' .. who end }")
        let result = try sensorium(["run", "study"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "protocol ran: hello world\n")
        let slash = try sensorium(["run", "study/"])
        XCTAssertEqual(slash.stdout, "protocol ran: hello world\n")

        try FileManager.default.createDirectory(at: folder.appendingPathComponent("empty"), withIntermediateDirectories: true)
        let empty = try sensorium(["run", "empty"])
        XCTAssertNotEqual(empty.status, 0)
        assertContains(empty.stderr, "empty is a folder without protocol.lua")
    }

    func testMissingFileIsAClearError() throws {
        let result = try sensorium(["run", "nosuch.lua"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stdout, "")
        assertContains(result.stderr, "nosuch.lua: no such file or folder")
    }

    /// Bad flags fail in `validate()`, before anything is read or written: the script
    /// named does not even exist, yet the flag is what the message is about.
    func testBadFlagsFailBeforeAnyWork() throws {
        let cases: [([String], String)] = [
            (["run", "nosuch.lua", "--days", "0"], "--days: 0 is outside the allowed range (a whole number from 1 to 366 days)"),
            (["run", "nosuch.lua", "--participants=-2"], "--participants: -2 is outside the allowed range"),
            (["run", "nosuch.lua", "--timezone", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'"),
            (["run", "nosuch.lua", "--start", "March 2nd"], "--start: expected a date like 2026-03-02, got 'March 2nd'"),
            (["run", "nosuch.lua", "--participant", "P1"], "--participant needs --recording"),
            (["run", "nosuch.lua", "--memory-limit=-1"], "--memory-limit: -1 is outside the allowed range (a whole number from 0 to 65536 MiB)"),
            (["run", "nosuch.lua", "--time-limit", "1e300"], "--time-limit: 1e+300 is outside the allowed range (from 0 to 86400 seconds)"),
            (["export", "--into", "out", "--days", "0"], "--days: 0 is outside"),
            (["import", "--format", "csv", "nosuch", "--into", "store.sqlite"], "'native', 'mhc', 'mhc-csv'"),
        ]
        for (arguments, message) in cases {
            let result = try sensorium(arguments)
            XCTAssertNotEqual(result.status, 0, arguments.joined(separator: " "))
            assertContains(result.stderr, message)
            XCTAssertFalse(result.stderr.contains("no such file"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("store.sqlite").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
    }

    /// `print` writes a script's bytes as they are, as stock lua5.4 does (not U+FFFD).
    func testPrintWritesNonUTF8BytesAsStockLua() throws {
        let source = #"print("caf\233", "\255\0\254", ("\192"):rep(3)) print(#"\233")"# + "\n"
        try write("bytes.lua", source)
        let script = folder.appendingPathComponent("bytes.lua").path
        let result = try sensorium(["run", "bytes.lua"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let expected = try ChildProcess.run("/usr/bin/lua5.4", [script]).stdout
        XCTAssertEqual(Array(expected), Array("caf".utf8) + [0xE9, 0x09, 0xFF, 0x00, 0xFE, 0x09, 0xC0, 0xC0, 0xC0, 0x0A]
                       + Array("1\n".utf8), "stock lua5.4's bytes")
        XCTAssertEqual(Array(result.stdoutBytes), Array(expected))
    }

    func testTimeLimitFlagStopsARunawayScript() throws {
        try write("loop.lua", "local n = 0\nwhile true do n = n + 1 end\n")
        let start = Date()
        let result = try sensorium(["run", "--time-limit", "0.3", "loop.lua"], timeout: 10)
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.hasPrefix("loop.lua:2: stopped: time limit of 300 ms exceeded"), result.stderr)
    }

    /// Library functions whose running time a script chooses, each of which would run
    /// for hours (or until the memory cap, seconds later) inside one C call where no hook
    /// fires: the time limit stops them all (CLuaShim/stoppable.c, pattern.c).
    func testTimeLimitHoldsInsideLibraryCalls() throws {
        let cases = [
            // a border of 2^62 with no elements: insert and remove shift every slot below it
            "local t = setmetatable({}, {__len = function() return 1 << 62 end})\ntable.insert(t, 1, 0)",
            "local t = setmetatable({}, {__len = function() return 1 << 62 end})\ntable.remove(t, 1)",
            "local t = {}\ntable.move(t, 1, math.maxinteger - 1, 2)",
            // a C function as __index: concat grows one byte per element, in C
            "local t = setmetatable({}, {__index = rawlen})\ntable.concat(t, '', 1, math.maxinteger)",
            // 2^31 - 2 elements read and written through C metamethods: hours of comparisons
            "local t = setmetatable({}, {__len = function() return (1 << 31) - 2 end, __index = rawlen, __newindex = rawlen})\ntable.sort(t)",
            "local t = setmetatable({}, {__len = function() return (1 << 31) - 2 end, __index = rawlen, __newindex = rawlen})\ntable.sort(t, math.ult)",
        ]
        for (i, source) in cases.enumerated() {
            try write("lib\(i).lua", source + "\n")
            let result = try sensorium(["run", "--time-limit", "0.5", "lib\(i).lua"], timeout: 60)
            XCTAssertNotEqual(result.status, 0, source)
            XCTAssertTrue(result.stderr.hasPrefix("lib\(i).lua:2: stopped: time limit of 500 ms exceeded"), "\(source)\n\(result.stderr)")
        }
        // string.rep of an empty string: stock copies zero bytes n times; the result is at once "".
        try write("rep.lua", "print(#string.rep('', math.maxinteger), #string.rep('', math.maxinteger, ''), #string.rep('ab', 3, ''))\n")
        let rep = try sensorium(["run", "--time-limit", "5", "rep.lua"], timeout: 60)
        XCTAssertEqual(rep.status, 0, rep.stderr)
        XCTAssertEqual(rep.stdout, "0\t0\t6\n")
    }
}

/// `sensorium bench study` computes the same figures five ways — the protocol's one-pass and
/// natural (four-statement) workloads over the simulator and over a store of the same samples
/// (in a process of its own), and a plain Swift loop — and fails when any figure differs.
/// (Its speed is not judged here.)
extension SensoriumCLITests {
    func testBenchStudyPathsAgreeOnEveryFigure() throws {
        // The benchmark protocol is the checkout's (the program finds no folder by walking up).
        let bench = SensoriumCLITests.repositoryRoot.appendingPathComponent("bench/study").path
        let r = try sensorium(["bench", "study", "--days", "1", "--json", "figures.json", "--protocol-folder", bench], timeout: 300)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        assertContains(r.stdout, "Sensorium, stored (the same protocol run over the store)")
        assertContains(r.stdout, "Sensorium, simulated, natural (four statements over the simulator)")
        assertContains(r.stdout, "Sensorium, stored, natural (the four statements over the store)")
        assertContains(r.stdout, "ratio natural / one-pass, stored: ")
        assertContains(r.stdout, "4317000 samples, 24 hours, 1 days; every figure agrees to 1e-9: yes")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("figures.json"))) as? [String: Any]
        let names = (json?["paths"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        XCTAssertEqual(names, ["Sensorium, simulated", "Sensorium, simulated, natural", "Swift reference loop",
                               "Sensorium, stored", "Sensorium, stored, natural"])
    }
}
