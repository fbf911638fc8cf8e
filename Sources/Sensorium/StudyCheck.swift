import Foundation
import SensorKitModel
import StudyRuntime

/// One problem `Study.check` found in a protocol's `study{}` declaration or in its use of
/// sensors, as `sensorium check` prints it.
public struct StudyDiagnostic: Sendable, Equatable, CustomStringConvertible {
    /// How serious a problem is: an error stops App Review or SensorKit; a warning may.
    public enum Severity: String, Sendable, Equatable {
        /// The study would be refused, or SensorKit would answer with an error.
        case error
        /// Worth fixing; the study can still run.
        case warning
    }

    /// Error or warning.
    public var severity: Severity
    /// A stable identifier of the problem (`"unknown-sensor"`, `"used-without-entitlement"`, `"missing-study"`).
    public var code: String
    /// The protocol file the problem is in (the protocol's path as the study names it).
    public var file: String
    /// The line (1-based) the problem is about, when it can be found in the file.
    public var line: Int?
    /// The declared key involved (`"entitlements[2]"`, `"sensors.accelerometer"`), if any.
    public var key: String?
    /// What is wrong, with the corrected spelling when there is one (`— did you mean 'x'?`).
    public var message: String

    /// `protocol.lua:6: error[unknown-sensor] sensors.ambientLightSenor: unknown sensor …`: the
    /// line `sensorium check` prints.
    public var description: String {
        "\(file)\(line.map { ":\($0)" } ?? ""): \(severity.rawValue)[\(code)]" + (key.map { " \($0)" } ?? "") + ": " + message
    }

    /// `d` of `file`, its line found in `source` (`ManifestDiagnostics.line`).
    init(_ d: Diagnostic, file: String, source: [String]) {
        severity = d.severity == .error ? .error : .warning
        code = d.code
        self.file = file
        line = ManifestDiagnostics.line(of: d, in: source)
        key = d.key
        // The message with its hint: what follows "error[code] key: " in `descriptionWithHint`.
        message = String(d.descriptionWithHint.dropFirst(d.description.count - d.message.count))
    }

    /// A diagnostic about the whole file (no line, no key).
    init(_ severity: Severity, _ code: String, file: String, message: String) {
        self.severity = severity
        self.code = code
        self.file = file
        self.message = message
    }
}

/// What `Study.check` found: the protocol's diagnostics, and whether its top level ran.
public struct StudyCheck: Sendable {
    /// The protocol file checked.
    public var file: String
    /// Every problem found, each once, in the order `sensorium check` prints them: the
    /// declaration's own, then sensors used without an entitlement or a usage detail. A
    /// protocol without `study{}` has one diagnostic, `missing-study`.
    public var diagnostics: [StudyDiagnostic]
    /// Whether the protocol declares `study{}` (when not, `diagnostics` says how to).
    public var declaresStudy: Bool
    /// The error that stopped the protocol's top level, with its traceback, when it failed
    /// (the check then covers only what ran before it); nil when the top level ran through.
    public var topLevelError: String?

    /// The number of diagnostics that are errors.
    public var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }
    /// The number of diagnostics that are warnings.
    public var warningCount: Int { diagnostics.count - errorCount }
    /// Whether the protocol passes: a `study{}` declaration and no errors.
    public var passed: Bool { declaresStudy && errorCount == 0 }

    /// `protocol.lua: 1 error, 0 warnings`: the summary line `sensorium check` prints.
    public var summary: String {
        "\(file): \(errorCount) error\(errorCount == 1 ? "" : "s"), \(warningCount) warning\(warningCount == 1 ? "" : "s")"
    }
}

extension Study {
    /// Checks the protocol as App Review and SensorKit's runtime checks would: runs its top
    /// level for one default participant (one day, no scenario; nothing scheduled runs),
    /// then validates its `study{}` declaration and the sensors it used against it (each
    /// used sensor needs an entitlement and a usage detail). `strictPrivacyPolicy` makes a
    /// missing privacy policy URL an error. A failing top level does not throw: it is
    /// `topLevelError`, and the check covers what ran. Throws `StudyError` when the
    /// participant's state cannot be set up.
    public func check(strictPrivacyPolicy: Bool = false) throws -> StudyCheck {
        var study = self
        study.world = .simulated(scenario: nil)
        study.configuration.participants = 1
        study.configuration.days = 1
        let file = self.protocol.path
        var result = StudyCheck(file: file, diagnostics: [], declaresStudy: false, topLevelError: nil)
        guard let participant = try study.prepareRuns().first else { return result }
        participant.refusesUnknownStudyNames = false   // reported below with every other problem
        do {
            try participant.runTopLevel()
        } catch let e as RunError {
            result.topLevelError = e.error.report()
        } catch {
            throw StudyError(StudySession.message(of: error))
        }
        let used = participant.usedSensors.keys.sorted { $0.rawValue < $1.rawValue }
        guard let manifest = participant.manifest else {
            result.diagnostics = [StudyDiagnostic(.error, "missing-study", file: file,
                                                  message: "no study{} declaration; " + StudyManifest.missingStudyAdvice(for: used))]
            return result
        }
        result.declaresStudy = true
        let source = self.protocol.source.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
            ?? ManifestDiagnostics.sourceLines(file)
        var seen = Set<String>()
        result.diagnostics = Study.diagnostics(manifest, used: participant.usedSensors, strict: strictPrivacyPolicy)
            .filter { seen.insert($0.description).inserted }
            .map { StudyDiagnostic($0, file: file, source: source) }
        return result
    }

    /// The declaration's own problems, then each used sensor (by name) without an
    /// entitlement or a usage detail.
    static func diagnostics(_ manifest: StudyManifest, used: [Sensor: String], strict: Bool) -> [Diagnostic] {
        var diagnostics = manifest.validate(strictPrivacyPolicy: strict)
        let resolved = manifest.resolved()
        for (sensor, usage) in used.sorted(by: { $0.key < $1.key }) {
            if !resolved.entitledSensors.contains(sensor) {
                diagnostics.append(Diagnostic(.error, "used-without-entitlement",
                                              "\(usage)(\"\(sensor.rawValue)\") is used, but the study's entitlements do not include '\(sensor.info.entitlement)': SensorKit answers invalidEntitlement (0)",
                                              sensor: sensor, key: "entitlements", suggestion: sensor.info.entitlement, errorCode: .invalidEntitlement))
            }
            if resolved.usageDetails[sensor] == nil && resolved.detailProblems[sensor] == nil {
                diagnostics.append(Diagnostic(.error, "used-without-usage-detail",
                                              "\(usage)(\"\(sensor.rawValue)\") is used, but `sensors` has no usage detail for it (NSSensorKitUsageDetail → \(sensor.info.usageKey))",
                                              sensor: sensor, key: "sensors.\(sensor.rawValue)", errorCode: .invalidInfoPlist))
            }
        }
        return diagnostics
    }
}
