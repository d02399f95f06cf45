import Foundation
import Hummingbird
import Wire

/// `/v1/class`: start the class (configured straps in range then sign in by themselves), read
/// who is in it, end it (every session in it saved).
struct ClassController {
    let core: BridgeCore

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("class") { _, _ in
            guard let running = await core.classes.snapshot else {
                throw APIError.notFound(ClassManager.Refusal.noClass.description)
            }
            return try APIRouter.json(running)
        }
        v1.post("class") { request, context in
            try context.require(.control)
            let body = try RequestBody.decode(ClassRequest.self, from: try await RequestBody.data(of: request))
            let started: ClassJSON
            do throws(ClassManager.Refusal) {
                started = try await core.classes.start(body)
            } catch {
                throw APIError(.conflict, error.code, error.description)
            }
            return try APIRouter.json(started, status: .created)
        }
        v1.post("class/stop") { request, context in
            try context.require(.control)
            _ = try RequestBody.decode(EmptyBody.self, from: try await RequestBody.data(of: request))
            let ended: ClassJSON
            do throws(ClassManager.Refusal) {
                ended = try await core.classes.stop()
            } catch {
                throw APIError.notFound(error.description)
            }
            return try APIRouter.json(ended)
        }
    }
}
