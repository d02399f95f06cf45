import Hummingbird
import HummingbirdCore
import Samples
import Wire
import WorkoutStore

/// `/v1/samples/changes`: the store's anchored query, so a client can keep its own copy of the
/// samples up to date (added and deleted since its last anchor) without reading whole workouts.
struct SampleChangesController {
    let core: BridgeCore

    /// Changes (additions and deletions) per answer when `limit` is not given, and the most a
    /// client may ask for.
    static let defaultLimit = 1000
    static let maximumLimit = 10_000

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("samples/changes") { request, _ in
            let query = try Self.query(request.uri)
            let store = try WorkoutController.store(core)
            // A store fault goes to StoreErrorMiddleware, which logs it and answers 503/507/500.
            let changes = try await store.changes(type: query.type, since: query.anchor, limit: query.limit)
            return try APIRouter.json(SampleChangesJSON(type: query.type, changes))
        }
    }

    /// `type` (default `heartRate`), `anchor` (absent: from the first sample) and `limit`
    /// (1–10,000, default 1,000); each malformed one is a 400 naming it.
    static func query(_ uri: URI) throws -> (type: QuantityType, anchor: Int64?, limit: Int) {
        let parameters = uri.queryParameters
        let type = try WorkoutController.quantityType(parameters.get("type"))
        var anchor: Int64?
        if let text = parameters.get("anchor") {
            guard let value = Int64(text), value >= 0 else {
                throw APIError.badRequest(
                    "'anchor' must be a whole number from 0 (the last answer's anchor), not \(text.prefix(64).debugDescription)"
                )
            }
            anchor = value
        }
        var limit = defaultLimit
        if let text = parameters.get("limit") {
            guard let value = Int(text), (1...maximumLimit).contains(value) else {
                throw APIError.badRequest("'limit' must be 1–\(maximumLimit)")
            }
            limit = value
        }
        return (type, anchor, limit)
    }
}
