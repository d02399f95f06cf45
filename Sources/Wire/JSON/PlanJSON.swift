import Foundation
public import WorkoutPlans
import Workouts

/// Texts and JSON shapes of a running plan, shared by `workout run --json` and the daemon's stream.
public enum PlanJSON {
    /// `4 min`, `2 mi`, `open (press n)`.
    public static func goal(_ goal: WorkoutGoal) -> String {
        switch goal {
        case .open: "open (press n)"
        case .time(let value): value.description
        case .distance(let value): value.description
        case .energy(let value): value.description
        }
    }

    /// `heart rate 140-175 bpm (average)`.
    public static func alert(_ alert: WorkoutAlert) -> String {
        let text: String
        switch alert {
        case .heartRateRange(let range, _): text = "heart rate \(range)"
        case .heartRateZone(let zone, _): text = "heart rate zone \(zone)"
        case .powerRange(let range, _): text = "power \(range)"
        case .powerThreshold(let value, _): text = "power ≥ \(value)"
        case .powerZone(let zone, _): text = "power zone \(zone)"
        case .cadenceRange(let range, _): text = "cadence \(range)"
        case .cadenceThreshold(let value, _): text = "cadence ≥ \(value)"
        case .speedRange(let range, _):
            text = range.from.unit == .perKilometer || range.from.unit == .perMile ? "pace \(range)" : "speed \(range)"
        case .speedThreshold(let value, _):
            text = value.unit == .perKilometer || value.unit == .perMile ? "pace ≤ \(value)" : "speed ≥ \(value)"
        }
        return alert.metric == .average ? text + " (average)" : text
    }

    /// A planned step: index, location ("block 1 (2/3), step 1"), purpose, goal, alert, name.
    public struct Step: Codable, Sendable, Equatable {
        public var index: Int
        /// Where it is in the plan: `block 1 (2/3), step 1`.
        public var step: String
        public var purpose: String
        public var goal: String
        public var alert: String?
        public var name: String?

        /// The step's JSON.
        public init(_ planned: PlannedStep) {
            index = planned.index
            step = planned.location
            purpose = planned.purpose
            goal = PlanJSON.goal(planned.step.goal)
            alert = planned.step.alert.map(PlanJSON.alert)
            name = planned.step.displayName
        }
    }

    /// A plan event: `{"event":"stepStarted",…}`; the step's keys are among its own.
    public struct Event: Codable, Sendable, Equatable {
        /// `stepStarted`, `stepEnded`, `lap`, `alertOutOfRange`, `alertBackInRange`, `completed`.
        public var event: String
        public var time: String?
        public var start: String?
        public var end: String?
        /// 1-based, for laps.
        public var block: Int?
        public var iteration: Int?
        public var value: Double?
        /// `[lower, upper]`.
        public var target: [Double]?
        /// The step it concerns.
        public var step: Step?

        private enum Key: String, CodingKey { case event, time, start, end, block, iteration, value, target }

        /// The event's JSON.
        public init(_ event: PlanEvent) {
            switch event {
            case .stepStarted(let planned, let date):
                self.event = "stepStarted"
                time = ISO8601.format(date)
                step = Step(planned)
            case .stepEnded(let planned, let segment):
                self.event = "stepEnded"
                start = ISO8601.format(segment.start)
                end = ISO8601.format(segment.end)
                step = Step(planned)
            case .lap(let block, let iteration, let interval):
                self.event = "lap"
                self.block = block + 1
                self.iteration = iteration
                start = ISO8601.format(interval.start)
                end = ISO8601.format(interval.end)
            case .alertOutOfRange(let planned, let value, let target, let date),
                .alertBackInRange(let planned, let value, let target, let date):
                if case .alertOutOfRange = event {
                    self.event = "alertOutOfRange"
                } else {
                    self.event = "alertBackInRange"
                }
                time = ISO8601.format(date)
                self.value = value
                self.target = [target.lowerBound, target.upperBound]
                step = Step(planned)
            case .completed(let date):
                self.event = "completed"
                time = ISO8601.format(date)
            }
        }

        /// The step's keys, then the event's own.
        public func encode(to encoder: any Encoder) throws {
            try step?.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(event, forKey: .event)
            try container.encodeIfPresent(time, forKey: .time)
            try container.encodeIfPresent(start, forKey: .start)
            try container.encodeIfPresent(end, forKey: .end)
            try container.encodeIfPresent(block, forKey: .block)
            try container.encodeIfPresent(iteration, forKey: .iteration)
            try container.encodeIfPresent(value, forKey: .value)
            try container.encodeIfPresent(target, forKey: .target)
        }

        /// Reads what ``encode(to:)`` writes: the step's keys when `index` is among them.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            event = try container.decode(String.self, forKey: .event)
            time = try container.decodeIfPresent(String.self, forKey: .time)
            start = try container.decodeIfPresent(String.self, forKey: .start)
            end = try container.decodeIfPresent(String.self, forKey: .end)
            block = try container.decodeIfPresent(Int.self, forKey: .block)
            iteration = try container.decodeIfPresent(Int.self, forKey: .iteration)
            value = try container.decodeIfPresent(Double.self, forKey: .value)
            target = try container.decodeIfPresent([Double].self, forKey: .target)
            let keys = try decoder.container(keyedBy: AnyKey.self)
            step = keys.contains(AnyKey("index")) ? try Step(from: decoder) : nil
        }
    }

    /// What a dashboard shows: the current step, goal progress 0…1, the alert's target, value and
    /// state, the next step; `{"complete":true}` once the plan is done.
    public struct Status: Codable, Sendable, Equatable {
        public var complete: Bool
        public var current: Step?
        public var progress: Double?
        public var alertTarget: [Double]?
        public var alertValue: Double?
        public var alertInRange: Bool?
        public var next: Step?

        private enum Key: String, CodingKey {
            case complete, current, progress, alertTarget, alertValue, alertInRange, next
        }

        /// The status' JSON.
        public init(_ status: PlanStatus) {
            complete = status.current == nil
            current = status.current.map(Step.init)
            progress = status.goalProgress
            alertTarget = status.alertTarget.map { [$0.lowerBound, $0.upperBound] }
            alertValue = status.alertValue
            alertInRange = status.alertTarget == nil ? nil : status.alertInRange
            next = status.next.map(Step.init)
        }

        /// Only `complete` once done; `progress` and `next` are null rather than absent while running,
        /// and the alert's keys appear when the step has one.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(complete, forKey: .complete)
            guard let current else { return }
            try container.encode(current, forKey: .current)
            try container.encode(progress, forKey: .progress)
            if let alertTarget {
                try container.encode(alertTarget, forKey: .alertTarget)
                try container.encode(alertValue, forKey: .alertValue)
                try container.encode(alertInRange, forKey: .alertInRange)
            }
            try container.encode(next, forKey: .next)
        }

        /// Reads what ``encode(to:)`` writes.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            complete = try container.decode(Bool.self, forKey: .complete)
            current = try container.decodeIfPresent(Step.self, forKey: .current)
            progress = try container.decodeIfPresent(Double.self, forKey: .progress)
            alertTarget = try container.decodeIfPresent([Double].self, forKey: .alertTarget)
            alertValue = try container.decodeIfPresent(Double.self, forKey: .alertValue)
            alertInRange = try container.decodeIfPresent(Bool.self, forKey: .alertInRange)
            next = try container.decodeIfPresent(Step.self, forKey: .next)
        }
    }
}
