import ArgumentParser
import Sensorium

/// The flags that replay a recorded study store instead of simulating (`run`, `repl`):
/// written once, checked once.
struct RecordingOptions: ParsableArguments {
    @Option(help: "Replay a recorded study store (made by `sensorium import`) instead of simulating.")
    var recording: String?

    @Option(help: "With --recording: only this participant.")
    var participant: String?

    func validate() throws {
        if participant != nil && recording == nil { throw ValidationError("--participant needs --recording (use --participants N for a simulated cohort)") }
    }

    /// The study's world: the store replayed when `--recording` was given, else the simulator
    /// with `scenario`.
    func world(scenario: String?) -> StudyWorld {
        recording.map { .recorded(store: $0, participant: participant, scenario: scenario) } ?? .simulated(scenario: scenario)
    }
}
