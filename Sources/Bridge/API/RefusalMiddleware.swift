public import Hummingbird
import Logging
import Metrics

/// Counts and logs every request the API refuses (a 4xx; the connection limit's 503 is counted
/// where it is answered), by the error's code: a client probing tokens or sending bad bodies
/// shows in `/metrics` and the log rather than only in its own answers. Codes are the API's own,
/// a bounded set of labels.
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
            // A store fault (500, 503, 507) is the daemon's, not the client's: StoreErrorMiddleware logs it.
            if error.status.code < 500 {
                Self.record(code: error.code, status: Int(error.status.code), request: request, logger: context.logger)
            }
            throw error
        } catch let error as HTTPError where (400..<500).contains(Int(error.status.code)) {
            // Hummingbird's own refusals (no such route) as the API's JSON error, named by their status.
            let refusal = Self.apiError(error, request: request)
            Self.record(code: refusal.code, status: Int(error.status.code), request: request, logger: context.logger)
            throw refusal
        }
    }

    /// Hummingbird's refusal as the API's error, with its body `{"error":{"code","message"}}`.
    static func apiError(_ error: HTTPError, request: Request) -> APIError {
        let path = APIError.shown(request.uri.path)
        switch error.status {
        case .notFound:
            return APIError(.notFound, "not_found", "nothing at \(path) (the API is under /v1; see /v1/openapi.json)")
        default:
            var refusal = APIError(
                error.status, "http_\(error.status.code)", error.body ?? error.status.reasonPhrase)
            refusal.headers = error.headers
            return refusal
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
