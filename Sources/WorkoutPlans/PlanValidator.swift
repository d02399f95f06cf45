public import Samples
public import Workouts

/// What a plan is checked against: the athlete's zones and the sensors at hand.
public struct PlanContext: Hashable, Sendable {
    /// Zones per type (heart rate, cycling power).
    public var zones: [QuantityType: ZoneConfiguration]
    /// Whether a power meter is available (default: cycling and rowing have one).
    public var hasPowerMeter: Bool?

    /// Creates a context.
    public init(zones: [QuantityType: ZoneConfiguration] = [:], hasPowerMeter: Bool? = nil) {
        self.zones = zones
        self.hasPowerMeter = hasPowerMeter
    }
}

/// Checks a plan: every problem, each with where it is.
public enum PlanValidator {
    /// The problems in `plan`; empty when it is valid.
    public static func problems(in plan: WorkoutPlan, context: PlanContext = PlanContext()) -> [PlanProblem] {
        var problems = sizeProblems(in: plan)
        // Every bound holds before the work that is proportional to it.
        guard problems.isEmpty else { return problems }
        switch plan.kind {
        case .custom(let warmup, let blocks, let cooldown):
            if let warmup {
                check(warmup, at: "warm-up", path: "$.custom.warmup", plan, context, custom: true, into: &problems)
            }
            if blocks.isEmpty {
                problems.append(PlanProblem(location: "plan", path: "$.custom.blocks", kind: .noBlocks))
            }
            for (blockIndex, block) in blocks.enumerated() {
                let blockPath = "$.custom.blocks[\(blockIndex)]"
                if block.iterations < 1 {
                    problems.append(
                        PlanProblem(
                            location: "block \(blockIndex + 1)", path: blockPath + ".iterations", kind: .zeroIterations)
                    )
                }
                if block.steps.isEmpty {
                    problems.append(
                        PlanProblem(location: "block \(blockIndex + 1)", path: blockPath + ".steps", kind: .emptyBlock))
                }
                for (stepIndex, step) in block.steps.enumerated() {
                    check(
                        step.step, at: "block \(blockIndex + 1), step \(stepIndex + 1)",
                        path: blockPath + ".steps[\(stepIndex)]", plan, context, custom: true, into: &problems)
                }
            }
            if let cooldown {
                check(
                    cooldown, at: "cool-down", path: "$.custom.cooldown", plan, context, custom: true, into: &problems)
            }
        case .singleGoal(let goal):
            check(
                WorkoutStep(goal: goal), at: "plan", path: "$.singleGoal", plan, context, custom: false, into: &problems
            )
        case .pacer(let distance, let time):
            let before = problems.count
            check(
                WorkoutStep(goal: .distance(distance)), at: "plan", path: "$.pacer.distance", plan, context,
                custom: false, into: &problems)
            check(
                WorkoutStep(goal: .time(time)), at: "plan", path: "$.pacer.time", plan, context, custom: false,
                into: &problems)
            // The pace it holds the athlete to is a speed alert like any other.
            let speed = distance.base / time.base
            if problems.count == before, !(speed <= PlanLimits.maximum(.speed).base) {
                problems.append(
                    PlanProblem(
                        location: "plan", path: "$.pacer",
                        kind: .aboveMaximum(
                            PlanValue(speed, .metersPerSecond), maximum: PlanLimits.maximum(.speed).said)))
            }
        }
        return problems
    }

    /// A control character (an escape, a newline, NUL), a line or paragraph separator, or a bidi
    /// control (an override would let
    /// a name display as another); other format characters (a zero-width joiner or non-joiner, a
    /// flag's tags) are writing and stay.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.generalCategory == .control { return true }
        switch scalar.value {
        case 0x200E, 0x200F, 0x061C, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// The counts and sizes above their ``PlanLimits``.
    static func sizeProblems(in plan: WorkoutPlan) -> [PlanProblem] {
        var problems: [PlanProblem] = []
        func name(_ text: String?, _ location: String, _ path: String) {
            if let text, text.unicodeScalars.count > PlanLimits.nameLength {
                problems.append(
                    PlanProblem(
                        location: location, path: path,
                        kind: .tooLarge("characters in a name", limit: PlanLimits.nameLength)))
            }
            // A name reaches terminals, logs and pages: no escape sequences, newlines or bidi
            // overrides (an emoji's zero-width joiner is kept).
            if let text, text.unicodeScalars.contains(where: Self.isHidden) {
                problems.append(
                    PlanProblem(
                        location: location, path: path,
                        kind: .format("a name holds control or invisible formatting characters")))
            }
        }
        name(plan.name, "plan", "$.name")
        guard case .custom(let warmup, let blocks, let cooldown) = plan.kind else { return problems }
        name(warmup?.displayName, "warm-up", "$.custom.warmup.name")
        name(cooldown?.displayName, "cool-down", "$.custom.cooldown.name")
        if blocks.count > PlanLimits.blocks {
            problems.append(
                PlanProblem(
                    location: "plan", path: "$.custom.blocks", kind: .tooLarge("blocks", limit: PlanLimits.blocks)))
            return problems
        }
        var planned = (warmup == nil ? 0 : 1) + (cooldown == nil ? 0 : 1)
        for (blockIndex, block) in blocks.enumerated() {
            let location = "block \(blockIndex + 1)"
            let path = "$.custom.blocks[\(blockIndex)]"
            if block.steps.count > PlanLimits.stepsPerBlock {
                problems.append(
                    PlanProblem(
                        location: location, path: path + ".steps",
                        kind: .tooLarge("steps in a block", limit: PlanLimits.stepsPerBlock)))
            }
            if block.iterations > PlanLimits.iterations {
                problems.append(
                    PlanProblem(
                        location: location, path: path + ".iterations",
                        kind: .tooLarge("iterations", limit: PlanLimits.iterations)))
            }
            for (stepIndex, step) in block.steps.prefix(PlanLimits.stepsPerBlock).enumerated() {
                name(step.step.displayName, "\(location), step \(stepIndex + 1)", path + ".steps[\(stepIndex)].name")
            }
            // Both factors are bounded here, so the product cannot overflow.
            planned +=
                min(block.steps.count, PlanLimits.stepsPerBlock)
                * min(max(block.iterations, 0), PlanLimits.iterations)
        }
        if planned > PlanLimits.plannedSteps {
            problems.append(
                PlanProblem(
                    location: "plan", path: "$.custom.blocks",
                    kind: .tooLarge("steps in the plan, every iteration counted", limit: PlanLimits.plannedSteps)))
        }
        return problems
    }

    /// Throws every problem at once.
    public static func validate(_ plan: WorkoutPlan, context: PlanContext = PlanContext()) throws(PlanError) {
        let found = problems(in: plan, context: context)
        if !found.isEmpty { throw PlanError(problems: found) }
    }

    static let distanceActivities: Set<WorkoutActivityType> = [.running, .walking, .cycling, .rowing, .swimming]
    static let speedActivities: Set<WorkoutActivityType> = [.running, .walking, .cycling, .rowing, .swimming]
    static let cadenceActivities: Set<WorkoutActivityType> = [.running, .walking, .cycling, .rowing, .elliptical]

    private static func check(
        _ step: WorkoutStep, at location: String, path: String, _ plan: WorkoutPlan, _ context: PlanContext,
        custom: Bool, into problems: inout [PlanProblem]
    ) {
        func add(_ kind: PlanProblem.Kind, _ suffix: String) {
            problems.append(PlanProblem(location: location, path: path + suffix, kind: kind))
        }
        func value(_ value: PlanValue, _ dimension: PlanValue.Dimension, _ suffix: String) {
            if value.unit.dimension != dimension {
                add(.wrongDimension(found: value.unit, expected: dimension), suffix)
            }
            if !(value.value > 0) {
                add(.notPositive, suffix)
            } else if value.unit.dimension == dimension, !(value.base <= PlanLimits.maximum(dimension).base) {
                add(.aboveMaximum(value, maximum: PlanLimits.maximum(dimension).said), suffix)
            }
        }
        let goalPath =
            path.hasSuffix(".distance") || path.hasSuffix(".time") || path.hasSuffix(".singleGoal") ? "" : ".goal"
        switch step.goal {
        case .open: break
        case .time(let time): value(time, .time, goalPath)
        case .distance(let distance):
            value(distance, .distance, goalPath)
            if !distanceActivities.contains(plan.activity) {
                add(.goalNotSupported(goal: "distance", activity: plan.activity), goalPath)
            }
        case .energy(let energy):
            value(energy, .energy, goalPath)
            if custom { add(.energyGoalInCustomPlan, goalPath) }
        }
        guard let alert = step.alert else { return }
        func range(_ range: PlanRange, _ dimension: PlanValue.Dimension) {
            value(range.from, dimension, ".alert")
            value(range.to, dimension, ".alert")
            if range.isInverted { add(.invertedRange(range), ".alert") }
        }
        func zone(_ index: Int, _ type: QuantityType) {
            let count = context.zones[type]?.zones.count ?? 0
            // Named by its key, as the format's other paths are: which zones are missing.
            let key = type == .heartRate ? "heartRateZone" : "powerZone"
            if index < 1 || index > count { add(.zoneOutOfRange(index: index, zoneCount: count), ".alert.\(key)") }
        }
        switch alert {
        case .heartRateRange(let bounds, _): range(bounds, .heartRate)
        case .heartRateZone(let index, _): zone(index, .heartRate)
        case .powerRange(let bounds, _): range(bounds, .power)
        case .powerThreshold(let threshold, _): value(threshold, .power, ".alert")
        case .powerZone(let index, _): zone(index, .cyclingPower)
        case .cadenceRange(let bounds, _): range(bounds, .cadence)
        case .cadenceThreshold(let threshold, _): value(threshold, .cadence, ".alert")
        case .speedRange(let bounds, _): range(bounds, .speed)
        case .speedThreshold(let threshold, _): value(threshold, .speed, ".alert")
        }
        switch alert.measure {
        case .heartRate: break
        case .power:
            let hasPower = context.hasPowerMeter ?? (plan.activity == .cycling || plan.activity == .rowing)
            if !hasPower {
                add(.alertNotSupported(alert: "power", activity: plan.activity, reason: "no power meter"), ".alert")
            }
        case .speed:
            if !speedActivities.contains(plan.activity) {
                add(
                    .alertNotSupported(alert: "pace or speed", activity: plan.activity, reason: "it has no speed"),
                    ".alert")
            }
        case .cadence:
            if !cadenceActivities.contains(plan.activity) {
                add(
                    .alertNotSupported(alert: "cadence", activity: plan.activity, reason: "it has no cadence"), ".alert"
                )
            }
        }
    }
}
