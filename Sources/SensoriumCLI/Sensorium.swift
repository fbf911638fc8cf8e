import ArgumentParser
import CLuaShim

@main
struct Sensorium: ParsableCommand {
    static func main() {
        luashim_tune_process_allocator()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as ExitCode {
            exit(withError: error)
        } catch let error where FileErrors.describe(error) != nil {
            printError("Error: " + FileErrors.describe(error)!)   // a file problem in the user's terms, not Foundation's
            exit(withError: ExitCode(1))
        } catch where "\(error)".utf8.count > 8_192 && !String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
            printError("Error: " + bounded("\(error)"))   // a message quoting huge input stays readable
            exit(withError: ExitCode(1))
        } catch {
            exit(withError: error)
        }
    }

    /// `sensorium --version`: this release and the Lua it embeds.
    static let version = "sensorium 0.1.0 (Lua 5.4)"

    static let configuration = CommandConfiguration(
        commandName: "sensorium",
        abstract: "Run SensorKit study protocols written in Lua, in virtual time.",
        version: Sensorium.version,
        subcommands: [RunCommand.self, ReplCommand.self, TestCommand.self, CheckCommand.self, SensorsCommand.self, SwitchesCommand.self, BenchCommand.self,
                      ImportCommand.self, ExportCommand.self, InspectCommand.self, MergeCommand.self, FuzzCommand.self,
                      LualsCommand.self]
    )
}
