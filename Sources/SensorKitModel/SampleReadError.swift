import Foundation

/// A sample source could not read data it holds (an unreadable or corrupt chunk of a
/// recorded store), thrown by `SampleSource`'s reads and passed on by the fetch iterator.
/// Broken data is an error, never missing data: the participant's run stops with this
/// error rather than going on with an empty batch.
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
