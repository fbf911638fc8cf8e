import ArgumentParser
import CEditLine
import Foundation
@_spi(Bindings) import LuaHost
import Sensorium
import SensorKitModel
import StudyReport
import ApiReference

struct ReplCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "A Lua prompt inside a study world, simulated or recorded (line editing, history, =expr, :help).",
        discussion: """
        Each participant has a Lua state with the full protocol API (sensorkit, schedule, time, \
        report, log). Give a protocol to load its declarations first; --recording STORE replays a \
        store made by `sensorium import` instead of simulating. Commands: :now, :advance 26h, \
        :advance to tomorrow 09:00, :load FILE, :participant P2, :sensors, :status, :report, \
        :help [NAME], :quit. Tab completes names; `_` is the last value printed.
        """
    )

    @Argument(help: "Optional protocol folder or file whose top level runs first.")
    var path: String?

    @OptionGroup var world: WorldOptions

    @OptionGroup var recorded: RecordingOptions

    @OptionGroup var lua: LuaOptions

    @Option(help: "History file (default ~/.sensorium_history).")
    var history: String?

    @Flag(help: ArgumentHelp("Answer JSON requests, one a line, for a program (the Jupyter kernel).", visibility: .hidden))
    var machine = false

    func run() throws {
        let output = OutputBuffer(capturing: machine)
        var dirs = ["."]
        var script = ""
        if let path {
            script = try resolveScript(path)
            dirs = moduleDirectories(of: script)
        }
        var configuration = StudyConfiguration()
        self.world.apply(to: &configuration)
        configuration.stdlibFolder = stdlibOverride()
        configuration.seed = lua.seedGiven ? lua.seed : nil
        configuration.memoryLimitBytes = lua.limits.memoryBytes
        configuration.timeLimitMilliseconds = lua.limits.timeLimitMilliseconds
        configuration.instructionBudget = lua.limits.instructionBudget
        let scenario = self.world.scenario ?? (path != nil ? defaultScenario(beside: script) : nil)
        let study = Study(.file(script, moduleDirectories: dirs), world: recorded.world(scenario: scenario), configuration: configuration)
        let world: ReplWorld
        do {
            // What opening the world says (a replay's span, its warnings): on standard error at
            // a prompt; for the kernel, in the first answer's output (its standard error is a
            // pipe nobody reads until the engine stops).
            let say: (String) -> Void = machine ? { output.write($0 + "\n") } : { printError($0) }
            world = try ReplWorld(study: study, output: output, loadProtocol: path != nil,
                                  announce: { lines in lines.forEach(say) }, warn: { say("warning: " + $0) })
        } catch {
            output.flush()
            printError(describe(error))
            throw ExitCode(1)
        }
        if machine {
            MachineSession(world: world, output: output).serve()
            return
        }
        let session = ReplSession(world: world, output: output)
        let interactive = isatty(STDIN_FILENO) != 0
        if interactive {
            let kind = recorded.recording.map { "the recorded study \($0)" } ?? "a simulated world"
            output.write("Sensorium REPL (Lua 5.4) in \(kind): \(world.current.id), \(world.nowText). :help for help, Ctrl-D to leave.\n")
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

/// An error as the REPL prints it: the embedding API's `StudyError` is already the
/// command line's message (a Lua error with its traceback).
func describe(_ error: Error) -> String {
    switch error {
    case let e as StudyError: e.message
    case let e as LuaError: e.report()
    default: String(describing: error)
    }
}

/// The simulated world behind the REPL: every participant opened (`Study.openParticipants`),
/// one of them current.
final class ReplWorld {
    /// Every participant, opened; they report into one book.
    let participants: [StudyParticipantSession]
    var current: StudyParticipantSession
    var repls: [String: LuaRepl] = [:]
    let output: OutputBuffer
    /// The API the prompt completes and `:help` describes (read from the first participant's state).
    let description: ApiDescription

    /// `announce` and `warn`: what opening the world says about it (`Study.openParticipants`).
    init(study: Study, output: OutputBuffer, loadProtocol: Bool, announce: (([String]) -> Void)? = nil,
         warn: ((String) -> Void)? = nil) throws {
        self.output = output
        participants = try study.openParticipants(output: { output.write($0) }, announce: announce, warn: warn)
        guard let first = participants.first else { throw CommandError("the scenario has no participants") }
        current = first
        for participant in participants {
            repls[participant.id] = LuaRepl(state: participant.state)
            if loadProtocol {
                try participant.runProtocol()
            } else {
                // Without a protocol there is no study{}: entitle and describe every sensor so
                // that experiments work at once (a study{} typed at the prompt replaces it).
                participant.allowEverySensor()
                try participant.advance(to: participant.now)
            }
        }
        description = try apiDescription(of: first.state)
    }

    var repl: LuaRepl { repls[current.id]! }

    var nowText: String {
        let p = current
        let day = Int(((p.now - p.start) / 86_400).rounded(.down)) + 1
        let past = p.now > p.end ? ", after the study's end" : ""
        return "\(LocalTime.minuteLabel(p.now, p.timeZone)) \(p.timeZone.identifier) (study day \(day)\(past)), SR \(ReportBook.format(.double(p.absoluteTime)))"
    }

    static let advanceUsage = """
    usage: :advance DURATION        (e.g. :advance 26h, :advance 90m, :advance 2d)
           :advance to DATE TIME    (e.g. :advance to tomorrow 09:00, :advance to 09:00,
                                     :advance to day 3 09:00, :advance to 2026-03-04 21:30)
    """

    /// The instant `:advance to WORDS` names, in the participant's time zone: `HH:MM` (the
    /// next such clock time), `today HH:MM`, `tomorrow HH:MM`, `day N [HH:MM]`, or a date
    /// `YYYY-MM-DD [HH:MM]`. Nil when the words are none of these.
    func target(_ words: [String]) -> Double? {
        let tz = current.timeZone
        let now = current.now
        func clock(_ text: String) -> (Int, Int)? {
            let hm = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
            guard hm.count == 2, let h = hm[0], let m = hm[1], (0..<24).contains(h), (0..<60).contains(m) else { return nil }
            return (h, m)
        }
        switch words.first {
        case "today"?, "tomorrow"?:
            guard words.count <= 2 else { return nil }
            var hm = (0, 0)
            if words.count == 2 {
                guard let given = clock(words[1]) else { return nil }
                hm = given
            }
            let day = words[0] == "today" ? LocalTime.startOfDay(now, tz) : LocalTime.nextDay(now, tz)
            return LocalTime.time(onDayOf: day, hour: hm.0, minute: hm.1, tz)
        case let first? where words.count == 1 && clock(first) != nil:
            let (h, m) = clock(first)!
            let today = LocalTime.time(onDayOf: now, hour: h, minute: m, tz)
            return today > now ? today : LocalTime.time(onDayOf: LocalTime.nextDay(now, tz), hour: h, minute: m, tz)
        default:
            return LocalTime.parse(words.joined(separator: " "), tz, studyStart: current.start)
        }
    }

    /// Runs the current participant's world to `end`; says so when that passes the study's end.
    func advance(to end: Double) throws -> String {
        let p = current
        let before = p.now
        try p.advance(to: end)
        var text = nowText
        if before <= p.end && end > p.end {
            text += "\nnote: this passed the study's end (\(LocalTime.minuteLabel(p.end, p.timeZone)), "
                + "after \(p.days) day\(p.days == 1 ? "" : "s"): time.studyEnd()); a protocol's run stops there, and schedules do not run after it"
        }
        return text
    }

    /// Delivers what the last chunk queued for now (delegate callbacks run after the code returns).
    func settle() throws { try current.advance(to: current.now) }

    /// What a replay's `:sensors` says of `sensor`: its samples per device and when they were
    /// written (in the participant's time zone), or that the recording has none.
    func recordedText(_ sensor: String, _ streams: [RecordedStream]) -> String {
        let mine = streams.filter { $0.sensor == sensor && $0.samples > 0 }
        guard !mine.isEmpty else { return "not in the recording" }
        let counts = mine.map { "\($0.deviceKind) (\($0.deviceModel)) \($0.samples)" }.joined(separator: ", ")
        let first = mine.compactMap(\.firstWrite).min(), last = mine.compactMap(\.lastWrite).max()
        let span = first.flatMap { f in last.map { l in ", written \(LocalTime.minuteLabel(f, current.timeZone)) … \(LocalTime.minuteLabel(l, current.timeZone))" } } ?? ""
        return "recorded: " + counts + " sample" + (mine.count == 1 && mine[0].samples == 1 ? "" : "s") + span
    }

    /// Runs a `:command` (its words, without the colon): its text, or nil for a command this
    /// does not know. Throws a `CommandError` when it cannot do what it was asked (an unknown
    /// participant, a time it cannot read or in the past), or what running the world throws.
    func command(_ words: [String]) throws -> String? {
        switch words.first ?? "" {
        case "now":
            return nowText
        case "advance":
            if words.count >= 3, words[1] == "to" {
                guard let end = target(Array(words.dropFirst(2))) else {
                    throw CommandError("'\(words.dropFirst(2).joined(separator: " "))' is not a time this reads\n" + ReplWorld.advanceUsage)
                }
                guard end >= current.now else {
                    throw CommandError("\(words.dropFirst(2).joined(separator: " ")) is in the past (now: \(nowText)); the clock only moves forward")
                }
                return try advance(to: end)
            }
            guard words.count == 2 else { throw CommandError(ReplWorld.advanceUsage) }
            guard let d = LocalTime.parseDuration(words[1]) else { throw CommandError("'\(words[1])' is not a duration\n" + ReplWorld.advanceUsage) }
            guard d >= 0 else { throw CommandError("\(words[1]) would move the clock back (now: \(nowText)); the clock only moves forward") }
            return try advance(to: current.now + d)
        case "participant", "p":
            let ids = participants.map(\.id)
            guard words.count == 2 else { return "participants: " + ids.joined(separator: ", ") + " (current: \(current.id))" }
            guard let chosen = participants.first(where: { $0.id == words[1] }) else {
                throw CommandError("no participant '\(words[1])' (participants: \(ids.joined(separator: ", ")))")
            }
            current = chosen
            return "\(chosen.id), \(nowText)"
        case "sensors":
            let recorded = try current.recordedStreams()
            var lines = current.sensors.map { s in
                s.name.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + s.authorization.padding(toLength: 14, withPad: " ", startingAt: 0)
                    + s.deviceKinds.joined(separator: ",").padding(toLength: 13, withPad: " ", startingAt: 0)
                    + (recorded.map { recordedText(s.name, $0) } ?? s.cadence)
            }
            if let recorded {
                let held = Set(recorded.map(\.sensor)).count
                lines.insert("participant \(current.id): the recording holds \(held) of \(lines.count) sensors", at: 0)
            }
            return lines.joined(separator: "\n")
        case "status":
            let status = current.status
            var lines = ["participant \(status.participant), \(nowText)"]
            lines.append("devices: " + status.devices.joined(separator: ", "))
            if status.sensors.isEmpty { lines.append("no sensor authorized or recording yet (sensorkit.requestAuthorization, reader:startRecording)") }
            for s in status.sensors {
                lines.append("  " + s.name.padding(toLength: 24, withPad: " ", startingAt: 0) + s.authorization.padding(toLength: 14, withPad: " ", startingAt: 0)
                             + (s.isRecording ? "recording" : "not recording"))
            }
            lines.append("events queued: \(status.queuedEvents)")
            return lines.joined(separator: "\n")
        case "report":
            let text = participants.first?.reportText ?? ""
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
      :advance to tomorrow 09:00   … to a time (HH:MM, today/tomorrow HH:MM, day N HH:MM, YYYY-MM-DD HH:MM)
      :load FILE         run a Lua file in this participant's state
      :participant P2    switch participant (each has its own Lua state)
      :sensors           the sensor catalogue with this participant's authorization
                         (in a replay: what the recording holds of each, per device)
      :status            devices, authorization and recording of this participant
      :report            the report tables so far
      :help NAME         documentation of a function or module (e.g. :help reader:samples, :help plot.line);
                         :help api lists all
      :quit              leave (Ctrl-D also leaves)
    A chunk that is not complete continues on the next line (prompt >>); it is one history entry.
    Tab completes globals, fields, methods, sensor names ("…") and field names; _ is the last value printed.
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
                output.write((words.count > 1 ? helpText(words[1], world.description) : ReplSession.help) + "\n")
            case "load", "l":
                let path = String(trimmed.drop { $0 != " " }).trimmingCharacters(in: .whitespaces)
                guard !path.isEmpty else {
                    show(.error("usage: :load FILE   (runs a Lua file in this participant's state)"))
                    break
                }
                show(load(path))
            default:
                do {
                    guard let text = try world.command(words) else { throw CommandError("unknown command :\(words.first ?? ""); :help lists them") }
                    output.write(text + "\n")
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
        show(reply)
        return true
    }

    /// Prints a chunk's reply: its values on standard output, an error on standard error.
    func show(_ reply: LuaRepl.Reply) {
        switch reply {
        case .needMore: break
        case .output(let text): if !text.isEmpty { output.write(text + "\n") }
        case .error(let text):
            failed = true
            output.flush()
            printError(text)
        }
        output.flush()
    }

    /// `:load FILE`: runs the file in the current participant's state (chunk `@FILE`, so
    /// errors name its lines), then delivers what it queued for now.
    func load(_ path: String) -> LuaRepl.Reply {
        guard FileManager.default.fileExists(atPath: path) else { return .error(":load: no file '\(path)'") }
        repl.state.catchInterruptSignal()
        defer { LuaState.releaseInterruptSignal() }
        do {
            let values = try repl.state.executeFile(path)
            try world.settle()
            return .output(values.isEmpty ? "" : try repl.state.inspect(values))
        } catch {
            return .error(describe(error))
        }
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
        completingSession = self
        ceditline_set_completion(completeWord, wordBreaks)
        defer { completingSession = nil }
        // The lines of a chunk typed so far: the whole chunk becomes one history entry.
        var chunk: [String] = []
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
                chunk.removeAll()
                continue
            }
            guard let raw else {
                output.write("\n")
                break
            }
            let line = String(cString: raw)
            free(raw)
            chunk.append(line)
            let goOn = handle(line)
            if !repl.isContinuing {
                let entry = chunk.joined(separator: "\n")
                chunk.removeAll()
                if !entry.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    _ = add_history(entry)
                    _ = write_history(historyPath)
                }
            }
            if !goOn { break }
        }
    }
}

/// `:help NAME`: the reference's entry (docs/lua-api.md: $SENSORIUM_DOCS, else the copy
/// built into the program), else the API description's (a stdlib export); `:help api`
/// lists every name of both.
func helpText(_ name: String, _ api: ApiDescription) -> String {
    let docs = documentationEntries()
    if docs.isEmpty { return "documentation not found: cannot read $SENSORIUM_DOCS" }
    let entries = api.helpEntries(docs: docs)
    if name == "api" || name == "index" { return Documentation.index(entries) }
    return Documentation.help(name, in: entries)
}

/// The session whose world the terminal's Tab completes from (libedit's hook is a C
/// function and cannot capture it). Set by `runInteractive`, on the main thread only.
nonisolated(unsafe) private var completingSession: ReplSession?
nonisolated(unsafe) private let wordBreaks: UnsafeMutablePointer<CChar> = strdup(ApiCompletion.wordBreaks)

/// libedit's completion hook: the matches for the word ending at the cursor, as readline
/// wants them (a malloc'd NULL-terminated list, the common prefix first), or NULL.
private func completeWord(_ text: UnsafePointer<CChar>?, _ start: Int32, _ end: Int32) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
    ceditline_completion_over()
    guard let session = completingSession, let buffer = ceditline_line_buffer() else { return nil }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self),
                                    count: Int(max(0, ceditline_point())))
    let line = String(decoding: bytes, as: UTF8.self)
    let typed = text.map { String(cString: $0) } ?? ""
    let (word, found) = ApiCompletion.complete(line, description: session.world.description, state: session.repl.state)
    // The candidates replace our word; libedit replaces its own: put back what differs.
    let lead = typed.hasSuffix(word) ? String(typed.dropLast(word.count)) : ""
    let matches = found.map { lead + $0 }
    guard !matches.isEmpty else { return nil }
    var common = matches[0]
    for m in matches.dropFirst() { while !m.hasPrefix(common) { common.removeLast() } }
    let list = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: matches.count + 2)
    list[0] = strdup(common)
    var n = 1
    if matches.count > 1 { for m in matches { list[n] = strdup(m); n += 1 } }
    list[n] = nil
    return list
}
