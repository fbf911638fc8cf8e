import Foundation
import XCTest

/// docs/embedding.md lists the `Sensorium` module's public surface: every public type has
/// its `### \`Type\`` entry and every public member of it is named in that entry's code,
/// and every entry names a public type (internal declarations, such as `StudySession`, are
/// not part of the surface and must not be listed). The module declares no SPI: the command
/// line uses the public surface.
final class SurfaceDocumentationTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Public types and, per type, the names of their public members, read from the
    /// module's sources (top-level declarations start a line; members are indented).
    func publicSurface() throws -> [String: Set<String>] {
        let folder = Self.root.appendingPathComponent("Sources/Sensorium")
        var surface: [String: Set<String>] = [:]
        let declaration = try NSRegularExpression(pattern: #"^\s*public (?:static |mutating |nonisolated )*(?:struct|enum|final class|class|protocol|func|var|let|case|typealias) `?([A-Za-z_][A-Za-z0-9_]*)"#)
        let topLevel = try NSRegularExpression(pattern: #"^(?:public |@_spi\([A-Za-z]+\) )*(?:struct|enum|final class|class|protocol|extension) ([A-Za-z_][A-Za-z0-9_]*)"#)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).filter({ $0.hasSuffix(".swift") }).sorted() {
            let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
            var owner: String? = nil
            var spi = false, spiAttribute = false
            for line in lines {
                let range = NSRange(line.startIndex..., in: line)
                if line.hasPrefix("@_spi("), !line.contains(" import ") { spiAttribute = true; continue }
                if let m = topLevel.firstMatch(in: line, range: range), let name = Range(m.range(at: 1), in: line) {
                    owner = String(line[name])
                    spi = spiAttribute || line.hasPrefix("@_spi(")
                    spiAttribute = false
                    if line.hasPrefix("public "), !spi, !line.contains("extension ") { surface[owner!, default: []] = surface[owner!] ?? [] }
                    continue
                }
                if !line.hasPrefix(" ") && !line.hasPrefix("}") && !line.isEmpty && !line.hasPrefix("//") && !line.hasPrefix("///") { owner = nil }
                guard let owner, !spi, line.hasPrefix(" "), let m = declaration.firstMatch(in: line, range: range),
                      let name = Range(m.range(at: 1), in: line) else { continue }
                surface[owner, default: []].insert(String(line[name]))
            }
        }
        return surface
    }

    /// The entries of docs/embedding.md's surface section: type → the text of its entry.
    func documentedEntries() throws -> [String: String] {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/embedding.md"), encoding: .utf8)
        var entries: [String: String] = [:]
        for part in text.components(separatedBy: "\n### `").dropFirst() {
            guard let close = part.firstIndex(of: "`") else { continue }
            entries[String(part[..<close])] = String(part[close...])
        }
        return entries
    }

    /// No declaration of the module is behind SPI (`@_spi(…)`): the command line has no
    /// private path around the public surface.
    func testTheModuleDeclaresNoSPI() throws {
        let folder = Self.root.appendingPathComponent("Sources/Sensorium")
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).filter({ $0.hasSuffix(".swift") }) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let spi = text.components(separatedBy: "\n").filter { $0.contains("@_spi(") && !$0.contains(" import ") }
            XCTAssertEqual(spi, [], "Sources/Sensorium/\(file) declares SPI")
        }
    }

    func testEveryPublicDeclarationIsListedAndEveryEntryExists() throws {
        let surface = try publicSurface()
        let docs = try documentedEntries()
        XCTAssertTrue(surface.keys.contains("Study") && surface.keys.contains("StudyDataSource"), "\(surface.keys.sorted())")
        XCTAssertFalse(surface.keys.contains("StudySession"), "the session is internal: the command line uses the public surface")
        XCTAssertEqual(Set(docs.keys).subtracting(surface.keys), [], "entries in docs/embedding.md that name no public type")
        for (type, members) in surface {
            guard let entry = docs[type] else { XCTFail("docs/embedding.md has no entry for public type \(type)"); continue }
            for member in members where !entry.contains(member) {
                XCTFail("docs/embedding.md's entry for \(type) does not list its public member \(member)")
            }
        }
    }
}
