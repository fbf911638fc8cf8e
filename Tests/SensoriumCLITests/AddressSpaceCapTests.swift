import Foundation
import XCTest

/// Runs under an address-space cap (`ulimit -v`, as HPC sites and job scripts set it):
/// each Lua state reserves its `--memory-limit` of address space, so whether a run fits
/// follows from the cap, `--jobs` and `--memory-limit` alone. The same flags give the same
/// outcome every time (before, 2 to 3 of 10 runs under 4 GiB stopped with "cannot reserve
/// address space for the Lua heap", depending on thread timing), and flags that cannot fit
/// are refused before any work, naming the flags to change.
final class AddressSpaceCapTests: XCTestCase {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `sensorium ARGS` under `ulimit -v capKiB`: exit status, stdout, stderr.
    func capped(_ capKiB: Int, _ arguments: [String]) throws -> (Int32, String, String) {
        guard let sensorium = SensoriumCLITests.executable else { XCTFail("sensorium executable not found"); throw CocoaError(.fileNoSuchFile) }
        let quoted = ([sensorium.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let outcome = try ChildProcess.run("/bin/sh", ["-c", "ulimit -v \(capKiB) && exec \(quoted)"],
                                           in: AddressSpaceCapTests.repoRoot, timeout: 300)
        return (outcome.status, String(decoding: outcome.stdout, as: UTF8.self), String(decoding: outcome.stderr, as: UTF8.self))
    }

    func testSameOutcomeEveryRunUnderACap() throws {
        let cap = 1_572_864   // 1.5 GiB
        let run = ["run", "protocols/heart_rate_walk_rest", "--days", "2", "--quiet"]
        var outputs: Set<String> = []
        for jobs in [1, 2] {
            for i in 0..<20 {
                let (status, out, err) = try capped(cap, run + ["--jobs", String(jobs)])
                XCTAssertEqual(status, 0, "--jobs \(jobs), run \(i + 1) of 20: \(err)")
                XCTAssertFalse(err.contains("cannot reserve"), err)
                outputs.insert(out)
            }
        }
        XCTAssertEqual(outputs.count, 1, "every run, whatever --jobs, prints the same bytes")
        XCTAssertFalse(outputs.first?.isEmpty ?? true)

        // Four participants at once cannot fit 256 MiB heaps each under 1.5 GiB: refused
        // before any work (nothing on stdout), the same way every time, naming the flags.
        for _ in 0..<20 {
            let (status, out, err) = try capped(cap, run + ["--jobs", "4"])
            XCTAssertEqual(status, 1)
            XCTAssertEqual(out, "")
            XCTAssertTrue(err.contains("the address-space cap (ulimit -v 1572864) is 1536 MiB"), err)
            XCTAssertTrue(err.contains("lower --jobs, lower --memory-limit, or raise the cap"), err)
        }
        // The same four at once with smaller heaps fit.
        let (status, out, err) = try capped(cap, run + ["--jobs", "4", "--memory-limit", "64"])
        XCTAssertEqual(status, 0, err)
        XCTAssertEqual(out, outputs.first)
    }

    func testDefaultJobsFitTheCap() throws {
        // Without --jobs, as many participants run at once as fit (here at most one or two):
        // the run goes through rather than failing for want of address space.
        let (status, out, err) = try capped(786_432, ["run", "protocols/heart_rate_walk_rest", "--days", "2", "--quiet"])
        XCTAssertEqual(status, 0, err)
        XCTAssertTrue(out.contains("Omar"), out)
        // A single state that cannot fit is refused, naming --memory-limit.
        let (refused, _, message) = try capped(786_432, ["run", "protocols/heart_rate_walk_rest", "--days", "2", "--quiet", "--memory-limit", "1024"])
        XCTAssertEqual(refused, 1)
        XCTAssertTrue(message.contains("lower --memory-limit, or raise the cap"), message)
        XCTAssertFalse(message.contains("lower --jobs"), message)
    }
}
