import SensorKitModel
import StudyReport

/// What a participant's fetches deliver to the protocol, published batch by batch to
/// whoever subscribed: the run report's data coverage (`ReportBook.follow`). The fetch
/// path publishes — a `reader:samples{}` set as its pass reads each chunk, `reader:fetch`
/// as it delivers each chunk — and knows no subscriber.
public final class Deliveries {
    /// Called with each batch of samples delivered (deletion records are not published).
    public typealias Subscriber = (SampleBatch) -> Void
    private var subscribers: [Subscriber] = []

    public init() {}

    /// Calls `subscriber` with every batch of samples delivered from now on.
    public func subscribe(_ subscriber: @escaping Subscriber) { subscribers.append(subscriber) }

    /// The chunks of `plan`, read one at a time as asked for; each chunk of a sample stream
    /// is published as it is read, unless `publishing` is false (a plan read again whose
    /// every chunk an earlier complete read published: the same samples, delivered once).
    /// `columns`: those the reader needs (`FetchPlan.makeIterator(columns:)`); what is
    /// published is the same rows and times whatever it is.
    func chunks(of plan: FetchPlan, publishing: Bool = true, columns: ColumnProjection = .all) -> DeliveredChunks {
        DeliveredChunks(chunks: plan.makeIterator(columns: columns), deliveries: plan.stream == .samples && publishing ? self : nil)
    }

    fileprivate func publish(_ batch: SampleBatch) {
        for subscriber in subscribers { subscriber(batch) }
    }
}

/// A fetch plan's chunks as delivered (`Deliveries.chunks(of:)`): reading one publishes it.
struct DeliveredChunks {
    var chunks: FetchChunkIterator
    let deliveries: Deliveries?

    /// The next chunk, nil at the end; rethrows the source's read error (`SampleReadError`).
    mutating func next() throws -> FetchChunk? {
        guard let chunk = try chunks.next() else { return nil }
        deliveries?.publish(chunk.batch)
        return chunk
    }
}

extension ReportBook {
    /// Subscribes the data coverage to what `participant`'s fetches deliver.
    public func follow(_ deliveries: Deliveries, participant: String) {
        deliveries.subscribe { batch in self.coverage.note(batch, participant: participant) }
    }
}
