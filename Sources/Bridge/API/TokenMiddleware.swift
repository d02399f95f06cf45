import Foundation
public import Hummingbird

/// Bearer tokens with roles: on the TCP listener every request needs one (`Authorization: Bearer
/// …`, or `?token=…` where a browser cannot set headers: EventSource, WebSocket); on the Unix
/// socket, file permissions are the gate and callers have the control role. The pages' stylesheets
/// and scripts are served without a token; the pages themselves need one.
public struct TokenMiddleware: RouterMiddleware {
    /// The request context this middleware works on.
    public typealias Context = BridgeRequestContext
    let tokens: [String: BridgeConfiguration.Role]
    let requiresToken: Bool

    /// Creates it from its parts.
    public init(tokens: [BridgeConfiguration.Token], requiresToken: Bool) {
        self.tokens = Dictionary(tokens.map { ($0.value, $0.role) }) { first, _ in first }
        self.requiresToken = requiresToken
    }

    /// Sets the caller's role from its token, or refuses the request.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        // Stylesheets and scripts hold no data, and a page's <script src> cannot carry its token:
        // exactly those files, by name (not by suffix, not with extra slashes), go without one.
        if request.method == .get || request.method == .head, Self.isPublicAsset(request.uri.path) {
            return try await next(request, context)
        }
        guard requiresToken else {
            context.role = .control
            return try await next(request, context)
        }
        var presented: String?
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            presented = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        } else {
            presented = request.uri.queryParameters.get("token")
        }
        guard let presented, let role = tokens[presented] else {
            var error = APIError(
                .unauthorized, "unauthorized",
                presented == nil ? "a bearer token is required" : "the token is not valid")
            error.headers[.wwwAuthenticate] = "Bearer"
            throw error
        }
        context.role = role
        return try await next(request, context)
    }

    /// Whether `path` is exactly one of the embedded scripts or stylesheets (`/live.js`).
    static func isPublicAsset(_ path: String) -> Bool {
        guard path.hasPrefix("/"), !path.dropFirst().contains("/"),
            let asset = EmbeddedFiles.web[String(path.dropFirst())]
        else { return false }
        return !asset.type.hasPrefix("text/html")
    }
}
