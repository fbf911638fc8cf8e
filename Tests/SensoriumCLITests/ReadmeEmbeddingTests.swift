import Foundation
import XCTest

/// The README's "Embedding" section is the example program: its Swift block is
/// `Examples/Embedding/Sources/Embedding/main.swift` and its output block is the
/// example's committed expected output (which `make embedding-example` compares with a run).
extension SensoriumCLITests {
    func testReadmeEmbeddingSectionIsTheExample() throws {
        let example = SensoriumCLITests.repositoryRoot.appendingPathComponent("Examples/Embedding")
        let program = try String(contentsOf: example.appendingPathComponent("Sources/Embedding/main.swift"), encoding: .utf8)
        XCTAssertEqual(try readmeBlock(startingWith: "// A program that embeds Sensorium"), program)
        let output = try String(contentsOf: example.appendingPathComponent("expected-output.txt"), encoding: .utf8)
        XCTAssertEqual(try readmeBlock(startingWith: "== heart_rate_zones"), output)
    }
}
