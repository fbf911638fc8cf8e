import ArgumentParser
import Foundation
import Sensorium
import SensorKitModel
import StudyReport

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Lint a protocol's study{} manifest the way App Review and SensorKit's runtime checks would."
    )

    @Argument(help: "A protocol folder or .lua file.")
    var path: String

    @Flag(help: "Treat a missing privacy policy URL as an error.")
    var strict = false

    func run() throws {
        let script = try resolveScript(path)
        var configuration = StudyConfiguration()
        configuration.stdlibFolder = stdlibOverride()
        let check = try Study(.file(script, moduleDirectories: moduleDirectories(of: script)), configuration: configuration)
            .check(strictPrivacyPolicy: strict)
        if let failure = check.topLevelError {
            printError("\(script): the protocol's top level failed, so the check may be incomplete:\n" + failure)
        }
        for d in check.diagnostics { print(d.description) }
        guard check.declaresStudy else { throw ExitCode(1) }
        print(check.summary)
        if check.errorCount > 0 { throw ExitCode(1) }
    }
}

struct SensorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensors",
        abstract: "The SensorKit sensor catalogue: names, identifiers, entitlements, devices, cadence, fields."
    )

    @Flag(help: "Print JSON.")
    var json = false

    @Argument(help: "Show one sensor's fields in full.")
    var sensor: String?

    func run() throws {
        if let name = sensor {
            guard let s = Sensor(name: name) else {
                throw ValidationError("unknown sensor '\(name)'\(SensorCatalogue.sensorHint(for: name))")
            }
            let info = s.info
            print("\(s.rawValue)  (\(s.identifier))")
            print("  entitlement  \(info.entitlement)")
            print("  usage key    \(info.usageKey)")
            print("  devices      \(info.deviceKinds.map(\.rawValue).joined(separator: ", "))   shape \(info.shape.rawValue)   since iOS \(info.firstOS)")
            print("  cadence      \(info.cadence.summary)")
            if let window = info.window { print("  window       \(window.text(rowTime: info.rowTimeField?.name))  (windowStart, windowEnd)") }
            print("  fields:")
            for f in info.fields {
                let unit = f.unit.map { " [\($0)]" } ?? ""
                print("    \(f.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(f.type.kindName)\(unit)\(f.isOptional ? " (optional)" : "")  \(f.summary)")
                if case .structured(let form) = f.type { print("      " + form.text) }
            }
            return
        }
        if json {
            var items: [String] = []
            for s in Sensor.allCases {
                let info = s.info
                let fields = info.fields.map { f in
                    var shape = ""
                    if case .structured(let form) = f.type { shape = ", \"shape\": " + jsonString(form.text) }
                    return "{\"name\": \(jsonString(f.name)), \"type\": \(jsonString(f.type.kindName)), \"unit\": \(f.unit.map(jsonString) ?? "null"), \"optional\": \(f.isOptional)\(shape)}"
                }
                let window = info.window.map { jsonString($0.text(rowTime: info.rowTimeField?.name)) } ?? "null"
                items.append("""
                  {"name": \(jsonString(s.rawValue)), "identifier": \(jsonString(s.identifier)), "entitlement": \(jsonString(info.entitlement)), \
                "usageKey": \(jsonString(info.usageKey)), "devices": [\(info.deviceKinds.map { jsonString($0.rawValue) }.joined(separator: ", "))], \
                "shape": \(jsonString(info.shape.rawValue)), "since": \(jsonString(info.firstOS.description)), \
                "cadence": \(jsonString(info.cadence.summary)), "nominalPeriod": \(info.cadence.nominalPeriod.map { "\($0)" } ?? "null"), "window": \(window), \
                "fields": [\(fields.joined(separator: ", "))]}
                """)
            }
            print("[\n" + items.joined(separator: ",\n") + "\n]")
            return
        }
        print("sensor                   devices       shape   since  cadence")
        for s in Sensor.allCases {
            let info = s.info
            print(s.rawValue.padding(toLength: 24, withPad: " ", startingAt: 0) + " "
                  + info.deviceKinds.map(\.rawValue).joined(separator: ",").padding(toLength: 13, withPad: " ", startingAt: 0) + " "
                  + info.shape.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0) + " "
                  + info.firstOS.description.padding(toLength: 6, withPad: " ", startingAt: 0) + " " + info.cadence.summary)
        }
    }
}

func jsonString(_ s: String) -> String { ReportBook.jsonString(s) }
