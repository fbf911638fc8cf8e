import ArgumentParser
import Foundation
import JSONText
@_spi(Bindings) import LuaHost

/// `sensorium test`: the golden-output runner.
///
/// Every protocol folder holds protocol.lua, scenario.lua and expected/ (stdout.txt and
/// each report table as CSV and JSON). Each protocol runs twice, in two processes, the
/// first with one job and the second with `--jobs N`; any difference between the runs is
/// reported as non-determinism (file and line), then the output is compared byte for byte
/// with expected/ and a unified diff shows mismatches. A run with findings (failed
/// `expect` checks) fails.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run protocols against their scenarios and compare with their expected output."
    )

    @Argument(help: "Protocol folders, or folders of protocol folders (default: protocols/).")
    var paths: [String] = []

    @Flag(help: "Write the expected output anew (atomically) and list what changed.")
    var update = false

    @Option(help: "Participants run in parallel in the second of the two runs of each protocol (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "No progress bar.")
    var quiet = false

    @Option(help: "Only protocols whose folder path contains this text (repeatable; any match runs).")
    var filter: [String] = []

    @Flag(help: "Stop at the first protocol that fails.")
    var failFast = false

    @Option(help: "Also write the results as JUnit XML to this file (for CI systems).")
    var junit: String?

    func run() throws {
        var protocols = try findProtocols(paths.isEmpty ? ["protocols"] : paths)
        guard !protocols.isEmpty else { throw CommandError("no protocol folders (with protocol.lua) found in \(paths.isEmpty ? "protocols/" : paths.joined(separator: " "))") }
        if !filter.isEmpty {
            protocols = protocols.filter { folder in filter.contains { folder.contains($0) } }
            guard !protocols.isEmpty else { throw ValidationError("no protocol folder matches --filter \(filter.joined(separator: ", "))") }
        }
        let jobCount = try CohortOptions.jobCount(jobs, memoryLimitMiB: LuaLimits().memoryBytes >> 20)
        let bar = ProgressBar(unit: "protocols", enabled: CohortOptions.showProgress(quiet: quiet))
        var results: [Outcome] = []
        for (i, folder) in protocols.enumerated() {
            bar.update(done: i, total: protocols.count)
            let began = DispatchTime.now().uptimeNanoseconds
            let log = FailureLog()
            let ok = try check(folder, jobs: jobCount, bar: bar, log: log)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
            print(String(format: "     %@: %.2f s", folder, seconds))
            results.append(Outcome(folder: folder, passed: ok, seconds: seconds, message: log.text))
            if !ok && failFast { break }
        }
        bar.finish()
        let passed = results.filter(\.passed).count, failed = results.count - passed
        let skipped = protocols.count - results.count
        print("\(passed) passed, \(failed) failed" + (skipped > 0 ? ", \(skipped) not run (--fail-fast)" : ""))
        if let junit { try TestCommand.junitXML(results).write(toFile: junit, atomically: true, encoding: .utf8) }
        if failed > 0 { throw ExitCode(1) }
    }

    /// One protocol's result, for the summary and the JUnit file.
    struct Outcome {
        var folder: String
        var passed: Bool
        var seconds: Double
        var message: String
    }

    /// Results as JUnit XML: one `testsuite` named `sensorium`, one `testcase` per protocol
    /// (`classname` the parent folder, `name` the protocol), failures with their first lines.
    static func junitXML(_ results: [Outcome]) -> String {
        let escape = MarkupText.escape
        let failures = results.filter { !$0.passed }.count
        let total = results.reduce(0) { $0 + $1.seconds }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += String(format: "<testsuites tests=\"%d\" failures=\"%d\" time=\"%.3f\">\n", results.count, failures, total)
        xml += String(format: "  <testsuite name=\"sensorium\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", results.count, failures, total)
        for r in results {
            let url = URL(fileURLWithPath: r.folder)
            let head = "    <testcase classname=\"\(escape(url.deletingLastPathComponent().relativePath))\" name=\"\(escape(url.lastPathComponent))\" time=\"\(String(format: "%.3f", r.seconds))\""
            if r.passed { xml += head + "/>\n"; continue }
            let text = String(r.message.prefix(20_000))
            let first = text.split(separator: "\n").first.map(String.init) ?? "failed"
            xml += head + ">\n      <failure message=\"\(escape(String(first.prefix(300))))\">\(escape(text))</failure>\n    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// Failure lines of one protocol: printed as they come, kept for the JUnit file.
    final class FailureLog {
        var text = ""
        func callAsFunction(_ line: String) {
            print(line)
            text += line + "\n"
        }
    }

    /// One golden run of a protocol folder: over its scenario (expected output in
    /// `expected/`), or a replay of a recorded study named in `replays.txt` (in `expected/NAME/`).
    struct GoldenRun {
        /// The replay's name; nil for the scenario run.
        var name: String?
        /// `sensorium import` arguments (format and sources, paths made relative to the
        /// working folder) that build the replay's store; nil for the scenario run.
        var importArguments: [String]?
        /// Extra `sensorium run` flags.
        var runArguments: [String]

        var expectedFolder: String { name.map { "expected/" + $0 } ?? "expected" }
        var label: String { name.map { " (replay \($0))" } ?? "" }
    }

    /// The golden runs of `folder`: the scenario run when it has a scenario.lua (or no
    /// replays.txt), and one replay per line of `replays.txt`:
    /// `NAME FORMAT SOURCE... [-- RUN FLAGS...]`, sources relative to the folder, `#` comments.
    static func goldenRuns(_ folder: String) throws -> [GoldenRun] {
        let fm = FileManager.default
        let replays = folder + "/replays.txt"
        var runs: [GoldenRun] = []
        if fm.fileExists(atPath: folder + "/scenario.lua") || !fm.fileExists(atPath: replays) {
            runs.append(GoldenRun(name: nil, importArguments: nil, runArguments: []))
        }
        guard let text = fm.contents(atPath: replays).map({ String(decoding: $0, as: UTF8.self) }) else { return runs }
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let words = TestCommand.words(line)
            if words.isEmpty { continue }
            let dash = words.firstIndex(of: "--") ?? words.count
            let head = Array(words[..<dash]), flags = dash < words.count ? Array(words[(dash + 1)...]) : []
            guard head.count >= 3 else {
                throw ReplaysFileError("\(replays):\(n + 1): expected NAME FORMAT SOURCE... [-- RUN FLAGS...], found '\(line.trimmingCharacters(in: .whitespaces))'")
            }
            guard head[0].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw ReplaysFileError("\(replays):\(n + 1): the replay name '\(head[0])' must be letters, digits, - or _ (it names expected/\(head[0])/)")
            }
            let sources = head[2...].map { $0.hasPrefix("/") ? $0 : folder + "/" + $0 }
            runs.append(GoldenRun(name: head[0], importArguments: ["--format", head[1]] + sources, runArguments: flags))
        }
        return runs
    }

    /// The words of a `replays.txt` line: separated by blanks; a word in double quotes may hold blanks.
    static func words(_ line: String) -> [String] {
        var words: [String] = [], current = "", quoted = false, started = false
        for c in line {
            if c == "\"" { quoted.toggle(); started = true }
            else if (c == " " || c == "\t") && !quoted { if started { words.append(current) }; current = ""; started = false }
            else { current.append(c); started = true }
        }
        if started { words.append(current) }
        return words
    }

    /// Runs each golden run of one protocol folder; returns whether all passed.
    func check(_ folder: String, jobs: Int, bar: ProgressBar, log fail: FailureLog = FailureLog()) throws -> Bool {
        var ok = true
        for run in try TestCommand.goldenRuns(folder) {
            ok = try check(folder, run: run, jobs: jobs, bar: bar, log: fail) && ok
            if !ok && failFast { break }
        }
        return ok
    }

    /// Runs one golden run twice and compares; returns whether it passed.
    func check(_ folder: String, run: GoldenRun, jobs: Int, bar: ProgressBar, log fail: FailureLog) throws -> Bool {
        var extra = run.runArguments
        var storeFolder: String?
        defer { if let storeFolder { try? FileManager.default.removeItem(atPath: storeFolder) } }
        if let importArguments = run.importArguments {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-replay-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            storeFolder = dir
            let imported = try captureProcess(["import"] + importArguments + ["--into", dir + "/store.sqlite", "--quiet"])
            bar.clear()
            if imported.status != 0 {
                fail("FAIL \(folder)\(run.label): the import of its recorded study failed (exit \(imported.status))\n" + indent(imported.stderr))
                return false
            }
            extra = ["--recording", dir + "/store.sqlite"] + extra
        }
        let first = try capture(folder, jobs: 1, extra: extra)
        let second = try capture(folder, jobs: jobs, extra: extra)
        bar.clear()
        defer {
            try? FileManager.default.removeItem(atPath: first.directory)
            try? FileManager.default.removeItem(atPath: second.directory)
        }
        let expected = folder + "/" + run.expectedFolder
        let folder = folder + run.label      // as the messages name it
        if first.status != 0 {
            let findings = first.stderr.split(separator: "\n").filter { $0.hasPrefix("finding: ") }.count
            let why = findings > 0 ? "\(findings) failed expect check\(findings == 1 ? "" : "s") (findings)" : "the protocol failed (exit \(first.status))"
            fail("FAIL \(folder): \(why)\n" + indent(first.stderr))
            return false
        }
        if let difference = firstDifference(first.files, second.files) {
            fail("FAIL \(folder): non-deterministic output: \(difference)")
            return false
        }
        if update { return try write(first.files, to: expected, folder: folder) }
        var ok = true
        var expectedFiles = (try? FileManager.default.contentsOfDirectory(atPath: expected)) ?? []
        expectedFiles.sort()
        if expectedFiles.isEmpty {
            fail("FAIL \(folder): no expected output; review the output of `sensorium run \(folder)` and freeze it with `sensorium test \(folder) --update`")
            return false
        }
        for name in reportOrder(Set(first.files.keys)) {
            let path = expected + "/" + name
            guard let want = FileManager.default.contents(atPath: path) else {
                fail("FAIL \(folder): \(name) is produced but not expected (run with --update to accept it)")
                ok = false
                continue
            }
            if want != first.files[name]! {
                fail("FAIL \(folder): \(name) differs from \(path)")
                fail(unifiedDiff(expectedPath: path, actual: first.files[name]!, label: name))
                ok = false
            }
        }
        for name in expectedFiles where first.files[name] == nil {
            fail("FAIL \(folder): \(name) is expected but no longer produced")
            ok = false
        }
        if ok { print("ok   \(folder)") }
        return ok
    }

    struct Capture {
        var directory: String
        var status: Int32
        var stderr: String
        var files: [String: Data]
    }

    /// Runs `sensorium run FOLDER --out TMP --jobs N EXTRA…` in a child process and reads what it wrote.
    func capture(_ folder: String, jobs: Int, extra: [String] = []) throws -> Capture {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let (status, stderr, outData) = try captureProcess(["run", folder, "--out", dir + "/tables", "--jobs", String(jobs), "--quiet"] + extra)
        var files: [String: Data] = ["stdout.txt": outData]
        let tables = dir + "/tables"
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: tables)) ?? []).sorted() {
            files[name] = FileManager.default.contents(atPath: tables + "/" + name)
        }
        return Capture(directory: dir, status: status, stderr: stderr, files: files)
    }

    /// Runs this executable with `arguments` in a child process: its exit status, standard
    /// error and standard output.
    func captureProcess(_ arguments: [String]) throws -> (status: Int32, stderr: String, stdout: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: selfExecutable())
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the child runs so that neither fills up.
        nonisolated(unsafe) var errData = Data()
        let errReader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        errReader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errReader.isFinished { usleep(1000) }
        return (process.terminationStatus, String(decoding: errData, as: UTF8.self), outData)
    }

    /// File names sorted, the run report index.html last: it repeats the tables and charts,
    /// so a difference is named in the file it comes from first.
    func reportOrder(_ names: Set<String>) -> [String] {
        names.sorted { ($0 == "index.html" ? 1 : 0, $0) < ($1 == "index.html" ? 1 : 0, $1) }
    }

    /// The first file and line where two runs differ, or nil.
    func firstDifference(_ a: [String: Data], _ b: [String: Data]) -> String? {
        for name in reportOrder(Set(a.keys).union(b.keys)) {
            guard let x = a[name], let y = b[name] else { return "\(name) was written by only one of two runs" }
            if x == y { continue }
            let xl = String(decoding: x, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let yl = String(decoding: y, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            for i in 0..<max(xl.count, yl.count) {
                let l1 = i < xl.count ? String(xl[i]) : "(end of file)", l2 = i < yl.count ? String(yl[i]) : "(end of file)"
                if l1 != l2 {
                    let table = name.hasSuffix(".csv") || name.hasSuffix(".json") ? "table \(name.split(separator: ".").dropLast().joined(separator: ".")) (\(name))" : name
                    return "\(table) line \(i + 1) differs between two runs of the same protocol, scenario and seed:\n  run 1: \(l1)\n  run 2: \(l2)"
                }
            }
        }
        return nil
    }

    /// Writes the expected files atomically, removes stale ones, and lists what changed.
    func write(_ files: [String: Data], to expected: String, folder: String) throws -> Bool {
        try FileManager.default.createDirectory(atPath: expected, withIntermediateDirectories: true)
        var changed: [String] = []
        for (name, data) in files.sorted(by: { $0.key < $1.key }) {
            let path = expected + "/" + name
            let old = FileManager.default.contents(atPath: path)
            if old == data { continue }
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
            changed.append((old == nil ? "added   " : "changed ") + path)
        }
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: expected)) ?? []).sorted() where files[name] == nil {
            try FileManager.default.removeItem(atPath: expected + "/" + name)
            changed.append("removed " + expected + "/" + name)
        }
        if changed.isEmpty { print("ok   \(folder): expected output unchanged") }
        else { print("updated \(folder):\n" + changed.map { "  " + $0 }.joined(separator: "\n")) }
        return true
    }

    /// `diff -u` between the expected file and the new output.
    func unifiedDiff(expectedPath: String, actual: Data, label: String) -> String {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-actual-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: tmp) }
        guard (try? actual.write(to: tmp)) != nil else { return "" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/diff")
        process.arguments = ["-u", "--label", "expected/\(label)", "--label", "actual/\(label)", expectedPath, tmp.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return "(diff is not available)" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.count > 80 ? lines.prefix(80).joined(separator: "\n") + "\n… (\(lines.count - 80) more diff lines)" : text
    }

    func indent(_ text: String) -> String {
        text.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
    }
}

/// A malformed `replays.txt`: file, line and what was expected.
struct ReplaysFileError: Error, CustomStringConvertible {
    var description: String
    init(_ text: String) { description = text }
}

/// Protocol folders below the given paths (a folder with protocol.lua is one), sorted.
func findProtocols(_ paths: [String]) throws -> [String] {
    var out: [String] = []
    let fm = FileManager.default
    for raw in paths {
        let path = raw.hasSuffix("/") ? String(raw.dropLast()) : raw
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else {
            throw CommandError(fm.fileExists(atPath: path) ? "\(raw): not a folder" : "\(raw): no such folder")
        }
        if fm.fileExists(atPath: path + "/protocol.lua") { out.append(path); continue }
        for name in (try fm.contentsOfDirectory(atPath: path)).sorted() where fm.fileExists(atPath: path + "/" + name + "/protocol.lua") {
            out.append(path + "/" + name)
        }
    }
    return out
}

/// This executable's path (for running protocols in child processes).
func selfExecutable() -> String {
    if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
    return CommandLine.arguments[0]
}
