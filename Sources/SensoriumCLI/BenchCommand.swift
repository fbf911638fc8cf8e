import ArgumentParser
import CLuaShim
import Foundation
@_spi(Bindings) @_spi(Benchmarks) import LuaHost
import SensorKitModel
import StudyRuntime

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Sensorium's speed and print the figures.",
        subcommands: [BenchLua.self, BenchStudy.self, BenchSimulate.self, BenchStore.self, BenchCohort.self]
    )
}

struct BenchLua: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lua",
        abstract: "Calls per second from a Lua loop (Lua, C, Swift function, Swift closure), and the sandbox against stock lua5.4."
    )

    @Option(help: "Stock Lua interpreter to compare with (the Makefile installs Debian's lua5.4).")
    var stockLua: String = "/usr/bin/lua5.4"

    @Option(help: "Calls per measurement.")
    var calls: Int = 10_000_000

    @Option(help: "Repetitions; the median is reported.")
    var repeats: Int = 5

    func validate() throws {
        try FlagCheck.positive(calls, "--calls")
        try FlagCheck.positive(repeats, "--repeats")
    }

    func run() throws {
        var counter = 0
        let state = try LuaState(limits: .unlimited, sandbox: SandboxOptions()) { state in
            state.register("swift_closure") { call in
                counter &+= 1
                return call.returnArguments(1)
            }
            state.registerCallBaselines()
            try state.execute("function lua_function(x) return x end")
        }

        let cases: [(String, String)] = [
            ("empty loop", "local s = 0 for i = 1, N do s = i end return s"),
            ("(a) Lua function", "local f, s = lua_function, 0 for i = 1, N do s = f(i) end return s"),
            ("C function (baseline)", "local f, s = c_function, 0 for i = 1, N do s = f(i) end return s"),
            ("(b) Swift function, safe trampoline", "local f, s = swift_function, 0 for i = 1, N do s = f(i) end return s"),
            ("(c) Swift capturing closure", "local f, s = swift_closure, 0 for i = 1, N do s = f(i) end return s"),
        ]
        var medians: [String: Double] = [:]
        print("sensorium bench lua: \(calls) calls per run, median of \(repeats) runs (release builds only are meaningful)")
        for (name, body) in cases {
            var times: [Double] = []
            for _ in 0..<max(repeats, 1) {
                let source = "local N = \(calls) " + body
                let start = DispatchTime.now().uptimeNanoseconds
                try state.execute(source, chunkName: "=bench")
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            times.sort()
            let median = times[times.count / 2]
            medians[name] = median
            let perCall = median / Double(calls) * 1e9
            print("  " + name.padding(toLength: 38, withPad: " ", startingAt: 0)
                  + String(format: " %8.3f s  %7.1f ns/iteration  %7.2f M calls/s", median, perCall, Double(calls) / median / 1e6))
        }
        let a = medians["(a) Lua function"]!, b = medians["(b) Swift function, safe trampoline"]!
        let c = medians["(c) Swift capturing closure"]!, cfn = medians["C function (baseline)"]!
        print(String(format: "  ratio b/a (Swift trampoline vs Lua function):   %.2f", b / a))
        print(String(format: "  ratio c/a (Swift closure vs Lua function):      %.2f", c / a))
        print(String(format: "  ratio b/C (Swift trampoline vs plain C call):   %.2f  (target <= 1.5)", b / cfn))
        if counter != calls * max(repeats, 1) { print("  warning: closure ran \(counter) times") }
        try compareWithStock()
    }

    /// Runs lua/bench.lua (embedded in CLuaShim) in a sandboxed state and in stock Lua,
    /// and prints CPU seconds and the ratio Sensorium / stock of each case.
    func compareWithStock() throws {
        var size = 0
        let source = String(decoding: UnsafeRawBufferPointer(start: luashim_bench_source(&size), count: size), as: UTF8.self)
        print("sensorium vs stock Lua 5.4 (\(stockLua)), CPU seconds, median of \(repeats) runs, same run:")
        guard FileManager.default.isExecutableFile(atPath: stockLua) else {
            print("  stock Lua not found at \(stockLua): install Debian's lua5.4 (make deps)")
            return
        }
        let state = try LuaState(limits: .unlimited, sandbox: SandboxOptions())
        var sandboxText = ""
        state.output = { sandboxText += $0 }
        state.register("bench_clock") { call in
            var ts = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
            call.push(Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
            return 1
        }
        try state.execute(source, chunkName: "=bench.lua", arguments: [.integer(Int64(max(repeats, 1)))])

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-bench-\(getpid()).lua")
        try source.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: stockLua)
        process.arguments = [file.path, String(max(repeats, 1))]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let stockText = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        func parse(_ text: String) -> [(String, Double)] {
            text.split(separator: "\n").compactMap { line in
                let parts = line.split(separator: "\t")
                guard parts.count == 2, let v = Double(parts[1]) else { return nil }
                return (String(parts[0]), v)
            }
        }
        let stock = Dictionary(parse(stockText), uniquingKeysWith: { a, _ in a })
        var worst = 0.0
        for (name, mine) in parse(sandboxText) {
            guard let theirs = stock[name], theirs > 0 else { continue }
            let ratio = mine / theirs
            worst = max(worst, ratio)
            print("  " + name.padding(toLength: 40, withPad: " ", startingAt: 0)
                  + String(format: " sensorium %7.3f s  stock %7.3f s  ratio %5.2f", mine, theirs, ratio))
        }
        print(String(format: "  worst ratio: %.2f (target <= 1.5)", worst))
    }
}

/// Peak resident memory of this process so far (Linux: ru_maxrss is in KiB).
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

/// User and system CPU seconds (getrusage).
struct CPUTime {
    var user: Double
    var system: Double
    var total: Double { user + system }

    static func ofThisProcess() -> CPUTime { read(RUSAGE_SELF) }
    /// Of the children waited for so far.
    static func ofChildren() -> CPUTime { read(RUSAGE_CHILDREN) }

    private static func read(_ who: __rusage_who) -> CPUTime {
        var usage = rusage()
        getrusage(who.rawValue, &usage)
        return CPUTime(user: Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
                       system: Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6)
    }

    static func - (a: CPUTime, b: CPUTime) -> CPUTime { CPUTime(user: a.user - b.user, system: a.system - b.system) }
}

struct BenchSimulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Samples per second of every simulated stream, and the time for one participant-week."
    )

    @Option(help: "Days to generate per stream.")
    var days: Int = 7

    func validate() throws { try FlagCheck.positive(days, "--days") }

    func run() throws {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let results = SimulatorBenchmark.run(days: days)
        print("sensorium bench simulate: one participant, \(days) day(s) per stream, generated in 1-hour chunks")
        print(SimulatorBenchmark.report(results), terminator: "")
        print(String(format: "  total %.2f s, peak resident memory %.0f MB", seconds(since: t0), Double(peakResidentBytes()) / 1e6))
        // Issue target: a participant-week of 50 Hz accelerometer at ≥ 100 M samples/s on one core.
        for r in results where r.sensor == .accelerometer {
            let rate = r.samplesPerCPUSecond / 1e6
            print("  accelerometer (\(r.device.rawValue)): \(String(format: "%.0f", rate)) M samples per CPU second, "
                  + "target >= 100 M: \(rate >= 100 ? "met" : "NOT met")")
        }
    }
}

/// How this executable was started, to start it again: the words of /proc/self/cmdline before
/// its own arguments. Usually just the executable's path; when it was started through the
/// dynamic loader (`lib/ld-linux-x86-64.so.2 --library-path lib ./sensorium …`, as on a
/// machine without the Swift runtime installed) the loader and its flags too.
enum SelfCommand {
    static func current() -> [String] {
        let arguments = CommandLine.arguments
        let fallback = [Bundle.main.executablePath ?? arguments[0]]
        guard let data = FileManager.default.contents(atPath: "/proc/self/cmdline") else { return fallback }
        let words = data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
        guard words.count >= arguments.count, Array(words.suffix(arguments.count - 1)) == Array(arguments.dropFirst()) else { return fallback }
        var prefix = Array(words.prefix(words.count - arguments.count + 1))
        if prefix.count == 1 { return fallback }
        prefix[0] = URL(fileURLWithPath: prefix[0]).path
        return prefix
    }
}
