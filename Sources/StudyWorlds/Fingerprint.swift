import Foundation
import StudyStore
import StudyReport
import StudyRuntime

/// The identity of a cohort run: digests of the protocol, the Lua modules it can load
/// (the stdlib, built in or from `stdlibFolder`, and the protocol's folder), the scenario, the recording, the seed and the flags
/// that change results. Shards of one run share it; `--jobs` and the shard index are not part of it.
public struct Fingerprint: Sendable, Equatable {
    public var parts: [String: String]

    public var digest: String {
        var h = StableDigest()
        for (k, v) in parts.sorted(by: { $0.key < $1.key }) { h.add(k); h.add(v) }
        return h.hex
    }

    public init(parts: [String: String]) { self.parts = parts }

    /// The fingerprint of `options` with `shardCount` shards.
    public init(options: StudyOptions, shardCount: Int) {
        func file(_ path: String?) -> String {
            var h = StableDigest()
            if let path { h.add(path.split(separator: "/").last.map(String.init) ?? path); h.add(FileManager.default.contents(atPath: path) ?? Data()) }
            return h.hex
        }
        var modules = StableDigest()
        if options.stdlibFolder == nil {
            for (name, module) in Stdlib.modules.sorted(by: { $0.key < $1.key }) {
                modules.add(name + ".lua")
                modules.add(Data(module.source))
            }
        }
        for dir in (options.stdlibFolder.map { [$0] } ?? []) + options.moduleDirectories {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".lua") }.sorted()
            for name in names {
                modules.add(name)
                modules.add(FileManager.default.contents(atPath: dir + "/" + name) ?? Data())
            }
        }
        var recording = StableDigest()
        if let path = options.recordingPath {
            recording.add(path)
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? -1
            recording.add(String(size))
            recording.add(options.recordingParticipant ?? "")
        }
        var flags = StableDigest()
        for f in [options.days.map(String.init) ?? "-", options.participants.map(String.init) ?? "-", options.start ?? "-",
                  options.timeZone ?? "-", String(options.failFast), String(options.limits.memoryBytes),
                  String(options.limits.instructionBudget), String(options.limits.timeLimitMilliseconds), String(shardCount)] {
            flags.add(f)
        }
        var seed = StableDigest()
        seed.add(options.seed.map(String.init) ?? "scenario")
        parts = ["protocol": file(options.protocolPath), "modules": modules.hex, "scenario": file(options.scenarioPath),
                 "recording": recording.hex, "seed": seed.hex, "flags": flags.hex]
    }
}

extension ShardFile {
    /// A shard's file carrying the run's fingerprint.
    public init(fingerprint: Fingerprint, shard: Shard, participants: [String], output: String, report: ReportBook, findings: [Finding],
                page: RunReportPage.Facts? = nil) {
        self.init(fingerprint: fingerprint.digest, fingerprintParts: fingerprint.parts, shard: shard, participants: participants,
                  output: output, report: report, findings: findings, page: page)
    }
}
