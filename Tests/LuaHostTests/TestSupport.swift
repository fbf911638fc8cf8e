import Foundation
@_spi(Bindings) import LuaHost
import XCTest

/// Counts live instances of `Tracked` (and how many were ever made / destroyed).
final class LiveCounter {
    var live = 0
    var made = 0
    var destroyed = 0
}

/// An object whose life the tests watch: init and deinit update a counter.
final class Tracked {
    let counter: LiveCounter
    let name: String

    init(_ counter: LiveCounter, name: String = "") {
        self.counter = counter
        self.name = name
        counter.live += 1
        counter.made += 1
    }

    deinit {
        counter.live -= 1
        counter.destroyed += 1
    }
}

/// Collects what scripts `print`.
final class OutputCapture {
    var text = ""
}

/// A sandboxed state whose `print` output is captured.
func makeState(limits: LuaLimits = LuaLimits(), sandbox: SandboxOptions? = SandboxOptions(),
               output: OutputCapture? = nil) throws -> LuaState {
    let state = try LuaState(limits: limits, sandbox: sandbox)
    let capture = output ?? OutputCapture()
    state.output = { capture.text += $0 }
    return state
}

/// Runs `body` and returns the `LuaError` it throws; records a failure when it does not throw one.
func expectLuaError(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> LuaError? {
    do {
        try body()
        XCTFail("expected a LuaError, but the code ran without error", file: file, line: line)
    } catch let error as LuaError {
        return error
    } catch {
        XCTFail("expected a LuaError, got \(type(of: error)): \(error)", file: file, line: line)
    }
    return nil
}

/// Runs `source` and returns the error message it raises (failing when it raises none).
func errorMessage(_ state: LuaState, _ source: String, chunkName: String = "=chunk",
                  file: StaticString = #filePath, line: UInt = #line) -> String {
    expectLuaError({ try state.execute(source, chunkName: chunkName) }, file: file, line: line)?.message ?? ""
}

func XCTAssertContains(_ text: String, _ part: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertTrue(text.contains(part), "expected \(String(reflecting: text)) to contain \(String(reflecting: part))",
                  file: file, line: line)
}

/// A fresh temporary folder, removed by the caller's `addTeardownBlock`.
func makeTemporaryFolder(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("LuaHostTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

func writeFile(_ url: URL, _ text: String) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: url)
}
