public import Foundation

/// Why the builder refused a call; the order is beginCollection → add → endCollection → finish.
public enum WorkoutBuilderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `beginCollection` has not been called.
    case collectionNotStarted
    /// `beginCollection` was called already.
    case collectionAlreadyStarted
    /// `endCollection` was called: nothing more can be added.
    case collectionEnded
    /// `finishWorkout` needs `endCollection` first.
    case collectionNotEnded
    /// The workout was finished already.
    case workoutFinished
    /// The workout was discarded.
    case workoutDiscarded
    /// A date lies before the start of collection.
    case dateBeforeStart(Date)
    /// A date lies after the end of collection.
    case dateAfterEnd(Date)
    /// A lap overlaps an existing lap.
    case lapsOverlap(DateInterval)
    /// Custom zones must be set before `beginCollection`.
    case zonesLockedAfterBeginCollection
    /// An activity is in progress: end it before beginning another.
    case activityInProgress
    /// No activity is in progress.
    case noActivityInProgress
    /// An activity cannot begin before the previous one ended.
    case activityOverlaps(Date)
    /// A pause or resume dated before the last one, or one that changes nothing (a pause while paused).
    case pauseOrResumeOutOfOrder(Date)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .collectionNotStarted: "collection has not begun (call beginCollection first)"
        case .collectionAlreadyStarted: "collection has already begun"
        case .collectionEnded: "collection has ended; nothing more can be added"
        case .collectionNotEnded: "end collection before finishing the workout"
        case .workoutFinished: "the workout is already finished"
        case .workoutDiscarded: "the workout was discarded"
        case .dateBeforeStart(let date): "\(date) is before the start of collection"
        case .dateAfterEnd(let date): "\(date) is after the end of collection"
        case .lapsOverlap(let interval): "lap overlaps the lap from \(interval.start) to \(interval.end)"
        case .zonesLockedAfterBeginCollection: "custom zones must be set before beginCollection"
        case .activityInProgress: "an activity is in progress; end it first"
        case .noActivityInProgress: "no activity is in progress"
        case .activityOverlaps(let date): "an activity cannot begin at \(date), before the previous one ended"
        case .pauseOrResumeOutOfOrder(let date):
            "a pause or resume at \(date) comes before the last one, or changes nothing"
        }
    }
}
