public import Foundation
public import Samples
public import Workouts

/// One step of a plan in running order, with where it came from.
public struct PlannedStep: Hashable, Sendable {
    /// Position in running order.
    public var index: Int
    /// `warm-up`, `block 1 (2/4), step 1`, `cool-down`, `plan`.
    public var location: String
    /// `warmup`, `work`, `recovery`, `cooldown` or `goal`.
    public var purpose: String
    /// Goal, alert, name.
    public var step: WorkoutStep
    /// The block (0-based) and iteration (1-based), for block steps.
    public var block: Int?
    /// The iteration of the block, 1-based.
    public var iteration: Int?
    /// Whether the step ends an iteration of its block.
    public var endsIteration: Bool
}

/// What the executor reports.
public enum PlanEvent: Hashable, Sendable {
    /// A step began.
    case stepStarted(PlannedStep, at: Date)
    /// A step ended; `segment` is its span (recorded as a segment event).
    case stepEnded(PlannedStep, segment: DateInterval)
    /// An iteration of a block ended (recorded as a lap).
    case lap(block: Int, iteration: Int, interval: DateInterval)
    /// The alert's value left the target.
    case alertOutOfRange(PlannedStep, value: Double, target: ClosedRange<Double>, at: Date)
    /// The value came back into the target.
    case alertBackInRange(PlannedStep, value: Double, target: ClosedRange<Double>, at: Date)
    /// The last step ended.
    case completed(at: Date)
}

/// The running figures the executor reads: cumulative totals and the latest values.
public struct PlanProgress: Hashable, Sendable {
    /// Active (not paused) time, in seconds.
    public var activeTime: TimeInterval
    /// Distance so far, in metres.
    public var distance: Double
    /// Active energy so far, in kJ.
    public var energy: Double
    /// Latest heart rate.
    public var heartRate: Double?
    /// Latest power.
    public var power: Double?
    /// Latest cadence.
    public var cadence: Double?
    /// Latest speed, m/s.
    public var speed: Double?

    /// Creates progress figures.
    public init(
        activeTime: TimeInterval, distance: Double = 0, energy: Double = 0, heartRate: Double? = nil,
        power: Double? = nil, cadence: Double? = nil, speed: Double? = nil
    ) {
        self.activeTime = activeTime
        self.distance = distance
        self.energy = energy
        self.heartRate = heartRate
        self.power = power
        self.cadence = cadence
        self.speed = speed
    }

    /// The figures of a live workout at `date`: the primary heart-rate source's latest value.
    public init(collector: WorkoutCollector, at date: Date) {
        func latest(_ type: QuantityType) -> Double? {
            guard let statistics = collector.statistics(for: type) else { return nil }
            if let primary = collector.primarySources[type], let value = statistics.bySource[primary]?.mostRecent {
                return value
            }
            return statistics.mostRecent
        }
        self.init(
            activeTime: collector.elapsedTime(at: date), distance: collector.statistics(for: .distance)?.sum ?? 0,
            energy: collector.activeEnergy.kilojoules ?? 0, heartRate: latest(.heartRate), power: latest(.cyclingPower),
            cadence: latest(.cyclingCadence) ?? latest(.stepCadence),
            speed: latest(.cyclingSpeed) ?? latest(.runningSpeed))
    }

    func value(_ measure: AlertMeasure) -> Double? {
        switch measure {
        case .heartRate: heartRate
        case .power: power
        case .cadence: cadence
        case .speed: speed
        }
    }
}

/// Runs a plan against live figures: advances steps when goals are met (time excludes pauses;
/// distance and energy from the workout's totals; open goals on ``next(_:at:)``), watches each
/// step's alert with hysteresis, and reports segments and laps to record.
///
/// A pure value: feed it ``PlanProgress`` about once a second.
public struct PlanExecutor: Sendable {
    /// Every step, in running order (computed on demand, never materialised).
    public let steps: PlannedSteps
    /// The zones alerts refer to.
    public let zones: [QuantityType: ZoneConfiguration]
    /// The step running now; `nil` before start and after the end.
    public private(set) var currentIndex: Int?
    private var stepStart: (date: Date, progress: PlanProgress)?
    private var iterationStart: Date?
    private var alertInRange = true
    private var alertSum = 0.0
    private var alertCount = 0
    /// The latest value the alert was judged on.
    public private(set) var alertValue: Double?

    /// Prepares `plan`.
    public init(plan: WorkoutPlan, zones: [QuantityType: ZoneConfiguration] = [:]) {
        self.zones = zones
        self.steps = PlannedSteps(plan)
    }

    /// The step running now.
    public var current: PlannedStep? { currentIndex.map { steps[$0] } }

    /// Starts the first step.
    public mutating func start(_ progress: PlanProgress, at date: Date) -> [PlanEvent] {
        guard currentIndex == nil, !steps.isEmpty else { return [] }
        return begin(0, progress, at: date)
    }

    /// How far the current step's goal is, 0…1 (`nil` for open goals).
    public func goalProgress(_ progress: PlanProgress) -> Double? {
        guard let current, let start = stepStart else { return nil }
        switch current.step.goal {
        case .open: return nil
        case .time(let value): return min(1, (progress.activeTime - start.progress.activeTime) / value.base)
        case .distance(let value): return min(1, (progress.distance - start.progress.distance) / value.base)
        case .energy(let value): return min(1, (progress.energy - start.progress.energy) / value.base)
        }
    }

    /// The current alert's target in base units, if any.
    public var alertTarget: ClosedRange<Double>? { current?.step.alert.flatMap(target) }

    /// Whether the alert's value is inside its target (true when there is no alert).
    public var isAlertInRange: Bool { alertInRange }

    /// Feeds the latest figures: advances when the goal is met, judges the alert. A late tick (a
    /// stall, a clock set forward, steps shorter than a tick) ends every step it passed, each on time.
    public mutating func update(_ progress: PlanProgress, at date: Date) -> [PlanEvent] {
        guard currentIndex != nil else { return [] }
        var events = judgeAlert(progress, at: date)
        // Each pass ends a step, so this ends within the plan's step count.
        while let index = currentIndex, let fraction = goalProgress(progress), fraction >= 1 {
            // A time goal ends exactly on time however late this tick is, so steps do not drift.
            var endDate = date
            var nextStart = progress
            if case .time(let value) = steps[index].step.goal, let start = stepStart {
                let overshoot = max(0, progress.activeTime - start.progress.activeTime - value.base)
                endDate = max(start.date, date.addingTimeInterval(-overshoot))
                nextStart.activeTime -= overshoot
            }
            events += end(index, at: endDate)
            events += index + 1 < steps.count ? begin(index + 1, nextStart, at: endDate) : finish(at: endDate)
        }
        return events
    }

    /// Advances an open goal (the user's "next"); any goal can be skipped this way.
    public mutating func next(_ progress: PlanProgress, at date: Date) -> [PlanEvent] {
        guard let index = currentIndex else { return [] }
        var events = end(index, at: date)
        events += index + 1 < steps.count ? begin(index + 1, progress, at: date) : finish(at: date)
        return events
    }

    private mutating func begin(_ index: Int, _ progress: PlanProgress, at date: Date) -> [PlanEvent] {
        currentIndex = index
        stepStart = (date, progress)
        if steps[index].block != nil, index == 0 || steps[index - 1].endsIteration || steps[index - 1].block == nil {
            iterationStart = date
        }
        alertInRange = true
        alertSum = 0
        alertCount = 0
        alertValue = nil
        return [.stepStarted(steps[index], at: date)]
    }

    private mutating func end(_ index: Int, at date: Date) -> [PlanEvent] {
        let step = steps[index]
        var events: [PlanEvent] = [
            .stepEnded(
                step, segment: DateInterval(start: stepStart?.date ?? date, end: max(date, stepStart?.date ?? date)))
        ]
        if step.endsIteration, let block = step.block, let iteration = step.iteration, let start = iterationStart {
            events.append(
                .lap(block: block, iteration: iteration, interval: DateInterval(start: start, end: max(date, start))))
        }
        return events
    }

    private mutating func finish(at date: Date) -> [PlanEvent] {
        currentIndex = nil
        stepStart = nil
        return [.completed(at: date)]
    }

    /// The target of an alert in base units (zones from the configured boundaries); nil for a
    /// bound that is not a number (the validator refuses those: this holds for plans built in code).
    func target(_ alert: WorkoutAlert) -> ClosedRange<Double>? {
        switch alert {
        case .heartRateRange(let range, _), .powerRange(let range, _), .cadenceRange(let range, _),
            .speedRange(let range, _):
            guard range.from.base.isFinite, range.to.base.isFinite else { return nil }
            return range.baseBounds
        case .powerThreshold(let value, _), .cadenceThreshold(let value, _), .speedThreshold(let value, _):
            guard value.base.isFinite else { return nil }
            return value.base...Double.greatestFiniteMagnitude
        case .heartRateZone(let index, _):
            return zoneBounds(index, .heartRate)
        case .powerZone(let index, _):
            return zoneBounds(index, .cyclingPower)
        }
    }

    private func zoneBounds(_ index: Int, _ type: QuantityType) -> ClosedRange<Double>? {
        guard let zones = zones[type]?.zones, index >= 1, index <= zones.count else { return nil }
        let zone = zones[index - 1]
        return (zone.lower ?? 0)...(zone.upper.map { $0.nextDown } ?? Double.greatestFiniteMagnitude)
    }

    /// Hysteresis per measure: a noisy strap must cross the bound by this much to flip the state.
    static func hysteresis(_ measure: AlertMeasure) -> Double {
        switch measure {
        case .heartRate: 2
        case .power: 5
        case .cadence: 2
        case .speed: 0.1
        }
    }

    private mutating func judgeAlert(_ progress: PlanProgress, at date: Date) -> [PlanEvent] {
        guard let step = current, let alert = step.step.alert, let target = target(alert),
            let latest = progress.value(alert.measure)
        else { return [] }
        alertSum += latest
        alertCount += 1
        let value = alert.metric == .average ? alertSum / Double(alertCount) : latest
        alertValue = value
        let width = target.upperBound - target.lowerBound
        let margin = min(Self.hysteresis(alert.measure), width.isFinite ? width / 4 : Self.hysteresis(alert.measure))
        if alertInRange, value < target.lowerBound - margin || value > target.upperBound + margin {
            alertInRange = false
            return [.alertOutOfRange(step, value: value, target: target, at: date)]
        }
        if !alertInRange, value >= target.lowerBound + margin, value <= target.upperBound - margin {
            alertInRange = true
            return [.alertBackInRange(step, value: value, target: target, at: date)]
        }
        return []
    }
}
