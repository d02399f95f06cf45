public import Hummingbird

/// Refuses a query that names a parameter twice (`?limit=5&limit=abc`): the routes read the first
/// and would drop the rest without a word. No parameter of the API is repeated (`kinds` takes a
/// comma-separated list).
public struct QueryParametersMiddleware: RouterMiddleware {
    /// The request context this middleware works on.
    public typealias Context = BridgeRequestContext

    /// Creates the middleware.
    public init() {}

    /// Passes the request on unless a parameter is named twice.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var seen: Set<Substring> = []
        for (name, _) in request.uri.queryParameters where !seen.insert(name).inserted {
            throw APIError.badRequest("the query names \(APIError.shown(String(name))) more than once")
        }
        return try await next(request, context)
    }
}
