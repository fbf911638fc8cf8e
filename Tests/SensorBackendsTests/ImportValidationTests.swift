import Foundation
import XCTest
@testable import SensorBackends

/// Values from import files and exports that would leave their folder or hold impossible values.
final class ImportValidationTests: XCTestCase {
    func testExportFolderNamesStayInsideTheExport() {
        XCTAssertEqual(NativeFormat.safeName(".."), "_..")
        XCTAssertEqual(NativeFormat.safeName("."), "_.")
        XCTAssertEqual(NativeFormat.safeName(""), "_")
        XCTAssertEqual(NativeFormat.safeName("a/../b"), "a_.._b")
        XCTAssertEqual(NativeFormat.safeName("Lea"), "Lea")
        for id in ["..", ".", "", "../../etc", "a/b"] {
            XCTAssertFalse(NativeFormat.safeName(id).contains("/"))
            XCTAssertFalse([".", ".."].contains(NativeFormat.safeName(id)))
        }
    }

    func testManifestFilePathsMustStayInsideTheFolder() {
        XCTAssertTrue(NativeFormat.staysInside("P1/phone/heartRate.csv"))
        for bad in ["", "/etc/passwd", "../x.csv", "P1/../../x.csv"] { XCTAssertFalse(NativeFormat.staysInside(bad), bad) }
    }
}
