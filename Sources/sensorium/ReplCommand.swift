import ArgumentParser
import CEditLine
import Foundation
import LuaHost
import SensorKitModel
import StudyRuntime
import StudyWorlds

struct ReplCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "A Lua prompt inside a simulated study world (line editing, history, =expr, :help).",
        discussion: """
        Each participant has a Lua state with the full protocol API (sensorkit, schedule, time,
        report, log). Give a protocol to load its declarations first. Commands: :now, :advance 26h,
        :participant P2, :sensors, :status, :report, :help [NAME], :quit.
        """
    )

    @Argument(help: "Optional protocol folder or file whose top level runs first.")
    var path: String?

    @Option(help: "Scenario file (default: the protocol's scenario.lua, if any).")
    var scenario: String?

    @Option(parsing: .unconditional, help: "Number of participants (default: the scenario's, else 3).")
    var participants: Int?

    @Option(parsing: .unconditional, help: "Study length in days, for time.studyEnd() (default 14).")
    var days: Int?

    @Option(help: "First study day, YYYY-MM-DD (default 2026-03-02).")
    var start: String?

    @Option(help: "Time zone of participants without one (IANA name, default UTC).")
    var timezone: String?

    @OptionGroup var lua: LuaOptions

    func validate() throws {
        try FlagCheck.world(days: days, participants: participants, start: start, timezone: timezone)
    }

    @Option(help: "History file (default ~/.sensorium_history).")
    var history: String?

    func run() throws {
        let output = OutputBuffer()
        var dirs: [String] = []
        var script = ""
        if let path {
            script = try resolveScript(path)
            dirs.append(relativeIfBelowCurrent(URL(fileURLWithPath: script).deletingLastPathComponent().path))
        } else {
            dirs.append(".")
        }
        var options = StudyOptions(protocolPath: script, scenarioPath: scenario ?? (path != nil ? defaultScenario(beside: script) : nil),
                                   moduleDirectories: dirs)
        options.stdlibFolder = stdlibOverride()
        options.participants = participants
        options.days = days
        options.seed = lua.seedGiven ? lua.seed : nil
        options.start = start
        options.timeZone = timezone
        options.limits = lua.limits
        let runner = StudyRunner(options: options)
        let world: ReplWorld
        do {
            world = try ReplWorld(runner: runner, output: output, loadProtocol: path != nil)
        } catch {
            output.flush()
            printError(describe(error))
            throw ExitCode(1)
        }
        let session = ReplSession(world: world, output: output)
        let interactive = isatty(STDIN_FILENO) != 0
        if interactive {
            output.write("Sensorium REPL (Lua 5.4) in a simulated world: \(world.current.setup.id), \(world.nowText). :help for help, Ctrl-D to leave.\n")
            output.flush()
            session.runInteractive(historyPath: history ?? (NSHomeDirectory() + "/.sensorium_history"))
        } else {
            while let line = readLine(strippingNewline: true) {
                if !session.handle(line) { break }
            }
            session.finish()
            output.flush()
            // Piped input is a script: a chunk that failed fails it, as with `lua5.4 - < file`.
            if session.failed { throw ExitCode(1) }
        }
        output.flush()
    }
}

func describe(_ error: Error) -> String {
    switch error {
    case let e as RunError: e.description
    case let e as LuaError: e.report()
    default: String(describing: error)
    }
}

/// The simulated world behind the REPL: every participant's run, one of them current.
final class ReplWorld {
    let runner: StudyRunner
    let runs: [ParticipantRun]
    var current: ParticipantRun
    var repls: [String: LuaRepl] = [:]
    let output: OutputBuffer

    init(runner: StudyRunner, output: OutputBuffer, loadProtocol: Bool) throws {
        self.runner = runner
        self.output = output
        runs = try runner.prepare { output.write($0) }
        guard let first = runs.first else { throw CommandError("the scenario has no participants") }
        current = first
        for run in runs {
            repls[run.setup.id] = LuaRepl(state: run.state)
            // Without a protocol there is no study{}: entitle and describe every sensor so
            // that experiments work at once (a study{} typed at the prompt replaces it).
            if !loadProtocol { run.model.study = .permissive }
            if loadProtocol { try run.runTopLevel() }
            try run.drain(until: run.clock.now)
        }
    }

    var repl: LuaRepl { repls[current.setup.id]! }

    var nowText: String {
        let run = current
        let day = Int(((run.clock.now - run.settings.start) / 86_400).rounded(.down)) + 1
        return "\(LocalTime.minuteLabel(run.clock.now, run.clock.timeZone)) \(run.clock.timeZone.identifier) (study day \(day)), SR \(ReportBook.format(.double(run.model.clock.current().rawValue)))"
    }

    /// Delivers what the last chunk queued for now (delegate callbacks run after the code returns).
    func settle() throws { try current.drain(until: current.clock.now) }

    func command(_ words: [String]) throws -> String? {
        switch words.first ?? "" {
        case "now":
            return nowText
        case "advance":
            guard words.count == 2, let d = LocalTime.parseDuration(words[1]), d >= 0 else {
                return "usage: :advance DURATION   (e.g. :advance 26h, :advance 90m, :advance 2d)"
            }
            try current.drain(until: current.clock.now + d)
            return nowText
        case "participant", "p":
            guard words.count == 2 else { return "participants: " + runs.map(\.setup.id).joined(separator: ", ") + " (current: \(current.setup.id))" }
            guard let run = runs.first(where: { $0.setup.id == words[1] }) else {
                return "no participant '\(words[1])' (participants: \(runs.map(\.setup.id).joined(separator: ", ")))"
            }
            current = run
            return "\(run.setup.id), \(nowText)"
        case "sensors":
            return Sensor.allCases.map { s in
                let info = s.info
                return s.rawValue.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + current.model.status(s).name.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + info.deviceKinds.map(\.rawValue).joined(separator: ",").padding(toLength: 13, withPad: " ", startingAt: 0)
                    + info.cadence.summary
            }.joined(separator: "\n")
        case "status":
            let run = current
            var lines = ["participant \(run.setup.id), \(nowText)"]
            let devices = run.source.devices(participant: run.setup.id).map { "\($0.model) (\($0.productType))" }
            lines.append("devices: " + devices.joined(separator: ", "))
            let touched = Sensor.allCases.filter { run.model.status($0) != .notDetermined || run.model.recording.isActive($0, at: run.clock.now) }
            if touched.isEmpty { lines.append("no sensor authorized or recording yet (sensorkit.requestAuthorization, reader:startRecording)") }
            for s in touched {
                lines.append("  " + s.rawValue.padding(toLength: 24, withPad: " ", startingAt: 0) + run.model.status(s).name.padding(toLength: 14, withPad: " ", startingAt: 0)
                             + (run.model.recording.isActive(s, at: run.clock.now) ? "recording" : "not recording"))
            }
            lines.append("events queued: \(run.loop.count)")
            return lines.joined(separator: "\n")
        case "report":
            let text = runner.report.renderText()
            return text.isEmpty ? "no report rows yet" : String(text.dropLast())
        default:
            return nil
        }
    }
}

/// One REPL conversation: commands (`:help`, `:now`, …) and Lua chunks.
final class ReplSession {
    let world: ReplWorld
    let output: OutputBuffer
    var repl: LuaRepl { world.repl }
    /// A chunk or command failed (its error was printed); piped input then exits with status 1.
    private(set) var failed = false

    init(world: ReplWorld, output: OutputBuffer) {
        self.world = world
        self.output = output
    }

    static let help = """
    Type Lua statements or expressions; expressions print their values.
      =expr              print the value of expr
      :now               the participant's virtual time
      :advance 26h       run the world forward (schedules and delegate callbacks run)
      :participant P2    switch participant (each has its own Lua state)
      :sensors           the sensor catalogue with this participant's authorization
      :status            devices, authorization and recording of this participant
      :report            the report tables so far
      :help NAME         documentation of a function (e.g. :help reader:samples); :help api lists all
      :quit              leave (Ctrl-D also leaves)
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
            case "help", "h", "?":
                output.write((words.count > 1 ? helpText(words[1]) : ReplSession.help) + "\n")
            default:
                do {
                    if let text = try world.command(words) { output.write(text + "\n") }
                    else { output.write("unknown command :\(words.first ?? ""); :help lists them\n") }
                } catch {
                    failed = true
                    output.flush()
                    printError(describe(error))
                }
            }
            output.flush()
            return true
        }
        repl.state.catchInterruptSignal()
        var reply = repl.feed(line)
        if case .needMore = reply {} else {
            do { try world.settle() } catch { reply = .error(describe(error)) }
        }
        LuaState.releaseInterruptSignal()   // piped input: Ctrl-C ends the session as usual
        switch reply {
        case .needMore: break
        case .output(let text): if !text.isEmpty { output.write(text + "\n") }
        case .error(let text):
            failed = true
            output.flush()
            printError(text)
        }
        output.flush()
        return true
    }

    /// At the end of piped input, a half-typed chunk is an error worth saying.
    func finish() {
        if repl.isContinuing {
            failed = true
            output.flush()
            printError("stdin: input ended inside an unfinished chunk")
            repl.cancelPending()
        }
    }

    /// The terminal loop, over libedit's readline: editing and persistent history.
    func runInteractive(historyPath: String) {
        using_history()
        _ = read_history(historyPath)
        stifle_history(1000)
        while true {
            // At the prompt Ctrl-C only raises a flag (no Lua is running to stop): the line
            // typed so far is dropped and the prompt comes back, as the help says.
            repl.state.catchInterruptSignal()
            _ = LuaState.takeInterruptSignal()
            let raw = readline(repl.prompt)
            if LuaState.takeInterruptSignal() {
                if let raw { free(raw) }
                output.write("^C\n")
                output.flush()
                repl.cancelPending()
                continue
            }
            guard let raw else {
                output.write("\n")
                break
            }
            let line = String(cString: raw)
            free(raw)
            if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                _ = add_history(line)
                _ = write_history(historyPath)
            }
            if !handle(line) { break }
        }
    }
}

/// `:help NAME`: the API documentation entry, from docs/lua-api.md ($SENSORIUM_DOCS, else the
/// copy built into the program); `:help api` lists every name.
func helpText(_ name: String) -> String {
    let text: String
    if let env = ProcessInfo.processInfo.environment["SENSORIUM_DOCS"], !env.isEmpty {
        guard let read = try? String(contentsOfFile: env, encoding: .utf8) else { return "documentation not found: cannot read \(env) (SENSORIUM_DOCS)" }
        text = read
    } else {
        text = Stdlib.apiDocumentation
    }
    let entries = Documentation.parse(text)
    if name == "api" || name == "index" { return Documentation.index(entries) }
    return Documentation.help(name, in: entries)
}
