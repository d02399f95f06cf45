import Foundation
import Hummingbird
import WorkoutStore
import Workouts

/// `/v1/sessions`: start a workout on chosen sensors, control it (pause, resume, lap, next step,
/// new activity, stop) and read it.
struct SessionController {
    let core: BridgeCore

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("sessions") { _, _ in
            var list: [SessionJSON] = []
            for session in await core.sessions.active { list.append(await session.snapshot()) }
            return try APIRouter.json(["sessions": list])
        }
        v1.post("sessions") { request, context in
            try context.require(.control)
            let parsed = try await RequestBody.decode(SessionRequest.self, from: request)
            let session = try await Self.session { () async throws(SessionError) in
                try await core.sessions.create(parsed)
            }
            return try APIRouter.json(await session.snapshot(), status: .created)
        }
        v1.get("sessions/:id") { _, context in
            let id = try context.parameters.require("id")
            let session = try await Self.session { () async throws(SessionError) in try await core.sessions.session(id)
            }
            return try APIRouter.json(await session.snapshot())
        }
        v1.post("sessions/:id/next") { _, context in
            try context.require(.control)
            let id = try context.parameters.require("id")
            let session = try await Self.session { () async throws(SessionError) in
                let session = try await core.sessions.session(id)
                try await session.nextStep()
                return session
            }
            return try APIRouter.json(await session.snapshot())
        }
        for action in ["pause", "resume", "lap", "stop", "activity"] {
            v1.post("sessions/:id/\(action)") { request, context in
                try context.require(.control)
                let id = try context.parameters.require("id")
                var change: ActivityChange?
                if action == "activity" {
                    change = try await RequestBody.decode(ActivityChange.self, from: request)
                } else {
                    _ = try await RequestBody.decode(IgnoredBody.self, from: request)
                }
                let session = try await Self.session { () async throws(SessionError) in
                    try await core.sessions.session(id)
                }
                do {
                    switch action {
                    case "pause": try await session.pause()
                    case "resume": try await session.resume()
                    case "lap": try await session.lap()
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
                return try APIRouter.json(await session.snapshot())
            }
        }
    }

    /// Runs `body`, answering a session error as the API documents it.
    static func session(_ body: () async throws(SessionError) -> BridgeSession) async throws -> BridgeSession {
        do {
            return try await body()
        } catch {
            throw APIError(error)
        }
    }
}
