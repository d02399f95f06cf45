import Foundation
import Wire
import WorkoutPlans
import Workouts

/// The readable text of plans, steps, goals and alerts, for `plan show`, the live view and `plan list`.
enum PlanPreview {
    static func goal(_ goal: WorkoutGoal) -> String { PlanJSON.goal(goal) }

    static func alert(_ alert: WorkoutAlert) -> String { PlanJSON.alert(alert) }

    /// `“Hill” 2 min · power 250-275 W`.
    static func body(_ step: WorkoutStep) -> String {
        var text = step.displayName.map { "“\($0)” " } ?? ""
        text += goal(step.goal)
        if let alert = step.alert { text += " · " + self.alert(alert) }
        return text
    }

    static func step(_ step: WorkoutStep, purpose: String) -> String { purpose + ": " + body(step) }

    /// The whole plan: kind, blocks with their iterations, each step, and the estimated time.
    static func text(_ plan: WorkoutPlan) -> String {
        var lines = ["\(plan.name) — \(plan.activity.rawValue), \(plan.location.rawValue)"]
        switch plan.kind {
        case .custom(let warmup, let blocks, let cooldown):
            if let warmup { lines.append("  warm-up    " + body(warmup)) }
            for (index, block) in blocks.enumerated() {
                lines.append("  block \(index + 1) × \(block.iterations)")
                for (stepIndex, item) in block.steps.enumerated() {
                    lines.append("    step \(stepIndex + 1)  " + step(item.step, purpose: item.purpose.rawValue))
                }
            }
            if let cooldown { lines.append("  cool-down  " + body(cooldown)) }
        case .singleGoal(let goal):
            lines.append("  single goal: " + self.goal(goal))
        case .pacer(let distance, let time):
            lines.append("  pacer: \(distance) in \(time)")
        }
        let estimate = PlanEstimate(plan)
        var total = "  estimated time: \(Format.clock(estimate.duration))"
        if estimate.openSteps > 0 {
            total += " + \(estimate.openSteps) open step\(estimate.openSteps == 1 ? "" : "s")"
        }
        lines.append(total)
        return lines.joined(separator: "\n")
    }
}
