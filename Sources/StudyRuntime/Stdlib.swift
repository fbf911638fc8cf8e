import CStudyLua
import Foundation
@_spi(Bindings) import LuaHost

/// The stdlib protocols `require` (`summary`, `time`, `report`, `plot`, `stats`, `expect`):
/// the repository's `stdlib/*.lua`, built into the library (`CStudyLua/stdlib.c`, `#embed`),
/// so a protocol finds them in any program that links the runtime, from any folder.
public enum Stdlib {
    /// Every stdlib module by name, as `require` serves it; errors name `stdlib/NAME.lua`.
    public static let modules: [String: EmbeddedModule] = {
        var out: [String: EmbeddedModule] = [:]
        var entry = cstudylua_stdlib_modules()!
        while let name = entry.pointee.name {
            let text = UnsafeRawBufferPointer(start: entry.pointee.source, count: entry.pointee.size)
            let key = String(cString: name)
            out[key] = EmbeddedModule(source: Array(text), path: "stdlib/\(key).lua")
            entry += 1
        }
        return out
    }()

    /// The sandbox of a run: the stdlib built in, or, with `folder` (a development override,
    /// `SENSORIUM_STDLIB`), that folder's modules instead; then `moduleDirectories`.
    public static func sandbox(folder: String?, moduleDirectories: [String], seed: Int64) -> SandboxOptions {
        guard let folder else { return SandboxOptions(embeddedModules: modules, moduleDirectories: moduleDirectories, seed: seed) }
        return SandboxOptions(moduleDirectories: [folder] + moduleDirectories, seed: seed)
    }

    /// The Lua API reference, `docs/lua-api.md`, as built in (the REPL's `:help`).
    public static let apiDocumentation: String = {
        var size = 0
        let text = cstudylua_lua_api_docs(&size)!
        return String(decoding: UnsafeRawBufferPointer(start: text, count: size), as: UTF8.self)
    }()
}
