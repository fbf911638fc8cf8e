import ArgumentParser
import Foundation
@_spi(Bindings) import LuaHost
import StudyStore
import SensorKitModel
import StudyRuntime
import StudyWorlds

/// `sensorium bench study`: one participant-week of 50 Hz phone accelerometer through the
/// benchmark protocol (bench/study/protocol.lua), simulated and from a store, beside a
/// streaming Swift loop over the same samples; every figure is checked to agree. Each path
/// runs two workloads with the same figures: the one-pass protocol (`benchWorkload`: two
/// `summarize` passes) and the natural one (`benchWorkloadNatural`: four statements, as
/// the docs teach them first); their ratio is printed.
struct BenchStudy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "study",
        abstract: "A participant-week of 50 Hz accelerometer summarised by a protocol (simulated, and from a store) beside a streaming Swift loop."
    )

    @Option(help: "Days of accelerometer to summarise.")
    var days: Int = 7

    @Option(help: "The benchmark protocol's folder (protocol.lua, scenario.lua): the checkout's bench/study.")
    var protocolFolder: String = "bench/study"

    @Option(help: "Write the figures, times and peak memory of every path as JSON to this file (read by bench/peers).")
    var json: String?

    @Option(help: "Write the week's samples (time, x, y, z) as CSV to this file (read by bench/peers).")
    var csv: String?

    @Flag(help: "Skip the stored path (store the week, then run the protocol over the store).")
    var noStore = false

    @Option(help: "Work in this folder and keep its files (the stored week: week.sqlite); default: a temporary folder, removed.")
    var keep: String?

    /// Internal: run only the stored path over this store, in (from, to] given by `--replay-window`,
    /// and print its PathRun as JSON. The stored path runs in a process of its own, as
    /// `run --recording` would, so its peak memory is its own and not the simulator's.
    @Option(help: .hidden)
    var replayStore: String?

    @Option(help: .hidden)
    var replayWindow: String?

    /// Internal: the workload the stored path runs (`Workload`'s raw value).
    @Option(help: .hidden)
    var replayWorkload: String = Workload.onePass.rawValue

    func validate() throws { try FlagCheck.positive(days, "--days") }

    func run() throws {
        if let replayStore { return try runStoredPathOnly(store: replayStore) }
        let dir = keep.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("sensorium-bench-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { if keep == nil { try? FileManager.default.removeItem(at: dir) } }
        if keep != nil { for f in ["week.sqlite", "week.sqlite-wal", "week.sqlite-shm"] { try? FileManager.default.removeItem(at: dir.appendingPathComponent(f)) } }

        guard let sim = try BenchStudy.protocolRun(days: days, recording: nil, folder: protocolFolder) else { return }
        try sim.runTopLevel()
        let start = sim.settings.start, end = start + Double(days) * 86_400
        try sim.drain(until: end + 86_400 + 3_600)
        let zone = sim.clock.timeZone
        print("sensorium bench study: \(days) participant-day(s) of 50 Hz phone accelerometer, one participant, time zone \(zone.identifier)")
        print("  workload: hourly mean magnitude; daily count, count of magnitude > 1.1 g, 5/50/95th percentiles")

        var paths: [(name: String, run: PathRun)] = []
        let simulated = try PathRun.measure { try WeekFigures.protocolRun(sim, .onePass, from: start, to: end) }
        paths.append(("Sensorium, simulated", simulated))
        print(simulated.line("Sensorium, simulated (protocol: two summarize passes over the simulator)"))
        let simulatedNatural = try PathRun.measure { try WeekFigures.protocolRun(sim, .natural, from: start, to: end) }
        paths.append(("Sensorium, simulated, natural", simulatedNatural))
        print(simulatedNatural.line("Sensorium, simulated, natural (four statements over the simulator)"))

        let phone = sim.model.currentDevice(source: sim.source)
        let plan = try BenchStudy.plan(sim, device: phone, from: start, to: end)
        let reference = try PathRun.measure { try WeekFigures.referenceLoop(plan, timeZone: zone) }
        paths.append(("Swift reference loop", reference))
        print(reference.line("Swift reference loop (one streaming pass over the simulator, selection per day)"))

        if !noStore {
            let storePath = dir.appendingPathComponent("week.sqlite").path
            let t0 = DispatchTime.now().uptimeNanoseconds
            let rows = try BenchStudy.storeWeek(sim, device: phone, from: start, to: end, path: storePath)
            let size = [storePath, storePath + "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int }
            print(String(format: "  (the simulated week stored: %d rows in %.2f s, %.0f MB)", rows, seconds(since: t0),
                         Double(size.reduce(0, +)) / 1e6))
            let stored = try BenchStudy.storedPathInItsOwnProcess(store: storePath, from: start, to: end, folder: protocolFolder,
                                                                  workload: .onePass)
            paths.append(("Sensorium, stored", stored))
            print(stored.line("Sensorium, stored (the same protocol run over the store)"))
            let storedNatural = try BenchStudy.storedPathInItsOwnProcess(store: storePath, from: start, to: end, folder: protocolFolder,
                                                                         workload: .natural)
            paths.append(("Sensorium, stored, natural", storedNatural))
            print(storedNatural.line("Sensorium, stored, natural (the four statements over the store)"))
        }

        let base = paths[0].run
        var agree = true
        for (name, p) in paths.dropFirst() {
            if let problem = base.figures.disagreement(with: p.figures) {
                agree = false
                print("  DISAGREE: \(name) vs simulated: \(problem)")
            }
        }
        let f = base.figures
        print("  \(f.samples) samples, \(f.hours.count) hours, \(f.days.count) days; every figure agrees to 1e-9: \(agree ? "yes" : "NO")")
        print(String(format: "  ratio simulated / reference loop: %.2f wall, %.2f CPU; targets: ≤ 1.3 s simulated, ≤ 1.6 s stored, peak < 200 MB",
                     base.seconds / reference.seconds, base.cpuSeconds / reference.cpuSeconds))
        let byName = Dictionary(paths, uniquingKeysWith: { a, _ in a })
        for where_ in ["simulated", "stored"] {
            guard let one = byName["Sensorium, \(where_)"], let natural = byName["Sensorium, \(where_), natural"] else { continue }
            print(String(format: "  ratio natural / one-pass, %@: %.2f wall, %.2f CPU (target ≤ 1.2 over the store)",
                         where_, natural.seconds / one.seconds, natural.cpuSeconds / one.cpuSeconds))
        }
        print("  (load average \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"): on a busy machine the CPU seconds are the steadier figure)")
        if let csv {
            let n = try BenchStudy.writeCSV(plan, to: csv)
            print("  wrote \(n) samples to \(csv)")
        }
        if let json {
            try WeekFigures.json(paths: paths, timeZone: zone.identifier, start: start, end: end)
                .write(toFile: json, atomically: true, encoding: .utf8)
        }
        if !agree { throw ExitCode(1) }
    }

    /// The benchmark protocol's one participant, set up and not started: simulated for
    /// `days` + 2 days, or replayed from the store at `recording`. The benchmark measures the
    /// runtime itself (its fetch plans beside a reference loop, a store filled from its
    /// source), so it drives the runtime's `StudyRunner` directly rather than through the
    /// embedding API, which hides those types.
    static func protocolRun(days: Int, recording: String?, folder: String) throws -> ParticipantRun? {
        let protocolPath = folder + "/protocol.lua"
        guard FileManager.default.fileExists(atPath: protocolPath) else {
            throw CommandError("missing \(protocolPath): run `sensorium bench study` from the project's folder (the checkout's top), "
                               + "or give --protocol-folder (the checkout's bench/study)")
        }
        var options = StudyOptions(protocolPath: protocolPath, scenarioPath: folder + "/scenario.lua", moduleDirectories: [folder])
        options.stdlibFolder = stdlibOverride()
        options.limits = LuaLimits(memoryBytes: 256 << 20, timeLimitMilliseconds: 0, instructionBudget: 0)
        if let recording {
            options.recordingPath = recording
        } else {
            options.participants = 1
            options.days = days + 2
        }
        return try StudyRunner(options: options, planner: WorldPlanner()).prepare(output: { _ in }).first
    }

    /// `sensorium bench study --replay-store PATH --replay-window FROM,TO`, run as a child:
    /// the stored path's PathRun (figures, times, peak memory of that process).
    static func storedPathInItsOwnProcess(store: String, from: Double, to: Double, folder: String,
                                          workload: Workload) throws -> PathRun {
        let process = Process()
        // Started as this process was (through the dynamic loader on a machine without the
        // Swift runtime: contrib/device/pack.sh).
        let command = SelfCommand.current()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + ["bench", "study", "--replay-store", store, "--replay-window", "\(from),\(to)", "--protocol-folder", folder,
                             "--replay-workload", workload.rawValue]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CommandError("the stored path failed (exit \(process.terminationStatus))") }
        return try PathRun.decoder.decode(PathRun.self, from: data)
    }

    func runStoredPathOnly(store: String) throws {
        let window = (replayWindow ?? "").split(separator: ",").compactMap { Double($0) }
        guard window.count == 2 else { throw ValidationError("--replay-window needs FROM,TO (Unix seconds)") }
        guard let workload = Workload(rawValue: replayWorkload) else {
            throw ValidationError("--replay-workload must be one of: \(Workload.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let replay = try BenchStudy.protocolRun(days: days, recording: store, folder: protocolFolder) else {
            throw CommandError("the store \(store) has no participant")
        }
        try replay.runTopLevel()
        try replay.drain(until: window[1] + 86_400 + 3_600)
        // The whole process's peak (set-up included), as `run --recording` would have.
        let stored = try PathRun.measure(resettingPeak: false) { try WeekFigures.protocolRun(replay, workload, from: window[0], to: window[1]) }
        FileHandle.standardOutput.write(try PathRun.encoder.encode(stored))
    }

    /// The fetch of the phone's accelerometer written in (from, to], as the protocol makes it.
    static func plan(_ run: ParticipantRun, device: SRDevice, from: Double, to: Double) throws -> FetchPlan {
        let clock = run.model.clock
        let fetch = run.model.fetch(FetchRequest(from: clock.fromUnixTime(from), to: clock.fromUnixTime(to), device: device),
                                    sensor: .accelerometer, source: run.source)
        guard let plan = fetch.plan else { throw CommandError("the benchmark fetch failed: \(String(describing: fetch.error))") }
        return plan
    }

    /// Stores the simulator's accelerometer written in (from, to + 1 h] with the recording
    /// intervals of the simulated participant, as an import would. Returns the rows stored.
    static func storeWeek(_ run: ParticipantRun, device: SRDevice, from: Double, to: Double, path: String) throws -> Int {
        let store = try RecordedStore(path: path)
        defer { try? store.close() }
        let participant = run.setup.id
        let (_, stats) = try store.importing { session in
            try session.addParticipant(RecordedParticipant(id: participant, timeZone: run.clock.timeZone.identifier))
            // The ranges the simulated participant actually recorded (as an export's manifest
            // carries them), so both paths keep and drop the same samples (contract §6.2).
            for r in run.model.recording.intervals(.accelerometer, until: to + 7_200).ranges {
                try session.addRecordingInterval(participant: participant, RecordingInterval(sensor: .accelerometer, device: device,
                                                                                             after: r.after, through: min(r.through, to + 7_200)))
            }
            var t = from
            while t < to + 3_600 {
                let hi = min(to + 3_600, t + 3_600)
                try session.append(participant: participant, device: device,
                                   run.source.samples(participant: participant, sensor: .accelerometer, device: device,
                                                      writtenAfter: t, through: hi))
                t = hi
            }
        }
        return stats.rowsStored
    }

    /// Writes `time,x,y,z` (shortest round-trip decimals) for every sample of the plan, duplicates included.
    static func writeCSV(_ plan: FetchPlan, to path: String) throws -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil), let out = FileHandle(forWritingAtPath: path) else { throw CommandError("cannot write \(path)") }
        defer { try? out.close() }
        var text = "time,x,y,z\n"
        var n = 0
        var chunks = plan.makeIterator()
        while let chunk = try chunks.next() {
            let b = chunk.batch
            guard let (xs, ys, zs) = b.xyz else { continue }
            for i in 0..<b.count {
                text += "\(b.times[i]),\(xs[i]),\(ys[i]),\(zs[i])\n"
            }
            n += b.count
            try out.write(contentsOf: Data(text.utf8))
            text = ""
        }
        return n
    }
}

/// The benchmark protocol's two forms of one workload (same figures).
enum Workload: String, CaseIterable {
    /// `benchWorkload`: one `byHour():summarize{}` and one `byDay():summarize{}`.
    case onePass = "one-pass"
    /// `benchWorkloadNatural`: `count`, `byHour():mean`, `where(…):byDay():count`, `byDay():quantiles`.
    case natural

    /// The protocol's Lua function that runs it.
    var function: String { self == .onePass ? "benchWorkload" : "benchWorkloadNatural" }
}

/// One path's figures with its wall time and peak memory.
struct PathRun: Codable {
    var figures: WeekFigures
    var seconds: Double
    /// CPU seconds (user + system) of the process while the path ran.
    var cpuSeconds: Double
    var peakBytes: Int

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return e
    }()
    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return d
    }()

    /// Runs `body`, with the process's peak-memory mark (Linux: VmHWM) reset first unless told not to.
    static func measure(resettingPeak: Bool = true, _ body: () throws -> WeekFigures) rethrows -> PathRun {
        if resettingPeak { PeakMemory.reset() }
        let cpu0 = cpuSeconds()
        let t = DispatchTime.now().uptimeNanoseconds
        let figures = try body()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
        return PathRun(figures: figures, seconds: elapsed, cpuSeconds: cpuSeconds() - cpu0, peakBytes: PeakMemory.peak())
    }

    static func cpuSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
    }

    func line(_ name: String) -> String {
        String(format: "  %@: %.3f s (%.3f CPU-s), %.1f M samples/s, peak memory %.0f MB", name, seconds, cpuSeconds,
               Double(figures.samples) / seconds / 1e6, Double(peakBytes) / 1e6)
    }
}

/// The process's resident-memory high-water mark, resettable (Linux /proc).
enum PeakMemory {
    static func reset() {
        if let h = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            try? h.write(contentsOf: Data("5".utf8))
            try? h.close()
        }
    }

    static func peak() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return peakResidentBytes() }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        return peakResidentBytes()
    }
}

/// The benchmark's figures: hourly mean magnitude; daily samples, samples above 1.1 g and
/// 5/50/95th percentiles of magnitude.
struct WeekFigures: Codable {
    struct Hour: Codable { var label: String; var mean: Double }
    struct Day: Codable { var label: String; var samples: Int; var active: Int; var p: [Double] }
    var hours: [Hour] = []
    var days: [Day] = []
    var samples: Int { days.reduce(0) { $0 + $1.samples } }

    /// The protocol's `benchWorkload(from, to)` (or the natural form's function) run in `run`'s Lua state.
    static func protocolRun(_ run: ParticipantRun, _ workload: Workload, from: Double, to: Double) throws -> WeekFigures {
        let r = try run.state.execute("return \(workload.function)(\(from), \(to))", chunkName: "=bench")
        var out = WeekFigures()
        for h in r.first?.tableValue?.arrayValue ?? [] {
            guard let t = h.tableValue else { continue }
            out.hours.append(Hour(label: t["hour"]?.stringValue ?? "?", mean: t["mean"]?.doubleValue ?? .nan))
        }
        for d in r.dropFirst().first?.tableValue?.arrayValue ?? [] {
            guard let t = d.tableValue else { continue }
            out.days.append(Day(label: t["day"]?.stringValue ?? "?", samples: Int(t["samples"]?.integerValue ?? -1),
                                active: Int(t["active"]?.integerValue ?? -1),
                                p: ["p05", "p50", "p95"].map { t[$0]?.doubleValue ?? .nan }))
        }
        return out
    }

    /// The same figures by a plain streaming loop over the plan's chunks: hour sums in a
    /// dictionary, each day's magnitudes kept until a later day starts (a day seen again
    /// continues its pool), then three quantiles by selection.
    static func referenceLoop(_ plan: FetchPlan, timeZone: TimeZone) throws -> WeekFigures {
        var hourSums: [Int: (sum: Double, n: Int)] = [:]
        var pools: [Int: [Double]] = [:]
        var active: [Int: Int] = [:]
        var finished: [Int: [Double]] = [:]
        var offset = 0.0, validFrom = Double.infinity, validUntil = -Double.infinity
        func finish(_ d: Int) {
            guard var v = pools.removeValue(forKey: d) else { return }
            finished[d] = Quantiles.of(&v, [0.05, 0.5, 0.95]) + [Double(v.count)]
        }
        var runHour = Int.min, runSum = 0.0, runN = 0
        var day = Int.min, pool: [Double] = [], dayActive = 0
        func switchDay(_ d: Int) {
            if day != Int.min { pools[day] = pool; active[day] = dayActive }
            pool = []
            for old in pools.keys where old < d { finish(old) }
            pool = pools.removeValue(forKey: d) ?? []
            dayActive = active[d] ?? 0
            day = d
        }
        var chunks = plan.makeIterator()
        while let chunk = try chunks.next() {
            let b = chunk.batch
            guard let (xs, ys, zs) = b.xyz else { continue }
            for i in 0..<b.count {
                let t = b.times[i]
                if !(t >= validFrom && t < validUntil) {
                    offset = LocalTime.offset(at: t, timeZone)
                    validFrom = t
                    validUntil = min(LocalTime.nextTransition(after: t, timeZone), t + 86_400)
                }
                let local = t + offset
                let h = Int((local / 3_600).rounded(.down))
                let m = (xs[i] * xs[i] + ys[i] * ys[i] + zs[i] * zs[i]).squareRoot()
                if h != runHour {
                    if runN > 0 { hourSums[runHour, default: (0, 0)].sum += runSum; hourSums[runHour, default: (0, 0)].n += runN }
                    runHour = h; runSum = 0; runN = 0
                    let d = Int((local / 86_400).rounded(.down))
                    if d != day { switchDay(d) }
                }
                runSum += m
                runN += 1
                pool.append(m)
                if m > 1.1 { dayActive += 1 }
            }
        }
        if runN > 0 { hourSums[runHour, default: (0, 0)].sum += runSum; hourSums[runHour, default: (0, 0)].n += runN }
        if day != Int.min { pools[day] = pool; active[day] = dayActive; pool = [] }
        for d in pools.keys { finish(d) }
        var out = WeekFigures()
        for h in hourSums.keys.sorted() {
            out.hours.append(Hour(label: utcLabel(Double(h) * 3_600, "%Y-%m-%d %H:00"), mean: hourSums[h]!.sum / Double(hourSums[h]!.n)))
        }
        for d in finished.keys.sorted() {
            let f = finished[d]!
            out.days.append(Day(label: utcLabel(Double(d) * 86_400, "%Y-%m-%d"), samples: Int(f[3]), active: active[d] ?? 0,
                                p: Array(f[0..<3])))
        }
        return out
    }

    static func utcLabel(_ t: Double, _ format: String) -> String {
        var time = time_t(t)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buf = [CChar](repeating: 0, count: 64)
        let n = strftime(&buf, buf.count, format, &parts)
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// nil when both have the same hours and days, equal counts, and every number within 1e-9.
    func disagreement(with o: WeekFigures) -> String? {
        func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-9 || (a.isNaN && b.isNaN) }
        guard hours.map(\.label) == o.hours.map(\.label) else { return "hours differ: \(hours.count) vs \(o.hours.count)" }
        guard days.map(\.label) == o.days.map(\.label) else { return "days differ: \(days.map(\.label)) vs \(o.days.map(\.label))" }
        for (a, b) in zip(hours, o.hours) where !close(a.mean, b.mean) { return "hour \(a.label): mean \(a.mean) vs \(b.mean)" }
        for (a, b) in zip(days, o.days) {
            if a.samples != b.samples || a.active != b.active { return "day \(a.label): counts \(a.samples)/\(a.active) vs \(b.samples)/\(b.active)" }
            for (x, y) in zip(a.p, b.p) where !close(x, y) { return "day \(a.label): percentiles \(a.p) vs \(b.p)" }
        }
        return nil
    }

    /// The figures and every path's time and memory, for bench/peers.
    static func json(paths: [(name: String, run: PathRun)], timeZone: String, start: Double, end: Double) -> String {
        func num(_ x: Double) -> String { x.isFinite ? "\(x)" : "null" }
        let f = paths[0].run.figures
        var s = "{\n  \"timeZone\": \"\(timeZone)\", \"start\": \(start), \"end\": \(end), \"samples\": \(f.samples),\n  \"paths\": [\n"
        s += paths.map { p in
            "    {\"name\": \"\(p.name)\", \"seconds\": \(num(p.run.seconds)), \"cpuSeconds\": \(num(p.run.cpuSeconds)), \"peakBytes\": \(p.run.peakBytes)}"
        }.joined(separator: ",\n")
        s += "\n  ],\n  \"hourly\": [\n"
        s += f.hours.map { "    [\"\($0.label)\", \(num($0.mean))]" }.joined(separator: ",\n")
        s += "\n  ],\n  \"daily\": [\n"
        s += f.days.map { d in "    [\"\(d.label)\", \(d.samples), \(d.active), \(d.p.map(num).joined(separator: ", "))]" }.joined(separator: ",\n")
        s += "\n  ]\n}\n"
        return s
    }
}
