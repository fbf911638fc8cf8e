import Foundation
import XCTest
@_spi(Bindings) @testable import LuaHost
import SensorKitModel
@testable import StudyRuntime
@testable import ApiReference

/// The API description is complete both ways: every name the runtime registers (host
/// classes' methods and properties, globals and their fields, the stdlib modules' exports,
/// the catalogue's sensors and fields) is described with a summary, and every description
/// names something that exists in a fresh participant's state.
final class ApiDescriptionTests: XCTestCase {
    lazy var docs: [DocEntry] = Documentation.parse((try? DocumentationTests.read("docs/lua-api.md")) ?? "")

    /// The stdlib folder and its module names.
    func stdlib() throws -> (dir: String, modules: [String]) {
        let dir = try DocumentationTests.projectFile("stdlib/plot.lua").deletingLastPathComponent().path
        let modules = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".lua") }
            .map { String($0.dropLast(4)) }.sorted()
        return (dir, modules)
    }

    /// A fresh participant's state with the stdlib on its module path.
    func freshRun() throws -> ParticipantRun {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("protocol.lua")
        try "".write(to: path, atomically: true, encoding: .utf8)
        var options = StudyOptions(protocolPath: path.path, scenarioPath: nil, moduleDirectories: [dir.path, try stdlib().dir])
        options.days = 1
        options.participants = 1
        options.seed = 7
        return try XCTUnwrap(try StudyRunner(options: options).prepare { _ in }.first)
    }

    func describe(_ run: ParticipantRun) throws -> ApiDescription {
        try ApiDescription.build(state: run.state, docs: docs, stdlibModules: try stdlib().modules,
                             sensorFields: SampleSet.readableFields(of:))
    }

    func testEveryRegisteredNameIsDescribed() throws {
        XCTAssertFalse(docs.isEmpty, "docs/lua-api.md not found")
        let run = try freshRun()
        let api = try describe(run)
        let names = Set(api.items.map(\.name))
        // Host classes, as the state registered them.
        XCTAssertEqual(Set(api.classes), ["SRSensorReader", "SampleSet", "GroupedSampleSet", "ReportTable"])
        let classMembers = run.state.hostFunctions.filter { name in
            let (owner, member, _) = ApiDescription.split(name)
            return api.classes.contains(owner) && !member.hasPrefix("__")
        }
        XCTAssertTrue(classMembers.contains("SRSensorReader:samples") && classMembers.contains("SampleSet:mean"), "\(classMembers)")
        XCTAssertEqual(classMembers.filter { !names.contains($0) }, [], "class members not described")
        // Globals and the fields of the runtime's global tables.
        for module in ["sensorkit", "schedule", "time", "report", "log"] {
            let fields = run.state.tableKeys(atGlobalPath: [module]).filter { !$0.hasPrefix("_") }
            XCTAssertFalse(fields.isEmpty, module)
            XCTAssertEqual(fields.map { "\(module).\($0)" }.filter { !names.contains($0) }, [], "fields of \(module) not described")
        }
        for global in ["study", "days", "inspect", "print"] { XCTAssertTrue(names.contains(global), global) }
        // The stdlib modules' exports, as require gives them.
        for module in try stdlib().modules {
            XCTAssertTrue(names.contains(module), "stdlib module \(module) not described")
            let exports = try run.state.execute("local t = {} for k in pairs(require(...)) do t[#t + 1] = k end return table.concat(t, ' ')",
                                                arguments: [.string(module)]).first?.stringValue ?? ""
            let missing = exports.split(separator: " ").map { "\(module).\($0)" }.filter { !names.contains($0) }
            XCTAssertEqual(missing, [], "exports of \(module) not described")
        }
        XCTAssertTrue(names.contains("plot.line") && names.contains("summary.daily") && names.contains("expect.near"))
        // Described: every item has a one-line summary, and every host function's parameters come from somewhere.
        XCTAssertEqual(api.items.filter { $0.summary.isEmpty }.map(\.name), [], "items without a summary")
        XCTAssertEqual(api.item("sensorkit.reader")?.parameters, ["name"])
        XCTAssertEqual(api.item("sensorkit.reader")?.returns, "SRSensorReader")
        XCTAssertEqual(api.item("SRSensorReader:samples")?.parameters, ["request"])
        XCTAssertEqual(api.item("SRSensorReader:samples")?.returns, "SampleSet")
        XCTAssertEqual(api.item("plot.line")?.parameters, ["name", "spec"])            // read from the Lua function
        XCTAssertEqual(api.item("plot.line")?.summary, "Values over time joined by lines: x = times or days, y = numbers.")
        XCTAssertEqual(api.item("plot.line")?.stdlibModule, "plot")
        XCTAssertEqual(api.item("SampleSet:mean")?.parameters.first, "field")
        // Sensors and fields from the catalogue, with the virtual fields a set reads.
        XCTAssertEqual(api.sensors.map(\.name), Sensor.allCases.map(\.rawValue))
        let accel = try XCTUnwrap(api.sensors.first { $0.name == "accelerometer" })
        XCTAssertTrue(accel.fields.contains("x") && accel.fields.contains("magnitude") && accel.fields.contains("time"), "\(accel.fields)")
    }

    func testEveryDescriptionNamesSomethingThatExists() throws {
        let run = try freshRun()
        let api = try describe(run)
        let registered = Set(run.state.hostFunctions)
        for item in api.items {
            switch item.kind {
            case .method, .property:
                XCTAssertTrue(registered.contains(item.name), "\(item.name) is described but not registered")
            case .module, .function, .value:
                let exists: Bool
                if let module = item.stdlibModule {
                    let probe = item.kind == .module ? "return require(...) ~= nil"
                        : "return require(...)[\"\(item.member)\"] ~= nil"
                    exists = try run.state.execute(probe, arguments: [.string(module)]).first?.boolValue == true
                } else {
                    let path = item.name.split(separator: ".").map(String.init)
                    exists = run.state.tableKeys(atGlobalPath: Array(path.dropLast())).contains(path.last!)
                }
                XCTAssertTrue(exists, "\(item.name) is described but does not exist")
            }
            if let doc = item.documentation { XCTAssertTrue(docs.contains { $0.name == doc }, "\(item.name) cites missing entry \(doc)") }
        }
        // A described name the runtime lacks is caught: the probe is not vacuous.
        XCTAssertFalse(run.state.tableKeys(atGlobalPath: ["sensorkit"]).contains("readr"))
    }

    /// The reference documents the stdlib the description reads: each module has a
    /// `### module` entry that names every export as `module.name`.
    func testTheReferenceNamesEveryStdlibExport() throws {
        let run = try freshRun()
        let api = try describe(run)
        for module in try stdlib().modules {
            let entry = try XCTUnwrap(docs.last { $0.name == module }, "no `### \(module)` entry in docs/lua-api.md")
            let unnamed = api.items.filter { $0.stdlibModule == module && $0.kind != .module }
                .filter { item in !entry.text.contains("`\(item.name)") && !docs.contains { $0.name == item.name } }
                .map(\.name)
            XCTAssertEqual(unnamed, [], "`### \(module)` does not name these exports")
        }
    }

    /// An undescribed global (one the runtime would add without documenting it) shows up
    /// without a summary, so the completeness test above would fail.
    func testAnUndocumentedGlobalHasNoSummary() throws {
        let run = try freshRun()
        _ = try run.state.execute("undocumentedThing = function() end")
        let api = try describe(run)
        XCTAssertEqual(api.item("undocumentedThing")?.summary, "")
    }

    func testHelpCoversStdlibExports() throws {
        let run = try freshRun()
        let api = try describe(run)
        let entries = api.helpEntries(docs: docs)
        let help = Documentation.help("plot.line", in: entries)
        XCTAssertTrue(help.hasPrefix("plot.line"), help)
        XCTAssertTrue(help.contains("plot.line(name, spec)") && help.contains("Values over time joined by lines"), help)
        XCTAssertTrue(Documentation.help("plot", in: entries).contains("plot.actogram"))
        XCTAssertTrue(Documentation.index(entries).contains("plot.hourByDay"))
    }

    // MARK: Completion

    func complete(_ line: String, _ api: ApiDescription, _ run: ParticipantRun) -> [String] {
        ApiCompletion.complete(line, description: api, state: run.state).candidates
    }

    func testCompletion() throws {
        let run = try freshRun()
        let api = try describe(run)
        XCTAssertEqual(complete("sensorkit.re", api, run), ["sensorkit.reader", "sensorkit.requestAuthorization"])
        XCTAssertTrue(complete("sens", api, run).contains("sensorkit"))
        XCTAssertEqual(complete("x = sensorkit.reader \"ambientL", api, run), ["ambientLightSensor"])
        XCTAssertEqual(complete("sensorkit.reader(\"acc", api, run), ["accelerometer"])
        XCTAssertEqual(complete("sensorkit.requestAuthorization({ \"onW", api, run), ["onWristState"])
        _ = try run.state.execute("light = sensorkit.reader 'ambientLightSensor'")
        XCTAssertEqual(complete("light:sam", api, run), ["light:samples"])
        XCTAssertEqual(complete("light:start", api, run), ["light:startRecording"])
        XCTAssertTrue(complete("light.", api, run).contains("light.authorizationStatus"))
        XCTAssertEqual(complete("set:mean(\"lu", api, run), ["lux"])
        XCTAssertEqual(complete("sensorkit.reader 'accelerometer':samples{}:mean(\"mag", api, run), ["magnitude"])
        XCTAssertEqual(complete("plot.l", api, run), ["plot.line"])
        XCTAssertEqual(complete("print(\"re", api, run), [])      // an ordinary string: no names
    }
}

/// `sensorium luals`' definition files: valid Lua, LuaLS's annotation grammar, and exactly
/// the API description (every item defined, every definition an item; sensor and field
/// names as string-literal types).
extension ApiDescriptionTests {
    func definitions() throws -> (ApiDescription, [(path: String, text: String)]) {
        let run = try freshRun()
        let api = try describe(run)
        return (api, LuaLSDefinitions.files(api, globals: run.state.tableKeys(atGlobalPath: [])))
    }

    func testDefinitionFilesParseWithLuac() throws {
        let luac = "/usr/bin/luac5.4"
        guard FileManager.default.isExecutableFile(atPath: luac) else { throw XCTSkip("luac5.4 is not installed (make deps installs lua5.4)") }
        let (_, files) = try definitions()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("luals-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        for file in files where file.path.hasSuffix(".lua") {
            let url = dir.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try file.text.write(to: url, atomically: true, encoding: .utf8)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: luac)
            p.arguments = ["-p", url.path]
            let err = Pipe()
            p.standardError = err
            try p.run()
            p.waitUntilExit()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(p.terminationStatus, 0, "\(file.path) does not parse: \(message)")
        }
        // A broken file is caught (the check is not vacuous).
        let bad = dir.appendingPathComponent("bad.lua")
        try "function f( end".write(to: bad, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: luac)
        p.arguments = ["-p", bad.path]
        p.standardError = Pipe()
        try p.run()
        p.waitUntilExit()
        XCTAssertNotEqual(p.terminationStatus, 0)
    }

    /// Every `---` line is one of LuaLS's annotations, written as its grammar says.
    func testDefinitionFilesFollowTheAnnotationGrammar() throws {
        let (_, files) = try definitions()
        let name = #"[A-Za-z_][\w.]*"#
        let type = #"[A-Za-z_][\w.]*(\[\])?"#
        let forms = [
            #"^---@meta \#(name)$"#, #"^---@class \#(name)( : \#(name))?$"#, #"^---@field \#(name) \#(type)( .*)?$"#,
            #"^---@param (\#(name)|\.\.\.) \#(type)$"#, #"^---@return \#(type)$"#, #"^---@type \#(type)$"#,
            #"^---@alias \#(name)$"#, #"^---\| "[\w]+"( # .*)?$"#, #"^--- \S.*$"#,
        ].map { try! NSRegularExpression(pattern: $0) }
        for file in files where file.path.hasSuffix(".lua") {
            XCTAssertTrue(file.text.hasPrefix("---@meta "), "\(file.path) is not a ---@meta file")
            for line in file.text.split(separator: "\n").map(String.init) where line.hasPrefix("---") {
                let ok = forms.contains { $0.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil }
                XCTAssertTrue(ok, "\(file.path): not an annotation LuaLS reads: \(line)")
            }
        }
        let luarc = try XCTUnwrap(files.first { $0.path == ".luarc.json" })
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(luarc.text.utf8)) as? [String: Any])
        XCTAssertEqual(json["runtime.version"] as? String, "Lua 5.4")
        XCTAssertEqual(json["workspace.library"] as? [String], [LuaLSDefinitions.libraryFolder])
        let globals = try XCTUnwrap(json["diagnostics.globals"] as? [String])
        XCTAssertTrue(globals.contains("sensorkit") && globals.contains("study") && !globals.contains("io"), "\(globals)")
        XCTAssertEqual((json["runtime.builtin"] as? [String: String])?["io"], "disable")
    }

    /// The names the files define, as description names: `function A:b(`, `function a.b(`,
    /// `a.b = nil`, `---@field b` under `---@class A`, a module's `a = {}`; in a stdlib file
    /// `M.b` is `module.b`.
    func definedNames(_ files: [(path: String, text: String)]) -> Set<String> {
        var names = Set<String>()
        for file in files where file.path.hasSuffix(".lua") {
            let stem = URL(fileURLWithPath: file.path).deletingPathExtension().lastPathComponent
            let isHost = stem == "sensorium"
            if !isHost { names.insert(stem) }
            var currentClass: String?
            for line in file.text.split(separator: "\n").map(String.init) {
                func qualified(_ n: String) -> String { isHost ? n : stem + n.dropFirst(1) }
                if line.hasPrefix("---@class ") { currentClass = String(line.dropFirst(10).split(separator: " ").first!) }
                if line.hasPrefix("---@field "), let c = currentClass {
                    names.insert(c + "." + line.dropFirst(10).split(separator: " ").first!)
                }
                if line.hasPrefix("function ") {
                    names.insert(qualified(String(line.dropFirst(9).prefix { $0 != "(" })))
                } else if line.hasSuffix(" = nil") {
                    names.insert(qualified(String(line.dropLast(6))))
                } else if isHost, line.hasSuffix(" = {}"), !line.hasPrefix("local ") {
                    names.insert(String(line.dropLast(5)))
                }
            }
        }
        return names
    }

    func testDefinitionFilesCoverTheDescriptionExactly() throws {
        let (api, files) = try definitions()
        let defined = definedNames(files)
        // Lua's own tables keep the server's definitions: only their described functions are written.
        let described = Set(api.items.filter { !($0.kind == .module && ApiDescription.luaStandardGlobals.contains($0.name)) }.map(\.name))
        XCTAssertEqual(described.subtracting(defined).sorted(), [], "described but not defined")
        XCTAssertEqual(defined.subtracting(described).sorted(), [], "defined but not described")
        XCTAssertTrue(defined.contains("SRSensorReader:samples") && defined.contains("plot.line") && defined.contains("SRSensorReader.sensor"))

        let host = try XCTUnwrap(files.first { $0.path.hasSuffix("/sensorium.lua") }).text
        func literals(of alias: String) -> [String] {
            let block = host.components(separatedBy: "---@alias \(alias)\n")[1].components(separatedBy: "\n\n")[0]
            return block.split(separator: "\n").compactMap { $0.split(separator: "\"").dropFirst().first.map(String.init) }
        }
        XCTAssertEqual(literals(of: "SensorName"), api.sensors.map(\.name))
        XCTAssertEqual(literals(of: "FieldName"), api.allFieldNames)
        XCTAssertFalse(literals(of: "SensorName").contains("ambientLightSenor"))
        // Sensor-name parameters are typed by the alias, so a misspelt sensor is flagged.
        XCTAssertTrue(host.contains("---@param name SensorName\n---@return SRSensorReader\nfunction sensorkit.reader(name) end"), host)
        XCTAssertTrue(host.contains("---@param sensors SensorName[]"))
        XCTAssertTrue(host.contains("---@param field FieldName\nfunction SampleSet:mean(field) end"), host)
    }
}
