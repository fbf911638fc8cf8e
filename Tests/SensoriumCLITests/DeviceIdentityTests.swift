import Foundation
import XCTest

/// A participant's two watches of one model (a watchOS update in the middle of a study) are
/// two devices to a replay's fetch: each `reader:devices()` entry reads its own rows, and a
/// partial device table that matches both is an error, never one read for the other.
extension SensoriumCLITests {
    func testTwoWatchesOfOneModelAreTwoDevicesToAFetch() throws {
        func watch(_ version: String) -> String {
            "\"model=Watch; name=Apple Watch; systemName=watchOS; systemVersion=\(version); productType=Watch7,2\""
        }
        let start = 1_699_401_600   // 2023-11-08 00:00 UTC
        let folder = "tree/users/uO/SensorKit/com.apple.SensorKit.heart.rate"
        try write("\(folder)/A.csv", "timestamp,value,confidence,device\n"
            + (0..<288).map { "\(start + $0 * 600),60,3,\(watch("10.4"))\n" }.joined())
        try write("\(folder)/B.csv", "timestamp,value,confidence,device\n"
            + (0..<144).map { "\(start + 2 * 86_400 + $0 * 600),80,3,\(watch("10.5"))\n" }.joined())
        let store = self.folder.appendingPathComponent("watches.sqlite").path
        let imported = try sensorium(["import", "--format", "mhc", self.folder.appendingPathComponent("tree").path, "--into", store])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        // The summary counts them apart too.
        assertContains(imported.stdout, "uO  heartRate watch Watch7,2 watchOS 10.4  288 read, 288 stored")
        assertContains(imported.stdout, "uO  heartRate watch Watch7,2 watchOS 10.5  144 read, 144 stored")

        let each = try sensorium(["repl", "--recording", store], input: """
            sensorkit.requestAuthorization({ "heartRate" }, function() end)
            :advance to day 5 09:00
            hr = sensorkit.reader("heartRate")
            for _, d in ipairs(hr:devices()) do local s = hr:samples { device = d, from = time.studyStart() - 1, to = time.now() }; print(d.systemVersion, s:count(), s:mean("heartRate")) end
            print(pcall(hr.samples, hr, { device = { kind = "watch" }, from = time.studyStart(), to = time.now() }))
            """ + "\n")
        XCTAssertEqual(each.status, 0, each.stderr)
        let lines = each.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(lines.dropFirst().prefix(2)), ["10.4\t288\t60.0", "10.5\t144\t80.0"], "after the :advance line")
        assertContains(lines.last ?? "", "false")
        assertContains(lines.last ?? "", #"request.device { kind = "watch" } matches 2 devices of this participant (Watch Watch7,2 watchOS 10.4 'Apple Watch'; Watch Watch7,2 watchOS 10.5 'Apple Watch'): pass one of reader:devices() itself"#)
    }
}
