import Foundation
@_spi(Bindings) import LuaHost
import SensorKitModel

/// One name of the Lua API as a protocol reaches it: a global, a module's field, a
/// method or property of a host class, or an export of a stdlib module.
public struct ApiItem: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// A global table of functions (`sensorkit`, `schedule`) or a stdlib module (`plot`).
        case module
        /// A function: global (`print`), of a module (`sensorkit.reader`, `plot.line`).
        case function
        /// A method of a host class, called with `:` (`SRSensorReader:samples`).
        case method
        /// A property of a host class (`SRSensorReader.sensor`).
        case property
        /// A value that is not a function (`sensorkit.errors`).
        case value
    }

    /// The name as written in Lua, qualified by the module or class:
    /// `sensorkit.reader`, `SRSensorReader:samples`, `SampleSet.sensor`, `plot.line`, `print`.
    public var name: String
    public var kind: Kind
    /// The global module, the class or the stdlib module it belongs to; empty for a global.
    public var owner: String
    /// The member name (`samples`); the whole name for a global.
    public var member: String
    /// Parameter names in order (`...` for a variable rest); empty when there are none or
    /// none are known.
    public var parameters: [String]
    /// The host class a call returns, when the documentation names one (`SampleSet`).
    public var returns: String?
    /// One line: what it does.
    public var summary: String
    /// The `### name` entry of `docs/lua-api.md` that documents it, if it has its own.
    public var documentation: String?
    /// The stdlib module that exports it (`plot` for `plot.line`), nil for the host's own API.
    public var stdlibModule: String?
}

/// A sensor as the API description gives it: its name and the fields a sample set of it reads.
public struct ApiSensor: Sendable, Equatable {
    public var name: String
    public var fields: [String]
    public var summary: String
}

/// The whole Lua API, described once from what the code registers: the live state's globals
/// and host classes (`LuaState.hostFunctions`), the catalogue's sensors and fields, the
/// stdlib modules' exports (required in the state), and the documentation's entries
/// (`docs/lua-api.md`) for summaries, parameters and return types. It feeds the REPL's
/// completion and `:help`, and `sensorium luals`' definition files.
public struct ApiDescription: Sendable {
    public var items: [ApiItem]
    public var sensors: [ApiSensor]
    /// The host classes (`SRSensorReader`, `SampleSet`, `GroupedSampleSet`).
    public var classes: [String]
    /// The stdlib modules described (`expect`, `plot`, …, also `time` and `report`, whose
    /// exports extend the global tables of those names).
    public var stdlibModules: [String]

    /// Lua's own globals (the reference manual's base library and standard tables): in the
    /// description only where the documentation has an entry for them (the sandbox changes them).
    public static let luaStandardGlobals: Set<String> = [
        "_G", "_VERSION", "assert", "collectgarbage", "coroutine", "debug", "error", "getmetatable", "ipairs",
        "load", "math", "next", "os", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset",
        "require", "select", "setmetatable", "string", "table", "tonumber", "tostring", "type", "utf8",
        "warn", "xpcall", "package", "io", "dofile", "loadfile",
    ]

    /// The item named `name` exactly (`plot.line`, `SRSensorReader:samples`).
    public func item(_ name: String) -> ApiItem? { items.first { $0.name == name } }

    /// The members of a module or class, in name order.
    public func members(of owner: String) -> [ApiItem] { items.filter { $0.owner == owner } }

    /// Every field name a sample set of any sensor reads, sorted, without repeats.
    public var allFieldNames: [String] { Array(Set(sensors.flatMap(\.fields))).sorted() }

    // MARK: Building

    /// Describes the API of `state` (a participant's state after the study API is installed).
    /// `stdlibModules` are required in the state to read their exports; `docs` are the
    /// reference's entries; `sensorFields` names every field a protocol reads of a sensor's
    /// samples (the runtime's `SampleSet.readableFields(of:)`). Throws when a stdlib module
    /// fails to load.
    public static func build(state: LuaState, docs: [DocEntry], stdlibModules: [String],
                             sensorFields: (SensorInfo) -> [String]) throws -> ApiDescription {
        var items: [ApiItem] = []
        var seen = Set<String>()
        func add(_ item: ApiItem) {
            guard !seen.contains(item.name) else { return }
            seen.insert(item.name)
            items.append(item)
        }

        // Host classes: methods (`Class:m`) and properties (`Class.p`) as registered.
        let registered = state.hostFunctions
        var classes: [String] = []
        for name in registered {
            if let colon = name.firstIndex(of: ":") {
                let owner = String(name[..<colon])
                if !classes.contains(owner) { classes.append(owner) }
            }
        }
        for name in registered {
            let (owner, member, isMethod) = split(name)
            guard classes.contains(owner), !member.hasPrefix("__") else { continue }
            add(describe(name: name, kind: isMethod ? .method : .property, owner: owner, member: member,
                         info: nil, docs: docs))
        }

        // Globals and the fields of global tables, read raw from the live state.
        for global in state.tableKeys(atGlobalPath: []) where !global.hasPrefix("_") {
            let standard = luaStandardGlobals.contains(global)
            let value = state.global(global)
            switch value {
            case .table:
                let fields = state.tableKeys(atGlobalPath: [global]).filter { !$0.hasPrefix("_") }
                let documented = fields.filter { exactEntry("\(global).\($0)", in: docs) != nil }
                if standard && documented.isEmpty && exactEntry(global, in: docs) == nil { continue }
                add(describe(name: global, kind: .module, owner: "", member: global, info: nil, docs: docs))
                for field in (standard ? documented : fields) {
                    add(describeValue(state: state, path: [global, field], owner: global, docs: docs, stdlib: nil))
                }
            default:
                if standard && exactEntry(global, in: docs) == nil { continue }
                add(describeValue(state: state, path: [global], owner: "", docs: docs, stdlib: nil))
            }
        }

        // The stdlib modules' exports, as `require` returns them.
        for module in stdlibModules {
            let exports = try state.execute("return require(...)", chunkName: "=api-description", arguments: [.string(module)])
            guard case .table(let table)? = exports.first else { continue }
            var moduleItem = describe(name: module, kind: .module, owner: "", member: module, info: nil, docs: docs)
            moduleItem.stdlibModule = module
            if !seen.contains(module) { add(moduleItem) }
            let names = table.entries.compactMap { $0.key.stringValue }.filter { !$0.hasPrefix("_") }.sorted()
            for field in names {
                var item: ApiItem
                if case .function(let ref)? = table[field] {
                    item = describe(name: "\(module).\(field)", kind: .function, owner: module, member: field,
                                    info: state.functionInfo(ref), docs: docs)
                } else {
                    item = describe(name: "\(module).\(field)", kind: .value, owner: module, member: field, info: nil, docs: docs)
                }
                item.stdlibModule = module
                add(item)
            }
        }

        let sensors = SensorCatalogue.all.map { info in
            ApiSensor(name: info.sensor.rawValue, fields: sensorFields(info),
                      summary: info.sampleType)
        }
        // A global table without an entry of its own is summed up by its members.
        for i in items.indices where items[i].kind == .module && items[i].summary.isEmpty {
            let members = items.filter { $0.owner == items[i].name }.map(\.name)
            items[i].summary = "The `\(items[i].name)` table: " + members.map { "`\($0)`" }.joined(separator: ", ") + "."
        }
        return ApiDescription(items: items, sensors: sensors, classes: classes, stdlibModules: stdlibModules)
    }

    /// `Class:method` → (Class, method, true); `a.b` → (a, b, false); `g` → ("", g, false).
    static func split(_ name: String) -> (owner: String, member: String, isMethod: Bool) {
        if let colon = name.firstIndex(of: ":") { return (String(name[..<colon]), String(name[name.index(after: colon)...]), true) }
        if let dot = name.lastIndex(of: ".") { return (String(name[..<dot]), String(name[name.index(after: dot)...]), false) }
        return ("", name, false)
    }

    static func describeValue(state: LuaState, path: [String], owner: String, docs: [DocEntry], stdlib: String?) -> ApiItem {
        let name = path.joined(separator: ".")
        let value: LuaValue
        if path.count == 1 { value = state.global(path[0]) } else {
            value = state.global(path[0]).tableValue?[path[1]] ?? .nil
        }
        if case .function(let ref) = value {
            var item = describe(name: name, kind: .function, owner: owner, member: path.last!, info: state.functionInfo(ref), docs: docs)
            // A module field that is a global function under another name (`time.hours` is
            // `hours`) is described by the global's entry.
            if item.summary.isEmpty, path.count == 2, let entry = exactEntry(path[1], in: docs),
               (try? state.execute("local t, k = ... return rawequal(_G[t][k], _G[k])", chunkName: "=api-description",
                                   arguments: [.string(path[0]), .string(path[1])]).first?.boolValue) == true {
                let global = describe(name: path[1], kind: .function, owner: "", member: path[1], info: state.functionInfo(ref), docs: docs)
                item.summary = global.summary
                item.parameters = global.parameters
                item.returns = global.returns
                item.documentation = entry.name
            }
            return item
        }
        return describe(name: name, kind: .value, owner: owner, member: path.last!, info: nil, docs: docs)
    }

    /// An item with its summary, parameters and return type: from its own documentation
    /// entry, else from the comment above a Lua function's definition, else from its
    /// module's entry where that names it.
    static func describe(name: String, kind: ApiItem.Kind, owner: String, member: String,
                         info: LuaFunctionInfo?, docs: [DocEntry]) -> ApiItem {
        var item = ApiItem(name: name, kind: kind, owner: owner, member: member, parameters: [], returns: nil,
                           summary: "", documentation: nil, stdlibModule: nil)
        if let info, !info.isHost {
            item.parameters = info.parameters + (info.isVararg ? ["..."] : [])
        }
        if let entry = exactEntry(name, in: docs) {
            item.documentation = entry.name
            item.summary = firstSentence(entry.text)
            if info == nil || info!.isHost { item.parameters = parametersInText(entry.text, member: member) ?? [] }
            item.returns = returnedClass(entry.text)
        } else if let info, !info.isHost, let comment = commentAbove(info) {
            item.summary = comment
        } else if !owner.isEmpty, let entry = exactEntry(owner, in: docs), entry.text.contains("`\(name)") {
            item.summary = "See `:help \(owner)`."
            if info == nil || info!.isHost { item.parameters = parametersInText(entry.text, member: member) ?? [] }
        }
        return item
    }

    /// The documentation entry that is exactly `name` (spelled as the reference does, or
    /// through its aliases: `SRSensorReader:samples` is `reader:samples`); no guessing by
    /// member name as `Documentation.lookup` does.
    public static func exactEntry(_ name: String, in docs: [DocEntry]) -> DocEntry? {
        if let e = docs.first(where: { $0.name == name }) { return e }
        let key = Documentation.applyAlias(Documentation.normalize(name))
        return docs.first { Documentation.applyAlias(Documentation.normalize($0.name)) == key }
    }

    /// The first sentence of a Markdown description, without markup, on one line.
    static func firstSentence(_ text: String) -> String {
        let paragraph = text.components(separatedBy: "\n\n").first ?? text
        let flat = Documentation.plain(paragraph.replacingOccurrences(of: "\n", with: " "))
        var end = flat.endIndex
        var i = flat.startIndex
        while i < flat.endIndex {
            let next = flat.index(after: i)
            if flat[i] == ".", next == flat.endIndex || flat[next] == " " {
                end = next
                break
            }
            i = next
        }
        return String(flat[..<end]).trimmingCharacters(in: .whitespaces)
    }

    /// Parameter names from the first call written in backticks for `member`
    /// (`` `reader:samples(request)` ``, `` `study { ... }` ``); nil when none is written.
    static func parametersInText(_ text: String, member: String) -> [String]? {
        let escaped = NSRegularExpression.escapedPattern(for: member)
        guard let regex = try? NSRegularExpression(pattern: "`(?:[\\w.:]*[.:])?\(escaped)\\s*(\\(([^)`]*)\\)|\\{)"),
              let m = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        if let brace = Range(m.range(at: 1), in: text), text[brace] == "{" { return ["spec"] }
        guard let r = Range(m.range(at: 2), in: text) else { return [] }
        // A literal written in place of a name (`"HH:MM"`) is the argument's position.
        return text[r].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .enumerated().map { i, p in
                if p.hasPrefix("...") { return "..." }
                let name = String(p.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                return name.isEmpty || name.first!.isNumber ? "arg\(i + 1)" : name
            }
    }

    /// The host class a description's first sentence says is returned or created.
    static func returnedClass(_ text: String) -> String? {
        let sentence = firstSentence(text)
        guard let verb = sentence.range(of: #"\b(returns|creates)\b"#, options: .regularExpression) else { return nil }
        let rest = sentence[verb.upperBound...]
        for name in ["GroupedSampleSet", "SampleSet", "SRSensorReader"] where rest.contains(name) { return name }
        if rest.hasPrefix(" a reader") { return "SRSensorReader" }
        return nil
    }

    /// The `--` comment lines right above a Lua function's definition in its file, joined.
    static func commentAbove(_ info: LuaFunctionInfo) -> String? {
        guard info.source.hasPrefix("@"), info.line > 1,
              let text = try? String(contentsOfFile: String(info.source.dropFirst()), encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard info.line - 1 < lines.count else { return nil }
        var comment: [String] = []
        var i = info.line - 2
        while i >= 0, lines[i].trimmingCharacters(in: .whitespaces).hasPrefix("--") {
            comment.insert(lines[i].trimmingCharacters(in: .whitespaces).drop { $0 == "-" }.trimmingCharacters(in: .whitespaces), at: 0)
            i -= 1
        }
        let joined = comment.filter { !$0.isEmpty }.joined(separator: " ")
        return joined.isEmpty ? nil : joined
    }
}

extension ApiDescription {
    /// The call as written: `plot.line(name, spec)`, `SRSensorReader:samples(request)`; the
    /// name alone for a value, a property or a module.
    public func signature(_ item: ApiItem) -> String {
        switch item.kind {
        case .function, .method: return item.name + "(" + item.parameters.joined(separator: ", ") + ")"
        default: return item.name
        }
    }

    /// What `:help` searches: the reference's entries, then one entry for each described name
    /// that has none of its own (a stdlib module's export: its signature, summary and module),
    /// so that `:help plot.line` and `:help api` cover the whole description.
    public func helpEntries(docs: [DocEntry]) -> [DocEntry] {
        var entries = docs
        for item in items where item.documentation == nil && ApiDescription.exactEntry(item.name, in: docs) == nil {
            let module = item.stdlibModule.map { "require \"\($0)\"" } ?? (item.owner.isEmpty ? "globals" : item.owner)
            var text = "`\(signature(item))`"
            if !item.summary.isEmpty { text += "\n\n" + item.summary }
            if let m = item.stdlibModule { text += "\n\nFrom `local \(m) = require \"\(m)\"`; `:help \(m)` describes the module." }
            entries.append(DocEntry(name: item.name, module: module, text: text, example: ""))
        }
        return entries
    }
}

extension ApiDescription {
    /// The type of parameter `index` of `item` where the API takes a name the catalogue
    /// knows: a sensor name (`sensorkit.reader(name)`, `sensorkit.status(name)`), a list of
    /// them (`sensorkit.requestAuthorization(sensors, …)`) or a field name (`set:mean(field)`).
    /// Completion offers these names inside strings; `sensorium luals` types them.
    public func nameType(of item: ApiItem, parameter index: Int) -> NameType? {
        guard index < item.parameters.count else { return nil }
        let parameter = item.parameters[index]
        if item.owner == "sensorkit", item.kind == .function, item.stdlibModule == nil {
            if parameter == "name" { return .sensor }
            if parameter == "sensors" { return .sensorList }
        }
        if item.kind == .method, classes.contains(item.owner), parameter == "field" { return .field }
        return nil
    }

    public enum NameType: Sendable { case sensor, sensorList, field }
}
