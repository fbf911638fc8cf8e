import Foundation

/// Definition files for the Lua language server (LuaLS), written from the API description:
/// one `---@meta` file for the host's globals, classes and name types, one per stdlib module
/// (so that `require "plot"` is typed), and the `.luarc.json` that points the server at them.
/// Sensor and field names are string-literal alias types, so a misspelt sensor is flagged.
public enum LuaLSDefinitions {
    /// The folder, relative to the protocol folder, that holds the definition library.
    public static let libraryFolder = ".sensorium/library"

    /// Lua's keywords: a parameter so named gets a trailing `_`.
    static let keywords: Set<String> = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto",
                                        "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"]

    /// Lua's standard libraries as LuaLS names them (`runtime.builtin`): the ones the sandbox
    /// removes are switched off.
    static let builtinLibraries = ["coroutine", "debug", "io", "math", "os", "package", "string", "table", "utf8"]

    /// The files to write, relative to the protocol folder, with their contents, in a fixed order.
    /// `globals` are the sandbox's global names (the live state's).
    public static func files(_ api: ApiDescription, globals: [String]) -> [(path: String, text: String)] {
        var out = [(path: libraryFolder + "/sensorium.lua", text: hostFile(api))]
        for module in api.stdlibModules {
            out.append((libraryFolder + "/" + module + ".lua", stdlibFile(api, module: module)))
        }
        out.append((".luarc.json", luarc(globals: globals)))
        return out
    }

    static func luarc(globals: [String]) -> String {
        let disabled = builtinLibraries.filter { !globals.contains($0) }
        var json = "{\n"
        json += "  \"$schema\": \"https://raw.githubusercontent.com/LuaLS/vscode-lua/master/setting/schema.json\",\n"
        json += "  \"runtime.version\": \"Lua 5.4\",\n"
        json += "  \"runtime.builtin\": {" + disabled.map { " \"\($0)\": \"disable\"" }.joined(separator: ",") + (disabled.isEmpty ? "" : " ") + "},\n"
        json += "  \"workspace.library\": [\"\(libraryFolder)\"],\n"
        json += "  \"workspace.checkThirdParty\": false,\n"
        json += "  \"diagnostics.globals\": [" + globals.sorted().map { "\"\($0)\"" }.joined(separator: ", ") + "]\n"
        json += "}\n"
        return json
    }

    /// The host's API: name aliases, classes with their methods and properties, global modules and functions.
    static func hostFile(_ api: ApiDescription) -> String {
        var lines = ["---@meta sensorium", "-- Written by `sensorium luals` from the API description; regenerate rather than edit.", ""]
        lines.append("---@alias SensorName")
        lines += api.sensors.map { "---| \"\($0.name)\" # \(oneLine($0.summary))" }
        lines.append("")
        lines.append("---@alias FieldName")
        lines += api.allFieldNames.map { "---| \"\($0)\"" }
        lines.append("")
        for cls in api.classes {
            lines.append("---@class \(cls)")
            for p in api.members(of: cls) where p.kind == .property {
                lines.append("---@field \(p.member) any \(oneLine(p.summary))")
            }
            lines.append("local \(cls) = {}")
            lines.append("")
            for m in api.members(of: cls) where m.kind == .method {
                lines += function(m, api, definedAs: "\(cls):\(m.member)")
            }
        }
        for item in api.items where item.owner.isEmpty && item.stdlibModule == nil {
            switch item.kind {
            case .module:
                // Lua's own tables (`os`, `math`) keep the server's definitions; only the
                // functions the sandbox changes are redefined.
                if !ApiDescription.luaStandardGlobals.contains(item.name) {
                    lines += comment(item)
                    lines.append("---@class \(item.name)")
                    lines.append("\(item.name) = {}")
                    lines.append("")
                }
                for member in api.members(of: item.name) where member.stdlibModule == nil {
                    lines += definition(member, api, definedAs: "\(item.name).\(member.member)")
                }
            default:
                lines += definition(item, api, definedAs: item.name)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A stdlib module: its exports on a local table that the file returns (what `require` gives).
    static func stdlibFile(_ api: ApiDescription, module: String) -> String {
        var lines = ["---@meta \(module)", "-- Written by `sensorium luals` from the API description; regenerate rather than edit.", ""]
        let global = api.item(module).map { $0.stdlibModule == nil } ?? false
        if let item = api.item(module) { lines += comment(item) }
        lines.append("---@class stdlib.\(module)" + (global ? " : \(module)" : ""))
        lines.append("local M = {}")
        lines.append("")
        for member in api.members(of: module) where member.stdlibModule == module {
            lines += definition(member, api, definedAs: "M.\(member.member)")
        }
        lines.append("return M")
        return lines.joined(separator: "\n") + "\n"
    }

    static func definition(_ item: ApiItem, _ api: ApiDescription, definedAs name: String) -> [String] {
        switch item.kind {
        case .function, .method: return function(item, api, definedAs: name)
        default:
            return comment(item) + ["---@type any", "\(name) = nil", ""]
        }
    }

    static func function(_ item: ApiItem, _ api: ApiDescription, definedAs name: String) -> [String] {
        var lines = comment(item)
        var names: [String] = []
        for (i, p) in item.parameters.enumerated() {
            let type: String
            switch api.nameType(of: item, parameter: i) {
            case .sensor?: type = "SensorName"
            case .sensorList?: type = "SensorName[]"
            case .field?: type = "FieldName"
            case nil: type = "any"
            }
            let safe = p == "..." ? p : (keywords.contains(p) ? p + "_" : p)
            names.append(safe)
            lines.append("---@param \(safe) \(type)")
        }
        if let r = item.returns { lines.append("---@return \(r)") }
        lines.append("function \(name)(\(names.joined(separator: ", "))) end")
        lines.append("")
        return lines
    }

    static func comment(_ item: ApiItem) -> [String] {
        item.summary.isEmpty ? [] : ["--- " + oneLine(item.summary)]
    }

    static func oneLine(_ s: String) -> String {
        s.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
    }
}
