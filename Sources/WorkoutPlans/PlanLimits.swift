/// Bounds on every count and size in a plan. A plan comes from a file or an API client, and a
/// 200-byte plan must not make anyone build billions of steps: each bound is checked before any
/// work is proportional to it, and breaking one is a ``PlanProblem/Kind/tooLarge(_:limit:)``.
public enum PlanLimits {
    /// The largest plan file or request body, in bytes.
    public static let fileBytes = 1 << 20
    /// Blocks in a custom plan.
    public static let blocks = 100
    /// Steps in one block.
    public static let stepsPerBlock = 100
    /// How often a block may repeat.
    public static let iterations = 1_000
    /// Steps in running order, every iteration counted (warm-up and cool-down included).
    public static let plannedSteps = 10_000
    /// Characters in the plan's name or a step's name.
    public static let nameLength = 200
    // Nesting needs no bound of ours: Foundation's JSON reader refuses more than 512 levels.
}
