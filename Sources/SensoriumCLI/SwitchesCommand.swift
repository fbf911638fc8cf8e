import ArgumentParser
import Simulator
import SensorKitModel

/// `sensorium switches`: every scenario switch — the model's, then the simulator's — with
/// its default, what it accepts, its reference section and what it does, all from the
/// switch tables (`WorldSwitches.switchTable`, `SimulationSettings.switchTable`).
struct SwitchesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switches",
        abstract: "The scenario switches: defaults, accepted values and what each does.",
        discussion: "A scenario sets them as `switches = { name = value }` (docs/lua-api.md, scenario.switches)."
    )

    @Flag(help: "Print the list as docs/lua-api.md writes it (Markdown).")
    var markdown = false

    func run() {
        let knobs = WorldSwitches.knobs + SimulationSettings.knobs
        for k in knobs {
            if markdown { print(k.markdownLine); continue }
            print("\(k.name)  default \(k.defaultValue.filter { $0 != "`" })  (\(k.section))")
            print("  accepts \(k.allowed)")
            print("  \(k.summary.filter { $0 != "`" })")
        }
    }
}
