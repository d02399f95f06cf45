public import Foundation
public import Workouts

/// How long a plan takes: time goals as written; distance goals at the step's speed or pace
/// alert (its middle), else at a typical speed for the activity; energy goals at a typical
/// rate; open steps are counted, not guessed.
public struct PlanEstimate: Hashable, Sendable {
    /// Estimated seconds of the steps that have a goal.
    public var duration: TimeInterval
    /// Steps that end on the user's "next" (not in `duration`).
    public var openSteps: Int
    /// Per step, in running order; `nil` for open steps.
    public var stepDurations: [TimeInterval?]

    /// Estimates `plan`.
    public init(_ plan: WorkoutPlan) {
        let steps = PlanExecutor(plan: plan).steps
        stepDurations = steps.map { Self.duration(of: $0.step, activity: plan.activity) }
        duration = stepDurations.compactMap { $0 }.reduce(0, +)
        openSteps = stepDurations.filter { $0 == nil }.count
    }

    /// A typical steady speed in m/s, for distance goals without a speed alert.
    public static func typicalSpeed(_ activity: WorkoutActivityType) -> Double {
        switch activity {
        case .running: 3.0
        case .cycling: 7.5
        case .walking: 1.4
        case .rowing: 3.8
        case .swimming: 0.8
        default: 2.5
        }
    }

    /// A typical active energy rate, kJ per second (about 10 kcal a minute).
    public static let typicalEnergyRate = 10 * 4.184 / 60

    static func duration(of step: WorkoutStep, activity: WorkoutActivityType) -> TimeInterval? {
        switch step.goal {
        case .open: return nil
        case .time(let value): return value.base
        case .energy(let value): return value.base / typicalEnergyRate
        case .distance(let value):
            var speed = typicalSpeed(activity)
            switch step.alert {
            case .speedRange(let range, _):
                let bounds = range.baseBounds
                speed = (bounds.lowerBound + bounds.upperBound) / 2
            case .speedThreshold(let threshold, _): speed = threshold.base
            default: break
            }
            return speed > 0 ? value.base / speed : nil
        }
    }
}
