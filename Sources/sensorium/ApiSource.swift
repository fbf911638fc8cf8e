import Foundation
import LuaHost
import StudyRuntime

/// The names of the stdlib modules (`plot`, `report`, `summary`, …): the `.lua` files of
/// the stdlib folder, sorted; empty when there is none.
func stdlibModuleNames() -> [String] {
    guard let dir = locateStdlib(), let files = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
    return files.filter { $0.hasSuffix(".lua") }.map { String($0.dropLast(4)) }.sorted()
}

/// The reference's entries (docs/lua-api.md), or none when the file is not found.
func documentationEntries() -> [DocEntry] {
    guard let text = locateDocs().flatMap({ try? String(contentsOfFile: $0, encoding: .utf8) }) else { return [] }
    return Documentation.parse(text)
}

/// The API description of a participant's state: what the REPL completes and `:help`
/// and `sensorium luals` describe.
func apiDescription(of state: LuaState) throws -> ApiDescription {
    try ApiDescription.build(state: state, docs: documentationEntries(), stdlibModules: stdlibModuleNames())
}
