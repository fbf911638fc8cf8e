import Foundation
import LuaHost
import StudyRuntime
import StudyWorlds

/// The protocol a study runs: a folder (its `protocol.lua`, with its `scenario.lua` when
/// there is one), a file, or source text held in memory.
public struct StudyProtocol: Sendable {
    /// The chunk's name in errors and tracebacks; the file read when `source` is nil.
    let path: String
    let source: String?
    /// The scenario beside a folder's protocol, if any.
    let scenario: String?
    /// Folders `require` searches after the built-in stdlib.
    let moduleDirectories: [String]

    /// A protocol folder: `protocol.lua`, and `scenario.lua` when present (used by a
    /// simulated world). Throws `StudyError` when the folder has no `protocol.lua`.
    public static func folder(_ path: String) throws -> StudyProtocol {
        let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
        let file = folder + "/protocol.lua"
        guard FileManager.default.fileExists(atPath: file) else { throw StudyError("\(path) is a folder without protocol.lua") }
        let scenario = folder + "/scenario.lua"
        return StudyProtocol(path: file, source: nil, scenario: FileManager.default.fileExists(atPath: scenario) ? scenario : nil,
                             moduleDirectories: [folder])
    }

    /// A protocol file; `require` also searches `moduleDirectories` (nil: the file's folder).
    public static func file(_ path: String, moduleDirectories: [String]? = nil) -> StudyProtocol {
        StudyProtocol(path: path, source: nil, scenario: nil,
                      moduleDirectories: moduleDirectories ?? [URL(fileURLWithPath: path).deletingLastPathComponent().path])
    }

    /// Protocol source text; `name` names it in errors (`protocol.lua:12: …`). `require`
    /// finds the built-in stdlib only.
    public static func source(_ text: String, name: String = "protocol.lua") -> StudyProtocol {
        StudyProtocol(path: name, source: text, scenario: nil, moduleDirectories: [])
    }
}

/// Where a study's samples come from.
public enum StudyWorld: Sendable {
    /// A simulated world from a scenario file (nil: the protocol folder's `scenario.lua`, or a
    /// default cohort drawn from the seed).
    case simulated(scenario: String? = nil)
    /// A recorded study store made by `sensorium import` (only `participant`, when given);
    /// a scenario file gives only its seed and switches (nil: the protocol folder's `scenario.lua`).
    case recorded(store: String, participant: String? = nil, scenario: String? = nil)
    /// The embedder's own data.
    case data(any StudyDataSource)
}

/// How a study runs: the command line's flags as values. Nil means the scenario's (or the
/// recording's) value, else the default (2026-03-02, 14 days, 3 participants, seed 1, UTC).
public struct StudyConfiguration: Sendable {
    /// Study days.
    public var days: Int?
    /// A simulated cohort's size.
    public var participants: Int?
    /// The seed of the simulation and of each participant's `math.random`.
    public var seed: Int64?
    /// The study's first day, `YYYY-MM-DD`.
    public var start: String?
    /// An IANA time zone name (`Europe/Berlin`).
    public var timeZone: String?
    /// Each participant's Lua memory limit in bytes (default 256 MiB).
    public var memoryLimitBytes = LuaLimits().memoryBytes
    /// Each call into Lua's time limit in milliseconds (default 10 s).
    public var timeLimitMilliseconds = LuaLimits().timeLimitMilliseconds
    /// Lua instructions each call into Lua may run (0: no budget).
    public var instructionBudget = LuaLimits().instructionBudget
    /// Participants run in parallel; the result is the same for any value.
    public var jobs = 1
    /// A failed `expect` stops the participant's run with an error instead of a finding.
    public var failFast = false
    /// Serve the stdlib from this folder instead of the built-in copy (development).
    public var stdlibFolder: String?
    /// Run only this shard's participants (for a Slurm array); `StudyResult.write(to:)`
    /// then also writes the shard file that `sensorium merge` joins.
    public var shard: StudyShard?

    /// Every value its default (the scenario's, else Sensorium's).
    public init() {}
}

/// A protocol, a world and a configuration: `try Study(…).run()` runs the protocol for every
/// participant in virtual time, with the command line's sandbox, limits and determinism, and
/// returns what the run produced. The command line's `sensorium run` is built on it.
public struct Study: Sendable {
    /// The protocol to run.
    public var `protocol`: StudyProtocol
    /// Where the samples come from.
    public var world: StudyWorld
    /// Days, cohort, seed, limits, jobs.
    public var configuration: StudyConfiguration
    /// The embedder's registrations, run in every participant's Lua state before the protocol.
    var extensions: [@Sendable (LuaState) throws -> Void] = []

    /// A study of `studyProtocol` in `world` (default: simulated) under `configuration`.
    public init(_ studyProtocol: StudyProtocol, world: StudyWorld = .simulated(), configuration: StudyConfiguration = StudyConfiguration()) {
        self.protocol = studyProtocol
        self.world = world
        self.configuration = configuration
    }

    /// Makes global function `name` available to the protocol (see
    /// `LuaState.register(_:function:)` for how arguments, results and errors cross).
    public mutating func register<R: LuaConvertible>(_ name: String, function body: @escaping @Sendable () throws -> R) {
        extensions.append { $0.register(name, function: body) }
    }

    /// Makes global function `name` of one argument available to the protocol.
    public mutating func register<A: LuaConvertible, R: LuaConvertible>(_ name: String, function body: @escaping @Sendable (A) throws -> R) {
        extensions.append { $0.register(name, function: body) }
    }

    /// Makes global function `name` of two arguments available to the protocol.
    public mutating func register<A: LuaConvertible, B: LuaConvertible, R: LuaConvertible>(
        _ name: String, function body: @escaping @Sendable (A, B) throws -> R) {
        extensions.append { $0.register(name, function: body) }
    }

    /// Makes Swift class `type` a Lua class named `name` in the protocol: `define` adds its
    /// typed methods and properties (see `LuaState.register(class:name:_:)`); functions
    /// registered here may take and return its instances.
    public mutating func register<Object: LuaObject>(class type: Object.Type, name: String,
                                                     _ define: @escaping @Sendable (LuaClassDefinition<Object>) throws -> Void) {
        extensions.append { try $0.register(class: type, name: name, define) }
    }

    /// Runs `setUp` in every participant's Lua state after the study API is installed and
    /// before the protocol runs (for modules and several registrations at once).
    public mutating func extend(_ setUp: @escaping @Sendable (LuaState) throws -> Void) {
        extensions.append(setUp)
    }

    /// Runs the study. What participants print reaches `output` on the calling thread, as
    /// they print it (one job) or participant by participant (several), and is also in the
    /// result. `announce` gets
    /// what the world says about itself before any participant runs (a replay's span), and
    /// `progress` (participants done, participants in all) follows each participant's output.
    /// A participant an error stops becomes a finding and the others run on (unless
    /// `failFast`). Throws `StudyError` when the study cannot run: the world cannot be made
    /// (naming file and field), the protocol's top level fails, or (`failFast`) a participant fails.
    public func run(output: ((String) -> Void)? = nil, announce: (([String]) -> Void)? = nil,
                    progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> StudyResult {
        let session = StudySession(self)
        session.announce = announce
        session.progress = progress
        return try session.run(output: output)
    }
}

/// One shard of a cohort, `index` of `count` (1-based): the `index`-th of `count` contiguous,
/// near-equal slices of the participants, as `sensorium run --shard i/n` runs them (shards
/// 1…n in order are the cohort).
public struct StudyShard: Sendable, Equatable {
    /// Which shard, from 1 to `count`.
    public var index: Int
    /// How many shards the cohort is cut into.
    public var count: Int

    /// Shard `index` of `count`; nil unless 1 ≤ index ≤ count.
    public init?(index: Int, count: Int) {
        guard count >= 1, index >= 1, index <= count else { return nil }
        self.index = index
        self.count = count
    }

    /// `"3/10"` as shard 3 of 10; nil for any other text.
    public init?(parsing text: String) {
        guard let shard = Shard(parsing: text) else { return nil }
        self.init(index: shard.index, count: shard.count)
    }
}

/// Why a study could not run: the message as the command line prints it (file and line,
/// what was expected; with a traceback for Lua errors).
public struct StudyError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, naming file, line and what was expected where known.
    public var message: String
    /// An error with `message` (an embedder's data source may throw it too).
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
