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
    /// Characters in the plan's name or a step's name, counted as Unicode scalars (one
    /// character may carry thousands of combining marks).
    public static let nameLength = 200
    /// Problems reported at most: a malformed plan of 64 KiB could hold tens of thousands.
    public static let problems = 100

    /// The most a value may be in its dimension, in base units (s, m, kJ, bpm, W, rpm, m/s), and
    /// as a problem says it. Beyond any workout, and far from where sums of them would overflow
    /// to infinity (a `1` followed by 306 zeros is a valid number to JSON).
    public static func maximum(_ dimension: PlanValue.Dimension) -> (base: Double, said: String) {
        switch dimension {
        case .time: (7 * 86_400, "7 days")
        case .distance: (10_000_000, "10000 km")
        case .energy: (100_000, "100000 kJ")
        case .heartRate: (300, "300 bpm")
        case .power: (5_000, "5000 W")
        case .cadence: (300, "300 rpm")
        case .speed: (100, "100 m/s (a pace of 0:10 /km)")
        }
    }
    // Nesting needs no bound of ours: Foundation's JSON reader refuses more than 512 levels.
}
