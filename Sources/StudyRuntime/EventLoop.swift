/// The virtual-time event queue of one participant's run.
///
/// Events run in order of (time, insertion); an event scheduled for the
/// current time runs after the events already queued for it. Repeating
/// schedules re-queue themselves. Delegate deliveries are queued at "now", so
/// they run after the code that caused them has returned, as in SensorKit.
public final class EventLoop {
    public typealias Action = () throws -> Void

    struct Event {
        var time: Double
        var sequence: Int
        var id: Int
        var action: Action
    }

    private var heap: [Event] = []
    private var nextSequence = 0
    private var nextID = 1
    private var cancelled: Set<Int> = []

    public init() {}

    public var isEmpty: Bool { heap.isEmpty }
    public var count: Int { heap.count }

    /// Queues `action` at `time`; returns an id for `cancel`.
    @discardableResult
    public func schedule(at time: Double, id: Int? = nil, _ action: @escaping Action) -> Int {
        let eventID = id ?? allocateID()
        push(Event(time: time, sequence: nextSequence, id: eventID, action: action))
        nextSequence += 1
        return eventID
    }

    /// A fresh id for a repeating schedule (every occurrence shares it).
    public func allocateID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    public func cancel(_ id: Int) { cancelled.insert(id) }
    public func isCancelled(_ id: Int) -> Bool { cancelled.contains(id) }

    /// The time of the next live event.
    public var nextTime: Double? {
        while let top = heap.first, cancelled.contains(top.id) { _ = pop() }
        return heap.first?.time
    }

    /// Removes and returns the next live event at or before `limit`.
    public func next(upTo limit: Double) -> (time: Double, action: Action)? {
        while let top = heap.first {
            if cancelled.contains(top.id) { _ = pop(); continue }
            guard top.time <= limit else { return nil }
            let e = pop()
            return (e.time, e.action)
        }
        return nil
    }

    private func precedes(_ a: Event, _ b: Event) -> Bool {
        a.time < b.time || (a.time == b.time && a.sequence < b.sequence)
    }

    private func push(_ e: Event) {
        heap.append(e)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard precedes(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private func pop() -> Event {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, precedes(heap[l], heap[m]) { m = l }
                if r < heap.count, precedes(heap[r], heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
