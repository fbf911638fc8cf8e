/// The read-eval-print logic of `sensorium repl`, without any terminal.
///
/// Feed it lines; it answers whether it needs more input (the chunk is
/// incomplete), or what to print. Like lua.c: a line starting with `=` is an
/// expression; a chunk that compiles as `return <chunk>` prints its values;
/// otherwise it runs as statements. Errors leave the state usable. The first value a
/// chunk printed is kept in the global `_`.
public final class LuaRepl {
    /// What the REPL answers to a line.
    public enum Reply: Equatable {
        /// The chunk is incomplete: show the continuation prompt.
        case needMore
        /// The chunk ran; print `text` (empty when there was nothing to show).
        case output(String)
        /// The chunk failed to compile or run.
        case error(String)
    }

    /// The state chunks run in.
    public let state: LuaState
    private var pending: [String] = []
    /// The name chunks get in errors (`=stdin`).
    public let chunkName: String

    /// A REPL over `state`.
    public init(state: LuaState, chunkName: String = "=stdin") {
        self.state = state
        self.chunkName = chunkName
    }

    /// `> `, or `>> ` while a chunk is incomplete.
    public var prompt: String { pending.isEmpty ? "> " : ">> " }
    /// Whether an incomplete chunk waits for more lines.
    public var isContinuing: Bool { !pending.isEmpty }

    /// Drops a half-typed chunk (Ctrl-C at the continuation prompt).
    public func cancelPending() { pending.removeAll() }

    /// Adds `line` to the pending chunk and runs it once it is complete.
    public func feed(_ line: String) -> Reply {
        var line = line
        if pending.isEmpty, line.hasPrefix("=") { line = "return " + line.dropFirst() }
        pending.append(line)
        let source = pending.joined(separator: "\n")
        // Everything pushed from here (the chunk, its results) is dropped on the way out.
        return state.withStackGuard { compileAndRun(source) }
    }

    /// Compiles `source` as an expression, else as statements, and runs it. Leaves the
    /// chunk and its results on the stack (the caller's stack guard drops them).
    private func compileAndRun(_ source: String) -> Reply {
        let top = state.top
        var expressionError: LuaError?
        do {
            try state.load("return " + source + ";", chunkName: chunkName)
        } catch {
            expressionError = error as? LuaError
        }
        if expressionError != nil {
            do {
                try state.load(source, chunkName: chunkName)
            } catch {
                let e = error as? LuaError
                if LuaRepl.isIncomplete(e) { return .needMore }
                pending.removeAll()
                return .error(e?.message ?? "\(error)")
            }
        }
        pending.removeAll()
        do {
            try state.pcall(arguments: 0, results: -1)
            let n = state.top - top
            if n <= 0 { return .output("") }
            let text = try state.inspectStack(from: top + 1, count: n)
            try keepLastResult(at: top + 1)
            return .output(text)
        } catch let e as LuaError {
            return .error(e.report(frames: 4))
        } catch {
            return .error("\(error)")
        }
    }

    /// Sets the global `_` to the value at `index` (the first result of the chunk that
    /// printed), as Python's and Julia's REPLs do; through a protected call, so that a
    /// strict `_G` or a memory error is an error of the chunk, not a longjmp. [-0, +0]
    private func keepLastResult(at index: Int32) throws {
        try state.withStackGuard {
            try state.load("_ = ...", chunkName: "=repl")
            state.pushCopy(of: index)
            try state.pcall(arguments: 1, results: 0)
        }
    }

    /// A syntax error at the end of the input: the chunk may continue on the next line.
    static func isIncomplete(_ error: LuaError?) -> Bool {
        guard let error, error.kind == .syntax else { return false }
        return error.message.hasSuffix("<eof>")
    }
}
