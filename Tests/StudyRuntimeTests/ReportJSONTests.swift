import XCTest
@testable import StudyRuntime

/// Report tables' JSON strings: quotes, backslashes and control characters escaped,
/// everything else (including non-ASCII) kept as it is.
final class ReportJSONTests: XCTestCase {
    func testJSONStringsAreEscaped() {
        XCTAssertEqual(ReportBook.jsonString("plain"), "\"plain\"")
        XCTAssertEqual(ReportBook.jsonString("say \"hi\"\\now"), #""say \"hi\"\\now""#)
        XCTAssertEqual(ReportBook.jsonString("a\nb\tc\rd\u{1}e"), #""a\nb\tc\rd\u0001e""#)
        XCTAssertEqual(ReportBook.jsonString("Zürich – 23 h"), "\"Zürich – 23 h\"")
        // What it writes, JSONSerialization reads back.
        let text = "[" + ReportBook.jsonString("x\"\\\n\u{1f}ü") + "]"
        let back = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String]
        XCTAssertEqual(back, ["x\"\\\n\u{1f}ü"])
    }
}
