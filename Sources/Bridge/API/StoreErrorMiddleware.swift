public import Hummingbird
import Logging
import WorkoutStore

/// Turns a store error that reaches the router (a corrupt row, a full disk) into its JSON answer:
/// one clear error for the client, a log line for the operator, and the daemon goes on.
public struct StoreErrorMiddleware: RouterMiddleware {
    /// The request context this middleware works on.
    public typealias Context = BridgeRequestContext

    public init() {}

    /// Passes the request on and maps a thrown ``StoreError``.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as StoreError {
            context.logger.error("store error", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            throw APIError(error)
        }
    }
}
