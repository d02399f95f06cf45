import Foundation
import Hummingbird
import Wire

/// `/v1/sessions`: start a workout on chosen sensors, control it (pause, resume, lap, next step,
/// new activity, stop) and read it. MQTT commands go through the same ``SessionCommands``.
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
            let body = try await RequestBody.data(of: request)
            return try APIRouter.json(try await SessionCommands.start(core, body: body), status: .created)
        }
        v1.get("sessions/:id") { _, context in
            let id = try context.parameters.require("id")
            let session = try await SessionCommands.answer { () async throws(SessionError) in
                try await core.sessions.session(id)
            }
            return try APIRouter.json(await session.snapshot())
        }
        for action in SessionCommands.actions {
            v1.post("sessions/:id/\(action)") { request, context in
                try context.require(.control)
                let id = try context.parameters.require("id")
                let body = try await RequestBody.data(of: request)
                return try APIRouter.json(
                    try await SessionCommands.perform(core, action: action, session: id, body: body))
            }
        }
    }
}
