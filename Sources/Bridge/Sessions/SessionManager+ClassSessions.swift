public import Foundation
import Wire
public import Workouts

extension SessionManager: ClassSessions {
    /// Creates a session on `strap` alone.
    public func startSession(
        strap: String, athlete: String?, activity: WorkoutActivityType, location: WorkoutLocation
    ) async throws(SessionError) -> (id: UUID, athlete: String) {
        let session = try await create(
            SessionRequest(activity: activity, location: location, sensors: [strap], athlete: athlete))
        return (session.id, session.profile.id)
    }

    /// Running or paused: among the active sessions and not ended (its end is published before it
    /// leaves them).
    public func runningAthlete(of session: UUID) async -> String? {
        guard let running = active.first(where: { $0.id == session }), await running.state != .ended else {
            return nil
        }
        return running.profile.id
    }

    /// ``stop(_:)``.
    public func endSession(_ session: UUID) async throws {
        try await stop(session.uuidString)
    }
}
