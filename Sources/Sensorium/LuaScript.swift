import Foundation
import LuaHost
import StudyRuntime

/// A plain Lua script — a file with no `study{}` — run as `sensorium run` runs one: the
/// sandbox and limits of a `StudyConfiguration` (memory, time, instruction budget, seed,
/// stdlib folder), the stdlib through `require`, `time` over the host clock, and the `report`
/// module, whose tables come back as text to print after the script. No world, no
/// participants: `sensorkit` says it needs a study.
public struct LuaScript: Sendable {
    /// The script's file.
    public var file: String
    /// Folders `require` searches for the script's own modules (the command line passes the
    /// script's folder), after the stdlib.
    public var moduleDirectories: [String]

    /// The script in `file`, whose `require` also searches `moduleDirectories`.
    public init(file: String, moduleDirectories: [String] = []) {
        self.file = file
        self.moduleDirectories = moduleDirectories
    }

    /// Runs the script with `arguments` (its `...` and `arg`) under `configuration`'s limits
    /// and seed (1 when nil), handing what it prints to `output` as it prints it, bytes
    /// unchanged; returns the text of its report tables (empty when it reported none).
    /// Throws `StudyError` with Lua's message and traceback when the script fails or is stopped.
    public func run(arguments: [String] = [], configuration: StudyConfiguration = StudyConfiguration(),
                    output: @escaping ([UInt8]) -> Void) throws -> String {
        let limits = LuaLimits(memoryBytes: configuration.memoryLimitBytes,
                               timeLimitMilliseconds: configuration.timeLimitMilliseconds,
                               instructionBudget: configuration.instructionBudget)
        let sandbox = Stdlib.sandbox(folder: configuration.stdlibFolder, moduleDirectories: moduleDirectories,
                                     seed: configuration.seed ?? 1)
        do {
            let state = try LuaState(limits: limits, sandbox: sandbox)
            state.output = { output(Array($0.utf8)) }
            state.outputBytes = { output($0) }
            let plain = PlainScript()
            try plain.install(in: state)
            try state.executeFile(file, arguments: arguments.map { .string($0) })
            return plain.report.renderText()
        } catch {
            throw StudyError(StudySession.message(of: error))
        }
    }
}
