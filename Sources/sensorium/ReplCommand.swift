import ArgumentParser
import CEditLine
import CLuaShim
import Foundation
import LuaHost

struct ReplCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "An interactive Lua prompt (line editing, history, =expr, :help)."
    )

    @OptionGroup var lua: LuaOptions

    @Option(help: "History file (default ~/.sensorium_history).")
    var history: String?

    func run() throws {
        let output = OutputBuffer()
        var dirs: [String] = []
        if let stdlib = locateStdlib() { dirs.append(stdlib) }
        dirs.append(".")
        let state = try LuaState(limits: lua.limits, sandbox: SandboxOptions(moduleDirectories: dirs, seed: lua.seed))
        state.output = { output.write($0) }
        let session = ReplSession(repl: LuaRepl(state: state), output: output)
        let interactive = isatty(STDIN_FILENO) != 0
        if interactive {
            output.write("Sensorium REPL (Lua 5.4). :help for help, Ctrl-D to leave.\n")
            output.flush()
            session.runInteractive(historyPath: history ?? (NSHomeDirectory() + "/.sensorium_history"))
        } else {
            while let line = readLine(strippingNewline: true) {
                if !session.handle(line) { break }
            }
            session.finish()
        }
        output.flush()
    }
}

/// One REPL conversation: commands (`:help`, `:quit`) and Lua chunks.
final class ReplSession {
    let repl: LuaRepl
    let output: OutputBuffer

    init(repl: LuaRepl, output: OutputBuffer) {
        self.repl = repl
        self.output = output
    }

    static let help = """
    Type Lua statements or expressions; expressions print their values.
      =expr          print the value of expr
      :help          this text
      :quit          leave (Ctrl-D also leaves)
    A chunk that is not complete continues on the next line (prompt >>).
    Ctrl-C stops a running chunk, or drops a half-typed one.
    """

    /// Handles one line; returns false when the session should end.
    func handle(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if !repl.isContinuing, trimmed.hasPrefix(":") {
            let words = trimmed.dropFirst().split(separator: " ").map(String.init)
            switch words.first ?? "" {
            case "quit", "q", "exit": return false
            case "help", "h", "?": output.write(ReplSession.help + "\n")
            default: output.write("unknown command :\(words.first ?? ""); :help lists them\n")
            }
            output.flush()
            return true
        }
        luashim_install_sigint(repl.state.L)
        let reply = repl.feed(line)
        luashim_install_sigint(nil)
        switch reply {
        case .needMore: break
        case .output(let text): if !text.isEmpty { output.write(text + "\n") }
        case .error(let text):
            output.flush()
            printError(text)
        }
        output.flush()
        return true
    }

    /// At the end of piped input, a half-typed chunk is an error worth saying.
    func finish() {
        if repl.isContinuing {
            output.flush()
            printError("stdin: input ended inside an unfinished chunk")
            repl.cancelPending()
        }
    }

    /// The terminal loop, over libedit's readline: editing and persistent history.
    func runInteractive(historyPath: String) {
        using_history()
        _ = read_history(historyPath)
        _ = stifle_history(1000)
        while true {
            _ = luashim_take_sigint()
            guard let raw = readline(repl.prompt) else {
                output.write("\n")
                break
            }
            let line = String(cString: raw)
            free(raw)
            if luashim_take_sigint() != 0 {
                repl.cancelPending()
                continue
            }
            if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                _ = add_history(line)
                _ = write_history(historyPath)
            }
            if !handle(line) { break }
        }
    }
}
