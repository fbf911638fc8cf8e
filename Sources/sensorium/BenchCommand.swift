import ArgumentParser
import CLua
import CLuaShim
import Foundation
import LuaHost
import SensorBackends
import SensorKitModel
import StudyRuntime

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Sensorium's speed and print the figures.",
        subcommands: [BenchLua.self, BenchStudy.self, BenchSimulate.self, BenchStore.self, BenchCohort.self]
    )
}

/// A Swift function for the trampoline benchmark: returns its first argument.
private func swiftIdentity(_ L: OpaquePointer?) -> Int32 {
    lua_settop(L, 1)
    return 1
}

struct BenchLua: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lua",
        abstract: "Calls per second from a Lua loop: Lua function, C function, Swift function, Swift closure."
    )

    @Option(help: "Calls per measurement.")
    var calls: Int = 10_000_000

    @Option(help: "Repetitions; the median is reported.")
    var repeats: Int = 5

    func validate() throws {
        try FlagCheck.positive(calls, "--calls")
        try FlagCheck.positive(repeats, "--repeats")
    }

    func run() throws {
        let state = try LuaState(limits: .unlimited, sandbox: SandboxOptions())
        var counter = 0
        state.register("swift_closure") { call in
            counter &+= 1
            lua_settop(call.L, 1)
            return 1
        }
        luashim_push_swiftfn(state.L, swiftIdentity)
        lua_setglobal(state.L, "swift_function")
        luashim_push_c_identity(state.L)
        lua_setglobal(state.L, "c_function")
        try state.execute("function lua_function(x) return x end")

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
    }
}

/// Peak resident memory of this process so far (Linux: ru_maxrss is in KiB).
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

func seconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }

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
