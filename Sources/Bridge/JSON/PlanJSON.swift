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
    public static func step(_ step: PlannedStep) -> [String: Any] {
        var object: [String: Any] = [
            "index": step.index, "step": step.location, "purpose": step.purpose, "goal": goal(step.step.goal),
        ]
        if let alert = step.step.alert { object["alert"] = self.alert(alert) }
        if let name = step.step.displayName { object["name"] = name }
        return object
    }

    /// A plan event: `{"event":"stepStarted",…}`.
    public static func event(_ event: PlanEvent) -> [String: Any] {
        switch event {
        case .stepStarted(let planned, let date):
            return ["event": "stepStarted", "time": ISO8601.format(date)].merging(step(planned)) { $1 }
        case .stepEnded(let planned, let segment):
            return [
                "event": "stepEnded", "start": ISO8601.format(segment.start), "end": ISO8601.format(segment.end),
            ].merging(step(planned)) { $1 }
        case .lap(let block, let iteration, let interval):
            return [
                "event": "lap", "block": block + 1, "iteration": iteration, "start": ISO8601.format(interval.start),
                "end": ISO8601.format(interval.end),
            ]
        case .alertOutOfRange(let planned, let value, let target, let date),
            .alertBackInRange(let planned, let value, let target, let date):
            let out: Bool = if case .alertOutOfRange = event { true } else { false }
            return [
                "event": out ? "alertOutOfRange" : "alertBackInRange", "time": ISO8601.format(date), "value": value,
                "target": [target.lowerBound, target.upperBound],
            ].merging(step(planned)) { $1 }
        case .completed(let date):
            return ["event": "completed", "time": ISO8601.format(date)]
        }
    }

    /// What a dashboard shows: the current step, goal progress 0…1, the alert's target, value and state, the next step.
    public static func status(_ status: PlanStatus) -> [String: Any] {
        guard let current = status.current else { return ["complete": true] }
        var object: [String: Any] = ["complete": false, "current": step(current)]
        object["progress"] = status.goalProgress.map { $0 as Any } ?? NSNull()
        if let target = status.alertTarget {
            object["alertTarget"] = [target.lowerBound, target.upperBound]
            object["alertValue"] = status.alertValue.map { $0 as Any } ?? NSNull()
            object["alertInRange"] = status.alertInRange
        }
        object["next"] = status.next.map { step($0) as Any } ?? NSNull()
        return object
    }
}
