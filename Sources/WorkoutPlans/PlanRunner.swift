public import Foundation
public import Samples
public import Workouts

/// Drives a plan inside a live session: feeds the executor the builder's figures, and records
/// each step as a segment and each block iteration as a lap in the workout.
public actor PlanRunner {
    private var executor: PlanExecutor
    private let session: WorkoutSession
    private let builder: LiveWorkoutBuilder
    /// Every event so far, in order.
    public private(set) var events: [PlanEvent] = []

    /// Prepares `plan` for `session`, with the zones in force for its alerts.
    public init(plan: WorkoutPlan, session: WorkoutSession, zones: [Samples.QuantityType: ZoneConfiguration]) {
        self.executor = PlanExecutor(plan: plan, zones: zones)
        self.session = session
        self.builder = session.associatedWorkoutBuilder()
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
                try? await session.addEvent(
                    WorkoutEvent(
                        kind: .segment, dateInterval: segment,
                        metadata: ["step": step.location, "purpose": step.purpose]))
            case .lap(let block, let iteration, let interval):
                try? await session.addEvent(
                    WorkoutEvent(
                        kind: .lap, dateInterval: interval,
                        metadata: ["block": "\(block + 1)", "iteration": "\(iteration)"]))
            default:
                break
            }
        }
        return new
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
