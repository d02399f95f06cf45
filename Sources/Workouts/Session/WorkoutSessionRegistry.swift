import Synchronization

/// Enforces one active session per athlete; athletes on different straps run concurrently.
public final class WorkoutSessionRegistry: Sendable {
    private let active = Mutex<Set<String>>([])

    /// Creates an empty registry (the daemon keeps one; tests make their own).
    public init() {}

    /// The registry shared by every session of this process unless another is given.
    public static let shared = WorkoutSessionRegistry()

    /// Claims `athlete`; throws when the athlete already has an active session.
    public func claim(_ athlete: String) throws(WorkoutSessionError) {
        let claimed = active.withLock { $0.insert(athlete).inserted }
        if !claimed { throw .anotherWorkoutSessionStarted(athlete: athlete) }
    }

    /// Releases `athlete`.
    public func release(_ athlete: String) {
        _ = active.withLock { $0.remove(athlete) }
    }

    /// Athletes with an active session.
    public var activeAthletes: Set<String> { active.withLock { $0 } }
}
