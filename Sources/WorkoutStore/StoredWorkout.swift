public import Foundation
public import Workouts

/// A stored workout as listed: identity, kind, times; `summary` once finished.
public struct StoredWorkout: Hashable, Sendable {
    /// The identifier.
    public var id: UUID
    public var configuration: WorkoutConfiguration
    /// The athlete key.
    public var athlete: String
    /// Start of collection.
    public var start: Date
    /// End of collection, once finished.
    public var end: Date?
    /// Elapsed time, once finished.
    public var elapsedTime: TimeInterval?
    /// Whether it is still active (journaled for recovery).
    public var isActive: Bool
    /// The finished workout.
    public var summary: Workout?
}
