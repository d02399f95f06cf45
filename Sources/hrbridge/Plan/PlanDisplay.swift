import Foundation
import Wire
import WorkoutPlans

/// A running plan's output: its events as JSON lines, and its line in the live view.
struct PlanDisplay {
    /// When the current step began (for --open-step-time).
    var stepStart: Date

    mutating func note(_ events: [PlanEvent], output: JSONLineWriter) {
        for event in events {
            if case .stepStarted(_, let date) = event { stepStart = date }
            output.plan(event)
        }
    }

    /// `plan: block 1 (2/4), step 1 work · 2 mi 45% █████······· · speed target 7.7–8.9 m/s now 8.1 ✓ · next: recovery 0.5 mi`.
    static func line(_ status: PlanStatus) -> String {
        guard let current = status.current else { return "plan: complete" }
        let purpose = current.block == nil ? "" : " \(current.purpose)"
        var line = "plan: \(current.location)\(purpose) · \(PlanPreview.goal(current.step.goal))"
        if let progress = status.goalProgress {
            line += " \(Int((progress * 100).rounded()))% " + Format.bar(fraction: progress, width: 12)
        }
        if let alert = current.step.alert, let target = status.alertTarget {
            let unit = Self.unit(alert.measure)
            // A threshold (and the top zone) has no upper end: the executor's is the largest Double.
            let bounds =
                target.upperBound < 1e15
                ? "\(Format.number(target.lowerBound))–\(Format.number(target.upperBound))"
                : "≥ \(Format.number(target.lowerBound))"
            line += " · \(Self.name(alert.measure)) target \(bounds) \(unit)"
            if let value = status.alertValue {
                line += " now \(Format.number(value)) " + (status.alertInRange ? "✓" : "✗ out of range")
            }
        }
        if let next = status.next { line += " · next: \(next.purpose) \(PlanPreview.goal(next.step.goal))" }
        return line
    }

    private static func name(_ measure: AlertMeasure) -> String {
        switch measure {
        case .heartRate: "heart rate"
        case .power: "power"
        case .cadence: "cadence"
        case .speed: "speed"
        }
    }

    private static func unit(_ measure: AlertMeasure) -> String {
        switch measure {
        case .heartRate: "bpm"
        case .power: "W"
        case .cadence: "rpm"
        case .speed: "m/s"
        }
    }
}
