import ArgumentParser

@main
struct Sensorium: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensorium",
        abstract: "Run SensorKit study protocols written in Lua, in virtual time.",
        subcommands: [RunCommand.self, ReplCommand.self, TestCommand.self, CheckCommand.self, SensorsCommand.self, BenchCommand.self,
                      ImportCommand.self, ExportCommand.self, InspectCommand.self]
    )
}
