public import Foundation
public import Logging
public import Samples
public import Workouts

/// Drives a plan inside a live session: feeds the executor the builder's figures, and records
/// each step as a segment and each block iteration as a lap in the workout.
public actor PlanRunner {
    private var executor: PlanExecutor
    private let session: WorkoutSession
    private let builder: LiveWorkoutBuilder
    private let logger: Logger
    /// Every event so far, in order.
    public private(set) var events: [PlanEvent] = []

    /// Prepares `plan` for `session`, with the zones in force for its alerts.
    public init(
        plan: WorkoutPlan, session: WorkoutSession, zones: [Samples.QuantityType: ZoneConfiguration], logger: Logger
    ) {
        self.executor = PlanExecutor(plan: plan, zones: zones)
        self.session = session
        self.builder = session.associatedWorkoutBuilder()
        self.logger = logger
    }

    /// Starts the first step.
    public func start(at date: Date) async -> [PlanEvent] {
        let progress = PlanProgress(collector: await builder.snapshot, at: date)
        return await record(executor.start(progress, at: date))
    }

    /// Reads the figures at `date`; advances and judges alerts. Call about once a second.
    public func tick(at date: Date) async -> [PlanEvent] {
        let progress = PlanProgress(collector: await builder.snapshot, at: date)
        return await record(executor.update(progress, at: date))
    }

    /// The user's "next": ends the current step (open goals end only this way).
    public func next(at date: Date) async -> [PlanEvent] {
        let progress = PlanProgress(collector: await builder.snapshot, at: date)
        return await record(executor.next(progress, at: date))
    }

    /// The step running now, goal progress 0…1, the alert's target and latest value, and the next step.
    public func status(at date: Date) async -> PlanStatus {
        let progress = PlanProgress(collector: await builder.snapshot, at: date)
        let next = executor.currentIndex.flatMap { $0 + 1 < executor.steps.count ? executor.steps[$0 + 1] : nil }
        return PlanStatus(
            current: executor.current, goalProgress: executor.goalProgress(progress), alertTarget: executor.alertTarget,
            alertValue: executor.alertValue, alertInRange: executor.isAlertInRange, next: next)
    }

    /// Whether the last step has ended.
    public var isComplete: Bool { completionDate != nil }

    /// When the last step ended.
    public var completionDate: Date? {
        for case .completed(let date) in events.reversed() { return date }
        return nil
    }

    private func record(_ new: [PlanEvent]) async -> [PlanEvent] {
        events += new
        for event in new {
            switch event {
            case .stepEnded(let step, let segment):
                await add(
                    WorkoutEvent(
                        kind: .segment, dateInterval: segment,
                        metadata: ["step": step.location, "purpose": step.purpose]))
            case .lap(let block, let iteration, let interval):
                // Laps never overlap: one the user took during this iteration ends where it begins.
                let lastLapEnd = await builder.snapshot.events.filter { $0.kind == .lap }.map(\.dateInterval.end).max()
                let start = min(max(interval.start, lastLapEnd ?? interval.start), interval.end)
                await add(
                    WorkoutEvent(
                        kind: .lap, dateInterval: DateInterval(start: start, end: interval.end),
                        metadata: ["block": "\(block + 1)", "iteration": "\(iteration)"]))
            default:
                break
            }
        }
        return new
    }

    /// Records a step's segment or an iteration's lap; one the workout refuses is logged, and the plan goes on.
    private func add(_ event: WorkoutEvent) async {
        do {
            try await session.addEvent(event)
        } catch {
            logger.warning(
                "a plan event was not recorded",
                metadata: ["kind": "\(event.kind)", "error": "\(error)", "start": "\(event.dateInterval.start)"])
        }
    }
}

/// What a live view shows about a running plan.
public struct PlanStatus: Sendable {
    /// The step running now.
    public var current: PlannedStep?
    /// Goal progress 0…1, `nil` for open goals.
    public var goalProgress: Double?
    /// The alert's target in base units.
    public var alertTarget: ClosedRange<Double>?
    /// The value the alert was last judged on.
    public var alertValue: Double?
    /// Whether that value was in range.
    public var alertInRange: Bool
    /// The step after this one.
    public var next: PlannedStep?
}
