public import Hummingbird
import Logging
import Metrics

/// Counts and logs every request the API refuses (a 4xx, or a 503 it answers itself), by the
/// error's code: a client probing tokens or sending bad bodies shows in `/metrics` and the log
/// rather than only in its own answers. Codes are the API's own, a bounded set of labels.
public struct RefusalMiddleware: RouterMiddleware {
    /// The request context this middleware works on.
    public typealias Context = BridgeRequestContext

    public init() {}

    /// Passes the request on, and counts and logs what it refused.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            Self.record(code: error.code, status: Int(error.status.code), request: request, logger: context.logger)
            throw error
        } catch let error as HTTPError where (400..<500).contains(Int(error.status.code)) {
            // Hummingbird's own refusals (a body over the limit): named by their status.
            Self.record(
                code: "http_\(error.status.code)", status: Int(error.status.code), request: request,
                logger: context.logger)
            throw error
        }
    }

    private static func record(code: String, status: Int, request: Request, logger: Logger) {
        Counter(label: "hrbridge_api_refused_total", dimensions: [("code", code)]).increment()
        logger.debug(
            "request refused",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path.prefix(128))", "status": "\(status)",
                "code": "\(code)",
            ])
    }
}
