import ArgumentParser
import Foundation
@_spi(Bindings) import LuaHost
import Sensorium
import ApiReference

/// `sensorium luals [DIR]`: definition files for the Lua language server (VS Code's and
/// Neovim's Lua support), written from the API description of a fresh participant's state.
struct LualsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "luals",
        abstract: "Writes Lua language server definitions of the API and a .luarc.json into a protocol folder.",
        discussion: """
        Writes DIR/\(LuaLSDefinitions.libraryFolder)/*.lua (---@meta files: the host's classes, modules and \
        functions with parameters and returns, each stdlib module, sensor and field names as \
        string-literal types) and DIR/.luarc.json (Lua 5.4, the sandbox's globals, the library). \
        An editor with the Lua language server then completes the API and flags a misspelt sensor. \
        Run it again after upgrading Sensorium; an existing .luarc.json is replaced.
        """
    )

    @Argument(help: "The protocol folder to set up (default: the current folder).")
    var dir: String = "."

    func run() throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw CommandError("luals: '\(dir)' is not a folder (give the protocol folder to set up)")
        }
        var configuration = StudyConfiguration()
        configuration.stdlibFolder = stdlibOverride()
        configuration.participants = 1
        configuration.days = 1
        // No protocol and no scenario: a fresh participant's state, whose API is described.
        let study = Study(.file("", moduleDirectories: []), world: .simulated(scenario: nil), configuration: configuration)
        let output = OutputBuffer()
        guard let participant = try study.openParticipants(output: { output.write($0) }).first else {
            throw CommandError("luals: no participant state")
        }
        let api = try apiDescription(of: participant.state)
        let globals = participant.state.tableKeys(atGlobalPath: []).filter { !$0.hasPrefix("_") || $0 == "_G" || $0 == "_VERSION" }
        let root = URL(fileURLWithPath: dir)
        for file in LuaLSDefinitions.files(api, globals: globals) {
            let url = root.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try file.text.write(to: url, atomically: true, encoding: .utf8)
            print("wrote \(url.path)")
        }
    }
}
