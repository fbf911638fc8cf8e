import ArgumentParser
import Sensorium

/// The world flags every command that builds a simulated study takes (`run`, `repl`,
/// `export`): written once, checked once, applied once.
struct WorldOptions: ParsableArguments {
    @Option(help: "Scenario file: participants, consent, events (run and repl default to scenario.lua beside the protocol, if any).")
    var scenario: String?

    @Option(parsing: .unconditional, help: "Study length in days (default 14).")
    var days: Int?

    @Option(parsing: .unconditional, help: "Number of participants (default: the scenario's, else 3).")
    var participants: Int?

    @Option(help: "First study day, YYYY-MM-DD (default 2026-03-02).")
    var start: String?

    @Option(help: "Time zone of participants without one (IANA name, default UTC).")
    var timezone: String?

    func validate() throws {
        try FlagCheck.world(days: days, participants: participants, start: start, timezone: timezone)
    }

    /// Whether any world flag was given (a plain script given one runs as a study).
    var anyGiven: Bool { scenario != nil || days != nil || participants != nil || start != nil || timezone != nil }

    /// The flags into an embedding configuration (the scenario goes into the study's world).
    func apply(to configuration: inout StudyConfiguration) {
        configuration.days = days
        configuration.participants = participants
        configuration.start = start
        configuration.timeZone = timezone
    }
}
