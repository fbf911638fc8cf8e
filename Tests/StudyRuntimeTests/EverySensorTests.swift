import XCTest
@testable import StudyRuntime

/// Issue 4's first "done when": every one of the 22 sensors answers both
/// `reader:samples` and the delegate path (`reader:fetch` → `didFetchResult`)
/// through Lua, on every device it is recorded on, with every non-optional
/// field of its schema (`sensorkit.info(name).fields`) populated in every sample
/// looked at — and the two paths deliver the same number of samples.
final class EverySensorTests: XCTestCase {
    func testEverySensorAnswersBothPathsWithEveryFieldPopulated() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        local names = sensorkit.sensors()
        T.study(names)

        -- Dense streams are checked over six daytime hours, the others over a week.
        local dense = { accelerometer = true, rotationRate = true, ambientPressure = true,
                        heartRate = true, photoplethysmogram = true }
        local function window(name)
          if dense[name] then
            return time.parse("2026-03-04 09:00"), time.parse("2026-03-04 15:00")
          end
          return time.parse("2026-03-02 00:00"), time.parse("2026-03-09 00:00")
        end

        -- Names of the non-optional fields a sample must carry.
        local required = {}
        for _, name in ipairs(names) do
          required[name] = {}
          for _, f in ipairs(sensorkit.info(name).fields) do
            if not f.optional then table.insert(required[name], f.name) end
          end
        end

        -- Field names missing from a sample table, as a sorted comma list ("" when none).
        local function missing(name, sample)
          local out = {}
          for _, field in ipairs(required[name]) do
            if sample[field] == nil then out[#out + 1] = field end
          end
          return table.concat(out, ",")
        end

        local readers, viaDelegate, problems = {}, {}, {}
        local function problem(text) problems[#problems + 1] = text end

        for _, name in ipairs(names) do
          local r = sensorkit.reader(name)
          readers[name] = r
          r.delegate = {
            didFetchResult = function(reader, request, result)
              local key = name .. "@" .. request.device.kind
              local sample = result.sample
              if type(sample) == "table" then
                viaDelegate[key] = (viaDelegate[key] or 0) + 1
                local m = missing(name, sample)
                if m ~= "" then problem(key .. " delegate sample lacks " .. m) end
              else                                     -- a batch of an array-shaped sensor
                viaDelegate[key] = (viaDelegate[key] or 0) + sample:count()
                for _, row in ipairs(sample:first(5)) do
                  local m = missing(name, row)
                  if m ~= "" then problem(key .. " delegate batch row lacks " .. m) end
                end
              end
              return true
            end,
            fetchFailedWithError = function(reader, request, e)
              problem(name .. " fetch failed " .. T.err(e))
            end,
          }
        end

        sensorkit.requestAuthorization(names, function()
          for _, name in ipairs(names) do readers[name]:startRecording() end
        end)

        schedule.at(time.parse("2026-03-10 06:00"), function()
          for _, name in ipairs(names) do
            local r = readers[name]
            local from, to = window(name)
            local devices = r:devices()
            if #devices == 0 then problem(name .. " has no devices") end
            for j, device in ipairs(devices) do
              local set = r:samples { device = device, from = from, to = to }
              local key = name .. "@" .. device.kind
              if set:count() == 0 then problem(key .. " returned no samples") end
              for _, row in ipairs(set:first(200)) do
                local m = missing(name, row)
                if m ~= "" then problem(key .. " sample lacks " .. m); break end
              end
              T.log("samples", key, set:count() > 0)
              readers[key] = set:count()
              -- One fetch at a time per reader: a concurrent one fails with 8194 (contract §7.6).
              schedule.after(tostring(j) .. "m", function()
                r:fetch { device = device, from = from, to = to }
              end)
            end
          end
        end)

        schedule.at(time.parse("2026-03-10 07:00"), function()
          for _, name in ipairs(names) do
            for _, device in ipairs(readers[name]:devices()) do
              local key = name .. "@" .. device.kind
              if viaDelegate[key] ~= readers[key] then
                problem(key .. " delegate gave " .. tostring(viaDelegate[key]) .. ", samples " .. tostring(readers[key]))
              end
            end
          end
          T.log("problems", #problems)
          for _, p in ipairs(problems) do T.log("problem", p) end
        end)
        """#, scenario: #"""
        return { days = 9, participants = {
          { id = "p", profile = { preset = "officeWorker", wearsWatchToSleep = true } },
        } }
        """#, days: nil, participants: nil)
        let lines = o.lines
        XCTAssertTrue(lines.contains("problems 0"), lines.filter { $0.hasPrefix("problem") }.joined(separator: "\n"))
        // One line per (sensor, device): all 22 sensors, four of them on both devices.
        let sampled = lines.filter { $0.hasPrefix("samples ") }
        XCTAssertEqual(sampled.count, 26, sampled.joined(separator: "\n"))
        XCTAssertTrue(sampled.allSatisfy { $0.hasSuffix(" true") })
        XCTAssertEqual(Set(sampled.map { $0.split(separator: " ")[1].split(separator: "@")[0] }).count, 22)
    }
}
