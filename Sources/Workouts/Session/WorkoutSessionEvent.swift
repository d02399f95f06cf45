public import Foundation

/// What a session reports, in a fixed order: a failure comes before the state change it causes.
public enum WorkoutSessionEvent: Hashable, Sendable {
    /// The state changed at `date`.
    case stateChanged(to: WorkoutSessionState, from: WorkoutSessionState, date: Date)
    /// Something failed; any state change it causes follows.
    case failed(WorkoutSessionError, date: Date)
    case activityBegan(WorkoutActivity, date: Date)
    case activityEnded(WorkoutActivity, date: Date)
    /// An event (pause, resume, lap…) was added to the workout.
    case generated(WorkoutEvent)
}
