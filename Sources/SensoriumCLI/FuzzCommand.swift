import ArgumentParser
import Foundation
import Importers

/// `sensorium fuzz`: a seeded mutation fuzzer over the three import formats, scenarios and
/// protocols. Each case mutates a seed input from the corpus (contrib/fuzz/seeds), runs
/// `sensorium` on it in a child process under an address-space cap (`ulimit -v`) and a
/// timeout (MyHeartCounts and MyDataHelps inputs are, in half the cases, zstd-compressed after
/// their mutation, as MyHeartCounts uploads them, and in some their compressed bytes are
/// mutated too), and fails on a signal (a Swift trap, a crash, memory exhaustion), a hang, or an
/// error message longer than 64 KB. A clear error (exit 1 or 64) is a pass: bad input is
/// expected to be refused. Cases are numbered; case N of seed S is the same input on every
/// machine, so a failure is reproduced with `--seed S --only N`.
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Mutation-fuzz importers, scenarios and protocols, each case in a capped child process."
    )

    @Option(help: "Number of cases.")
    var cases: Int = 100

    @Option(help: "Seed of the mutations.")
    var seed: UInt64 = 1

    @Option(help: "Run only case N (to reproduce a failure).")
    var only: Int?

    @Option(help: "Targets, comma-separated: scenario, protocol, native, mhc-csv, mhc, mdh-json.")
    var targets: String = FuzzTarget.allCases.map(\.rawValue).joined(separator: ",")

    @Option(help: "Folder with probe.lua and seeds/ (default: contrib/fuzz).")
    var corpus: String = "contrib/fuzz"

    @Option(name: .customLong("memory-mib"), help: "Address-space cap per case, MiB.")
    var memoryMiB: Int = 4096

    @Option(help: "Seconds per case before it counts as a hang.")
    var timeout: Int = 120

    @Option(help: "Cases run at once.")
    var jobs: Int = 1

    @Flag(help: "Print each case's outcome and the first line of its error.")
    var verbose = false

    @Option(help: "Copy failing cases (input and a repro.sh) into this folder.")
    var keep: String = "fuzz-failures"

    func validate() throws {
        guard (1...10_000_000).contains(cases) else { throw ValidationError("--cases: from 1 to 10000000") }
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs: from 1 to 64") }
        guard (1...3_600).contains(timeout) else { throw ValidationError("--timeout: from 1 to 3600 seconds") }
        guard (256...1 << 20).contains(memoryMiB) else { throw ValidationError("--memory-mib: from 256 to 1048576") }
        for name in targets.split(separator: ",") where FuzzTarget(rawValue: String(name)) == nil {
            throw ValidationError("--targets: unknown target '\(name)' (known: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
    }

    func run() throws {
        let chosen = targets.split(separator: ",").compactMap { FuzzTarget(rawValue: String($0)) }
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-fuzz-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let fuzzer = try Fuzzer(corpus: corpus, work: work, executable: selfExecutable(), memoryKiB: memoryMiB << 10, timeout: timeout)
        let numbers = only.map { [$0] } ?? Array(0..<cases)
        let tally = Tally()
        let began = DispatchTime.now().uptimeNanoseconds
        DispatchQueue.concurrentPerform(iterations: min(jobs, numbers.count)) { worker in
            for k in stride(from: worker, to: numbers.count, by: jobs) {
                let n = numbers[k]
                let target = chosen[n % chosen.count]
                let outcome = fuzzer.runCase(n, target: target, seed: seed)
                tally.add(target, outcome)
                if verbose { print("case \(n) \(target.rawValue): \(outcome.kind.rawValue) \(outcome.detail)") }
                if let failure = outcome.failure {
                    let kept = fuzzer.keep(n, target: target, seed: seed, into: keep)
                    printError("FAIL case \(n) (\(target.rawValue)): \(failure)\(kept.map { "; kept in \($0)" } ?? "")")
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
        print(tally.summary(seconds: seconds, seed: seed))
        if tally.failures > 0 { throw ExitCode(1) }
    }
}

/// What a fuzz case feeds to `sensorium`.
enum FuzzTarget: String, CaseIterable, Sendable {
    case scenario, `protocol`, native, mhcCSV = "mhc-csv", mhc, mdhJSON = "mdh-json"
}

/// How one case ended.
struct FuzzOutcome: Sendable {
    enum Kind: String, Sendable { case accepted, refused, crashed, hung, longMessage = "long message" }
    var kind: Kind
    var detail: String = ""
    var failure: String? {
        switch kind {
        case .accepted, .refused: nil
        case .crashed: "killed by a signal (\(detail))"
        case .hung: "no result within the timeout (\(detail))"
        case .longMessage: "an error message of \(detail) bytes"
        }
    }
}

/// Counts per target and outcome, shared by the workers.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: [FuzzOutcome.Kind: Int]] = [:]
    private(set) var failures = 0

    func add(_ target: FuzzTarget, _ outcome: FuzzOutcome) {
        lock.lock()
        defer { lock.unlock() }
        counts[target.rawValue, default: [:]][outcome.kind, default: 0] += 1
        if outcome.failure != nil { failures += 1 }
    }

    func summary(seconds: Double, seed: UInt64) -> String {
        var lines: [String] = []
        var total = 0
        for target in FuzzTarget.allCases.map(\.rawValue) {
            guard let c = counts[target] else { continue }
            let n = c.values.reduce(0, +)
            total += n
            let parts = [FuzzOutcome.Kind.accepted, .refused, .crashed, .hung, .longMessage].map { "\(c[$0] ?? 0) \($0.rawValue)" }
            lines.append("  " + target.padding(toLength: 9, withPad: " ", startingAt: 0) + String(format: " %5d cases: ", n) + parts.joined(separator: ", "))
        }
        return "fuzz (seed \(seed)): \(total) cases in \(String(format: "%.1f", seconds)) s, \(failures) failing\n" + lines.joined(separator: "\n")
    }
}

/// Builds and runs the cases.
struct Fuzzer: Sendable {
    let corpus: URL
    let work: URL
    let executable: String
    let memoryKiB: Int
    let timeout: Int
    /// The native seed: a small simulated study exported once per fuzz run.
    let nativeSeed: URL

    init(corpus path: String, work: URL, executable: String, memoryKiB: Int, timeout: Int) throws {
        corpus = URL(fileURLWithPath: path)
        self.work = work
        self.executable = executable
        self.memoryKiB = memoryKiB
        self.timeout = timeout
        guard FileManager.default.fileExists(atPath: corpus.appendingPathComponent("probe.lua").path) else {
            throw CommandError("\(path): not a fuzz corpus (no probe.lua; run from the checkout or pass --corpus)")
        }
        nativeSeed = work.appendingPathComponent("native-seed")
        let export = Fuzzer.child(executable, ["export", "--into", nativeSeed.path, "--days", "2", "--participants", "1",
                                               "--sensors", "heartRate,ambientLightSensor,pedometerData,deviceUsageReport,onWristState"],
                                  memoryKiB: memoryKiB, timeout: 600, directory: work)
        guard export.status == 0 else { throw CommandError("could not export the native seed study: \(export.stderr)") }
    }

    /// Case `n`: its folder, the mutated input, and the `sensorium` runs on it.
    func runCase(_ n: Int, target: FuzzTarget, seed: UInt64) -> FuzzOutcome {
        let dir = work.appendingPathComponent("case-\(n)")
        try? FileManager.default.removeItem(at: dir)
        defer { try? FileManager.default.removeItem(at: dir) }
        guard let commands = try? prepare(n, target: target, seed: seed, in: dir) else { return FuzzOutcome(kind: .refused, detail: "no input") }
        var last = FuzzOutcome(kind: .accepted)
        for args in commands {
            let r = Fuzzer.child(executable, args, memoryKiB: memoryKiB, timeout: timeout, directory: dir)
            if r.signal != 0 { return FuzzOutcome(kind: .crashed, detail: "signal \(r.signal), `sensorium \(args.prefix(3).joined(separator: " ")) …`") }
            if r.timedOut { return FuzzOutcome(kind: .hung, detail: "\(timeout) s, `sensorium \(args.prefix(3).joined(separator: " ")) …`") }
            if r.stderrBytes > 65_536 { return FuzzOutcome(kind: .longMessage, detail: "\(r.stderrBytes)") }
            if r.status != 0 {   // a clear error: later steps need this one's output
                return FuzzOutcome(kind: .refused, detail: String(r.stderr.split(separator: "\n").first ?? "").prefix(200).description)
            }
            last = FuzzOutcome(kind: .accepted)
        }
        return last
    }

    /// Writes case `n`'s input into `dir`; returns the `sensorium` argument lists to run in order.
    func prepare(_ n: Int, target: FuzzTarget, seed: UInt64, in dir: URL) throws -> [[String]] {
        var rng = SplitMix(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(n) &* 0xBF58_476D_1CE4_E5B9 ^ UInt64(n))
        let fm = FileManager.default
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        let seeds = corpus.appendingPathComponent("seeds")
        let probe = try String(contentsOf: corpus.appendingPathComponent("probe.lua"), encoding: .utf8)
        let replay = ["run", "probe.lua", "--recording", "store.sqlite", "--days", "3", "--time-limit", "10"]
        switch target {
        case .scenario:
            let seedFile = try Fuzzer.files(in: seeds.appendingPathComponent("scenario")).randomElement(using: &rng)!
            let text = Mutator(lua: true).mutate(try Data(contentsOf: seedFile), &rng)
            try Data(probe.utf8).write(to: dir.appendingPathComponent("protocol.lua"))
            try text.write(to: dir.appendingPathComponent("scenario.lua"))
            // The scenario is read and checked whole, and its first four participants run: a
            // cohort of 65,535 is valid input, but running it is not a fuzz case's work.
            return [["run", ".", "--time-limit", "10", "--memory-limit", "512", "--participants", "4"]]
        case .protocol:
            let seedFile = try Fuzzer.files(in: seeds.appendingPathComponent("protocol")).randomElement(using: &rng)!
            let text = Mutator(lua: true).mutate(try Data(contentsOf: seedFile), &rng)
            try text.write(to: dir.appendingPathComponent("protocol.lua"))
            try Data("return { days = 3, participants = 1 }\n".utf8).write(to: dir.appendingPathComponent("scenario.lua"))
            return [["run", ".", "--time-limit", "5", "--memory-limit", "256", "--out", "out"]]
        case .native:
            try copyMutatingOne(from: nativeSeed, to: dir.appendingPathComponent("in"), &rng)
            try Data(probe.utf8).write(to: dir.appendingPathComponent("probe.lua"))
            return [["import", "--format", "native", "in", "--into", "store.sqlite"], ["inspect", "store.sqlite"], replay]
        case .mhcCSV:
            try copyMutatingOne(from: seeds.appendingPathComponent("mhc-csv/week1"), to: dir.appendingPathComponent("in"), &rng)
            try compressSome(dir.appendingPathComponent("in"), &rng)
            try Data(probe.utf8).write(to: dir.appendingPathComponent("probe.lua"))
            return [["import", "--format", "mhc-csv", "in", "--participant", "p1", "--into", "store.sqlite"], replay]
        case .mhc:
            // A MyHeartCounts upload tree: CSV uploads and a FHIR Observation array.
            try copyMutatingOne(from: seeds.appendingPathComponent("mhc"), to: dir.appendingPathComponent("in"), &rng)
            try compressSome(dir.appendingPathComponent("in"), &rng)
            try Data(probe.utf8).write(to: dir.appendingPathComponent("probe.lua"))
            return [["import", "--format", "mhc", "in", "--into", "store.sqlite"], replay]
        case .mdhJSON:
            try copyMutatingOne(from: seeds.appendingPathComponent("mdh-json"), to: dir.appendingPathComponent("in"), &rng)
            try compressSome(dir.appendingPathComponent("in"), &rng)
            try Data(probe.utf8).write(to: dir.appendingPathComponent("probe.lua"))
            return [["import", "--format", "mdh-json", "in", "--into", "store.sqlite"], replay]
        }
    }

    /// Copies a seed folder, mutating one of its files (the others stay as they were).
    func copyMutatingOne(from source: URL, to dest: URL, _ rng: inout SplitMix) throws {
        let fm = FileManager.default
        try fm.copyItem(at: source, to: dest)
        let files = try Fuzzer.files(in: dest)
        guard let victim = files.randomElement(using: &rng) else { return }
        let mutated = Mutator(lua: false).mutate(try Data(contentsOf: victim), &rng)
        try mutated.write(to: victim)
    }

    /// zstd cases (MyHeartCounts uploads are zstd-compressed; the seeds stay text): in half
    /// of the cases, every file under `dir` (already mutated as text) is compressed with zstd,
    /// mostly renamed `NAME.zstd`, else keeping its name (the importers recognise zstd by its
    /// magic bytes); in half of those, one compressed file's bytes are then mutated too (flips,
    /// cuts, inserted slices, trailing bytes, a second frame).
    func compressSome(_ dir: URL, _ rng: inout SplitMix) throws {
        guard Bool.random(using: &rng) else { return }
        let rename = Int.random(in: 0..<4, using: &rng) > 0
        var compressed: [URL] = []
        for file in try Fuzzer.files(in: dir) {
            let bytes = try ZstdCompressor.compress([UInt8](try Data(contentsOf: file)), level: Int32.random(in: 1...5, using: &rng))
            let target = rename ? file.appendingPathExtension("zstd") : file
            if rename { try FileManager.default.removeItem(at: file) }
            try Data(bytes).write(to: target)
            compressed.append(target)
        }
        guard Bool.random(using: &rng), let victim = compressed.randomElement(using: &rng) else { return }
        try Mutator(lua: false).mutateBinary(try Data(contentsOf: victim), &rng).write(to: victim)
    }

    /// Regular files below `dir`, sorted (so the choice is the same on every machine).
    static func files(in dir: URL) throws -> [URL] {
        let fm = FileManager.default
        var out: [URL] = []
        for case let url as URL in fm.enumerator(at: dir, includingPropertiesForKeys: [.isRegularFileKey]) ?? FileManager.DirectoryEnumerator() {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { out.append(url) }
        }
        return out.sorted { $0.path < $1.path }
    }

    /// Rebuilds a failing case into `folder/TARGET-N` with a repro.sh; returns the folder.
    func keep(_ n: Int, target: FuzzTarget, seed: UInt64, into folder: String) -> String? {
        let dest = URL(fileURLWithPath: folder).appendingPathComponent("\(target.rawValue)-\(n)")
        try? FileManager.default.removeItem(at: dest)
        guard let commands = try? prepare(n, target: target, seed: seed, in: dest) else { return nil }
        let script = "#!/bin/sh\n# sensorium fuzz --seed \(seed) --only \(n) --targets \(target.rawValue)\ncd \"$(dirname \"$0\")\"\nulimit -v \(memoryKiB)\n"
            + commands.map { "timeout -s KILL \(timeout) sensorium " + $0.map { "'\($0)'" }.joined(separator: " ") + " || exit $?" }.joined(separator: "\n") + "\n"
        try? script.write(to: dest.appendingPathComponent("repro.sh"), atomically: true, encoding: .utf8)
        return dest.path
    }

    struct ChildResult {
        var status: Int32
        var signal: Int32
        var timedOut: Bool
        var stderrBytes: Int
        var stderr: String
    }

    /// Runs `executable args` in `directory` through `sh -c 'ulimit -v K; exec timeout -s KILL T "$@"'`.
    /// `timeout` exits 124 (or 137) after killing a hung child and 128 + N for a child killed by signal N;
    /// with `-s KILL` it signals its own process group, so it often dies of the KILL itself: a KILL
    /// once the timeout has passed is the timeout's, a hang, not a crash.
    static func child(_ executable: String, _ args: [String], memoryKiB: Int, timeout: Int, directory: URL) -> ChildResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -v \(memoryKiB) && exec timeout -s KILL \(timeout) \"$@\"", "sh", executable] + args
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment["SENSORIUM_PROGRESS"] = "0"
        process.environment = environment
        let errFile = directory.appendingPathComponent(".stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)   // a failure shows at FileHandle below
        defer { try? FileManager.default.removeItem(at: errFile) }
        guard let err = try? FileHandle(forWritingTo: errFile) else { return ChildResult(status: 1, signal: 0, timedOut: false, stderrBytes: 0, stderr: "") }
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let started = DispatchTime.now().uptimeNanoseconds
        do { try process.run() } catch { return ChildResult(status: 1, signal: 0, timedOut: false, stderrBytes: 0, stderr: "\(error)") }
        process.waitUntilExit()
        let ranOut = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 >= Double(timeout)
        try? err.close()
        let data = (try? Data(contentsOf: errFile)) ?? Data()
        let status = process.terminationStatus
        var signal: Int32 = process.terminationReason == .uncaughtSignal ? status : 0
        var timedOut = false
        if signal == SIGKILL && ranOut {
            (signal, timedOut) = (0, true)
        } else if signal == 0 {
            if status == 124 || status == 137 { timedOut = true } else if status > 128 && status < 160 { signal = status - 128 }
        }
        return ChildResult(status: status, signal: signal, timedOut: timedOut, stderrBytes: data.count,
                           stderr: String(decoding: data.prefix(2_000), as: UTF8.self))
    }
}

/// Seeded mutations of text and bytes: numbers and quoted strings swapped for values at the
/// edges of their domains, lines deleted, repeated or swapped, bytes flipped, files cut,
/// byte-order marks inserted (data inputs).
struct Mutator {
    /// Whether the input is Lua (then Lua expressions such as `0/0` are among the numbers).
    var lua: Bool

    static let numbers = ["0", "-1", "1", "-0", "0.5", "-2.5", "1e308", "-1e308", "1e-300", "4.9e-324", "65535", "2147483648",
                          "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e19", "-1e19", "999999999999", "1e999"]
    static let luaNumbers = ["0/0", "1/0", "-1/0", "math.huge", "-math.huge", "2^63", "math.mininteger", "math.maxinteger", "-(0/0)"]
    static let dataNumbers = ["nan", "inf", "-inf", "NaN", "", "1e", "--1", "0x10", "1,5"]
    static let strings = ["", "..", ".", "/", "a/b", "../../x", "nan", "inf", "-inf", "day 0 10:00", "day 999999999 10:00", "9999-12-31 23:59",
                          "0001-01-01", "2026-02-30", "2026-03-02 24:00", "\u{0}", "ü∂ß", "%999999999d", "%s%s%s%n", "-1e308", "1e999",
                          "frontTop", "unknown", "30m", "-5h", "0s", "1e-300s", "99999999w", "Europe/Nowhere", "UTC", "\\", "\"",
                          String(repeating: "x", count: 70_000)]

    func mutate(_ input: Data, _ rng: inout SplitMix) -> Data {
        var bytes = [UInt8](input)
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1, 2: bytes = replaceToken(bytes, numbers: true, &rng)
            case 3, 4: bytes = replaceToken(bytes, numbers: false, &rng)
            case 5: bytes = lines(bytes, &rng)
            case 6: if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            case 7: if !bytes.isEmpty { bytes.removeLast(Int.random(in: 0...bytes.count, using: &rng)) }
            case 8:
                // A slice of the input inserted elsewhere (nesting, repeated keys, broken structure).
                guard !bytes.isEmpty else { break }
                let a = Int.random(in: 0..<bytes.count, using: &rng), b = min(bytes.count, a + Int.random(in: 1...200, using: &rng))
                bytes.insert(contentsOf: bytes[a..<b], at: Int.random(in: 0...bytes.count, using: &rng))
            case 9 where !lua:
                // A byte-order mark (UTF-8, UTF-16, a cut one) at the start or inside, as editors write them.
                let mark = Mutator.byteOrderMarks.randomElement(using: &rng)!
                bytes.insert(contentsOf: mark, at: Bool.random(using: &rng) ? 0 : Int.random(in: 0...bytes.count, using: &rng))
            default: bytes = replaceToken(bytes, numbers: true, &rng)
            }
        }
        return Data(bytes)
    }

    static let byteOrderMarks: [[UInt8]] = [[0xEF, 0xBB, 0xBF], [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF], [0xEF, 0xBB], [0xFF, 0xFE], [0xFE, 0xFF],
                                            [0xFF, 0xFE, 0x00, 0x00]]

    /// Mutations of compressed bytes: one to three of a flipped byte, a cut, a slice inserted
    /// elsewhere, bytes appended (garbage, or the input's own start: a frame after the end).
    func mutateBinary(_ input: Data, _ rng: inout SplitMix) -> Data {
        var bytes = [UInt8](input)
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0, 1: if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng) }
            case 2: if !bytes.isEmpty { bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng)) }
            case 3:
                guard !bytes.isEmpty else { break }
                let a = Int.random(in: 0..<bytes.count, using: &rng), b = min(bytes.count, a + Int.random(in: 1...64, using: &rng))
                bytes.insert(contentsOf: bytes[a..<b], at: Int.random(in: 0...bytes.count, using: &rng))
            default:
                bytes += Bool.random(using: &rng) ? (0..<Int.random(in: 1...16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    : Array(bytes.prefix(Int.random(in: 1...64, using: &rng)))
            }
        }
        return Data(bytes)
    }

    /// Replaces one number (or one quoted string's contents) with an edge value.
    func replaceToken(_ bytes: [UInt8], numbers: Bool, _ rng: inout SplitMix) -> [UInt8] {
        let text = String(decoding: bytes, as: UTF8.self)
        let pattern = numbers ? #"(?<![A-Za-z_0-9.])-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?"# : #""[^"\n]{0,200}"|'[^'\n]{0,200}'"#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return bytes }
        let ns = text as NSString
        let matches = regex.matches(in: text, range: NSRange(location: 0, length: ns.length))
        guard let m = matches.randomElement(using: &rng) else { return bytes }
        var range = m.range
        let replacement: String
        if numbers {
            let pool = Mutator.numbers + (lua ? Mutator.luaNumbers : Mutator.dataNumbers)
            replacement = pool.randomElement(using: &rng)!
        } else {
            range = NSRange(location: range.location + 1, length: max(0, range.length - 2))
            var s = Mutator.strings.randomElement(using: &rng)!
            if lua { s = s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "'", with: "\\'") }
            replacement = s
        }
        return [UInt8](ns.replacingCharacters(in: range, with: replacement).utf8)
    }

    /// Deletes, repeats (up to 50 times) or swaps lines.
    func lines(_ bytes: [UInt8], _ rng: inout SplitMix) -> [UInt8] {
        var ls = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        guard ls.count > 1 else { return bytes }
        let i = Int.random(in: 0..<ls.count, using: &rng)
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: ls.remove(at: i)
        case 1: ls.insert(contentsOf: Array(repeating: ls[i], count: Int.random(in: 1...50, using: &rng)), at: i)
        default: ls.swapAt(i, Int.random(in: 0..<ls.count, using: &rng))
        }
        return Array(ls.joined(separator: [UInt8(ascii: "\n")]))
    }
}

/// SplitMix64: a small, fast, seedable generator (the same numbers on every platform).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
