import Foundation
@_spi(Bindings) import LuaHost
import StudyRuntime
import ApiReference

/// The names of the stdlib modules (`plot`, `report`, `summary`, …): those built into the
/// program (`Stdlib.modules`), sorted.
func stdlibModuleNames() -> [String] {
    Stdlib.modules.keys.sorted()
}

/// The reference's entries (docs/lua-api.md: $SENSORIUM_DOCS, else the copy built into the
/// program), or none when $SENSORIUM_DOCS cannot be read.
func documentationEntries() -> [DocEntry] {
    if let env = ProcessInfo.processInfo.environment["SENSORIUM_DOCS"], !env.isEmpty {
        guard let text = try? String(contentsOfFile: env, encoding: .utf8) else { return [] }
        return Documentation.parse(text)
    }
    return Documentation.parse(Stdlib.apiDocumentation)
}

/// The API description of a participant's state: what the REPL completes and `:help`
/// and `sensorium luals` describe.
func apiDescription(of state: LuaState) throws -> ApiDescription {
    try ApiDescription.build(state: state, docs: documentationEntries(), stdlibModules: stdlibModuleNames(),
                             sensorFields: SampleSet.readableFields(of:))
}
