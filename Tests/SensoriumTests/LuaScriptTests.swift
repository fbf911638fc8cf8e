import Foundation
import Sensorium
import XCTest

/// `LuaScript`: a plain script through the embedding API, as `sensorium run` runs one.
final class LuaScriptTests: XCTestCase {
    func write(_ text: String, _ name: String = "script.lua") throws -> (file: String, dir: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("luascript-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return (file.path, dir.path)
    }

    /// Printed bytes arrive unchanged and in order, arguments reach `...`, the stdlib and the
    /// script's own modules load, and report tables come back as text.
    func testRunsAPlainScriptWithItsModulesArgumentsAndReport() throws {
        let (file, dir) = try write("""
        local helper = require "helper"
        local stats = require "stats"
        local a, b = ...
        print("bytes:\\0\\255")
        print(a, b, helper.twice(21), stats.mean({ 1, 2, 3 }))
        local report = require "report"
        report.table("t", { columns = { "k", "v" } }):row { k = "x", v = 1.5 }
        """)
        try "return { twice = function(x) return 2 * x end }".write(toFile: dir + "/helper.lua", atomically: true, encoding: .utf8)
        var printed: [UInt8] = []
        let reported = try LuaScript(file: file, moduleDirectories: [dir]).run(arguments: ["one", "two"]) { printed += $0 }
        XCTAssertEqual(printed, Array("bytes:".utf8) + [0, 255, 10] + Array("one\ttwo\t42\t2.0\n".utf8))
        XCTAssertTrue(reported.contains("1.5"), reported)
        XCTAssertTrue(reported.contains("t"), reported)
    }

    /// The seed makes `math.random` repeat; another seed gives another sequence.
    func testSeedIsTheConfigurations() throws {
        let (file, _) = try write("print(math.random(1, 1000000), math.random(1, 1000000))")
        func run(_ seed: Int64?) throws -> String {
            var configuration = StudyConfiguration()
            configuration.seed = seed
            var out: [UInt8] = []
            _ = try LuaScript(file: file).run(configuration: configuration) { out += $0 }
            return String(decoding: out, as: UTF8.self)
        }
        XCTAssertEqual(try run(7), try run(7))
        XCTAssertNotEqual(try run(7), try run(8))
        XCTAssertEqual(try run(nil), try run(1), "no seed is seed 1, as on the command line")
    }

    /// A failing script throws `StudyError` naming the file and line; a limit stops a loop.
    func testErrorsAndLimitsAreStudyErrors() throws {
        let (file, _) = try write("local x = 1\nerror('broken on purpose')\n")
        XCTAssertThrowsError(try LuaScript(file: file).run { _ in }) { error in
            let message = (error as? StudyError)?.message ?? ""
            XCTAssertTrue(message.contains("script.lua:2: broken on purpose"), message)
        }
        let (loop, _) = try write("while true do end", "loop.lua")
        var configuration = StudyConfiguration()
        configuration.instructionBudget = 100_000
        XCTAssertThrowsError(try LuaScript(file: loop).run(configuration: configuration) { _ in }) { error in
            XCTAssertTrue(error is StudyError)
            XCTAssertTrue("\(error)".contains("stopped"), "\(error)")
        }
    }
}
