import HTTPTypes
public import Hummingbird

/// Adds the headers that keep a browser from running anything but the bridge's own files, on
/// every answer (errors included): a strict Content-Security-Policy (scripts and stylesheets
/// from the bridge only, no inline script, no framing), `nosniff`, and no Referer (page URLs
/// carry the token).
public struct SecurityHeadersMiddleware: RouterMiddleware {
    /// The request context this middleware works on.
    public typealias Context = BridgeRequestContext

    /// The policy: the pages build their DOM from data with `textContent`, so no inline script or
    /// style is ever needed; the live stream and the API are same-origin.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    static let fields: [(HTTPField.Name, String)] = [
        (HTTPField.Name("Content-Security-Policy")!, contentSecurityPolicy),
        (HTTPField.Name("X-Content-Type-Options")!, "nosniff"),
        (HTTPField.Name("Referrer-Policy")!, "no-referrer"),
    ]

    /// Creates the middleware.
    public init() {}

    /// Passes the request on and adds the headers to what comes back.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        for (name, value) in Self.fields { response.headers[name] = value }
        return response
    }
}
