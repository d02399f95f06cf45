/// How fast a stepped simulation plays. The pace is only a wait between steps: it never changes
/// what a step emits or the time it carries.
public enum SimulationPace: Hashable, Sendable {
    /// No wait at all: as fast as the consumers handle the steps.
    case maximum
    /// Simulated seconds per real second: 60 plays a minute per second.
    case speed(Double)

    /// The highest ``speed(_:)`` accepted from the command line and configuration.
    public static let highestSpeed = 100_000.0

    /// How long to wait between steps (one simulated second each), in real seconds; nil for none.
    public var secondsBetweenSteps: Double? {
        switch self {
        case .maximum: nil
        case .speed(let speed): 1 / speed
        }
    }
}
