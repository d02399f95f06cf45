import Samples
public import Workouts

/// One problem in a plan, with where it is ("block 2, step 1") and its JSON path.
public struct PlanProblem: Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Kind: Hashable, Sendable {
        /// The file is not the documented format.
        case format(String)
        /// A value has a unit of the wrong dimension ("250 bpm" for power).
        case wrongDimension(found: PlanValue.Unit, expected: PlanValue.Dimension)
        /// A value must be above zero.
        case notPositive
        /// A value above the most its dimension may be (``PlanLimits/maximum(_:)``).
        case aboveMaximum(PlanValue, maximum: String)
        /// The goal does not fit the activity (distance on strength training).
        case goalNotSupported(goal: String, activity: WorkoutActivityType)
        /// The alert does not fit the activity or the sensors (pace on an elliptical, power on
        /// running without a power meter).
        case alertNotSupported(alert: String, activity: WorkoutActivityType, reason: String)
        /// Energy goals are for single-goal plans only (as in WorkoutKit).
        case energyGoalInCustomPlan
        /// A custom plan without blocks.
        case noBlocks
        /// A block without steps.
        case emptyBlock
        /// A block repeated zero times.
        case zeroIterations
        /// A count or size above its bound in ``PlanLimits`` (`what`: "iterations", "steps in the
        /// plan", "characters in a name"…).
        case tooLarge(_ what: String, limit: Int)
        /// A range whose first bound is above its second.
        case invertedRange(PlanRange)
        /// A zone index outside the configured zones.
        case zoneOutOfRange(index: Int, zoneCount: Int)
    }

    /// Where: `plan`, `warm-up`, `block 2, step 1`, `cool-down`.
    public var location: String
    /// The JSON path: `$.custom.blocks[1].steps[0].alert`.
    public var path: String
    /// What is wrong.
    public var kind: Kind

    /// Creates a problem.
    public init(location: String, path: String, kind: Kind) {
        self.location = location
        self.path = path
        self.kind = kind
    }

    /// `block 2, step 1 ($.custom.blocks[1].steps[0].alert): …`.
    public var description: String {
        let what: String
        switch kind {
        case .format(let message): what = message
        case .wrongDimension(let found, let expected):
            what = "unit \(found.rawValue) is not a \(expected.rawValue) unit"
        case .notPositive: what = "must be above zero"
        case .aboveMaximum(let value, let maximum): what = "\(value) is more than a plan may name: at most \(maximum)"
        case .goalNotSupported(let goal, let activity): what = "a \(goal) goal does not fit \(activity.rawValue)"
        case .alertNotSupported(let alert, let activity, let reason):
            what = "a \(alert) alert does not fit \(activity.rawValue): \(reason)"
        case .energyGoalInCustomPlan: what = "energy goals are for single-goal plans only"
        case .noBlocks: what = "a custom plan needs at least one block"
        case .emptyBlock: what = "the block has no steps"
        case .zeroIterations: what = "iterations must be 1 or more"
        case .tooLarge(let thing, let limit): what = "too many \(thing): at most \(limit)"
        case .invertedRange(let range): what = "range \(range) is inverted"
        case .zoneOutOfRange(let index, let count):
            what =
                count == 0
                ? "zone \(index) given, but no zones are configured" : "zone \(index) is outside zones 1–\(count)"
        }
        return "\(location) (\(path)): \(what)"
    }
}

/// Every problem found in a plan.
public struct PlanError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, in document order.
    public var problems: [PlanProblem]

    /// Creates an error.
    public init(problems: [PlanProblem]) { self.problems = problems }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
