import Foundation
import SensorKitModel
import StudyReport

/// Where a cohort's samples come from: a simulated world or a recorded store, made by the
/// wiring layer (`StudyWorlds`). Shared by every worker thread; each worker asks for its own
/// view with `open(fresh:)`.
public protocol CohortWorld: Sendable {
    /// A worker's own view of the world. `fresh`: a view of its own, not shared with any
    /// other thread or view, that runs participants one after another (a recorded store
    /// opened anew, one SQLite connection each; a simulated world with caches of its own,
    /// bounded per view whatever the cohort's size); otherwise the view may be the one the
    /// plan was made from, shared by participants that run interleaved. Throws when the
    /// world cannot be opened.
    func open(fresh: Bool) throws -> any WorkerWorld
}

/// One worker's view of a cohort's world: the samples, and what the world says about each
/// participant's SensorKit state before their run starts.
public protocol WorkerWorld {
    /// Where the participants' samples come from.
    var source: any SampleSource { get }
    /// Puts into `model` what the world already holds for participant `id` (a replay's
    /// recorded recording intervals and deletions) and returns the authorization changes
    /// to apply during the run, each at its time. A simulated world adds nothing.
    func prepare(_ model: inout ParticipantModel, participant id: String) -> [AuthorizationChange]
}

/// Everything needed to start any participant's run, on any thread: made by a
/// `CohortPlanner` from a run's options.
public struct CohortPlan: Sendable {
    public var settings: RunSettings
    public var setups: [ParticipantSetup]
    public var world: any CohortWorld
    /// What the run report says about the run ("Source: simulated world", "Seed: 1", …).
    public var facts: [String]
    /// Things the user should know about the run (a recording's unknown authorization…).
    public var warnings: [String]
    /// What the run says before it starts (a replay's span and why).
    public var announcements: [String]

    public init(settings: RunSettings, setups: [ParticipantSetup], world: any CohortWorld, facts: [String], warnings: [String],
                announcements: [String] = []) {
        self.settings = settings
        self.setups = setups
        self.world = world
        self.facts = facts
        self.warnings = warnings
        self.announcements = announcements
    }

    /// A participant's run, set up but not started: what the world holds for the participant
    /// enters the model, and the world's authorization changes are scheduled.
    func makeRun(_ setup: ParticipantSetup, world: any WorkerWorld, report: ReportBook,
                 output: @escaping (String) -> Void) throws -> ParticipantRun {
        let run = try ParticipantRun(setup: setup, settings: settings, source: world.source, report: report, output: output)
        for change in world.prepare(&run.model, participant: setup.id) {
            _ = run.loop.schedule(at: change.at) { [unowned run] in
                try run.notify(run.model.authorization.setStatus(change.sensor, change.status))
            }
        }
        return run
    }
}

/// Turns a run's options into a cohort plan (the wiring layer, `StudyWorlds`, implements it:
/// a scenario into a simulated world, a store into a replay).
public protocol CohortPlanner: Sendable {
    /// The plan for `options`, before `--shard` cuts it. Throws when the options, the
    /// scenario or the store cannot be used (the wiring layer's errors name file and field).
    func plan(_ options: StudyOptions) throws -> CohortPlan
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
            let world = try plan.world.open(fresh: true)
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
                let world: any WorkerWorld
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
    static func runOne(_ plan: CohortPlan, _ setup: ParticipantSetup, world: any WorkerWorld,
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

