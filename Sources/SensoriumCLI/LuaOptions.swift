import ArgumentParser
import Foundation
@_spi(Bindings) import LuaHost
import StudyRuntime

/// Flags every command that runs Lua shares: limits and the seed.
struct LuaOptions: ParsableArguments {
    @Option(name: .customLong("memory-limit"), parsing: .unconditional, help: "Lua heap limit in MiB (0 = none).")
    var memoryLimitMiB: Int = 256

    @Option(name: .customLong("time-limit"), parsing: .unconditional, help: "Wall-clock seconds one call into Lua may run (0 = none).")
    var timeLimitSeconds: Double = 10

    @Option(name: .customLong("instruction-budget"), parsing: .unconditional, help: "Lua instructions one call may run (0 = none; deterministic, about 2x slower).")
    var instructionBudget: Int = 0

    @Option(name: .customLong("seed"), parsing: .unconditional, help: "Seed of math.random and of the simulated world (default: the scenario's, else 1).")
    var seedOption: Int64?

    /// Refuses limits outside their ranges (a non-finite or huge time limit would overflow).
    func validate() throws {
        for (flag, value, range) in [("--memory-limit", Double(memoryLimitMiB), InputLimits.memoryLimitMiB),
                                     ("--time-limit", timeLimitSeconds, InputLimits.timeLimitSeconds),
                                     ("--instruction-budget", Double(instructionBudget), InputLimits.instructionBudget)]
        where !range.contains(value) {
            throw ValidationError("\(flag): \(range.refusal(value))")
        }
    }

    var seed: Int64 { seedOption ?? 1 }
    var seedGiven: Bool { seedOption != nil }

    var limits: LuaLimits {
        LuaLimits(memoryBytes: max(memoryLimitMiB, 0) << 20,
                  timeLimitMilliseconds: Int((max(timeLimitSeconds, 0) * 1000).rounded()),
                  instructionBudget: max(instructionBudget, 0))
    }
}

/// The stdlib folder that replaces the one built into the program: $SENSORIUM_STDLIB
/// (development: edit `stdlib/*.lua` and run without rebuilding), else nil (the built-in
/// stdlib, `Stdlib.modules`, which needs no file beside the program).
func stdlibOverride() -> String? {
    guard let env = ProcessInfo.processInfo.environment["SENSORIUM_STDLIB"], !env.isEmpty else { return nil }
    return env
}

/// Shows paths below the current folder relative to it, so messages stay short and stable.
func relativeIfBelowCurrent(_ path: String) -> String {
    let cwd = FileManager.default.currentDirectoryPath + "/"
    return path.hasPrefix(cwd) ? String(path.dropFirst(cwd.count)) : path
}

/// Buffered standard output: print() from scripts can be called millions of times.
final class OutputBuffer {
    private var buffer: [UInt8] = []
    private let handle: FileHandle
    /// Keeps everything for `take()` instead of writing it (the REPL's machine mode).
    private let capturing: Bool

    init(_ handle: FileHandle = .standardOutput, capturing: Bool = false) {
        self.handle = handle
        self.capturing = capturing
        buffer.reserveCapacity(1 << 16)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func write(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// What was written since the last `take()`, for a capturing buffer; empties it.
    func take() -> String {
        defer { buffer.removeAll(keepingCapacity: true) }
        return String(decoding: buffer, as: UTF8.self)
    }

    func flush() {
        guard !capturing, !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { flush() }
}

/// Writes an error message to standard error, cut to `bounded` length.
func printError(_ text: String) {
    let shown = bounded(text)
    FileHandle.standardError.write(Data((shown.hasSuffix("\n") ? shown : shown + "\n").utf8))
}

/// At most `limit` bytes of `text`: a message that quotes a huge input (a 10 MB line, a
/// 100,000-character name) keeps its head and tail and says how much was left out.
func bounded(_ text: String, limit: Int = 8_192) -> String {
    let bytes = text.utf8.count
    guard bytes > limit else { return text }
    let head = String(decoding: text.utf8.prefix(limit * 3 / 4), as: UTF8.self)
    let tail = String(decoding: text.utf8.suffix(limit / 4), as: UTF8.self)
    return head + "\n… (\(bytes - limit) bytes of this message left out) …\n" + tail
}
