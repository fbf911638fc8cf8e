import Foundation
import XCTest
@testable import StudyRuntime
@testable import StudyWorlds

/// The SensorKit contract (docs/sensorkit-contract.md §5–§11, conformance scenarios contract §14.5),
/// checked end to end: small Lua protocols run through `StudyRunner` with a fixed seed
/// and print the delegate callbacks they receive; the tests compare the exact lines.
///
/// Unless a test says otherwise the study starts 2026-03-02 00:00 UTC (study day 1),
/// with one participant who wears a watch, and the protocol records from
/// "t0" = day 1 10:00 (the participant is awake, so the light sensor has data).
final class ConformanceTests: XCTestCase {
    // MARK: contract §14.5 #1 — fresh install

    func testFreshInstallIsNotDeterminedAndEveryOperationFailsWithNoAuthorization() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        T.log("status", light.authorizationStatus, sensorkit.status("heartRate"), sensorkit.status("accelerometer"))
        T.fetch(light, "f", { from = time.now() - days(1), to = time.now() })
        light:startRecording()
        light:stopRecording()
        light:fetchDevices()
        local ok, e = pcall(light.samples, light, { from = time.now() - days(1), to = time.now() })
        T.log("samples", ok, T.err(e), sensorkit.isError(e), e.name, tostring(e))
        local ok2, e2 = pcall(light.devices, light)
        T.log("devices", ok2, T.err(e2))
        T.log("end of top level")
        """#)
        XCTAssertEqual(o.lines, [
            "status notDetermined notDetermined notDetermined",
            "samples false 1 true noAuthorization SRErrorDomain 1 (noAuthorization): not authorized for ambientLightSensor (status notDetermined)",
            "devices false 8193",
            "end of top level",
            // Callbacks come after the calling code returned, in call order (contract §11).
            "light fetchFailed f 1",
            "light startFailed 1",
            "light stopFailed 1",
            "light devicesFailed 8193",
        ])
    }

    // MARK: contract §14.5 #2, #3 — allow all, then ask again

    func testAllowAllCompletesThenAnnouncesEachReaderThenSecondRequestIsPromptDeclined() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate", "onWristState" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        local light2 = sensorkit.reader "ambientLightSensor"
        light2.delegate = T.recorder("light2")
        local hr = sensorkit.reader "heartRate"
        hr.delegate = T.recorder("hr")
        local wrist = sensorkit.reader "onWristState"      -- entitled but not requested
        wrist.delegate = T.recorder("wrist")
        local silent = sensorkit.reader "heartRate"        -- no delegate: nothing to call
        sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function(e)
          T.log("completion", T.err(e), light.authorizationStatus, hr.authorizationStatus, wrist.authorizationStatus)
          sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function(e2)
            T.log("second", T.err(e2), e2.name, e2.underlying.name, e2.domain, e2.underlying.domain)
          end)
        end)
        T.log("before the sheet is answered", light.authorizationStatus)
        """#)
        XCTAssertEqual(o.lines, [
            "before the sheet is answered notDetermined",
            "completion nil authorized authorized notDetermined",
            "light didChange authorized",
            "light2 didChange authorized",
            "hr didChange authorized",
            "second 4/8201 promptDeclined noNewAuthorizationGroups SRErrorDomain SRErrorDomain",
        ])
    }

    func testEmptyRequestCompletesWithNilAndABusySheetDeclinesWith8195() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate" })
        local hr = sensorkit.reader "heartRate"
        hr.delegate = T.recorder("hr")
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(e) T.log("first", T.err(e)) end)
        -- The first sheet is still on screen: something new to ask ⇒ prompt busy (contract §5.2 step 6).
        sensorkit.requestAuthorization({ "heartRate" }, function(e)
          T.log("second", T.err(e), sensorkit.status("heartRate"))
          sensorkit.requestAuthorization({ "heartRate" }, function(e3) T.log("third", T.err(e3), hr.authorizationStatus) end)
        end)
        sensorkit.requestAuthorization({}, function(e) T.log("empty", T.err(e)) end)
        """#)
        XCTAssertEqual(o.lines, [
            "first nil",
            "second 4/8195 notDetermined",
            "empty nil",
            "third nil authorized",
            "hr didChange authorized",
        ])
    }

    // MARK: contract §14.5 #4 — mixed answers, Required + Don't Enroll, cancel

    func testConsentPoliciesFromTheScenario() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate", "onWristState" }, { required = { ambientLightSensor = true } })
        local P = sensorkit.participant()
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder(P .. " light")
        local hr = sensorkit.reader "heartRate"
        hr.delegate = T.recorder(P .. " hr", { onStatus = function(r, s) r:startRecording() end })
        sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function(e)
          T.log(P, "completion", T.err(e), light.authorizationStatus, hr.authorizationStatus)
        end)
        """#, scenario: #"""
        return { participants = {
          { id = "mixed", consent = { default = "allow", heartRate = "deny" } },
          { id = "noEnroll", consent = { default = "allow", ambientLightSensor = "dontEnroll" } },
          { id = "optionalNo", consent = { heartRate = "dontEnroll" } },
          { id = "cancels", consent = { default = "allow", heartRate = "cancel" } },
          { id = "denyAll", consent = { default = "deny" } },
        } }
        """#, participants: nil)
        XCTAssertEqual(o.lines, [
            "mixed completion nil authorized denied",
            "mixed light didChange authorized",
            "mixed hr didChange denied",
            "mixed hr startFailed 1",
            // Declining a Required sensor and not enrolling denies everything asked (contract §5.2 step 9).
            "noEnroll completion nil denied denied",
            "noEnroll light didChange denied",
            "noEnroll hr didChange denied",
            "noEnroll hr startFailed 1",
            // "Don't Enroll" on an optional item is a plain "Don't Allow".
            "optionalNo completion nil authorized denied",
            "optionalNo light didChange authorized",
            "optionalNo hr didChange denied",
            "optionalNo hr startFailed 1",
            // A cancelled sheet changes nothing: 4 wrapping 8196, no status change.
            "cancels completion 4/8196 notDetermined notDetermined",
            "denyAll completion nil denied denied",
            "denyAll light didChange denied",
            "denyAll hr didChange denied",
            "denyAll hr startFailed 1",
        ])
    }

    // MARK: contract §14.5 #5 — holding period (clamp, strictDoc)

    static let holdingProtocol = #"""
    local T = require "t"
    T.study({ "ambientLightSensor" })
    local light = sensorkit.reader "ambientLightSensor"
    local t0 = time.parse("2026-03-02 10:00")
    local function inFirstHour(r, req, res)
      req.outside = (req.outside or 0)
      if not (res.timestamp > sensorkit.absoluteTime(t0) and res.timestamp <= sensorkit.absoluteTime(t0 + hours(1))) then
        req.outside = req.outside + 1
      end
    end
    light.delegate = T.recorder("light", {
      onStatus = function(r, s) end,
      onResult = inFirstHour,
      onComplete = function(r, req) T.log("  outside the first hour:", req.outside or 0) end,
    })
    sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
    schedule.at(t0, function(now) light:startRecording() end)
    for _, h in ipairs({ 1, 24, 25 }) do
      schedule.at(t0 + hours(h), function(now)
        T.fetch(light, "t0+" .. h .. "h", { from = t0 - days(1), to = now })
      end)
    end
    schedule.at(t0 + hours(26), function(now)
      -- Not overlapping the hold: the same data in both modes.
      T.fetch(light, "to=now-25h", { from = t0 - days(1), to = now - hours(25) })
    end)
    schedule.at(t0 + hours(50), function(now)
      T.log("first hour, read later:", light:samples { from = t0, to = t0 + hours(1) }:count())
    end)
    """#

    func testHoldingPeriodClampsToNowMinus24Hours() throws {
        let h = try ProtocolHarness()
        let o = try h.run(ConformanceTests.holdingProtocol)
        let firstHour = try XCTUnwrap(o.lines.last.flatMap { Int($0.split(separator: " ").last!) })
        XCTAssertGreaterThan(firstHour, 50, "the participant is awake at 10:00: the light sensor has data")
        XCTAssertEqual(o.lines, [
            "light didChange authorized",
            "light willStart",
            "light complete t0+1h 0",
            "  outside the first hour: 0",
            "light complete t0+24h 0",
            "  outside the first hour: 0",
            // Clamped to now − 24 h: exactly the first hour of recording.
            "light complete t0+25h \(firstHour)",
            "  outside the first hour: 0",
            "light complete to=now-25h \(firstHour)",
            "  outside the first hour: 0",
            "first hour, read later: \(firstHour)",
        ])
    }

    func testHoldingPeriodStrictDocReturnsNothingForAnOverlappingRange() throws {
        let h = try ProtocolHarness()
        let o = try h.run(ConformanceTests.holdingProtocol, scenario: #"return { switches = { holdingMode = "strictDoc" } }"#)
        let firstHour = try XCTUnwrap(o.lines.last.flatMap { Int($0.split(separator: " ").last!) })
        XCTAssertGreaterThan(firstHour, 50)
        XCTAssertEqual(o.lines, [
            "light didChange authorized",
            "light willStart",
            "light complete t0+1h 0",
            "  outside the first hour: 0",
            "light complete t0+24h 0",
            "  outside the first hour: 0",
            "light complete t0+25h 0",
            "  outside the first hour: 0",
            "light complete to=now-25h \(firstHour)",
            "  outside the first hour: 0",
            "first hour, read later: \(firstHour)",
        ])
    }

    // MARK: contract §14.5 #6 — resuming from the last timestamp

    func testResumingFromTheLastTimestampNeitherLosesNorRepeats() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        local t0 = time.parse("2026-03-02 10:00")
        local anchor, pages, seen, repeats, total = sensorkit.absoluteTime(t0 - hours(1)), 0, {}, 0, 0
        local stop
        light.delegate = {
          didFetchResult = function(r, req, res)
            req.n = (req.n or 0) + 1
            total = total + 1
            if seen[res.timestamp] then repeats = repeats + 1 end
            seen[res.timestamp] = true
            anchor = res.timestamp
            return req.n < 100                          -- pages of 100 results
          end,
          didCompleteFetch = function(r, req)
            pages = pages + 1
            if (req.n or 0) > 0 then
              r:fetch { fromAbsolute = anchor, toAbsolute = stop }   -- resume after the last timestamp
            else
              local all = r:samples { fromAbsolute = sensorkit.absoluteTime(t0 - hours(1)), toAbsolute = stop }:count()
              T.log("pages", pages, "results", total, "repeats", repeats, "one request", all, "equal", total == all)
            end
          end,
        }
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        schedule.at(t0, function() light:startRecording() end)
        schedule.at(t0 + days(2), function(now)
          stop = sensorkit.now()
          light:fetch { fromAbsolute = anchor, toAbsolute = stop }
        end)
        """#, scenario: #"return { switches = { duplicateRate = 0 } }"#)
        XCTAssertEqual(o.lines.count, 1)
        let words = try XCTUnwrap(o.lines.first).split(separator: " ").map(String.init)
        XCTAssertEqual(words[0], "pages")
        XCTAssertEqual(words[4], "repeats")
        XCTAssertEqual(words[5], "0")
        XCTAssertEqual(words[9], "equal")
        XCTAssertEqual(words[10], "true", o.lines.first!)
        XCTAssertEqual(words[3], words[8])
        XCTAssertGreaterThan(Int(words[3]) ?? 0, 500)
    }

    // MARK: contract §14.5 #7 — flow control

    func testDidFetchResultReturningFalseStopsAfterExactlyNResults() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local t0 = time.parse("2026-03-02 10:00")
        local limited = sensorkit.reader "ambientLightSensor"
        limited.delegate = T.recorder("limit5", { limit = 5 })
        local full = sensorkit.reader "ambientLightSensor"
        full.delegate = T.recorder("full")
        -- didFetchResult returning nil (no `return`) or 1 is not `true`: delivery stops.
        local noReturn = sensorkit.reader "ambientLightSensor"
        local calls = 0
        noReturn.delegate = {
          didFetchResult = function(r, req, res) calls = calls + 1 end,
          didCompleteFetch = function(r, req) T.log("noReturn complete", calls) end,
        }
        local truthy = sensorkit.reader "ambientLightSensor"
        local calls1 = 0
        truthy.delegate = {
          didFetchResult = function(r, req, res) calls1 = calls1 + 1; return 1 end,
          didCompleteFetch = function(r, req) T.log("returns 1 complete", calls1) end,
        }
        -- Without didFetchResult, delivery stops after the first result (contract §7.2 step 5).
        local lookups = 0
        local missing = sensorkit.reader "ambientLightSensor"
        missing.delegate = setmetatable({
          didCompleteFetch = function(r, req) T.log("missing complete, didFetchResult looked up", lookups, "time(s)") end,
        }, { __index = function(t, k) if k == "didFetchResult" then lookups = lookups + 1 end end })
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
        schedule.at(t0, function() full:startRecording() end)
        schedule.at(t0 + days(2), function(now)
          local all = full:samples { from = t0, to = now }:count()
          T.log("available", all > 5)
          T.fetch(limited, "L", { from = t0, to = now })
          T.fetch(full, "F", { from = t0, to = now })
          noReturn:fetch { from = t0, to = now }
          truthy:fetch { from = t0, to = now }
          missing:fetch { from = t0, to = now }
          T.log("full has", all)
        end)
        """#)
        let all = try XCTUnwrap(o.lines.first { $0.hasPrefix("full has") }.flatMap { Int($0.split(separator: " ").last!) })
        XCTAssertEqual(o.lines, [
            "limit5 didChange authorized",
            "full didChange authorized",
            "full willStart",
            "available true",
            "full has \(all)",
            "limit5 complete L 5",
            "full complete F \(all)",
            "noReturn complete 1",
            "returns 1 complete 1",
            "missing complete, didFetchResult looked up 1 time(s)",
        ])
    }

    // MARK: contract §14.5 #8 — retention and age-limit tombstones

    func testDataOlderThanRetentionVanishesAndAgeLimitTombstonesAppear() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local t0 = time.parse("2026-03-02 10:00")
        local light = sensorkit.reader "ambientLightSensor"
        local tomb = sensorkit.reader "ambientLightSensor.tombstones"
        local reasons = {}
        tomb.delegate = T.recorder("tomb", { onResult = function(r, req, res)
          local s = res.sample
          reasons[#reasons + 1] = s.reason
          req.first = req.first or s.startTime
          req.contiguous = (req.contiguous ~= false) and (req.last == nil or req.last == s.startTime)
          req.last = s.endTime
          req.heldBack = (req.heldBack or 0) + ((res.timestamp > sensorkit.now() - days(1)) and 1 or 0)
        end, onComplete = function(r, req)
          local text = table.concat(reasons, ",")
          T.log("  reasons", text == "" and "none" or (text:match("^[2,]*$") and "all ageLimit") or text)
          if req.first then
            T.log("  from recording start", req.first == sensorkit.absoluteTime(t0), "contiguous", req.contiguous,
                  "covers", (req.last - req.first) / 3600, "h", "held back", req.heldBack)
          end
        end })
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
        schedule.at(t0, function() light:startRecording(); tomb:startRecording() end)
        schedule.at(t0 + days(2), function(now)
          T.log("day 3: first two hours", light:samples { from = t0, to = t0 + hours(2) }:count() > 0)
          T.fetch(tomb, "day 3", { fromAbsolute = 0, toAbsolute = sensorkit.now() })
        end)
        schedule.at(t0 + days(9) + hours(2), function(now)
          -- Readable now: write times in (now − 7 d − 24 h, now − 24 h]; older data was purged by age.
          T.log("day 10: first two hours", light:samples { from = t0, to = t0 + hours(2) }:count())
          T.log("day 10: first day", light:samples { from = t0, to = t0 + days(1) }:count())
          T.log("day 10: a day later", light:samples { from = t0 + days(1) + hours(2), to = t0 + days(2) }:count() > 0)
          reasons = {}
          T.fetch(tomb, "day 10", { fromAbsolute = 0, toAbsolute = sensorkit.now() })
          tomb:fetchDevices()                       -- the tombstone stream is fetch-only: ignored, no callback
        end)
        """#, days: 11)
        XCTAssertEqual(o.lines, [
            "tomb didChange authorized",
            "day 3: first two hours true",
            "tomb complete day 3 0",
            "  reasons none",
            "day 10: first two hours 0",
            "day 10: first day 0",
            "day 10: a day later true",
            // Hourly purges since t0 + 8 d + 1 h; tombstones are held 24 h too: they cover (t0, t0 + 2 h].
            "tomb complete day 10 2",
            "  reasons all ageLimit",
            "  from recording start true contiguous true covers 2.0 h held back 0",
        ])
    }

    // MARK: contract §14.5 #9 — the participant deletes a range during the hold

    static let deletionProtocol = #"""
    local T = require "t"
    T.study({ "ambientLightSensor" })
    local t0 = time.parse("2026-03-02 10:00")
    local from, to = time.parse("2026-03-03 09:00"), time.parse("2026-03-03 13:00")
    local light = sensorkit.reader "ambientLightSensor"
    local inside = 0
    light.delegate = T.recorder("light", { onResult = function(r, req, res)
      if res.timestamp > sensorkit.absoluteTime(from) and res.timestamp <= sensorkit.absoluteTime(to) then inside = inside + 1 end
    end, onComplete = function() T.log("  delivered inside the deleted range", inside) end })
    local tomb = sensorkit.reader "ambientLightSensor.tombstones"
    tomb.delegate = T.recorder("tomb", { onResult = function(r, req, res)
      local s = res.sample
      T.log("  record", s.reason, s.startTime == sensorkit.absoluteTime(from), s.endTime == sensorkit.absoluteTime(to),
            res.timestamp == sensorkit.absoluteTime(time.parse("2026-03-03 14:00")))
    end })
    sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
    schedule.at(t0, function() light:startRecording() end)
    schedule.at(time.parse("2026-03-05 12:00"), function(now)
      T.log("deleted range", light:samples { from = from, to = to }:count() > 0,
            "before", light:samples { from = t0, to = from }:count() > 0)
      T.fetch(light, "all", { from = t0, to = now })
      T.fetch(tomb, "tombstones", { from = t0, to = now })
    end)
    """#

    func testUserDeletionDuringTheHoldIsNeverDeliveredAndLeavesAUserInitiatedTombstone() throws {
        let h = try ProtocolHarness()
        let deleted = try h.run(ConformanceTests.deletionProtocol, scenario: #"""
        return { participants = { { id = "A", events = {
          { delete = "ambientLightSensor", from = "day 2 09:00", to = "day 2 13:00", at = "day 2 14:00" },
        } } } }
        """#, days: 4)
        let kept = try h.run(ConformanceTests.deletionProtocol, scenario: #"return { participants = { { id = "A" } } }"#, days: 4)
        // Without the deletion the range holds data (same participant, same seed).
        XCTAssertEqual(kept.lines.first { $0.hasPrefix("deleted range") }, "deleted range true before true")
        XCTAssertNotEqual(kept.lines.first { $0.hasPrefix("  delivered inside") }, "  delivered inside the deleted range 0")
        XCTAssertEqual(deleted.lines.filter { !$0.hasPrefix("light complete") }, [
            "light didChange authorized",
            "tomb didChange authorized",
            "light willStart",
            "deleted range false before true",
            "  delivered inside the deleted range 0",
            // reason 0 = userInitiated, covering exactly the range, written when the participant deleted.
            "  record 0 true true true",
            "tomb complete tombstones 1",
        ])
    }

    // MARK: contract §14.5 #10 — revocation mid-study

    func testRevocationMidStudy() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        local hr = sensorkit.reader "heartRate"
        hr.delegate = T.recorder("hr")
        local tomb = sensorkit.reader "ambientLightSensor.tombstones"
        sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function() end)
        schedule.at("2026-03-02 10:00", function() light:startRecording(); hr:startRecording() end)
        schedule.at("2026-03-04 11:00", function(now)
          T.log("before", light:samples { from = now - days(2), to = now }:count() > 0)
        end)
        schedule.at("2026-03-04 13:00", function(now)
          T.log("after", light.authorizationStatus, tomb.authorizationStatus, hr.authorizationStatus)
          T.fetch(light, "f", { from = now - days(2), to = now })
          local ok, e = pcall(light.samples, light, { from = now - days(2), to = now })
          T.log("samples", ok, T.err(e))
          light:startRecording()
          light:fetchDevices()
          sensorkit.requestAuthorization({ "ambientLightSensor" }, function(e) T.log("re-request", T.err(e)) end)
          T.fetch(hr, "hr", { from = now - hours(26), to = now, device = hr:devices()[1] })
        end)
        """#, scenario: #"""
        return { participants = { { id = "A", events = { { at = "day 3 12:00", revoke = "ambientLightSensor" } } } } }
        """#)
        XCTAssertEqual(o.lines.filter { !$0.hasPrefix("hr complete") }, [
            "light didChange authorized",
            "hr didChange authorized",
            "light willStart",
            "hr willStart",
            "before true",
            "light didChange denied",
            "after denied denied authorized",
            "samples false 1",
            "light fetchFailed f 1",
            "light startFailed 1",
            "light devicesFailed 8193",
            "re-request 4/8201",
        ])
        // The other sensor is untouched.
        let hrLine = try XCTUnwrap(o.lines.first { $0.hasPrefix("hr complete hr ") })
        XCTAssertGreaterThan(Int(hrLine.split(separator: " ").last!) ?? 0, 0)
    }

    func testGrantAfterRevocationNeedsANewStartAndLeavesAGap() throws {
        let source = #"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light", { onStatus = function(r, s) if s == "authorized" then r:startRecording() end end })
        local tomb = sensorkit.reader "ambientLightSensor.tombstones"
        local revokedAt, grantedAt = time.parse("2026-03-03 12:00"), time.parse("2026-03-03 18:00")
        tomb.delegate = T.recorder("tomb", { onResult = function(r, req, res)
          local s = res.sample
          T.log("  record", s.reason, s.startTime == sensorkit.absoluteTime(time.studyStart()), s.endTime == sensorkit.absoluteTime(revokedAt))
        end })
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
        schedule.at("2026-03-05 12:00", function(now)
          T.log("before revoke", light:samples { from = 0, to = revokedAt }:count() > 0,
                "while revoked", light:samples { from = revokedAt, to = grantedAt }:count(),
                "after grant", light:samples { from = grantedAt, to = now }:count() > 0)
          T.fetch(tomb, "tombstones", { from = 0, to = now })
        end)
        """#
        let h = try ProtocolHarness()
        let events = #"events = { { at = "day 2 12:00", revoke = "ambientLightSensor" }, { at = "day 2 18:00", grant = "ambientLightSensor" } }"#
        let kept = try h.run(source, scenario: "return { participants = { { id = \"A\", \(events) } } }", days: 4)
        XCTAssertEqual(kept.lines, [
            "light didChange authorized",
            "tomb didChange authorized",            // a tombstone reader mirrors its sensor's status
            "light willStart",
            "light didChange denied",
            "tomb didChange denied",
            // Settings turned it back on: the app must start recording again itself.
            "light didChange authorized",
            "tomb didChange authorized",
            "light willStart",
            "before revoke true while revoked 0 after grant true",
            "tomb complete tombstones 0",
        ])
        // With nobody left recording, the system may purge what was kept (contract §5.4, §6.2 item 6).
        let purged = try h.run(source, scenario: "return { switches = { purgeWhenNoInterestedClients = true }, participants = { { id = \"A\", \(events) } } }", days: 4)
        XCTAssertEqual(purged.lines, [
            "light didChange authorized",
            "tomb didChange authorized",
            "light willStart",
            "light didChange denied",
            "tomb didChange denied",
            "light didChange authorized",
            "tomb didChange authorized",
            "light willStart",
            "before revoke false while revoked 0 after grant true",
            "  record 3 true true",
            "tomb complete tombstones 1",
        ])
    }

    // MARK: contract §6 — recording state machine

    func testRecordingIsIdempotentSharedPerAppAndIgnoredOnTombstoneReaders() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local t0 = time.parse("2026-03-02 10:00")
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        local light2 = sensorkit.reader "ambientLightSensor"
        light2.delegate = T.recorder("light2")
        local tomb = sensorkit.reader "ambientLightSensor.tombstones"
        tomb.delegate = T.recorder("tomb")
        T.log("sensors", light.sensor, tomb.sensor, tostring(tomb))
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
        schedule.at(t0, function()
          light:startRecording(); light:startRecording()      -- idempotent: both succeed
          tomb:startRecording(); tomb:stopRecording()         -- ignored on the tombstone stream: no callbacks
        end)
        schedule.at(t0 + hours(3), function() light2:stopRecording() end)   -- one stakeholdership per app
        schedule.at(t0 + hours(4), function() light2:stopRecording() end)   -- stopping while idle still reports didStop
        schedule.at(t0 + days(2), function(now)
          T.log("recorded", light:samples { from = t0, to = t0 + hours(3) }:count() > 0,
                "after stop", light:samples { from = t0 + hours(3), to = now }:count(),
                "before start", light:samples { from = t0 - hours(10), to = t0 }:count())
        end)
        """#)
        XCTAssertEqual(o.lines, [
            "sensors ambientLightSensor ambientLightSensor SRSensorReader(ambientLightSensor.tombstones)",
            "light didChange authorized",
            "light2 didChange authorized",
            "tomb didChange authorized",
            "light willStart",
            "light willStart",
            "light2 didStop",
            "light2 didStop",
            "recorded true after stop 0 before start 0",
        ])
    }

    func testResearchDataCollectionOffReadsDeniedEverywhere() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        T.log("status", light.authorizationStatus)
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(e) T.log("completion", T.err(e)) end)
        T.fetch(light, "f", { from = 0, to = time.now() })
        light:startRecording()
        """#, scenario: #"return { switches = { researchDataCollectionEnabled = false } }"#)
        XCTAssertEqual(o.lines, [
            "status denied",
            "completion 4/4098",
            "light fetchFailed f 1/4098",
            "light startFailed 1/4098",
        ])
    }

    // MARK: contract §14.5 #11 — watch data and the sync lag

    func testWatchDataAppearOnlyAfterTheSyncLagAndOnlyForTheWatch() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "heartRate", "ambientLightSensor" })
        local t0 = time.parse("2026-03-02 10:00")
        local hr = sensorkit.reader "heartRate"
        hr.delegate = T.recorder("hr", { onResult = function(r, req, res)
          req.early = (req.early or 0) + ((res.timestamp <= sensorkit.absoluteTime(t0 + hours(1))) and 1 or 0)
        end, onComplete = function(r, req)
          T.log("  device", req.device.model, "written before t0 + lag:", req.early or 0)
        end })
        local hr2 = sensorkit.reader "heartRate"
        hr2.delegate = hr.delegate
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "heartRate", "ambientLightSensor" }, function() end)
        schedule.at(t0, function() hr:startRecording(); light:startRecording() end)
        schedule.at(t0 + hours(25), function(now)
          T.log("t0+25h watch devices:", #hr:devices())
          hr:fetchDevices()
        end)
        schedule.at(t0 + hours(26) + minutes(30), function(now)
          local devices = hr:devices()
          T.log("t0+26h30 devices:", #devices, devices[1].model, devices[1].kind, "light:", light:devices()[1].model, #light:devices())
          local watch = devices[1]
          local set = hr:samples { from = t0, to = now, device = watch }
          T.log("watch samples", set:count() > 1000, "earliest write", set:min("writeTime") >= t0 + hours(1),
                "lag >= 1h", set:min("writeTime") - set:max("time") < 0 and true)
          T.log("phone", hr:samples { from = t0, to = now }:count(),
                hr:samples { from = t0, to = now, device = sensorkit.currentDevice() }:count())
          T.fetch(hr, "phone (no device)", { from = t0, to = now })
          T.fetch(hr2, "watch", { from = t0, to = now, device = watch })
          hr:fetchDevices()
        end)
        """#)
        XCTAssertEqual(o.lines.filter { !$0.hasPrefix("hr complete watch") }, [
            "hr didChange authorized",
            "hr didChange authorized",
            "hr willStart",
            "t0+25h watch devices: 0",
            "hr devices ",
            "t0+26h30 devices: 1 Watch watch light: iPhone 2",  // the watch measures ambient light too
            "watch samples true earliest write true lag >= 1h true",
            "phone 0 0",
            "hr complete phone (no device) 0",
            "  device iPhone written before t0 + lag: 0",
            "  device Watch written before t0 + lag: 0",
            "hr devices Watch",
        ])
    }

    func testWatchSamplesAreWrittenAtLeastTheSyncLagAfterTheyWereMeasured() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "heartRate" })
        local t0 = time.parse("2026-03-02 10:00")
        local hr = sensorkit.reader "heartRate"
        sensorkit.requestAuthorization({ "heartRate" }, function() hr:startRecording() end)
        schedule.at(t0 + days(2), function(now)
          local watch = hr:devices()[1]
          local minLag = math.huge
          for row in hr:samples { from = t0 + hours(2), to = t0 + hours(8), device = watch }:rows() do
            minLag = math.min(minLag, row.writeTime - row.time)
          end
          T.log("min lag >= 1h", minLag >= 3600)
        end)
        """#)
        XCTAssertEqual(o.lines, ["min lag >= 1h true"])
    }

    // MARK: contract §14.5 #12 — wall-clock jump

    func testWallClockJumpShiftsConvertedDatesButNotSRTime() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local t0 = time.parse("2026-03-02 10:00")
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        local before = {}
        local function srCount(a, b) return light:samples { fromAbsolute = a, toAbsolute = b }:count() end
        schedule.at(t0 + days(1) + hours(1), function(now)       -- day 2 11:00, before the jump
          local first = light:samples { from = t0, to = now }:first(1)[1]
          local ts = sensorkit.absoluteTime(first.writeTime)
          before = { sr = sensorkit.now(), os = os.time(), now = now, ts = ts, date = sensorkit.wallTime(ts),
                     t0 = sensorkit.absoluteTime(t0), a = sensorkit.absoluteTime(t0 - hours(3)), b = sensorkit.absoluteTime(t0 - hours(1)) }
          before.count = srCount(before.a, before.b)
          T.log("before: os.time == now", os.time() == now, "time.now == now", time.now() == now, "data", before.count > 0)
        end)
        schedule.at(t0 + days(1) + hours(3), function(now)       -- day 2 13:00, after the +1 h jump at 12:00
          T.log("SR advanced", sensorkit.now() - before.sr)
          T.log("os.time advanced", os.time() - before.os, "now advanced", now - before.now, "time.now == now", time.now() == now)
          T.log("old sample: converted date shift", sensorkit.wallTime(before.ts) - before.date,
                "date -> SR shift", before.ts - sensorkit.absoluteTime(before.date), "t0 -> SR shift", before.t0 - sensorkit.absoluteTime(t0))
          T.log("same SR range, same samples", srCount(before.a, before.b) == before.count)
          T.log("day", time.day(), os.date("%H:%M"))
        end)
        """#, scenario: #"""
        return { participants = { { id = "A", events = { { at = "day 2 12:00", clockJump = "1h" } } } } }
        """#)
        XCTAssertEqual(o.lines, [
            "before: os.time == now true time.now == now true data true",
            // SR time never jumps; the phone's clock (os.time, time.now, the callback's `now`) does.
            "SR advanced 7200.0",
            "os.time advanced 10800 now advanced 10800.0 time.now == now true",
            // Conversions use the offset at conversion time (contract §4.2): old samples' Dates shift by +1 h.
            "old sample: converted date shift 3600.0 date -> SR shift 3600.0 t0 -> SR shift 3600.0",
            "same SR range, same samples true",
            "day 2026-03-03 14:00",
        ])
    }

    // MARK: contract §14.5 #13, #14 — iPad and Catalyst

    func testCatalystIgnoresEveryCallWithoutCallbacks() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(e) T.log("completion", T.err(e)) end)
        light:startRecording()
        light:fetch { from = 0, to = time.now() }
        light:fetchDevices()
        T.log("available", sensorkit.isAvailable())
        schedule.after("1h", function() T.log("an hour later", light.authorizationStatus) end)
        """#, scenario: #"return { switches = { platform = "catalyst" } }"#)
        XCTAssertEqual(o.lines, ["available true", "an hour later notDetermined"])
    }

    func testIPadHasNoSensorKit() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        T.log("available", sensorkit.isAvailable())
        local ok, e = pcall(sensorkit.reader, "ambientLightSensor")
        T.log(ok, e)
        """#, scenario: #"return { switches = { platform = "iPad" } }"#)
        XCTAssertEqual(o.lines.count, 2)
        XCTAssertEqual(o.lines.first, "available false")
        XCTAssertTrue(o.lines[1].hasPrefix("false "), o.lines[1])
        XCTAssertTrue(o.lines[1].contains("sensorkit.reader: SensorKit is not available on iPad"), o.lines[1])
    }

    // MARK: contract §14.5 #15 — device locked

    func testFetchWhileLockedFailsWithDataInaccessible() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
        for _, at in ipairs({ "2026-03-03 10:30", "2026-03-03 11:30", "2026-03-03 12:30", "2026-03-03 13:30", "2026-03-03 14:30" }) do
          schedule.at(at, function(now)
            local ok, e = pcall(light.samples, light, { from = now - days(2), to = now })
            T.log(at:sub(12), "samples", ok and "ok" or T.err(e), ok and "" or e.name)
            T.fetch(light, at:sub(12), { from = now - days(2), to = now })
          end)
        end
        """#, scenario: #"""
        return { participants = { { id = "A", events = {
          { from = "day 2 11:00", to = "day 2 13:00", locked = true },
          { from = "day 2 12:00", to = "day 2 14:00", locked = true },
        } } } }
        """#)
        let lines = o.lines.map { $0.hasPrefix("light complete") ? String($0.split(separator: " ").dropLast().joined(separator: " ")) : $0 }
        XCTAssertEqual(lines, [
            "light didChange authorized",
            "light willStart",
            "10:30 samples ok ",
            "light complete 10:30",
            "11:30 samples 2 dataInaccessible",
            "light fetchFailed 11:30 2",
            "12:30 samples 2 dataInaccessible",
            "light fetchFailed 12:30 2",
            // Still locked: the second interval (overlapping the first) ends at 14:00.
            "13:30 samples 2 dataInaccessible",
            "light fetchFailed 13:30 2",
            "14:30 samples ok ",
            "light complete 14:30",
        ])
    }

    func testLockedFetchErrorSwitch() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
        schedule.at("2026-03-02 12:00", function(now) T.fetch(light, "locked", { from = 0, to = now }) end)
        """#, scenario: #"""
        return { switches = { lockedFetchError = 8194 },
                 participants = { { id = "A", events = { { from = "day 1 11:00", to = "day 1 13:00", locked = true } } } } }
        """#)
        XCTAssertEqual(o.lines, ["light didChange authorized", "light fetchFailed locked 8194"])
    }

    // MARK: contract §14.5 #16 — one fetch at a time per reader

    static let concurrentProtocol = #"""
    local T = require "t"
    T.study({ "ambientLightSensor" })
    local t0 = time.parse("2026-03-02 10:00")
    local light = sensorkit.reader "ambientLightSensor"
    local other = sensorkit.reader "ambientLightSensor"
    local chained = false
    light.delegate = T.recorder("light", { onComplete = function(r, req)
      if not chained then chained = true; T.fetch(r, "chained", { from = t0, to = t0 + hours(1) }) end
    end })
    other.delegate = T.recorder("other")
    sensorkit.requestAuthorization({ "ambientLightSensor" }, function() light:startRecording() end)
    schedule.at(t0 + days(2), function(now)
      T.fetch(light, "first", { from = t0, to = t0 + hours(1) })
      T.fetch(light, "second", { from = t0, to = t0 + hours(1) })
      T.fetch(other, "other reader", { from = t0, to = t0 + hours(1) })
    end)
    """#

    func testSecondFetchOnABusyReaderFailsWith8194() throws {
        let h = try ProtocolHarness()
        let o = try h.run(ConformanceTests.concurrentProtocol)
        let n = try XCTUnwrap(o.lines.first { $0.hasPrefix("other complete") }?.split(separator: " ").last)
        XCTAssertEqual(o.lines, [
            "light didChange authorized",
            "other didChange authorized",
            "light willStart",
            "light complete first \(n)",
            // Started from didCompleteFetch: the first fetch has ended, so this one runs.
            "light fetchFailed second 8194",
            "other complete other reader \(n)",
            "light complete chained \(n)",
        ])
    }

    func testQueuedFetchesRunOneAfterAnother() throws {
        let h = try ProtocolHarness()
        let o = try h.run(ConformanceTests.concurrentProtocol, scenario: #"return { switches = { concurrentFetchPolicy = "queue" } }"#)
        let n = try XCTUnwrap(o.lines.first { $0.hasPrefix("other complete") }?.split(separator: " ").last)
        XCTAssertEqual(o.lines, [
            "light didChange authorized",
            "other didChange authorized",
            "light willStart",
            "light complete first \(n)",
            "other complete other reader \(n)",
            "light complete second \(n)",
            "light complete chained \(n)",
        ])
    }

    // MARK: one request or many

    func testAWeekInOneRequestEqualsHourlyRequests() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate" })
        local t0 = time.parse("2026-03-02 10:00")
        local light = sensorkit.reader "ambientLightSensor"
        local hr = sensorkit.reader "heartRate"
        sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function()
          light:startRecording(); hr:startRecording()
        end)
        local function signature(set, field, parts)
          for row in set:rows() do
            parts[#parts + 1] = string.format("%.6f|%.6f|%.4f", row.time, row.writeTime, row[field])
          end
        end
        -- `span` hours from t0 in one request, and hour by hour; rows compared for the first `rowHours`.
        local function compare(reader, field, device, span, rowHours)
          local whole = reader:samples { from = t0, to = t0 + hours(span), device = device }
          local n, sum, rows = 0, 0, {}
          for h = 0, span - 1 do
            local hour = reader:samples { from = t0 + hours(h), to = t0 + hours(h + 1), device = device }
            n = n + hour:count()
            sum = sum + hour:sum(field)
            if h < rowHours then signature(hour, field, rows) end
          end
          local wholeRows = {}
          signature(reader:samples { from = t0, to = t0 + hours(rowHours), device = device }, field, wholeRows)
          T.log(reader.sensor, "count", whole:count() == n, n > 1000, "sum", math.abs(whole:sum(field) - sum) <= 1e-9 * math.abs(sum),
                "rows", #wholeRows > 0 and #wholeRows == #rows and table.concat(wholeRows, "\n") == table.concat(rows, "\n"))
        end
        schedule.at(t0 + days(8) + hours(1), function(now)
          compare(light, "lux", nil, 168, 168)
          compare(hr, "heartRate", hr:devices()[1], 24, 4)     -- 1 Hz: a day is enough
          -- The faithful path agrees: one fetch of the week, then 168 chained hourly fetches.
          local total, h = 0, -1
          light.delegate = {
            didFetchResult = function(r, req, res) total = total + 1; return true end,
            didCompleteFetch = function(r, req)
              if h == -1 then
                T.log("one fetch", total, "samples()", light:samples { from = t0, to = t0 + days(7) }:count())
                total = 0
              end
              h = h + 1
              if h < 168 then
                r:fetch { from = t0 + hours(h), to = t0 + hours(h + 1) }
              else
                T.log("168 fetches", total)
              end
            end,
          }
          light:fetch { from = t0, to = t0 + days(7) }
        end)
        """#, days: 9)
        XCTAssertEqual(o.lines.count, 4, o.output)
        XCTAssertEqual(o.lines[0], "ambientLightSensor count true true sum true rows true")
        XCTAssertEqual(o.lines[1], "heartRate count true true sum true rows true")
        let one = o.lines[2].split(separator: " ")
        XCTAssertEqual(one.count, 5)
        XCTAssertEqual(one[2], one[4], "fetch and samples() agree")
        XCTAssertEqual(o.lines[3], "168 fetches \(one[2])")
    }

    // MARK: fetch request validation (contract §7.1, §7.2)

    func testInvalidFetchRequests() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local recorder = T.recorder("light", { onResult = function(r, req, res)
          if req.n == 1 then T.log("  device written back:", req.device.model) end
        end })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = recorder
        -- One reader per fetch: a reader runs one fetch at a time.
        local function fresh()
          local r = sensorkit.reader "ambientLightSensor"
          r.delegate = recorder
          return r
        end
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function()
          light:startRecording()
          T.fetch(light, "from>to", { from = 10, to = 5 })
        end)
        schedule.at("2026-03-03 13:00", function(now)
          T.fetch(fresh(), "no to", { from = 10 })
          T.fetch(fresh(), "no from", { to = now })
          T.fetch(fresh(), "nothing", {})
          T.fetch(fresh(), "from==to", { from = now - days(1), to = now - days(1) })
          T.fetch(fresh(), "ok", { from = now - days(1) - hours(2), to = now - days(1) })
          for _, req in ipairs({ { from = now, to = now - 1 }, { from = now }, { fromAbsolute = 5, toAbsolute = 4 } }) do
            local ok, e = pcall(light.samples, light, req)
            T.log("samples", ok, T.err(e), e.name)
          end
          local ok, e = pcall(function() return light:samples { from = now - 10, to = now, form = 3 } end)
          T.log("unknown field", ok, (tostring(e):gsub("^.*protocol.lua", "protocol.lua")))
          local ok2, e2 = pcall(function() return light:samples { from = "yesterday", to = now } end)
          T.log("bad type", ok2, (tostring(e2):gsub("^.*protocol.lua", "protocol.lua")))
          local ok3, e3 = pcall(function() return light:samples { from = 0/0, to = now } end)
          T.log("nan", ok3, (tostring(e3):gsub("^.*protocol.lua", "protocol.lua")))
        end)
        """#)
        XCTAssertEqual(o.lines.filter { !$0.hasPrefix("light complete ok") }, [
            "light didChange authorized",
            "light willStart",
            "light fetchFailed from>to 3",
            "samples false 3 fetchRequestInvalid",
            "samples false 3 fetchRequestInvalid",
            "samples false 3 fetchRequestInvalid",
            "unknown field false protocol.lua:28: fetch request has no field 'form' (fields: from, to, device, fromAbsolute, toAbsolute)",
            "bad type false protocol.lua:30: fetch request field 'from' must be a number (seconds), got string",
            "nan false protocol.lua:32: fetch request field 'from' is nan, not a time (an arithmetic result with no value, such as 0/0)",
            "light fetchFailed no to 3",
            "light fetchFailed no from 3",
            "light fetchFailed nothing 3",
            "light complete from==to 0",
            "  device written back: iPhone",
        ])
    }

    // MARK: contract §14.5 #18 and entitlements

    func testInfoPlistProblemsAndMissingEntitlements() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        study {
          id = "t", usage = "Testing.", privacy_policy = "https://example.org/p",
          entitlements = { "ambient-light-sensor", "heartRate" },
          sensors = { ambientLightSensor = "Records light.", heartRate = { detail = "Heart." },
                      accelerometer = { detail = "Motion." } },
        }
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = T.recorder("light")
        local acc = sensorkit.reader "accelerometer"
        acc.delegate = T.recorder("acc")
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(e)
          T.log("detail as a string:", T.err(e), e.name, e.message)
          sensorkit.requestAuthorization({ "heartRate" }, function(e2) T.log("heartRate alone:", T.err(e2)) end)
          sensorkit.requestAuthorization({ "accelerometer" }, function(e3) T.log("not entitled:", T.err(e3), e3.name) end)
        end)
        acc:startRecording()
        acc:fetch { from = 0, to = time.now() }
        """#)
        XCTAssertEqual(o.lines, [
            "detail as a string: 8197 invalidInfoPlist Your bundle's Info.plist must have an NSSensorKitUsageDetail key (SRSensorUsageAmbientLightSensor for ambientLightSensor: the usage detail is a string, not a table { detail = \"…\", required = … })",
            "acc startFailed 0",
            "acc fetchFailed - 0",
            "heartRate alone: nil",
            "not entitled: 0 invalidEntitlement",
        ])
    }

    func testMissingEntitlementTerminatesTheAppInTerminateMode() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(#"""
        study {
          id = "t", usage = "Testing.", privacy_policy = "https://example.org/p",
          entitlements = { "ambient-light-sensor" },
          sensors = { ambientLightSensor = { detail = "Light." }, heartRate = { detail = "Heart." } },
        }
        sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function() end)
        """#, scenario: #"return { switches = { missingEntitlementMode = "terminate" } }"#)
        let run = try XCTUnwrap(error as? RunError, "\(error)")
        XCTAssertEqual(run.line, 6)
        XCTAssertTrue(run.message.contains("terminated by SensorKit"), run.description)
        XCTAssertTrue(run.message.contains("heart"), run.description)
    }

    // MARK: contract §11 — delivery rules

    func testCallbacksWithoutADelegateAreDroppedNotReplayed() throws {
        let h = try ProtocolHarness()
        let o = try h.run(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function()
          light:startRecording()                    -- no delegate yet: willStartRecording is dropped
          -- Assigned before the status change is delivered: that one arrives.
        end)
        local other = sensorkit.reader "ambientLightSensor"
        sensorkit.requestAuthorization({}, function() other.delegate = T.recorder("other") end)
        schedule.after("1h", function()
          light.delegate = T.recorder("light")       -- nothing is replayed
          T.log("assigned", light.authorizationStatus)
          light:stopRecording()
        end)
        """#)
        XCTAssertEqual(o.lines, ["other didChange authorized", "assigned authorized", "light didStop"])
    }

    // MARK: bad input in protocols

    func testUnknownSensorNamesSuggestTheRightOne() throws {
        let h = try ProtocolHarness()
        for (source, expected) in [
            ("local r = sensorkit.reader \"ambientLight\"\n", "protocol.lua:1: unknown sensor 'ambientLight' — did you mean 'ambientLightSensor'?"),
            ("local x = 1\nlocal r = sensorkit.reader \"hartRate.tombstones\"\n", "protocol.lua:2: unknown sensor 'hartRate' — did you mean 'heartRate'?"),
            ("sensorkit.requestAuthorization({ \"accelerometr\" }, function() end)\n",
             "protocol.lua:1: requestAuthorization: item 1 is not a known sensor (accelerometr) — did you mean 'accelerometer'?"),
            ("print(sensorkit.status(\"onWrist\"))\n", "protocol.lua:1: unknown sensor 'onWrist' — did you mean 'onWristState'?"),
        ] {
            let error = try h.failure(source)
            let run = try XCTUnwrap(error as? RunError, "\(error)")
            XCTAssertTrue(run.message.hasSuffix(expected) || run.message.contains(expected + " "), run.description)
            XCTAssertEqual(run.participant, "P1")
            XCTAssertEqual(run.time, "2026-03-02 00:00")
        }
    }

    func testErrorInsideADelegateCallbackNamesParticipantTimeFileAndLine() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        light.delegate = {
          didChangeAuthorizationStatus = function(reader, status)
            local settings = nil
            return settings.threshold
          end,
        }
        schedule.at("2026-03-02 08:15", function()
          sensorkit.requestAuthorization({ "ambientLightSensor" }, function() end)
        end)
        """#, participants: 2)
        let run = try XCTUnwrap(error as? RunError, "\(error)")
        XCTAssertEqual(run.participant, "P1")
        XCTAssertEqual(run.time, "2026-03-02 08:15")
        XCTAssertEqual(run.line, 7)
        XCTAssertTrue(run.file?.hasSuffix("protocol.lua") == true, "\(run.file ?? "nil")")
        XCTAssertTrue(run.description.hasPrefix("[P1 2026-03-02 08:15] "), run.description)
        XCTAssertTrue(run.description.contains("protocol.lua:7: attempt to index a nil value (local 'settings')"), run.description)
    }

    func testErrorInsideAScheduleCallbackNamesParticipantTimeFileAndLine() throws {
        let h = try ProtocolHarness()
        // An uncaught SensorKit error raised by the convenient path carries no position in its message.
        let error = try h.failure(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        local light = sensorkit.reader "ambientLightSensor"
        schedule.daily("09:30", function(now)
          local set = light:samples { from = now - days(2), to = now - days(1) }
          report.row("daily", { n = set:count() })
        end)
        """#)
        let run = try XCTUnwrap(error as? RunError, "\(error)")
        XCTAssertEqual(run.participant, "P1")
        XCTAssertEqual(run.time, "2026-03-02 09:30")
        XCTAssertEqual(run.line, 5)
        XCTAssertTrue(run.description.hasPrefix("[P1 2026-03-02 09:30] "), run.description)
        XCTAssertTrue(run.description.contains(
            "protocol.lua:5: SRErrorDomain 1 (noAuthorization): not authorized for ambientLightSensor (status notDetermined)"), run.description)

        // A table raised without __tostring: no address in the message (determinism).
        let error2 = try h.failure(#"""
        schedule.after("90m", function()
          error({ code = 42 })
        end)
        """#)
        let run2 = try XCTUnwrap(error2 as? RunError, "\(error2)")
        XCTAssertEqual(run2.time, "2026-03-02 01:30")
        XCTAssertEqual(run2.line, 2)
        XCTAssertFalse(run2.description.contains("0x"), run2.description)
        XCTAssertTrue(run2.description.contains("protocol.lua:2: (error object is a table without __tostring: {code = 42})"), run2.description)
    }

    /// A host function called with a bad argument is named as the protocol calls it, also through pcall.
    func testArgumentErrorsNameTheHostFunction() throws {
        let h = try ProtocolHarness()
        let outcome = try h.run(#"""
        print(select(2, pcall(report.row, "t", 5)))
        print(select(2, pcall(sensorkit.reader, 5)))
        print(select(2, pcall(schedule.at, {}, print)))
        """#, days: 1)
        XCTAssertEqual(outcome.output.split(separator: "\n").map(String.init), [
            "bad argument #2 to 'report.row' (table expected, got number)",
            "bad argument #1 to 'sensorkit.reader' (string expected, got number)",
            "bad argument #1 to 'schedule.at' (time expected (seconds, or text like \"day 3 09:00\"), got table)",
        ])
    }

    func testErrorInACompletionOrInTheSecondParticipant() throws {
        let h = try ProtocolHarness()
        let error = try h.failure(#"""
        local T = require "t"
        T.study({ "ambientLightSensor" })
        sensorkit.requestAuthorization({ "ambientLightSensor" }, function(e)
          if sensorkit.participant() == "B" then error("participant B is not expected") end
        end)
        """#, scenario: #"return { participants = { { id = "A" }, { id = "B" } } }"#, participants: nil)
        let run = try XCTUnwrap(error as? RunError, "\(error)")
        XCTAssertEqual(run.participant, "B")
        XCTAssertEqual(run.line, 4)
        XCTAssertTrue(run.description.hasPrefix("[B 2026-03-02 00:00] "), run.description)
        XCTAssertTrue(run.description.contains("protocol.lua:4: participant B is not expected"), run.description)
    }

    // MARK: malformed scenarios

    func testMalformedScenariosNameFileAndField() throws {
        let h = try ProtocolHarness()
        let cases: [(String, String, String)] = [
            (#"return { participants = { { id = "A", consnt = {} } } }"#, "participants[1].consnt", "unknown field — did you mean 'consent'?"),
            (#"return { swiches = {} }"#, "swiches", "unknown field — did you mean 'switches'?"),
            (#"return { participants = { { id = "A", consent = { heartRate = "maybe" } } } }"#,
             "participants[1].consent.heartRate", "expected one of allow, deny, cancel, dontEnroll"),
            (#"return { participants = { { id = "A", consent = { hartRate = "deny" } } } }"#,
             "participants[1].consent.hartRate", "unknown sensor — did you mean 'heartRate'?"),
            (#"return { participants = { { id = "A" }, { id = "B", events = { { at = "day 0 12:00", revoke = "heartRate" } } } } }"#,
             "participants[2].events[1].at", "expected \"day N HH:MM\" with N from 1, got \"day 0 12:00\""),
            (#"return { participants = { { id = "A", events = { { at = "2026-13-01", revoke = "heartRate" } } } } }"#,
             "participants[1].events[1].at", "got \"2026-13-01\""),
            (#"return { participants = { { id = "A", events = { { delete = "heartRate", from = "day 1 10:00", to = "day 1 12:00", at = "tomorrow" } } } } }"#,
             "participants[1].events[1].at", "got \"tomorrow\""),
            (#"return { participants = { { id = "A", events = { { at = "day 2 10:00", revoke = "heartRat" } } } } }"#,
             "participants[1].events[1].revoke", "expected a sensor name — did you mean 'heartRate'?"),
            (#"return { participants = { { id = "A", events = { { at = "day 2 10:00", clockJump = "soon" } } } } }"#,
             "participants[1].events[1].clockJump", "expected seconds or a duration"),
            (#"return { switches = { holdingMode = "strict" } }"#, "switches.holdingMode", "did you mean 'strictDoc'?"),
            (#"return { start = "2026-02-30x" }"#, "start", "expected a date"),
            (#"return { start = "2026-02-30" }"#, "start", "expected a date"),          // no such day (not March 2nd)
            (#"return { participants = { { id = "A", events = { { at = "2026-03-03 10:xx", revoke = "heartRate" } } } } }"#,
             "participants[1].events[1].at", "got \"2026-03-03 10:xx\""),
            (#"return { participants = { { id = "A", events = { { from = "day 2 10:00", to = "day 2 09:00", locked = true } } } } }"#,
             "participants[1].events[1]", "`from` must be before `to`"),
            (#"return { participants = { { id = "A" }, { id = "A" } } }"#, "participants", "participant ids must be unique"),
        ]
        for (scenario, path, message) in cases {
            guard let error = try? h.failure("return 1", scenario: scenario) else {
                XCTFail("accepted: \(scenario)")
                continue
            }
            let e = try XCTUnwrap(error as? ScenarioError, "\(error)")
            XCTAssertTrue(e.file.hasSuffix("scenario.lua"), e.description)
            XCTAssertEqual(e.path, path, e.description)
            XCTAssertTrue(e.message.contains(message), e.description)
            XCTAssertTrue(e.description.contains("scenario.lua: \(path): "), e.description)
        }
    }

    // MARK: the example protocol

    // MARK: determinism

    func testSameProtocolTwiceGivesByteIdenticalReports() throws {
        let source = #"""
        local T = require "t"
        T.study({ "ambientLightSensor", "heartRate" })
        local light = sensorkit.reader "ambientLightSensor"
        local hr = sensorkit.reader "heartRate"
        local counts = {}
        light.delegate = {
          didChangeAuthorizationStatus = function(r, s) if s == "authorized" then r:startRecording() end end,
          didFetchResult = function(r, req, res)
            local hour = os.date("%H", math.floor(sensorkit.wallTime(res.timestamp)))
            counts[hour] = (counts[hour] or 0) + 1
            return true
          end,
          didCompleteFetch = function(r, req)
            for hour, n in pairs(counts) do report.row("by_hour", { hour = hour, n = n, r = math.random(1000) }) end
            counts = {}
          end,
        }
        hr.delegate = { didChangeAuthorizationStatus = function(r, s) if s == "authorized" then r:startRecording() end end }
        sensorkit.requestAuthorization({ "ambientLightSensor", "heartRate" }, function() end)
        schedule.daily("09:00", function(now)
          light:fetch { from = now - days(2), to = now }
          for _, d in ipairs(hr:devices()) do
            local s = hr:samples { device = d, from = now - days(1) - hours(2), to = now - days(1) }
            report.row("hr", { day = time.day(now), device = d.model, n = s:count(), mean = s:mean("heartRate"),
                               p90 = s:quantile("heartRate", 0.9), lux = light:samples { from = now - days(2), to = now }:mean("lux") })
          end
          log.info("day %s", time.day(now))
        end)
        """#
        let h1 = try ProtocolHarness()
        let a = try h1.run(source, days: 4, participants: 2)
        let h2 = try ProtocolHarness()
        let b = try h2.run(source, days: 4, participants: 2)
        XCTAssertFalse(a.runner.report.table("hr")?.rows.isEmpty ?? true)
        XCTAssertFalse(a.runner.report.table("by_hour")?.rows.isEmpty ?? true)
        XCTAssertEqual(a.report, b.report)
        XCTAssertEqual(a.output, b.output)
        for table in a.runner.report.tables {
            XCTAssertEqual(a.runner.report.renderCSV(table), b.runner.report.renderCSV(b.runner.report.table(table.name)!))
        }
    }
}
