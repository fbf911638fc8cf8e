import ArgumentParser
import Foundation
import StudyStore
import SensorKitModel

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what a recorded study store holds: participants, devices, sensors, spans, counts, gaps, deletions."
    )

    @Argument(help: "The study store (.sqlite).")
    var store: String

    @Option(help: "Only this participant.")
    var participant: String?

    @Option(help: "Report write-time gaps at least this many minutes long (default: 60, or 20 periods of a sensor's cadence).")
    var gapMinutes: Double?

    func validate() throws {
        if let gapMinutes, !(gapMinutes > 0 && gapMinutes.isFinite) { throw ValidationError("--gap-minutes must be a positive number, got \(gapMinutes)") }
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: store) else { throw CommandError("\(store): no such file (a study store is made by `sensorium import … --into \(store)`)") }
        let rec: RecordedSource
        do {
            rec = try RecordedStore(path: store, readOnly: true).source()
        } catch {
            printError(error is ImportError || error is StoreFormatError ? "\(error)" : "\(store): \(error)")
            throw ExitCode(1)
        }
        if let side = RecordedStore.beingWritten(store) {
            printError("warning: \(store)\(side) lies beside the store: an import into it is under way, or was stopped before it ended "
                + "(what it had not committed is not in the store); when no import runs, run that import again")
        }
        let summaries = try rec.streamSummaries()
        print("\(store): \(rec.participants.count) participant(s), \(summaries.reduce(0) { $0 + $1.rows }) samples in \(summaries.reduce(0) { $0 + $1.chunks }) chunks")
        if let span = rec.dataSpan {
            let utc = TimeZone(identifier: "UTC")!
            print("write-time span: \(label(span.after, utc)) … \(label(span.through, utc)) UTC")
        }
        for p in rec.participants {
            if let only = participant, only != p.id { continue }
            let zone = TimeZone(identifier: p.timeZone) ?? TimeZone(identifier: "UTC")!
            print("")
            print("participant \(p.id)  time zone \(p.timeZone)\(p.timeZoneKnown ? "" : " (unknown: assumed)")")
            for d in rec.devices(participant: p.id) {
                print("  device \(d.kind.rawValue): \(d.name), \(d.model), \(d.systemName) \(d.systemVersion), \(d.productType)")
                for s in summaries where s.participant == p.id && s.device == d {
                    let span = s.firstWrite.map { "\(label($0, zone)) … \(label(s.lastWrite!, zone))" } ?? "-"
                    print("    \(s.sensor.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0)) \(String(format: "%11d", s.rows)) samples  \(String(format: "%5d", s.chunks)) chunks  written \(span)")
                    let period = s.sensor.info.cadence.nominalPeriod
                    guard period != nil || gapMinutes != nil else { continue }
                    let minimum = gapMinutes.map { $0 * 60 } ?? max(3_600, 20 * (period ?? 0))
                    let gaps = try rec.writeGaps(participant: p.id, device: d, sensor: s.sensor, minimum: minimum)
                    guard !gaps.isEmpty else { continue }
                    let total = gaps.reduce(0) { $0 + $1.duration }
                    print("      \(gaps.count) gap(s) ≥ \(Int(minimum / 60)) min, \(String(format: "%.1f", total / 3_600)) h in all; longest:")
                    for g in gaps.sorted(by: { $0.duration > $1.duration }).prefix(3) {
                        print("        \(label(g.after, zone)) … \(label(g.through, zone))  (\(String(format: "%.1f", g.duration / 3_600)) h)")
                    }
                }
            }
            let recording = rec.recordingIntervals(participant: p.id)
            if !recording.isEmpty {
                print("  recording intervals:")
                for r in recording {
                    print("    \(r.sensor.rawValue) \(r.device.map { $0.kind.rawValue } ?? "all devices"): \(label(r.after, zone)) … \(label(r.through, zone)) by \(r.stakeholder)")
                }
            }
            let auth = rec.authorizationTimeline(participant: p.id)
            if auth.isEmpty {
                print("  authorization: unknown (a replay treats the sensors as authorized, with a warning)")
            } else {
                print("  authorization:")
                for a in auth { print("    \(label(a.at, zone))  \(a.sensor.rawValue) → \(a.status.name)") }
            }
            let deletions = rec.deletions(participant: p.id)
            if deletions.isEmpty {
                print("  deletion records: none")
            } else {
                print("  deletion records:")
                for e in deletions {
                    print("    \(label(e.at, zone))  \(e.sensor.rawValue) \(e.device.map { $0.kind.rawValue } ?? "all devices"): written \(label(e.range.after, zone)) … \(label(e.range.through, zone)) removed (\(e.reason.name))")
                }
            }
        }
    }

    func label(_ t: Double, _ zone: TimeZone) -> String {
        guard t.isFinite else { return t > 0 ? "∞" : "-∞" }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = zone
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: t))
    }
}
