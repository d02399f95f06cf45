public import Hummingbird
public import HummingbirdWebSocket

/// The request context of the API: which role the caller has (set by ``TokenMiddleware``).
public struct BridgeRequestContext: RequestContext, WebSocketRequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The WebSocket handler slot used by upgrades.
    public let webSocket: WebSocketHandlerReference<Self>
    /// What the caller may do.
    public var role: BridgeConfiguration.Role = .read

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
    }

    /// Refuses the request with 403 unless the caller has `needed`.
    public func require(_ needed: BridgeConfiguration.Role) throws {
        guard role >= needed else {
            throw APIError(.forbidden, "forbidden", "this needs a token with the \(needed.rawValue) role")
        }
    }
}
