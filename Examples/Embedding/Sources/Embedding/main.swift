// A program that embeds Sensorium: it supplies its own data (a CSV file of its own
// layout), registers a Lua function and a Lua class of its own, runs a protocol that
// uses them and prints the table the protocol reports. Run it in Examples/Embedding.
import Foundation
import LuaHost     // LuaObject: the app's own Lua class
import Sensorium

/// One line of the app's heart-rate export: `who;local time;bpm;quality`.
struct Reading: Sendable {
    var who: String
    var time: Double
    var bpm: Double
    var quality: String
}

/// The app's export as a Sensorium data source: one watch per participant.
struct HeartRateFile: StudyDataSource {
    static let zone = TimeZone(identifier: "Europe/Berlin")!
    /// The watch's uptime clock started on 1 March; it writes a reading a minute after taking it.
    static let boot = 1_772_319_600.0, writeDelay = 60.0
    let readings: [Reading]

    init(path: String) throws {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = HeartRateFile.zone
        format.dateFormat = "yyyy-MM-dd HH:mm"
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        readings = try lines.enumerated().dropFirst().map { n, line in
            let f = line.split(separator: ";").map(String.init)
            guard f.count == 4, let date = format.date(from: f[1]), let bpm = Double(f[2]) else {
                throw StudyError("\(path):\(n + 1): expected who;yyyy-MM-dd HH:mm;bpm;quality, got '\(line)'")
            }
            return Reading(who: f[0], time: date.timeIntervalSince1970, bpm: bpm, quality: f[3])
        }
    }

    func participants() -> [StudyParticipant] {
        var ids: [String] = []
        for r in readings where !ids.contains(r.who) { ids.append(r.who) }
        return ids.map { StudyParticipant(id: $0, timeZone: HeartRateFile.zone, hasWatch: true) }
    }

    func samples(of sensor: String, participant: String, device: StudyDevice,
                 writtenAfter after: Double, through: Double) -> [Sample] {
        guard sensor == "heartRate", device == .watch else { return [] }
        return readings.filter { $0.who == participant && $0.time + Self.writeDelay > after && $0.time + Self.writeDelay <= through }
            .map { r in
                Sample(written: r.time + Self.writeDelay, time: r.time,
                       fields: ["heartRate": .number(r.bpm), "confidence": .text(r.quality), "timestamp": .number(r.time - Self.boot)])
            }
    }
}

/// Readings counted per heart-rate zone: a Lua class of the app's own (`tally:add(zone)`,
/// `tally.rest`, `tally.moderate`, `tally.vigorous`).
final class ZoneTally: LuaObject {
    static let zones = ["rest", "moderate", "vigorous"]
    var counts: [String: Int] = [:]
}

/// A row of the protocol's `heart_rate_zones` table, as Swift reads it back.
struct DayZones: Decodable {
    var participant: String
    var day: String
    var vigorous: Int
}

do {
    var study = Study(.file("protocol.lua"), world: .data(try HeartRateFile(path: "heart_rate.csv")))
    study.configuration.days = 5
    study.configuration.timeZone = "Europe/Berlin"
    // The app's own Lua function: `zone(bpm)` names a heart-rate zone.
    study.register("zone") { (bpm: Double) -> String in
        bpm < 100 ? "rest" : bpm < 140 ? "moderate" : "vigorous"
    }
    // The app's own Lua class, and `zoneTally()`, which makes one.
    study.register(class: ZoneTally.self, name: "ZoneTally") { tally in
        tally.method("add") { (t: ZoneTally, zone: String) -> Int in
            guard ZoneTally.zones.contains(zone) else { throw StudyError("unknown zone '\(zone)'") }
            t.counts[zone, default: 0] += 1
            return t.counts[zone]!
        }
        for zone in ZoneTally.zones { tally.property(zone) { $0.counts[zone, default: 0] } }
    }
    study.register("zoneTally") { () -> ZoneTally in ZoneTally() }
    let result = try study.run()
    guard let table = result.table("heart_rate_zones") else { throw StudyError("the protocol reported no heart_rate_zones") }
    print(table.text, terminator: "")
    for row in try table.decodeRows(as: DayZones.self) where row.vigorous > 0 {
        print("\(row.participant) was vigorous on \(row.day) for \(row.vigorous * 20) minutes")
    }
    for finding in result.findings { print("finding: \(finding)") }
} catch {
    FileHandle.standardError.write(Data("embedding: \(error)\n".utf8))
    exit(1)
}
