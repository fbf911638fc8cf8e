import Foundation
import XCTest

/// Lua's own `pairs` order is the same in every process: the host's deterministic
/// heap and fixed string-hash seed, not address-space layout, decide it.
extension SensoriumCLITests {
    func testPairsOrderIsTheSameInEveryProcess() throws {
        try write("order.lua", """
            local t = {}
            for i = 1, 200 do
              t["key" .. i] = i
              t[{}] = i
              t[function() return i end] = i
              t[coroutine.create(print)] = i
              t[i + 0.5] = i
            end
            t[print] = 0 t[string.format] = 0 t[math.floor] = 0
            local out = {}
            for k, v in pairs(t) do out[#out + 1] = type(k) .. ":" .. v end
            print(table.concat(out, " "))
            print(string.format("%p %s", {}, {}), tostring(print))
            """)
        let first = try sensorium(["run", "order.lua"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertFalse(first.stdout.contains("0x7f"), "no process address in the output")
        for _ in 0..<2 {
            let again = try sensorium(["run", "order.lua"])
            XCTAssertEqual(again.stdout, first.stdout)
        }
    }
}
