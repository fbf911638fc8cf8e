import Foundation
import SensorBackends
import SensorKitModel

/// Where a cohort's samples come from. Shared by every worker thread: the simulator is a
/// pure function of the seed; a recorded store is opened once per worker (one SQLite
/// connection each) by `open()`.
enum CohortWorld: Sendable {
    case simulated(SimulatedSource)
    /// `opened` is the study the plan was made from; workers open their own.
    case recorded(path: String, participant: String?, opened: RecordedStudy)

    /// A worker's own view of the world (the simulated source itself; a recorded store opened anew).
    func open(fresh: Bool = false) throws -> WorkerWorld {
        switch self {
        case .simulated(let source): return WorkerWorld(source: source, recorded: nil)
        case .recorded(let path, let participant, let opened):
            let study = fresh ? try RecordedStudy(path: path, participant: participant) : opened
            return WorkerWorld(source: study.source, recorded: study)
        }
    }
}

/// One worker's sample source (and, for a replay, its recorded study).
struct WorkerWorld {
    var source: any SampleSource
    var recorded: RecordedStudy?
}

/// Everything needed to start any participant's run, on any thread.
struct CohortPlan: Sendable {
    var settings: RunSettings
    var setups: [ParticipantSetup]
    var world: CohortWorld

    /// A participant's run, set up but not started. For a replay, the recorded recording
    /// intervals and deletions enter the model and recorded authorization changes are scheduled.
    func makeRun(_ setup: ParticipantSetup, world: WorkerWorld, report: ReportBook,
                 output: @escaping (String) -> Void) throws -> ParticipantRun {
        let run = try ParticipantRun(setup: setup, settings: settings, source: world.source, report: report, output: output)
        if let recorded = world.recorded {
            for change in recorded.prepare(&run.model, participant: setup.id) {
                _ = run.loop.schedule(at: change.at) { [unowned run] in
                    try run.notify(run.model.authorization.setStatus(change.sensor, change.status))
                }
            }
        }
        return run
    }
}

/// What one participant's finished (or failed) run left behind, handed from its worker
/// thread to the thread that emits results (once, under the executor's lock).
final class ParticipantOutcome: @unchecked Sendable {
    let participant: String
    var output = ""
    let report = ReportBook()
    var findings: [Finding] = []
    var manifest: StudyManifest?
    var error: Error?

    init(participant: String) { self.participant = participant }
}

/// Runs a plan's participants on `jobs` threads and hands their outcomes to `emit` in
/// participant order on the calling thread. At most `2 × jobs` participants are running or
/// waiting to be emitted at any time, so memory stays bounded by the jobs, not the cohort.
/// With one job everything runs on the calling thread and output streams as it is printed.
struct CohortExecutor {
    let plan: CohortPlan
    let jobs: Int

    /// `emit` may throw to stop the run (running workers finish their participant; no new
    /// ones start); the error is rethrown after the workers have ended.
    /// With one job, `output` receives what participants print as they print it; with more,
    /// each participant's output is collected and arrives with its outcome.
    func run(output: @escaping (String) -> Void, emit: (ParticipantOutcome) throws -> Void,
             progress: (Int, Int) -> Void) throws {
        let total = plan.setups.count
        if jobs == 1 || total <= 1 {
            let world = try plan.world.open()
            for (i, setup) in plan.setups.enumerated() {
                try emit(CohortExecutor.runOne(plan, setup, world: world, output: output))
                progress(i + 1, total)
            }
            return
        }
        let queue = OutcomeQueue(count: total, window: 2 * jobs)
        let workers = min(jobs, total)
        for _ in 0..<workers {
            let plan = self.plan
            let thread = Thread {
                defer { queue.workerEnded() }
                let world: WorkerWorld
                do { world = try plan.world.open(fresh: true) } catch { queue.fail(error); return }
                while let i = queue.take() {
                    queue.put(i, CohortExecutor.runOne(plan, plan.setups[i], world: world, output: nil))
                }
            }
            thread.stackSize = 16 << 20
            queue.workerStarted()
            thread.start()
        }
        defer { queue.cancelAndWait() }
        for i in 0..<total {
            let outcome = try queue.await(i)
            try emit(outcome)
            queue.emitted(i)
            progress(i + 1, total)
        }
    }

    /// Runs one participant to its end or its first error, collecting what it reported and
    /// (unless `output` is given, which then receives it as it is printed) what it printed.
    static func runOne(_ plan: CohortPlan, _ setup: ParticipantSetup, world: WorkerWorld,
                       output: ((String) -> Void)?) -> ParticipantOutcome {
        let outcome = ParticipantOutcome(participant: setup.id)
        do {
            let sink: (String) -> Void = output ?? { [unowned outcome] in outcome.output += $0 }
            let run = try plan.makeRun(setup, world: world, report: outcome.report, output: sink)
            defer {
                outcome.findings = run.findings
                outcome.manifest = run.manifest
            }
            try run.run()
        } catch {
            outcome.error = error
        }
        return outcome
    }
}

/// The hand-over between worker threads and the emitting thread.
final class OutcomeQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private let count: Int
    private let window: Int
    private var nextToTake = 0
    private var emittedCount = 0
    private var results: [Int: ParticipantOutcome] = [:]
    private var cancelled = false
    private var runningWorkers = 0
    private var setupError: Error?

    init(count: Int, window: Int) {
        self.count = count
        self.window = window
    }

    /// The next participant index for a worker, waiting while the window is full; nil when done or cancelled.
    func take() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled && nextToTake < count && nextToTake >= emittedCount + window { condition.wait() }
        guard !cancelled, nextToTake < count else { return nil }
        nextToTake += 1
        return nextToTake - 1
    }

    func put(_ i: Int, _ outcome: ParticipantOutcome) {
        condition.lock()
        results[i] = outcome
        condition.broadcast()
        condition.unlock()
    }

    /// A worker could not open its world: the run fails with that error.
    func fail(_ error: Error) {
        condition.lock()
        if setupError == nil { setupError = error }
        condition.broadcast()
        condition.unlock()
    }

    func workerStarted() {
        condition.lock()
        runningWorkers += 1
        condition.unlock()
    }

    func workerEnded() {
        condition.lock()
        runningWorkers -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for participant `i`'s outcome and takes it out of the queue.
    func await(_ i: Int) throws -> ParticipantOutcome {
        condition.lock()
        defer { condition.unlock() }
        while results[i] == nil && setupError == nil { condition.wait() }
        if let outcome = results.removeValue(forKey: i) { return outcome }
        throw setupError!
    }

    func emitted(_ i: Int) {
        condition.lock()
        emittedCount = i + 1
        condition.broadcast()
        condition.unlock()
    }

    /// Stops handing out participants and waits until every worker has ended.
    func cancelAndWait() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while runningWorkers > 0 { condition.wait() }
        condition.unlock()
    }
}

/// A part of a cohort: `--shard i/n` runs the i-th of n contiguous, near-equal slices of
/// the participants (in scenario or store order), so that shards 1…n in order are the cohort.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 1-based.
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `i/n` (1 ≤ i ≤ n); nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, i >= 1, i <= n else { return nil }
        self.init(index: i, count: n)
    }

    public var description: String { "\(index)/\(count)" }

    /// This shard's slice of `items`: [⌊(i−1)·N/n⌋, ⌊i·N/n⌋).
    public func part<T>(of items: [T]) -> [T] {
        let n = items.count
        let lo = (index - 1) * n / count, hi = index * n / count
        return Array(items[lo..<hi])
    }
}

/// A failed `expect` check: recorded, and the participant's run goes on.
public struct Finding: Sendable, Equatable, Codable {
    public var participant: String
    /// Virtual local time, `YYYY-MM-DD HH:MM`.
    public var time: String
    /// `file:line` of the protocol line that made the check.
    public var location: String
    public var message: String

    public init(participant: String, time: String, location: String, message: String) {
        self.participant = participant
        self.time = time
        self.location = location
        self.message = message
    }

    /// `[P1 2026-03-05 08:00] protocol.lua:42: expected …`, as run errors are shown.
    public var description: String { "[\(participant) \(time)] \(location.isEmpty ? "" : location + ": ")\(message)" }
}
