import Hummingbird
import Wire

/// `/v1/athletes`: the configured athletes with their zones in force.
struct AthleteController {
    let core: BridgeCore

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("athletes") { _, _ in
            try APIRouter.json([
                "athletes": core.configuration.athletes.map { AthleteJSON(profile: $0.profile, zones: $0.zones) }
            ])
        }
        v1.get("athletes/:id") { _, context in
            let id = try context.parameters.require("id")
            guard let found = core.configuration.athlete(id) else {
                throw APIError(.notFound, "unknown_athlete", "no athlete \(APIError.shown(id))")
            }
            return try APIRouter.json(AthleteJSON(profile: found.profile, zones: found.zones))
        }
    }
}
