public import Foundation
public import Workouts

/// What a class does with sessions: ``SessionManager`` in the daemon, a stand-in in tests.
public protocol ClassSessions: Sendable {
    /// Starts a session recording `strap` alone, under `athlete` (nil: the strap's configured or
    /// anonymous athlete); returns its identifier and athlete.
    func startSession(strap: String, athlete: String?, activity: WorkoutActivityType, location: WorkoutLocation)
        async throws(SessionError) -> (id: UUID, athlete: String)

    /// The athlete of a session that runs (nil: it ended, or is unknown).
    func runningAthlete(of session: UUID) async -> String?

    /// Ends a session, its workout saved.
    func endSession(_ session: UUID) async throws
}
