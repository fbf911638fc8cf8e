import ArgumentParser
import Foundation
@_spi(Bindings) import LuaHost
#if canImport(Glibc)
import Glibc
#endif

/// Flags of commands that run a cohort (`run`, `test`): parallelism, findings, progress.
struct CohortOptions: ParsableArguments {
    @Option(help: "Participants run in parallel, each in its own Lua state (default: the number of cores). Output is the same for any value.")
    var jobs: Int?

    @Option(help: "Run only part i of n of the participants (like 3/10) and write it with --out for `sensorium merge`.")
    var shard: String?

    @Flag(name: .customLong("fail-fast"), help: "Stop at the first failed expect check instead of recording it as a finding.")
    var failFast = false

    @Flag(help: "No progress bar.")
    var quiet = false

    func jobCount(memoryLimitMiB: Int) throws -> Int { try CohortOptions.jobCount(jobs, memoryLimitMiB: memoryLimitMiB) }
    var showProgress: Bool { CohortOptions.showProgress(quiet: quiet) }

    /// `--jobs`, else the number of cores; at least 1. Under an address-space cap
    /// (`ulimit -v`), where each Lua state reserves its `--memory-limit` of address space
    /// (`AddressSpace`): without `--jobs`, as many as fit (at least 1); a `--jobs` or
    /// `--memory-limit` that cannot fit is refused before any work, naming both flags and
    /// the cap — the same answer every run, never a failure halfway through a cohort.
    static func jobCount(_ jobs: Int?, memoryLimitMiB: Int) throws -> Int {
        let memory = max(memoryLimitMiB, 0) << 20
        if let jobs {
            guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
            try checkAddressSpace(jobs: jobs, memory: memory, memoryLimitMiB: memoryLimitMiB, jobsGiven: true)
            return jobs
        }
        var n = max(1, ProcessInfo.processInfo.activeProcessorCount)
        while n > 1, AddressSpace.shortfall(states: n, memoryLimit: memory) != nil { n -= 1 }
        try checkAddressSpace(jobs: n, memory: memory, memoryLimitMiB: memoryLimitMiB, jobsGiven: false)
        return n
    }

    static func checkAddressSpace(jobs: Int, memory: Int, memoryLimitMiB: Int, jobsGiven: Bool) throws {
        guard let (needed, cap) = AddressSpace.shortfall(states: jobs, memoryLimit: memory) else { return }
        let limit = memoryLimitMiB > 0 ? "--memory-limit \(memoryLimitMiB)" : "--memory-limit 0 (no limit: a sixteenth of the cap each)"
        throw CommandError("the address-space cap (ulimit -v \(cap >> 10)) is \(cap >> 20) MiB, and \(jobs) participant\(jobs == 1 ? "" : "s") at once "
            + "(\(jobsGiven ? "--jobs \(jobs)" : "one job") with \(limit)) need\(jobs == 1 ? "s" : "") about \(needed >> 20) MiB of address space: "
            + "\(jobsGiven && jobs > 1 ? "lower --jobs, " : "")lower --memory-limit, or raise the cap (ulimit -v)")
    }

    /// Progress bars only on a terminal and without --quiet.
    static func showProgress(quiet: Bool) -> Bool { !quiet && isatty(2) != 0 }
}

/// A progress bar on standard error: `[████░░░░]  412/1000 participants  8.3/s  1:11 left`.
/// Drawn at most 10 times a second; `clear()` removes it before other output, `finish()` at the end.
final class ProgressBar {
    let unit: String
    let enabled: Bool
    private let started = DispatchTime.now().uptimeNanoseconds
    private var lastDraw: UInt64 = 0
    private var drawn = false
    private var last: (done: Int, total: Int) = (0, 0)
    private var label = ""

    init(unit: String, enabled: Bool) {
        self.unit = unit
        self.enabled = enabled
    }

    /// Shows `done` of `total` (and `label`, such as the file being written).
    func update(done: Int, total: Int, label: String = "") {
        guard enabled else { return }
        last = (done, total)
        self.label = label
        let now = DispatchTime.now().uptimeNanoseconds
        if done < total && now - lastDraw < 100_000_000 { return }
        lastDraw = now
        draw(now)
    }

    private func draw(_ now: UInt64) {
        let (done, total) = last
        let frac = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let width = 30
        let filled = Int(frac * Double(width))
        let secs = Double(now - started) / 1e9
        let rate = secs > 0 ? Double(done) / secs : 0
        let left = rate > 0 ? Double(total - done) / rate : 0
        let line = "\r[" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "] "
            + "\(done)/\(total) \(unit)  " + String(format: "%.1f/s", rate) + "  " + ProgressBar.clock(left) + " left" + (label.isEmpty ? "" : "  " + label) + "\u{1B}[K"
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }

    /// Removes the bar (before other output on the terminal); the next update draws it again.
    /// Returns whether a bar was showing.
    @discardableResult
    func clear() -> Bool {
        guard enabled, drawn else { return false }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
        lastDraw = 0
        return true
    }

    func finish() { clear() }
}
