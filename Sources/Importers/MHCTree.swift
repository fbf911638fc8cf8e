import Foundation
import SensorKitModel
import StudyStore

/// A MyHeartCounts upload tree as the app writes it to cloud storage
/// (`recorded-formats.md` §1; MyHeartCounts-iOS `SensorKitDataFetcher.swift` L244–267,
/// `MyHeartCountsStandard+HealthKit.swift` L172–192):
///
/// - `users/<uid>/SensorKit/<SRSensor raw value>/<UUID>.csv.zstd` — one CSV upload per
///   batch (wrist temperature: one per session), read by `MHCFormat`;
/// - `users/<uid>/liveHealthSamples/<SRSensor raw value>_<UUID>.json.zstd` — FHIR
///   Observation arrays for on-wrist state, visits, device usage and ECG, read by `MHCFHIR`;
/// - PPG in the producer's binary `.mhcPPG` files, read by `MHCPPG`.
///
/// A source may be the folder of one user (`users/<uid>`), the `users` folder, or a folder
/// holding `users/`. The participant is the `<uid>` folder. Everything else under a user is
/// named in the summary as not read, with why.
enum MHCTree {
    struct CSVJob { var participant: String; var path: String; var sensor: Sensor }
    struct FHIRJob { var participant: String; var path: String; var sensor: Sensor }
    struct PPGJob { var participant: String; var path: String }

    struct Plan {
        var csv: [CSVJob] = []
        var fhir: [FHIRJob] = []
        var ppg: [PPGJob] = []
        var participants: [String] { Array(Set(csv.map(\.participant) + fhir.map(\.participant) + ppg.map(\.participant))).sorted() }
        var paths: [String] { csv.map(\.path) + fhir.map(\.path) + ppg.map(\.path) }
        var isEmpty: Bool { csv.isEmpty && fhir.isEmpty && ppg.isEmpty }
    }

    static let csvSuffixes = [".csv", ".csv.zstd", ".csv.zst", ".csv.gz"]
    static let jsonSuffixes = [".json", ".json.zstd", ".json.zst", ".json.gz"]
    static let ppgSuffixes = [".mhcPPG", ".mhcppg", ".mhcPPG.zstd", ".mhcppg.zstd"]

    /// The sensor a folder or file-name prefix names: SensorKit's raw value
    /// (`com.apple.SensorKit.als`) or the Swift name (`ambientLightSensor`).
    static func sensor(named id: String) -> Sensor? {
        Sensor.allCases.first { $0.identifier.caseInsensitiveCompare(id) == .orderedSame || $0.rawValue == id }
    }

    /// Every upload under `roots`, and (into `stats.notRead`) everything not read, with why.
    /// Throws when a root is not a MyHeartCounts tree at all.
    static func collect(_ roots: [String], participant only: String?, stats: inout ImportStats) throws -> Plan {
        var plan = Plan()
        for root in roots {
            let users = try userFolders(root, stats: &stats)
            for (uid, path) in users {
                if let only, only != uid { continue }
                try collectUser(uid, path, into: &plan, stats: &stats)
            }
        }
        return plan
    }

    /// The `<uid>` folders a root stands for: the root itself when it holds `SensorKit/` or
    /// `liveHealthSamples/`; its children when it is (or holds) a `users` folder. What else is
    /// in the `users` folder, or beside it, goes into `stats.notRead` with why.
    static func userFolders(_ root: String, stats: inout ImportStats) throws -> [(String, String)] {
        guard isDir(root) else {
            throw ImportError(file: root, FileManager.default.fileExists(atPath: root)
                ? "expected a MyHeartCounts upload folder (users/<uid> holding SensorKit/ or liveHealthSamples/), found a file; for single CSV files use --format mhc-csv --participant ID"
                : "no such file or folder")
        }
        let children = try entries(root)
        if children.contains("SensorKit") || children.contains("liveHealthSamples") {
            return [(URL(fileURLWithPath: root).standardizedFileURL.lastPathComponent, root)]
        }
        let usersFolder = URL(fileURLWithPath: root).lastPathComponent == "users" ? root
            : children.contains("users") ? root + "/users" : nil
        guard let usersFolder else {
            throw ImportError(file: root, "not a MyHeartCounts upload tree: expected users/<uid>/SensorKit/<sensor id>/<UUID>.csv.zstd (a user's folder, the users folder, or the folder holding it)")
        }
        if usersFolder != root {
            for child in children where child != "users" { stats.skip(root + "/" + child, "beside the users folder (MyHeartCounts uploads are under users/<uid>/)") }
        }
        var users: [(String, String)] = []
        for uid in try entries(usersFolder) {
            let path = usersFolder + "/" + uid
            if isDir(path) { users.append((uid, path)) } else { stats.skip(path, "a file where a user's folder (users/<uid>/) was expected") }
        }
        return users
    }

    private static func collectUser(_ uid: String, _ path: String, into plan: inout Plan, stats: inout ImportStats) throws {
        for child in try entries(path) {
            let p = path + "/" + child
            switch child {
            case "SensorKit":
                guard isDir(p) else { stats.skip(p, "a file where the SensorKit upload folder was expected"); continue }
                for id in try entries(p) {
                    let folder = p + "/" + id
                    guard isDir(folder) else { stats.skip(folder, "a file where a sensor folder was expected"); continue }
                    guard let sensor = sensor(named: id) else {
                        stats.skip(folder, "not a SensorKit sensor id (expected SRSensor's raw value such as com.apple.SensorKit.als)")
                        continue
                    }
                    for f in try files(under: folder) {
                        if csvSuffixes.contains(where: { f.hasSuffix($0) }) {
                            plan.csv.append(CSVJob(participant: uid, path: f, sensor: sensor))
                        } else if sensor == .photoplethysmogram || ppgSuffixes.contains(where: { f.hasSuffix($0) }) {
                            plan.ppg.append(PPGJob(participant: uid, path: f))
                        } else {
                            stats.skip(f, "not a .csv, .csv.zstd or .mhcPPG upload")
                        }
                    }
                }
            case "liveHealthSamples":
                guard isDir(p) else { stats.skip(p, "a file where the liveHealthSamples folder was expected"); continue }
                for f in try files(under: p) {
                    let name = URL(fileURLWithPath: f).lastPathComponent
                    guard jsonSuffixes.contains(where: { name.hasSuffix($0) }) else {
                        stats.skip(f, "not a .json.zstd upload"); continue
                    }
                    let id = name.split(separator: "_", maxSplits: 1).first.map(String.init) ?? ""
                    guard let sensor = sensor(named: id) else {
                        stats.skip(f, notSensorUpload(id: id, inSubfolder: URL(fileURLWithPath: f).deletingLastPathComponent().path != p)); continue
                    }
                    guard MHCFHIR.sensors.contains(sensor) else {
                        stats.skip(f, "\(sensor.rawValue) is not uploaded as FHIR by MyHeartCounts (on-wrist, visits, device usage and ECG are)"); continue
                    }
                    plan.fhir.append(FHIRJob(participant: uid, path: f, sensor: sensor))
                }
            default:
                stats.skip(p, "not SensorKit data (MyHeartCounts keeps SensorKit uploads in SensorKit/ and liveHealthSamples/)")
            }
        }
    }

    /// Why a file of `liveHealthSamples/` whose name starts with `id`, not a SensorKit sensor
    /// id, is not read: a HealthKit sample upload (`<HealthKit type identifier>_<UUID>.json.zstd`,
    /// MyHeartCountsStandard+HealthKit.swift L172–192) when `id` is a HealthKit identifier
    /// (`HK…`) directly in the folder; otherwise not named as MyHeartCounts names an upload,
    /// `inSubfolder`: in a folder below it, where MyHeartCounts writes none.
    static func notSensorUpload(id: String, inSubfolder: Bool) -> String {
        let place = inSubfolder ? "in a subfolder of liveHealthSamples/, where MyHeartCounts writes no uploads, and " : ""
        if !inSubfolder, id.hasPrefix("HK") { return "not SensorKit data (a HealthKit sample upload: '\(ImportError.excerpt(id))')" }
        return "\(place)not named as a MyHeartCounts SensorKit upload (<sensor id>_<UUID>.json.zstd, such as com.apple.SensorKit.onWristState_…): "
            + "'\(ImportError.excerpt(id))' is not a SensorKit sensor id"
    }

    // MARK: Files

    static func isDir(_ p: String) -> Bool {
        var d: ObjCBool = false
        return FileManager.default.fileExists(atPath: p, isDirectory: &d) && d.boolValue
    }

    /// The names in a folder, sorted, without hidden ones.
    static func entries(_ p: String) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: p).filter { !$0.hasPrefix(".") }.sorted()
        } catch {
            throw ImportError(file: p, "cannot list the folder: \(error.localizedDescription)")
        }
    }

    /// The files under a folder, walked recursively, sorted by path.
    static func files(under p: String) throws -> [String] {
        var out: [String] = []
        for e in try entries(p) {
            let q = p + "/" + e
            if isDir(q) { out += try files(under: q) } else { out.append(q) }
        }
        return out
    }
}
