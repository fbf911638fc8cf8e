import Foundation
import LuaHost
import StudyReport
import StudyRuntime

/// One participant of a study opened for interactive use — a notebook, a prompt, a test:
/// the participant's Lua state with the study API (the stdlib, the study's registrations),
/// in virtual time that moves only when asked. `Study.openParticipants` makes them; the
/// command line's `repl` (and the Jupyter kernel behind `repl --machine`) are built on it.
public final class StudyParticipantSession {
    /// The runtime's participant behind the session, for the command line's REPL (the
    /// model, clock and event loop its `:status` and `:sensors` read).
    @_spi(CommandLine) public let run: ParticipantRun
    /// Where every participant of the study reports (the rows of all of them).
    let book: ReportBook

    init(run: ParticipantRun, book: ReportBook) {
        self.run = run
        self.book = book
    }

    /// The participant's id.
    public var id: String { run.setup.id }

    /// The participant's Lua state (for `LuaRepl`'s completion, `functionInfo`, globals).
    /// Code run here directly does not deliver what it queues: use `execute`.
    public var state: LuaState { run.state }

    /// The participant's virtual time: seconds since 1970.
    public var now: Double { run.clock.now }

    /// The participant's time zone now (it follows travel).
    public var timeZone: TimeZone { run.clock.timeZone }

    /// The study's first instant and its end (seconds since 1970).
    public var start: Double { run.settings.start }
    /// The end of the study's last day (seconds since 1970); `advance` may go past it.
    public var end: Double { run.settings.end }

    /// Runs the protocol's top level (its declarations, readers, schedules), then what it
    /// queued for now. Throws `StudyError` with the message `sensorium run` prints.
    public func runProtocol() throws {
        try studyErrors {
            try run.runTopLevel()
            try run.drain(until: run.clock.now)
        }
    }

    /// Runs `code` as a chunk named `chunkName` in the participant's state, then delivers
    /// what it queued for now (delegate callbacks), and returns the chunk's values. Throws
    /// `StudyError` (the Lua error with its traceback) when the chunk or a callback fails.
    public func execute(_ code: String, chunkName: String = "=input") throws -> [LuaValue] {
        try studyErrors {
            let values = try state.execute(code, chunkName: chunkName)
            try run.drain(until: run.clock.now)
            return values
        }
    }

    /// Moves virtual time forward to `time`, running every schedule and callback due on the
    /// way (an earlier time changes nothing). Throws `StudyError` when one fails.
    public func advance(to time: Double) throws {
        try studyErrors { try run.drain(until: max(time, run.clock.now)) }
    }

    /// The report tables so far, of every participant opened with this one, as
    /// `sensorium run` prints them ("" when nothing was reported).
    public var reportText: String { book.renderText() }

    /// `body`'s errors as `StudyError`s with the command line's message.
    private func studyErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as StudyError { throw e } catch { throw StudyError(StudySession.message(of: error)) }
    }
}

extension Study {
    /// Opens every participant of the study for interactive use: each set up (state, model,
    /// world) with nothing run, not even the protocol (`runProtocol`). What they print goes
    /// to `output`; they report into one book (`reportText`). Throws `StudyError` when the
    /// world cannot be made.
    public func openParticipants(output: @escaping (String) -> Void = { _ in }) throws -> [StudyParticipantSession] {
        let session = StudySession(self)
        let runs: [ParticipantRun]
        do { runs = try session.prepare(output: output) } catch { throw StudyError(StudySession.message(of: error)) }
        guard let book = session.runner?.report else { return [] }
        return runs.map { StudyParticipantSession(run: $0, book: book) }
    }
}
