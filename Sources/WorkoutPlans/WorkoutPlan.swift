import Foundation
public import Workouts

/// A structured workout, as WorkoutKit composes one: custom (warm-up, repeated blocks of
/// work/recovery steps, cool-down), a single goal, or a pacer (a distance in a time).
public struct WorkoutPlan: Hashable, Sendable {
    /// The plan kinds.
    public enum Kind: Hashable, Sendable {
        /// Warm-up, blocks, cool-down.
        case custom(warmup: WorkoutStep?, blocks: [IntervalBlock], cooldown: WorkoutStep?)
        /// One goal for the whole workout.
        case singleGoal(WorkoutGoal)
        /// A distance to cover in a time.
        case pacer(distance: PlanValue, time: PlanValue)
    }

    /// Shown in lists and the live view.
    public var name: String
    /// The activity type.
    public var activity: WorkoutActivityType
    /// Indoors or outdoors.
    public var location: WorkoutLocation
    /// The plan itself.
    public var kind: Kind

    /// Creates a plan.
    public init(name: String, activity: WorkoutActivityType, location: WorkoutLocation = .unknown, kind: Kind) {
        self.name = name
        self.activity = activity
        self.location = location
        self.kind = kind
    }
}

/// A block of steps repeated `iterations` times.
public struct IntervalBlock: Hashable, Sendable {
    /// The steps, in order.
    public var steps: [IntervalStep]
    /// How many times the block runs (at least 1).
    public var iterations: Int

    /// Creates a block.
    public init(steps: [IntervalStep], iterations: Int = 1) {
        self.steps = steps
        self.iterations = iterations
    }
}

/// A step of a block: work or recovery.
public struct IntervalStep: Hashable, Sendable {
    /// Work or recovery.
    public enum Purpose: String, Hashable, Sendable, Codable {
        /// Effort.
        case work
        /// Rest between efforts.
        case recovery
    }

    /// Work or recovery.
    public var purpose: Purpose
    /// The goal, alert and name.
    public var step: WorkoutStep

    /// Creates a step.
    public init(purpose: Purpose, step: WorkoutStep) {
        self.purpose = purpose
        self.step = step
    }
}

/// One goal and at most one alert.
public struct WorkoutStep: Hashable, Sendable {
    /// The goal that ends the step.
    public var goal: WorkoutGoal
    /// The alert watched during the step.
    public var alert: WorkoutAlert?
    /// A name for display.
    public var displayName: String?

    /// Creates a step.
    public init(goal: WorkoutGoal = .open, alert: WorkoutAlert? = nil, displayName: String? = nil) {
        self.goal = goal
        self.alert = alert
        self.displayName = displayName
    }
}

/// What ends a step.
public enum WorkoutGoal: Hashable, Sendable {
    /// The user advances ("next").
    case open
    /// Active time (pauses do not count).
    case time(PlanValue)
    case distance(PlanValue)
    /// Active energy.
    case energy(PlanValue)
}

/// Whether an alert watches the current value or the step's average.
public enum AlertMetric: String, Hashable, Sendable, Codable {
    /// The latest value.
    case current
    /// The average since the step began.
    case average
}

/// What a step watches.
public enum WorkoutAlert: Hashable, Sendable {
    /// Heart rate within a range.
    case heartRateRange(PlanRange, AlertMetric)
    /// Heart rate within a zone (1-based index of the configured zones).
    case heartRateZone(Int, AlertMetric)
    /// Power within a range.
    case powerRange(PlanRange, AlertMetric)
    /// Power at or above a threshold.
    case powerThreshold(PlanValue, AlertMetric)
    /// Power within a zone.
    case powerZone(Int, AlertMetric)
    /// Cadence within a range.
    case cadenceRange(PlanRange, AlertMetric)
    /// Cadence at or above a threshold.
    case cadenceThreshold(PlanValue, AlertMetric)
    /// Speed (or pace) within a range.
    case speedRange(PlanRange, AlertMetric)
    /// Speed at or above a threshold (or pace at or faster than it).
    case speedThreshold(PlanValue, AlertMetric)

    /// The metric the alert watches.
    public var metric: AlertMetric {
        switch self {
        case .heartRateRange(_, let metric), .heartRateZone(_, let metric), .powerRange(_, let metric),
            .powerThreshold(_, let metric), .powerZone(_, let metric), .cadenceRange(_, let metric),
            .cadenceThreshold(_, let metric), .speedRange(_, let metric), .speedThreshold(_, let metric):
            metric
        }
    }

    /// What the alert measures.
    public var measure: AlertMeasure {
        switch self {
        case .heartRateRange, .heartRateZone: .heartRate
        case .powerRange, .powerThreshold, .powerZone: .power
        case .cadenceRange, .cadenceThreshold: .cadence
        case .speedRange, .speedThreshold: .speed
        }
    }
}

/// The quantities alerts measure.
public enum AlertMeasure: String, Hashable, Sendable {
    case heartRate
    case power
    case cadence
    /// Speed (or pace).
    case speed
}
