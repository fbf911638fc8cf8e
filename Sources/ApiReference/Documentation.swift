import Foundation
import SensorKitModel

/// One entry of the Lua API reference (`docs/lua-api.md`): a `### name` heading,
/// a description, and one runnable ```lua example.
public struct DocEntry: Sendable, Equatable {
    /// The name exactly as a user types it after `:help` (`reader:samples`, `schedule.daily`).
    public var name: String
    /// The `## …` heading the entry sits under (`SRSensorReader`, `schedule`).
    public var module: String
    /// The description, as Markdown (paragraphs separated by blank lines).
    public var text: String
    /// The example's source, without the fences.
    public var example: String

    public init(name: String, module: String, text: String, example: String) {
        self.name = name
        self.module = module
        self.text = text
        self.example = example
    }

    /// The example split into files. An example is one protocol unless it holds
    /// marker lines `-- file: NAME` (e.g. `-- file: scenario.lua`, `-- file: protocol.lua`);
    /// each marker starts a file that runs to the next marker. Text before the
    /// first marker belongs to `protocol.lua`.
    public var exampleFiles: [(name: String, source: String)] {
        var files: [(name: String, lines: [String])] = []
        var current = "protocol.lua"
        var lines: [String] = []
        func flush() {
            let body = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            if !body.isEmpty || current != "protocol.lua" {
                if let i = files.firstIndex(where: { $0.name == current }) { files[i].lines.append(contentsOf: lines) }
                else { files.append((current, lines)) }
            }
            lines = []
        }
        for line in example.split(separator: "\n", omittingEmptySubsequences: false) {
            if let name = DocEntry.fileMarker(String(line)) {
                flush()
                current = name
            } else {
                lines.append(String(line))
            }
        }
        flush()
        return files.map { ($0.name, $0.lines.joined(separator: "\n").trimmingCharacters(in: .newlines) + "\n") }
    }

    /// The protocol part of the example.
    public var exampleProtocol: String { exampleFiles.first { $0.name == "protocol.lua" }?.source ?? "" }
    /// The scenario part of the example, if it has one.
    public var exampleScenario: String? { exampleFiles.first { $0.name == "scenario.lua" }?.source }

    static func fileMarker(_ line: String) -> String? {
        let t = line.trimmingCharacters(in: .whitespaces)
        guard t.hasPrefix("-- file:") else { return nil }
        let name = t.dropFirst("-- file:".count).trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? nil : name
    }
}

/// The Lua API reference: parsing `docs/lua-api.md`, looking names up the way
/// `:help NAME` does, and rendering an entry for a terminal.
///
/// The file's structure is strict so that code can read it: `## Module` headings
/// group entries; each entry is a `### name` heading, one or more paragraphs of
/// text, then exactly one fenced ```lua block. Anything before the first `##`
/// heading is an introduction and is not an entry.
public enum Documentation {
    // MARK: Parsing

    /// The entries of the reference, in document order.
    public static func parse(_ markdown: String) -> [DocEntry] {
        scan(markdown).entries
    }

    /// Structural problems of the reference (an entry without text, without an
    /// example or with two, text after the example, a duplicate name, an
    /// unterminated fence, an entry outside any module). Empty when the file is well-formed.
    public static func validate(_ markdown: String) -> [String] {
        scan(markdown).problems
    }

    private struct Draft {
        var name: String
        var module: String
        var line: Int
        var text: [String] = []
        var examples: [String] = []
        var textAfterExample = false
    }

    private static func scan(_ markdown: String) -> (entries: [DocEntry], problems: [String]) {
        var entries: [DocEntry] = []
        var problems: [String] = []
        var module: String?
        var draft: Draft?
        var fence: (language: String, lines: [String], line: Int)?
        var seen: [String: Int] = [:]

        func finish() {
            guard let d = draft else { return }
            draft = nil
            let text = d.text.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { problems.append("line \(d.line): `### \(d.name)` has no description") }
            if d.examples.isEmpty { problems.append("line \(d.line): `### \(d.name)` has no ```lua example") }
            if d.examples.count > 1 { problems.append("line \(d.line): `### \(d.name)` has \(d.examples.count) ```lua examples (expected one)") }
            if d.textAfterExample { problems.append("line \(d.line): `### \(d.name)` has text after its example") }
            if let first = seen[d.name] {
                problems.append("line \(d.line): `### \(d.name)` is a duplicate of the entry at line \(first)")
            } else {
                seen[d.name] = d.line
            }
            entries.append(DocEntry(name: d.name, module: d.module, text: text, example: d.examples.first ?? ""))
        }

        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
        }
        for (i, line) in lines.enumerated() {
            let number = i + 1
            if var f = fence {
                if line.trimmingCharacters(in: .whitespaces) == "```" {
                    fence = nil
                    if draft != nil {
                        if f.language == "lua" { draft!.examples.append(f.lines.joined(separator: "\n")) }
                        else { draft!.text.append(contentsOf: ["```" + f.language] + f.lines + ["```"]) }
                    }
                } else {
                    f.lines.append(line)
                    fence = f
                }
                continue
            }
            if line.hasPrefix("```") {
                let language = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
                fence = (language, [], number)
                continue
            }
            if line.hasPrefix("### ") {
                finish()
                let name = line.dropFirst(4).trimmingCharacters(in: .whitespaces)
                if module == nil { problems.append("line \(number): `### \(name)` is not under a `## module` heading") }
                draft = Draft(name: name, module: module ?? "", line: number)
                continue
            }
            if line.hasPrefix("## ") {
                finish()
                module = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
                continue
            }
            if line.hasPrefix("# ") {
                finish()
                module = nil
                continue
            }
            guard draft != nil else { continue }
            if !draft!.examples.isEmpty {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { draft!.textAfterExample = true }
                continue
            }
            draft!.text.append(line)
        }
        if let f = fence { problems.append("line \(f.line): a ``` fence is never closed") }
        finish()
        return (entries, problems)
    }

    // MARK: Lookup

    /// The entry `name` refers to, forgivingly: `reader:samples`, `reader.samples`,
    /// `samples`, `READER:SAMPLES`, `SRSensorReader:samples`, `samples()` all find
    /// `reader:samples`. A bare member name shared by several entries (`mean`)
    /// finds the first in document order (`SampleSet:mean`). Nil when nothing
    /// matches; `suggestions(for:in:)` then lists close names.
    public static func lookup(_ name: String, in entries: [DocEntry]) -> DocEntry? {
        let raw = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !raw.isEmpty else { return nil }
        if let e = entries.first(where: { $0.name == raw }) { return e }
        let key = normalize(raw)
        if let e = entries.first(where: { normalize($0.name) == key }) { return e }
        let aliased = applyAlias(key)
        if let e = entries.first(where: { applyAlias(normalize($0.name)) == aliased }) { return e }
        // A member name alone (`samples`) or under an unknown qualifier (`r:samples`).
        let member = lastComponent(aliased)
        let byMember = entries.filter { lastComponent(applyAlias(normalize($0.name))) == member }
        if byMember.count <= 1 { return byMember.first }
        // Several: prefer one whose qualifier starts like the typed one, else document order.
        let qualifier = qualifierPart(aliased)
        if !qualifier.isEmpty, let e = byMember.first(where: { qualifierPart(applyAlias(normalize($0.name))).hasPrefix(qualifier) }) {
            return e
        }
        return byMember.first
    }

    /// Up to `limit` entry names close to `name` (by spelling, by member name, or
    /// containing it), best first — for "did you mean …?".
    public static func suggestions(for name: String, in entries: [DocEntry], limit: Int = 5) -> [String] {
        let key = applyAlias(normalize(name))
        guard !key.isEmpty else { return [] }
        let member = lastComponent(key)
        var scored: [(score: Int, index: Int, name: String)] = []
        for (i, e) in entries.enumerated() {
            let full = applyAlias(normalize(e.name))
            let m = lastComponent(full)
            var score = min(Suggestions.editDistance(key, full), Suggestions.editDistance(member, m) + (key == member ? 0 : 1))
            if full.contains(key) || (member.count >= 3 && m.contains(member)) { score = min(score, 1) }
            let allowed = max(2, min(key.count, member.count) / 3)
            if score <= allowed { scored.append((score, i, e.name)) }
        }
        scored.sort { ($0.score, $0.index) < ($1.score, $1.index) }
        var out: [String] = []
        for s in scored where !out.contains(s.name) {
            out.append(s.name)
            if out.count == limit { break }
        }
        return out
    }

    /// What `:help NAME` prints: the rendered entry, or a "did you mean" line.
    public static func help(_ name: String, in entries: [DocEntry], width: Int = 78) -> String {
        if let e = lookup(name, in: entries) { return render(e, width: width) }
        let close = suggestions(for: name, in: entries)
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        if close.isEmpty { return "No help for '\(trimmed)'. `:help` lists every entry.\n" }
        return "No help for '\(trimmed)'\(Suggestions.didYouMean(close))\n"
    }

    /// Every entry name, grouped by module — what `:help` without a name prints.
    public static func index(_ entries: [DocEntry], width: Int = 78) -> String {
        var out = ""
        var modules: [String] = []
        for e in entries where !modules.contains(e.module) { modules.append(e.module) }
        for m in modules {
            out += m + "\n"
            out += wrap(entries.filter { $0.module == m }.map(\.name).joined(separator: "  "), width: width, indent: "  ")
        }
        return out
    }

    static func normalize(_ name: String) -> String {
        var s = name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        if s.hasPrefix(":help ") { s = String(s.dropFirst(6)).trimmingCharacters(in: .whitespaces) }
        // What follows the name in a call (`samples{ … }`, `daily("09:00", f)`, `reader "x"`) is not part of it.
        if let cut = s.firstIndex(where: { $0 == "(" || $0 == "{" || $0 == " " || $0 == "\"" }) { s = String(s[..<cut]) }
        s = s.replacingOccurrences(of: ":", with: ".")
        s = s.replacingOccurrences(of: "[]", with: "")
        while s.contains("..") { s = s.replacingOccurrences(of: "..", with: ".") }
        return s.trimmingCharacters(in: CharacterSet(charactersIn: ". "))
    }

    /// Other spellings of qualifiers: SensorKit's type names and the usual variable names.
    static let qualifierAliases: [String: String] = [
        "srsensorreader": "reader", "sensorreader": "reader", "r": "reader",
        "set": "sampleset", "s": "sampleset",
        "groupedset": "groupedsampleset", "groups": "groupedsampleset", "grouped": "groupedsampleset", "g": "groupedsampleset",
        "err": "srerror", "error": "srerror",
        "srsensorreaderdelegate": "delegate",
    ]

    /// SensorKit's names for whole entries.
    static let nameAliases: [String: String] = [
        "srfetchrequest": "request", "srfetchresult": "result", "srdevice": "device",
        "srsensorreader": "sensorkit.reader", "srsensorreaderdelegate": "reader.delegate",
        "srabsolutetime": "sensorkit.now", "srerrordomain": "srerror",
    ]

    static func applyAlias(_ key: String) -> String {
        if let whole = nameAliases[key] { return whole }
        guard let dot = key.firstIndex(of: ".") else { return key }
        let head = String(key[..<dot])
        guard let alias = qualifierAliases[head] else { return key }
        return alias + key[dot...]
    }

    static func lastComponent(_ key: String) -> String {
        key.split(separator: ".").last.map(String.init) ?? key
    }

    static func qualifierPart(_ key: String) -> String {
        guard let dot = key.lastIndex(of: ".") else { return "" }
        return String(key[..<dot])
    }

    // MARK: Rendering

    /// An entry formatted for a terminal: the name and module, the description
    /// re-wrapped to `width` columns without Markdown markup (lists and tables
    /// kept as written), then the example (if any) indented by four spaces.
    public static func render(_ entry: DocEntry, width: Int = 78) -> String {
        var out = entry.name
        if !entry.module.isEmpty {
            let tag = "(\(entry.module))"
            let gap = width - entry.name.count - tag.count
            out += gap >= 2 ? String(repeating: " ", count: gap) + tag : "  " + tag
        }
        out += "\n" + String(repeating: "=", count: min(entry.name.count, width)) + "\n\n"
        var blocks: [[String]] = [[]]
        var inFence = false
        for line in entry.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") { inFence.toggle(); blocks[blocks.count - 1].append(line); continue }
            if !inFence && line.trimmingCharacters(in: .whitespaces).isEmpty {
                if !blocks[blocks.count - 1].isEmpty { blocks.append([]) }
            } else {
                blocks[blocks.count - 1].append(line)
            }
        }
        for block in blocks where !block.isEmpty {
            if block.first!.hasPrefix("```") {
                out += block.filter { !$0.hasPrefix("```") }.map { "    " + $0 }.joined(separator: "\n") + "\n\n"
            } else if block.allSatisfy({ $0.hasPrefix("|") }) {
                out += block.filter { !$0.hasPrefix("|-") && !$0.hasPrefix("| -") && !$0.hasPrefix("|:") }
                    .map { plain($0) }.joined(separator: "\n") + "\n\n"
            } else if block.first!.hasPrefix("- ") || block.first!.hasPrefix("* ") {
                var items: [String] = []
                for line in block {
                    if line.hasPrefix("- ") || line.hasPrefix("* ") { items.append(String(line.dropFirst(2))) }
                    else if !items.isEmpty { items[items.count - 1] += " " + line.trimmingCharacters(in: .whitespaces) }
                }
                for item in items { out += wrap(plain(item), width: width, indent: "  ", firstIndent: "- ") }
                out += "\n"
            } else {
                out += wrap(plain(block.joined(separator: " ")), width: width, indent: "") + "\n"
            }
        }
        if entry.example.isEmpty { return out }
        out += "Example:\n\n"
        out += entry.example.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
        return out.hasSuffix("\n") ? out : out + "\n"
    }

    /// Markdown inline markup removed: `code`, **bold**, *emphasis*, [text](link) → text (link).
    static func plain(_ s: String) -> String {
        var t = s.replacingOccurrences(of: "**", with: "")
        t = t.replacingOccurrences(of: "`", with: "")
        t = t.replacingOccurrences(of: "\\[([^\\]]+)\\]\\(([^)]+)\\)", with: "$1 ($2)", options: .regularExpression)
        t = t.replacingOccurrences(of: "(^|[\\s(])\\*([^*\\s][^*]*)\\*", with: "$1$2", options: .regularExpression)
        return t
    }

    static func wrap(_ text: String, width: Int, indent: String, firstIndent: String? = nil) -> String {
        var lines: [String] = []
        var line = firstIndent ?? indent
        var lineHasWord = false
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }) {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        if lineHasWord { lines.append(line) }
        return lines.joined(separator: "\n") + "\n"
    }
}
