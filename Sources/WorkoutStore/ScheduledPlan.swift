public import Foundation

/// A structured workout scheduled for a day.
public struct ScheduledPlan: Hashable, Sendable {
    /// The entry's identifier.
    public var id: UUID
    /// The plan's name.
    public var name: String
    /// The plan file's JSON.
    public var plan: Data
    /// When it is planned.
    public var date: Date
    /// When a workout run from it finished.
    public var completedAt: Date?
    /// That workout.
    public var workoutID: UUID?

    /// An entry.
    public init(
        id: UUID, name: String, plan: Data, date: Date, completedAt: Date? = nil, workoutID: UUID? = nil
    ) {
        self.id = id
        self.name = name
        self.plan = plan
        self.date = date
        self.completedAt = completedAt
        self.workoutID = workoutID
    }
}
