import Foundation

/// A sample source could not read data it holds (an unreadable or corrupt chunk of a
/// recorded store). Broken data is an error, never missing data: the participant's run
/// stops with this error rather than going on with an empty batch.
public struct SampleReadError: Error, Sendable, CustomStringConvertible {
    /// Where the data lives (the store's path).
    public var store: String
    public var participant: String
    public var sensor: Sensor
    public var device: SRDevice
    /// The write-time range asked for, (after, through] in Unix seconds.
    public var range: TimeRange
    /// What went wrong (SQLite's message, or the decoder's).
    public var message: String

    public init(store: String, participant: String, sensor: Sensor, device: SRDevice, range: TimeRange, message: String) {
        self.store = store
        self.participant = participant
        self.sensor = sensor
        self.device = device
        self.range = range
        self.message = message
    }

    public var description: String {
        func iso(_ t: Double) -> String {
            guard t.isFinite else { return t > 0 ? "∞" : "-∞" }
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime]
            return f.string(from: Date(timeIntervalSince1970: t))
        }
        return "cannot read \(store): participant \(participant), sensor \(sensor.rawValue), device \(device.name) (\(device.kind.rawValue)), "
            + "samples written in (\(iso(range.after)), \(iso(range.through))]: \(message)"
    }
}

/// How a source reports a read failure from `SampleSource.samples`, which cannot throw:
/// the failure is kept for the current thread (a participant's run stays on one thread)
/// and the thread's handler, if any, is called at once — the runtime's handler interrupts
/// the participant's Lua code, and the run then fails with the kept error.
public enum SampleReadFailures {
    private final class Slot: @unchecked Sendable {
        var failure: SampleReadError?
        var handler: (() -> Void)?
    }

    private static let key = "sensorium.sampleReadFailures"

    private static var slot: Slot {
        let dict = Thread.current.threadDictionary
        if let s = dict[key] as? Slot { return s }
        let s = Slot()
        dict[key] = s
        return s
    }

    /// Records `error` for the current thread (the first one is kept) and calls its handler.
    public static func report(_ error: SampleReadError) {
        let s = slot
        if s.failure == nil { s.failure = error }
        s.handler?()
    }

    /// The current thread's failure since the last call, cleared.
    public static func take() -> SampleReadError? {
        let s = slot
        defer { s.failure = nil }
        return s.failure
    }

    /// Runs `body` with `handler` called on every failure reported on this thread meanwhile.
    public static func observing<T>(_ handler: @escaping () -> Void, _ body: () throws -> T) rethrows -> T {
        let s = slot
        let previous = s.handler
        s.handler = handler
        defer { s.handler = previous }
        return try body()
    }
}
