/// A plan's steps in running order, worked out when asked for: a block repeated a thousand
/// times is one entry here, not a thousand copies (the count itself is bounded by ``PlanLimits``
/// when the plan is validated).
public struct PlannedSteps: RandomAccessCollection, Hashable, Sendable {
    private enum Segment: Hashable, Sendable {
        case single(WorkoutStep, location: String, purpose: String)
        case block(index: Int, IntervalBlock, iterations: Int)
    }

    private let segments: [Segment]
    /// Where each segment starts in running order.
    private let offsets: [Int]
    /// The first position.
    public let startIndex = 0
    /// One past the last position.
    public let endIndex: Int

    init(_ plan: WorkoutPlan) {
        var segments: [Segment] = []
        switch plan.kind {
        case .custom(let warmup, let blocks, let cooldown):
            if let warmup { segments.append(.single(warmup, location: "warm-up", purpose: "warmup")) }
            for (index, block) in blocks.enumerated() where !block.steps.isEmpty {
                segments.append(.block(index: index, block, iterations: Swift.max(block.iterations, 1)))
            }
            if let cooldown { segments.append(.single(cooldown, location: "cool-down", purpose: "cooldown")) }
        case .singleGoal(let goal):
            segments.append(.single(WorkoutStep(goal: goal), location: "plan", purpose: "goal"))
        case .pacer(let distance, let time):
            let pace = PlanValue(distance.base / time.base, .metersPerSecond)
            segments.append(
                .single(
                    WorkoutStep(goal: .distance(distance), alert: .speedThreshold(pace, .average)), location: "plan",
                    purpose: "goal"))
        }
        var offsets: [Int] = []
        var total = 0
        for segment in segments {
            offsets.append(total)
            let length: Int
            switch segment {
            case .single: length = 1
            case .block(_, let block, let iterations):
                let (product, overflow) = block.steps.count.multipliedReportingOverflow(by: iterations)
                length = overflow ? Int.max : product
            }
            let (sum, overflow) = total.addingReportingOverflow(length)
            total = overflow ? Int.max : sum
        }
        self.segments = segments
        self.offsets = offsets
        self.endIndex = total
    }

    /// The step at `position`.
    public subscript(position: Int) -> PlannedStep {
        precondition(position >= startIndex && position < endIndex, "step \(position) is outside the plan")
        // The last segment starting at or before `position`.
        var low = 0
        var high = offsets.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if offsets[middle] <= position { low = middle } else { high = middle - 1 }
        }
        let local = position - offsets[low]
        switch segments[low] {
        case .single(let step, let location, let purpose):
            return PlannedStep(
                index: position, location: location, purpose: purpose, step: step, block: nil, iteration: nil,
                endsIteration: false)
        case .block(let blockIndex, let block, let iterations):
            let stepIndex = local % block.steps.count
            let iteration = local / block.steps.count + 1
            let step = block.steps[stepIndex]
            return PlannedStep(
                index: position,
                location: "block \(blockIndex + 1) (\(iteration)/\(iterations)), step \(stepIndex + 1)",
                purpose: step.purpose.rawValue, step: step.step, block: blockIndex, iteration: iteration,
                endsIteration: stepIndex == block.steps.count - 1)
        }
    }
}
