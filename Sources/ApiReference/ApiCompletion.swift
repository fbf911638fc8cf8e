import Foundation
@_spi(Bindings) import LuaHost

/// Tab completion for the REPL, from the API description and the live state's globals.
///
/// Given the text before the cursor it answers the word being completed (as the terminal
/// splits it: a name path such as `sensorkit.re` or `light:sa`, or the inside of a string)
/// and the full replacements for it. It reads the state raw (no metamethod, no Lua runs).
public enum ApiCompletion {
    /// Characters that end a word for completion: everything that cannot be inside a name
    /// path (`.` and `:` are part of one).
    public static let wordBreaks = " \t\n\"'`@$><=;|&{(,+-*/%^~#[]}"

    /// The word before the cursor and its completions, sorted; no completions when nothing fits.
    public static func complete(_ line: String, description: ApiDescription, state: LuaState?) -> (word: String, candidates: [String]) {
        if let (partial, names) = stringContext(line, description: description) {
            return (partial, names.filter { $0.hasPrefix(partial) })
        }
        let word = String(line.reversed().prefix { !wordBreaks.contains($0) }.reversed())
        return (word, names(completing: word, description: description, state: state))
    }

    /// Inside a string argument that names a sensor (`sensorkit.reader "amb`,
    /// `requestAuthorization({ "amb`) or a field (`set:mean("lu`): the partial text and the names.
    static func stringContext(_ line: String, description: ApiDescription) -> (String, [String])? {
        guard let quote = line.lastIndex(where: { $0 == "\"" || $0 == "'" }),
              line[line.index(after: quote)...].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        let partial = String(line[line.index(after: quote)...])
        // An odd number of quotes of this kind before it: the quote opens a string.
        let before = line[..<quote]
        guard before.filter({ $0 == line[quote] }).count % 2 == 0 else { return nil }
        let call = before.replacingOccurrences(of: #"\s*\(?\s*(\{[^}]*)?$"#, with: "", options: .regularExpression)
        let callee = String(call.reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == ":" }.reversed())
        let (owner, member, isMethod) = ApiDescription.split(callee)
        // The argument's position: the commas before the quote, outside the call's braces.
        let argument = String(before[(before.range(of: member, options: .backwards)?.upperBound ?? before.startIndex)...])
        var index = 0, depth = 0
        for c in argument {
            if c == "{" { depth += 1 } else if c == "}" { depth -= 1 } else if c == ",", depth == 0 { index += 1 }
        }
        let candidates: [ApiItem] = isMethod
            ? description.classes.compactMap { description.item("\($0):\(member)") }
            : [description.item(callee), description.item("sensorkit." + member)].compactMap { $0 }.filter { _ in owner.isEmpty || owner == "sensorkit" }
        for item in candidates {
            switch description.nameType(of: item, parameter: index) {
            case .sensor?, .sensorList?: return (partial, description.sensors.map(\.name))
            case .field?: return (partial, fieldNames(in: String(before), description: description))
            case nil: continue
            }
        }
        return (partial, [])      // some other string: nothing to offer
    }

    /// The fields of the sensor a line reads (`sensorkit.reader "accelerometer"` earlier on
    /// it), else of every sensor.
    static func fieldNames(in line: String, description: ApiDescription) -> [String] {
        for sensor in description.sensors where line.contains("\"\(sensor.name)\"") || line.contains("'\(sensor.name)'") {
            return sensor.fields
        }
        return description.allFieldNames
    }

    /// Completions of a name path: globals, a table's fields, a class's methods.
    static func names(completing word: String, description: ApiDescription, state: LuaState?) -> [String] {
        guard let cut = word.lastIndex(where: { $0 == "." || $0 == ":" }) else {
            var pool = Set(description.items.filter { $0.owner.isEmpty }.map(\.name))
            pool.formUnion(state?.tableKeys(atGlobalPath: []).filter { !$0.hasPrefix("_") || $0 == "_" } ?? [])
            return pool.filter { $0.hasPrefix(word) }.sorted()
        }
        let head = String(word[..<cut])
        let separator = word[cut]
        let partial = String(word[word.index(after: cut)...])
        let path = head.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !path.contains(where: { $0.isEmpty || $0.contains(":") }) else { return [] }
        var pool = Set<String>()
        let className = state?.className(ofGlobalPath: path) ?? (description.classes.contains(head) ? head : nil)
        if let className {
            let kind: ApiItem.Kind = separator == ":" ? .method : .property
            pool.formUnion(description.members(of: className).filter { $0.kind == kind }.map(\.member))
        } else if separator == "." {
            pool.formUnion(description.members(of: head).map(\.member))
            pool.formUnion(state?.tableKeys(atGlobalPath: path).filter { !$0.hasPrefix("_") } ?? [])
        } else {
            // `t:` on a plain table: its functions (methods written in Lua).
            pool.formUnion(description.members(of: head).filter { $0.kind == .function }.map(\.member))
            pool.formUnion(state?.tableKeys(atGlobalPath: path).filter { !$0.hasPrefix("_") } ?? [])
        }
        return pool.filter { $0.hasPrefix(partial) }.sorted().map { head + String(separator) + $0 }
    }
}
