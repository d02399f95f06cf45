/// Why a session refused an operation.
public enum WorkoutSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The operation is not legal in the current state.
    case invalidTransition(from: WorkoutSessionState, operation: WorkoutSessionOperation)
    /// The athlete already has an active session (HealthKit's error 8).
    case anotherWorkoutSessionStarted(athlete: String)
    /// The builder refused the matching call.
    case builder(WorkoutBuilderError)
    /// The data source failed (no sensor, adapter gone).
    case dataSource(String)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .invalidTransition(let from, let operation):
            "cannot \(operation.rawValue) a session that is \(from.rawValue)"
        case .anotherWorkoutSessionStarted(let athlete): "athlete '\(athlete)' already has an active workout session"
        case .builder(let error): "\(error)"
        case .dataSource(let message): "data source: \(message)"
        }
    }
}
