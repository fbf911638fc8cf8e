import Foundation

/// A failed `expect` check: recorded, and the participant's run goes on.
public struct Finding: Sendable, Equatable, Codable {
    public var participant: String
    /// Virtual local time, `YYYY-MM-DD HH:MM`.
    public var time: String
    /// `file:line` of the protocol line that made the check.
    public var location: String
    public var message: String

    public init(participant: String, time: String, location: String, message: String) {
        self.participant = participant
        self.time = time
        self.location = location
        self.message = message
    }

    /// How the finding of a run an error stopped begins (`RunError.finding`).
    public static let stoppedRunPrefix = "run stopped: "
    /// Whether this finding is a run an error stopped, not a failed check.
    public var isStoppedRun: Bool { message.hasPrefix(Finding.stoppedRunPrefix) }

    /// `[P1 2026-03-05 08:00] protocol.lua:42: expected …`, as run errors are shown.
    public var description: String { "[\(participant) \(time)] \(location.isEmpty ? "" : location + ": ")\(message)" }
}
