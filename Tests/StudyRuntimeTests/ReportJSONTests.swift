import XCTest
@testable import StudyRuntime
@testable import StudyReport

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

/// Report files keep every digit; JSON stays standard; table names never share a file.
final class ReportExactOutputTests: XCTestCase {
    func book(_ row: [String: ReportValue], formats: [String: String] = [:]) throws -> (ReportBook, ReportBook.Table) {
        let book = ReportBook()
        try book.declare("t", columns: nil, formats: formats)
        try book.add("t", row: row)
        return (book, book.table("t")!)
    }

    func testFilesKeepFullPrecisionAndTerminalRounds() throws {
        let values: [Double] = [Double.pi * 1e-5, 0x1p53, 0.1, 1.0 / 3.0, -2.5e-300, 1e19, 123456.789]
        for v in values {
            let (b, t) = try book(["x": .double(v)])
            let csv = b.renderCSV(t).split(separator: "\n")[1]
            XCTAssertEqual(Double(csv), v, "CSV \(csv) for \(v)")
            let json = b.renderJSON(t)
            XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(json.utf8)), json)
            let number = json.components(separatedBy: "\"x\": ")[1].prefix { $0 != "}" }
            XCTAssertEqual(Double(String(number)), v, "JSON \(number) for \(v)")
        }
        XCTAssertEqual(ReportBook.shortest(0x1p53), "9007199254740992")
        XCTAssertEqual(ReportBook.shortest(-0.0), "0")
        XCTAssertEqual(ReportBook.format(.double(Double.pi * 1e-5)), "3.14e-05")   // the terminal no longer shows 0
        XCTAssertEqual(ReportBook.format(.double(2.0 / 3.0)), "0.667")
    }

    func testNonFiniteNumbersAreNullInJSONAndTextInCSV() throws {
        let (b, t) = try book(["a": .double(.nan), "b": .double(.infinity), "c": .double(-.infinity)], formats: ["b": "%.1f"])
        XCTAssertEqual(b.renderCSV(t), "a,b,c\nnan,inf,-inf\n")
        let json = b.renderJSON(t)
        XCTAssertTrue(json.contains(#""a": null, "b": null, "c": null"#), json)
        XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(json.utf8)))
    }

    func testIntegerFormatsBeyondInt64DoNotTrap() throws {
        let (b, t) = try book(["x": .double(1e19), "y": .double(-1e20), "z": .double(3.6)], formats: ["x": "%d", "y": "%5i", "z": "%+4d"])
        XCTAssertEqual(b.renderCSV(t).split(separator: "\n")[1], "10000000000000000000,-100000000000000000000,  +4")
        let json = try JSONSerialization.jsonObject(with: Data(b.renderJSON(t).utf8)) as! [[String: Any]]
        XCTAssertEqual((json[0]["z"] as! NSNumber).intValue, 4)
    }

    func testFormatsAreBounded() {
        XCTAssertTrue(ReportBook.isNumberFormat("%.1f"))
        XCTAssertTrue(ReportBook.isNumberFormat("%99.99e h"))
        for bad in ["%999999999d", "%.100f", "%s", "%d%d", "%n", String(repeating: "x", count: 200) + "%d"] {
            XCTAssertFalse(ReportBook.isNumberFormat(bad), bad)
        }
    }

    func testTableNamesThatShareAFileAreAnError() throws {
        let b = ReportBook()
        try b.add("a b", row: ["x": .int(1)])
        XCTAssertThrowsError(try b.add("a_b", row: ["x": .int(2)])) { XCTAssertTrue("\($0)".contains("a_b.csv"), "\($0)") }
        XCTAssertThrowsError(try b.declare("A B", columns: nil, formats: [:]))
        XCTAssertThrowsError(try b.add("", row: [:]))
        XCTAssertThrowsError(try b.add(String(repeating: "n", count: 201), row: [:]))
        try b.add("a b", row: ["x": .int(3)])
        XCTAssertEqual(b.tables.count, 1)
        XCTAssertEqual(b.tables[0].rows.count, 2)
    }

    /// A huge column name prints in linear time (it was quadratic through a trailing-space regex).
    func testLongColumnNamePrints() throws {
        let name = String(repeating: "c", count: 100_000)
        let (b, _) = try book([name: .int(1), "z": .text("")])
        let text = b.renderText()
        XCTAssertTrue(text.contains(name))
    }
}

/// One rule for whole numbers on every report path (docs/lua-api.md "report.row"): a
/// float holding a whole number prints as the integer does — terminal table, CSV, JSON,
/// the HTML page and a SampleSet's display — while Lua's own `print` stays stock.
final class WholeNumberOutputTests: XCTestCase {
    func testFloatsAndIntegersWithTheSameWholeValuePrintAlikeOnEveryPath() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        report.table("n", { columns = { "kind", "hour", "big", "zero", "far", "half" } })
        report.row("n", { kind = "float", hour = 3600.0, big = 2.0^53, zero = -0.0, far = 1e19, half = 0.5 })
        report.row("n", { kind = "integer", hour = 3600, big = 1 << 53, zero = 0, far = 1e19, half = 0.5 })
        print(3600.0, 3600, math.type(2.0^53))
        """#, days: 1)
        XCTAssertEqual(o.lines, ["3600.0\t3600\tfloat"])              // print stays stock Lua
        let book = o.runner.report
        let table = try XCTUnwrap(book.table("n"))
        XCTAssertEqual(book.renderText().split(separator: "\n").map(String.init).filter { $0.hasPrefix("P1") }, [
            "P1           float    3600  9007199254740992     0  1e+19   0.5",
            "P1           integer  3600  9007199254740992     0  1e+19   0.5",
        ])
        XCTAssertEqual(book.renderCSV(table), """
            participant,kind,hour,big,zero,far,half
            P1,float,3600,9007199254740992,0,1e+19,0.5
            P1,integer,3600,9007199254740992,0,1e+19,0.5

            """)
        let json = book.renderJSON(table)
        XCTAssertTrue(json.contains(#""kind": "float", "hour": 3600, "big": 9007199254740992, "zero": 0, "far": 1e+19"#), json)
        XCTAssertTrue(json.contains(#""kind": "integer", "hour": 3600, "big": 9007199254740992, "zero": 0, "far": 1e+19"#), json)
        let html = o.runner.htmlReport()
        XCTAssertEqual(html.components(separatedBy: "<td class=\"n\">3600</td>").count - 1, 2, "both rows' hour cells")
        XCTAssertFalse(html.contains("3600.0") || html.contains("9.0072e+15"))
        // A SampleSet shows its rows' numbers by the same rule.
        XCTAssertEqual(ReportBook.format(.double(3600)), ReportBook.format(.int(3600)))
        XCTAssertEqual(ReportBook.format(.double(-0x1p62), exact: true), String(Int64(-1) << 62))
    }
}
