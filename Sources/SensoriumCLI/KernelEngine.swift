import Foundation
import JSONText
@_spi(Bindings) import LuaHost
import Sensorium
import StudyReport
import ApiReference

/// `sensorium repl --machine`: the REPL's world for a program rather than a person — the
/// Jupyter kernel (`contrib/jupyter/sensorium_kernel.py`) drives it. One JSON object a line
/// on standard input, one answer a line on standard output:
///
/// - `{"execute": CODE}` runs a cell: its Lua lines as one chunk, its `:command` lines
///   (`:advance 26h`, `:participant P2`) as the REPL runs them, in order. Answers
///   `{"stdout", "value", "html", "svgs", "error"}`: what `print` wrote, the value's text
///   (`inspect`), an HTML table when the value is a list of rows, the SVG of every chart the
///   cell drew or extended, and `{"message", "traceback"}` when it failed.
/// - `{"complete": CODE, "cursor": N}` answers `{"matches", "start", "end"}` (byte offsets
///   into CODE, as Jupyter counts characters for ASCII text) from the API description.
/// - `{"inspect": CODE, "cursor": N}` answers `{"found", "text"}`: the `:help` of the name at the cursor.
///
/// SIGINT stops a running cell (it fails with "stopped: interrupted"), never the engine.
final class MachineSession {
    let world: ReplWorld
    let output: OutputBuffer
    /// The charts as last sent: a chart is sent again only when a cell changed it.
    private var shown: [StudyChart] = []

    init(world: ReplWorld, output: OutputBuffer) {
        self.world = world
        self.output = output
    }

    /// Answers requests until standard input ends.
    func serve() {
        world.repl.state.catchInterruptSignal()
        while let line = readLine(strippingNewline: true) {
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let answer: [String: Any]
            if let data = line.data(using: .utf8), let request = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
                answer = handle(request)
            } else {
                answer = ["error": ["message": "not a JSON object: \(bounded(line, limit: 200))", "traceback": []]]
            }
            let bytes = (try? JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys])) ?? Data("{}".utf8)
            FileHandle.standardOutput.write(bytes + Data("\n".utf8))
        }
    }

    func handle(_ request: [String: Any]) -> [String: Any] {
        _ = LuaState.takeInterruptSignal()       // a SIGINT between cells stops nothing
        if let code = request["execute"] as? String { return execute(code) }
        let cursor = request["cursor"] as? Int
        if let code = request["complete"] as? String { return complete(code, cursor: cursor ?? code.utf8.count) }
        if let code = request["inspect"] as? String { return inspect(code, cursor: cursor ?? code.utf8.count) }
        return ["error": ["message": "unknown request (expected execute, complete or inspect)", "traceback": []]]
    }

    // MARK: Execute

    func execute(_ code: String) -> [String: Any] {
        var answer: [String: Any] = [:]
        var chunk: [String] = []
        var failure: String?
        func runChunk() {
            defer { chunk.removeAll() }
            guard failure == nil, !chunk.joined().trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return }
            let repl = world.repl
            repl.state.catchInterruptSignal()
            var reply = repl.feed(MachineSession.showingLastExpression(chunk, in: repl.state))
            if case .needMore = reply {
                repl.cancelPending()
                reply = .error("the cell ends inside an unfinished chunk (a missing `end`, `)` or `}`?)")
            } else if case .output = reply {
                do { try world.settle() } catch { reply = .error(describe(error)) }
            }
            switch reply {
            case .output(let text):
                if !text.isEmpty {
                    answer["value"] = text
                    if let html = MachineSession.htmlTable(repl.state.global("_")) { answer["html"] = html }
                }
            case .error(let text): failure = text
            case .needMore: break
            }
        }
        for line in code.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix(":") else { chunk.append(line); continue }
            runChunk()
            guard failure == nil else { break }
            failure = command(trimmed)
        }
        runChunk()
        answer["stdout"] = output.take()
        answer["svgs"] = newCharts().map(\.svg)
        if let failure {
            let lines = failure.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            answer["error"] = ["message": lines.first ?? failure, "traceback": lines]
        }
        return answer
    }

    /// The chunk's source, its last line returned when that line is an expression, so that
    /// a cell shows the value of its last line as a notebook does (the cell's locals still
    /// in scope). The source as it is when that does not compile.
    static func showingLastExpression(_ lines: [String], in state: LuaState) -> String {
        let whole = lines.joined(separator: "\n")
        guard let last = lines.lastIndex(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }), last > 0,
              !lines[last].trimmingCharacters(in: .whitespaces).hasPrefix("return") else { return whole }
        let candidate = (lines[..<last] + ["return " + lines[last]]).joined(separator: "\n")
        let compiles = state.withStackGuard { (try? state.load(candidate, chunkName: "=cell")) != nil }
        return compiles ? candidate : whole
    }

    /// A `:command` line: its text goes to the cell's output; an error is returned.
    func command(_ line: String) -> String? {
        let words = line.dropFirst().split(separator: " ").map(String.init)
        switch words.first ?? "" {
        case "help", "h", "?":
            output.write((words.count > 1 ? helpText(words[1], world.description) : ReplSession.help) + "\n")
            return nil
        default:
            do {
                guard let text = try world.command(words) else { return "unknown command :\(words.first ?? ""); :help lists them" }
                output.write(text + "\n")
                return nil
            } catch {
                return describe(error)
            }
        }
    }

    /// The charts drawn or extended since the last answer, in drawing order.
    func newCharts() -> [StudyChart] {
        let charts = world.current.charts
        let changed = charts.filter { !shown.contains($0) }
        shown = charts
        return changed
    }

    /// A list of rows (tables with string keys) as an HTML table, columns in name order;
    /// nil for any other value.
    static func htmlTable(_ value: LuaValue) -> String? {
        guard case .table(let list) = value, let rows = list.arrayValue, !rows.isEmpty else { return nil }
        var columns = Set<String>()
        var dictionaries: [[String: LuaValue]] = []
        for row in rows {
            guard case .table(let t) = row, !t.entries.isEmpty, t.entries.allSatisfy({ $0.key.stringValue != nil }) else { return nil }
            let d = t.dictionaryValue
            columns.formUnion(d.keys)
            dictionaries.append(d)
        }
        let names = columns.sorted()
        func cell(_ v: LuaValue?) -> String {
            switch v ?? .nil {
            case .nil: return ""
            case .integer(let i): return String(i)
            case .number(let d): return ReportBook.format(.double(d))
            case .boolean(let b): return b ? "true" : "false"
            case .string(let s): return MarkupText.escape(s)
            default: return MarkupText.escape(v!.typeName)
            }
        }
        var html = "<table>\n<thead><tr>" + names.map { "<th>\(MarkupText.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for d in dictionaries { html += "<tr>" + names.map { "<td>\(cell(d[$0]))</td>" }.joined() + "</tr>\n" }
        return html + "</tbody>\n</table>\n"
    }

    // MARK: Complete and inspect

    /// The text before the cursor, the cursor counted in Unicode scalars (as Jupyter does).
    static func prefix(_ code: String, _ cursor: Int) -> String {
        String(String.UnicodeScalarView(code.unicodeScalars.prefix(max(0, cursor))))
    }

    func complete(_ code: String, cursor: Int) -> [String: Any] {
        let before = MachineSession.prefix(code, cursor)
        let line = before.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let (word, matches) = ApiCompletion.complete(line, description: world.description, state: world.repl.state)
        let end = before.unicodeScalars.count
        return ["matches": matches, "start": end - word.unicodeScalars.count, "end": end]
    }

    func inspect(_ code: String, cursor: Int) -> [String: Any] {
        let before = MachineSession.prefix(code, cursor)
        let after = String(String.UnicodeScalarView(code.unicodeScalars.dropFirst(before.unicodeScalars.count)))
        let isName: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == ":" }
        let name = String(before.reversed().prefix(while: isName).reversed()) + String(after.prefix(while: isName))
        let entries = world.description.helpEntries(docs: documentationEntries())
        guard !name.isEmpty, let entry = Documentation.lookup(name, in: entries) else { return ["found": false, "text": ""] }
        return ["found": true, "text": Documentation.render(entry)]
    }
}
