import ArgumentParser
import Foundation
import LuaHost

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a Lua script, or a protocol folder's protocol.lua."
    )

    @Argument(help: "A .lua file, or a folder holding protocol.lua.")
    var path: String

    @Argument(parsing: .captureForPassthrough, help: "Arguments passed to the script as `...`.")
    var arguments: [String] = []

    @OptionGroup var lua: LuaOptions

    func run() throws {
        let script = try resolveScript(path)
        let output = OutputBuffer()
        let scriptDir = URL(fileURLWithPath: script).deletingLastPathComponent().path
        var dirs: [String] = []
        if let stdlib = locateStdlib() { dirs.append(stdlib) }
        dirs.append(relativeIfBelowCurrent(scriptDir))
        do {
            let state = try LuaState(limits: lua.limits, sandbox: SandboxOptions(moduleDirectories: dirs, seed: lua.seed))
            state.output = { output.write($0) }
            try state.executeFile(script, arguments: arguments.map { .string($0) })
            output.flush()
        } catch let error as LuaError {
            output.flush()
            printError(error.report())
            throw ExitCode(1)
        }
    }
}

/// A folder means its protocol.lua; a missing file is a clear error.
func resolveScript(_ path: String) throws -> String {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
        throw ValidationError("\(path): no such file or folder")
    }
    if isDir.boolValue {
        let file = (path.hasSuffix("/") ? String(path.dropLast()) : path) + "/protocol.lua"
        guard FileManager.default.fileExists(atPath: file) else {
            throw ValidationError("\(path) is a folder without protocol.lua")
        }
        return file
    }
    return path
}
