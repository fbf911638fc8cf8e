import Foundation
import XCTest
@testable import StudyRuntime

/// Every host function, method, metamethod and property a protocol can reach (the
/// state's registry, `LuaState.hostFunctions`; metamethods are called directly, through
/// `LuaState.metamethod(named:)`) driven with hostile arguments: each call ends in a Lua
/// error or a result, never a signal or a Swift trap, and none runs unbounded
/// (the sweep runs under a 30 s time limit, which stops Lua code only: a host function
/// that took seconds on a long argument, as "did you mean" over a 64 KiB sensor name
/// did, makes the run overrun it and fail; the sweep itself takes about 5 s).
final class HostileArgumentsTests: XCTestCase {
    static let sweep = #"""
    study {
      id = "hostile", title = "Hostile arguments", usage = "Testing.", privacy_policy = "https://example.org/privacy",
      entitlements = { "ambient-light-sensor" },
      sensors = { ambientLightSensor = { detail = "Used for testing.", required = true } },
    }
    local registry = __test.hostFunctions()
    local hostile = { n = 16, nil, 0/0, math.huge, -math.huge, math.maxinteger, math.mininteger, 2^63, -2^63, 1e308, -1,
      string.rep("x", 1 << 16), "\255\254\0caf\233", {}, { from = 0/0, to = math.huge, n = -1 },
      setmetatable({}, { __index = function() error("index") end, __newindex = function() error("newindex") end,
        __len = function() return math.maxinteger end, __tostring = function() error("tostring") end,
        __eq = function() error("eq") end, __call = function() error("call") end, __pairs = function() error("pairs") end }),
      function() end }
    local base = { "ambientLightSensor", 1, {}, time.studyStart() }

    -- Calls f with every hostile value in every position after `fixed` arguments.
    local function drive(f, ...)
      local fixed, calls = table.pack(...), 0
      for i = 1, hostile.n do
        local h = hostile[i]
        for _, args in ipairs { {h}, {h, h}, {h, h, h}, {base[1], h}, {base[2], h}, {base[3], h}, {base[4], h},
                                {base[1], h, h}, {base[4], base[4], h} } do
          local all = {}
          for k = 1, fixed.n do all[k] = fixed[k] end
          for k = 1, 3 do all[fixed.n + k] = args[k] end
          pcall(f, table.unpack(all, 1, fixed.n + 3))
          calls = calls + 1
        end
      end
      return calls
    end

    local function sweep()
      local reader = sensors.ambientLightSensor
      local set = reader:samples { from = time.studyStart(), to = time.now() }
      local instances = { SRSensorReader = reader, SampleSet = set, GroupedSampleSet = set:byDay(),
                          ReportTable = report.table("swept", { columns = { "a" } }) }
      local driven, skipped, calls, metamethods, properties = 0, {}, 0, 0, 0
      for _, name in ipairs(registry) do
        local class, method = name:match("^([%w_]+):([%w_]+)$")
        local f
        if class then
          local object = instances[class]
          f = object and object[method]
          if f then
            calls = calls + drive(f, object) + drive(f)     -- on its object, and on hostile selves
          end
        else
          local module, field = name:match("^([%w_]+)%.([%w_]+)$")
          local object = module and instances[module]
          if object and field:sub(1, 2) == "__" then
            -- A class's metamethod, called directly: on its object, and on hostile selves.
            f = __test.metamethod(name)
            if f then calls = calls + drive(f, object) + drive(f) metamethods = metamethods + 1 end
          elseif object then
            -- A property: read, and written with every hostile value.
            f = function(o, v) local _ = o[field]; o[field] = v end
            calls = calls + drive(f, object)
            properties = properties + 1
          else
            local holder = module and rawget(_G, module) or (not module and _G)
            f = holder and holder[field or name]
            if type(f) == "function" then calls = calls + drive(f) else f = nil end
          end
        end
        if f then driven = driven + 1 else skipped[#skipped + 1] = name end
      end
      -- The study API's Lua-side functions (the prelude's, over __runtime) as well.
      local lua_side = 0
      for _, module in ipairs { "time", "log", "report", "schedule", "sensorkit" } do
        for _, f in pairs(_G[module]) do
          if type(f) == "function" then calls = calls + drive(f) lua_side = lua_side + 1 end
        end
      end
      print("driven " .. driven .. " of " .. #registry .. ", calls " .. calls .. ", module functions " .. lua_side)
      print("not reachable: " .. table.concat(skipped, " "))
      print("metamethods " .. metamethods .. ", properties " .. properties)
    end
    -- At the study's last second: what the sweep schedules has no time left to run.
    schedule.after(seconds(2 * 86400 - 1), sweep)
    """#

    func testEveryHostFunctionSurvivesHostileArguments() throws {
        setenv("SENSORIUM_TEST_BUILTINS", "1", 1)
        defer { unsetenv("SENSORIUM_TEST_BUILTINS") }
        let harness = try ProtocolHarness()
        let outcome = try harness.run(HostileArgumentsTests.sweep, days: 2, timeLimitMilliseconds: 30_000)
        let lines = outcome.lines
        let driven = try XCTUnwrap(lines.first { $0.hasPrefix("driven ") }, outcome.output)
        let parts = driven.split { $0 == " " || $0 == "," }
        let count = try XCTUnwrap(Int(parts[1])), total = try XCTUnwrap(Int(parts[3]))
        XCTAssertGreaterThan(total, 60, "the registry lists the study API")
        // Only the runtime's internal modules (consumed by the prelude, which the sweep
        // drives through the public functions) and the test builtins are out of reach.
        let skipped = try XCTUnwrap(lines.first { $0.hasPrefix("not reachable:") })
            .dropFirst("not reachable:".count).split(separator: " ")
        for name in skipped { XCTAssertTrue(name.hasPrefix("__runtime.") || name.hasPrefix("__test."), String(name)) }
        XCTAssertEqual(count + skipped.count, total)
        for name in ["study", "sensorkit.reader", "sensorkit.info", "report.row", "schedule.after",
                     "SRSensorReader:fetch", "SampleSet:quantile", "GroupedSampleSet:summarize",
                     "SRSensorReader.__index", "SRSensorReader.__newindex", "SRSensorReader.delegate",
                     "SampleSet.__len", "SampleSet.__inspect", "SampleSet.__tostring", "GroupedSampleSet.__eq"] {
            XCTAssertFalse(skipped.contains(Substring(name)), "\(name) was driven")
        }
        // Every Swift metamethod of the four classes (__index where there are properties,
        // __newindex, __tostring, __eq; SampleSet's __len and __inspect) and every property.
        let registry = lines.first { $0.hasPrefix("metamethods ") }
        XCTAssertEqual(registry, "metamethods 16, properties 5", outcome.output)
        XCTAssertFalse(skipped.contains("ReportTable:row"), "ReportTable:row was driven")
    }
}
