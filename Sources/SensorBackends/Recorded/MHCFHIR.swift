import Foundation
import SensorKitModel

/// MyHeartCounts' FHIR uploads: `users/<uid>/liveHealthSamples/<sensor id>_<UUID>.json.zstd`,
/// a JSON array of FHIR R4 Observations (MyHeartCounts-iOS `MyHeartCountsStandard+HealthKit.swift`
/// L172–194; one file per fetch batch of 100 or more observations).
enum MHCFHIR {
    /// The sensors MyHeartCounts uploads as FHIR Observations (`SensorKitDataFetcher.swift` L244–257).
    static let sensors: Set<Sensor> = [.onWristState, .visits, .deviceUsageReport, .electrocardiogram]

    /// Imports one Observation array. Until its mapping is built, the file is named in the
    /// summary as not read.
    static func importFile(_ job: MHCTree.FHIRJob, session: ImportSession) throws {
        session.stats.files -= 1
        session.stats.skip(job.path, "FHIR Observations of \(job.sensor.rawValue) are not read yet")
    }
}

/// MyHeartCounts' PPG uploads: the producer's binary `.mhcPPG` files.
enum MHCPPG {
    /// Until its decoder is built, the file is named in the summary as not read.
    static func importFile(_ job: MHCTree.PPGJob, session: ImportSession) throws {
        session.stats.files -= 1
        session.stats.skip(job.path, "MyHeartCounts PPG binary files are not read yet")
    }
}
