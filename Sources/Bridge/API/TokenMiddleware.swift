import Foundation
public import Hummingbird

/// Bearer tokens with roles: on the TCP listener every request needs one (`Authorization: Bearer
/// …`, or `?token=…` where a browser cannot set headers: EventSource, WebSocket); on the Unix
/// socket, file permissions are the gate and callers have the control role. The pages' stylesheets
/// and scripts are served without a token; the pages themselves need one.
public struct TokenMiddleware: RouterMiddleware {
    /// The request context this middleware works on.
    public typealias Context = BridgeRequestContext
    let tokens: [(value: [UInt8], role: BridgeConfiguration.Role)]
    let requiresToken: Bool

    /// A middleware for a listener with these tokens; `requiresToken` on TCP.
    public init(tokens: [BridgeConfiguration.Token], requiresToken: Bool) {
        self.tokens = tokens.map { (Array($0.value.utf8), $0.role) }
        self.requiresToken = requiresToken
    }

    /// The role of the token `presented`, comparing it with every configured token in time that
    /// does not depend on where they differ (no hash lookup, no early exit).
    func role(of presented: String) -> BridgeConfiguration.Role? {
        let bytes = Array(presented.utf8)
        var found: BridgeConfiguration.Role?
        for token in tokens where Self.constantTimeEqual(bytes, token.value) { found = token.role }
        return found
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        difference |= UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
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
        guard let presented, let role = role(of: presented) else {
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
