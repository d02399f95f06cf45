import Foundation
import HTTPTypes
import Wire
import WorkoutStore
import Workouts

/// Starting and controlling sessions, as the API and MQTT commands both take them: one
/// validation, one set of errors.
enum SessionCommands {
    /// What a running session can be told.
    static let actions = ["pause", "resume", "lap", "next", "stop", "activity"]

    /// Starts a session from a request body (``SessionRequest``).
    static func start(_ core: BridgeCore, body: Data) async throws(APIError) -> SessionJSON {
        let request = try RequestBody.decode(SessionRequest.self, from: body)
        let session = try await answer { () async throws(SessionError) in try await core.sessions.create(request) }
        return await session.snapshot()
    }

    /// Performs `action` on session `id`; `body` is the activity change for `activity`, else empty.
    static func perform(_ core: BridgeCore, action: String, session id: String, body: Data) async throws(APIError)
        -> SessionJSON
    {
        guard actions.contains(action) else {
            throw APIError.notFound("unknown action '\(action.prefix(40))'; known: \(actions.joined(separator: ", "))")
        }
        var change: ActivityChange?
        if action == "activity" {
            change = try RequestBody.decode(ActivityChange.self, from: body)
        } else {
            _ = try RequestBody.decode(EmptyBody.self, from: body)
        }
        let session = try await answer { () async throws(SessionError) in try await core.sessions.session(id) }
        do {
            switch action {
            case "pause": try await session.pause()
            case "resume": try await session.resume()
            case "lap": try await session.lap()
            case "next": try await session.nextStep()
            case "activity":
                if let change { try await session.newActivity(change.activity, location: change.location) }
            default: try await core.sessions.stop(id)
            }
        } catch let error as WorkoutSessionError {
            throw APIError(.conflict, "invalid_state", "\(error)")
        } catch let error as StoreError {
            throw APIError(error, retry: "the session has ended; stop it again to save it")
        } catch let error as SessionError {
            throw APIError(error)
        } catch {
            throw APIError(.conflict, "session_failed", "\(error)")
        }
        return await session.snapshot()
    }

    /// Runs `body`, answering a session error as the API documents it.
    static func answer(_ body: () async throws(SessionError) -> BridgeSession) async throws(APIError) -> BridgeSession {
        do {
            return try await body()
        } catch {
            throw APIError(error)
        }
    }
}
