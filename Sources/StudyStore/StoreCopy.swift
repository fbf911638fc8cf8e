import Foundation
import SensorKitModel

extension RecordedStore {
    /// Stores `source`'s `sensor` stream of one participant's `device` over (start, end] in
    /// write time, in one import transaction of one-hour pieces (the participant is added with
    /// `timeZone` if new). Returns the rows stored. Rethrows the source's read errors and the
    /// store's; nothing is stored when one is thrown.
    public func copy(_ sensor: Sensor, from source: any SampleSource, participant: String, device: SRDevice,
                     start: Double, end: Double, timeZone: String) throws -> Int {
        let (_, stats) = try importing { session in
            try session.addParticipant(RecordedParticipant(id: participant, timeZone: timeZone))
            var t = start
            while t < end {
                let hi = min(end, t + 3_600)
                try session.append(participant: participant, device: device,
                                   source.samples(participant: participant, sensor: sensor, device: device, writtenAfter: t, through: hi))
                t = hi
            }
        }
        return stats.rowsStored
    }
}
