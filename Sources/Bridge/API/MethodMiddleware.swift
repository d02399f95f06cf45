import Foundation
public import Hummingbird
import JSONSupport

/// Answers 405 with an `Allow` header for a known path asked with a method it does not have (the
/// router alone would say 404). The table of paths and methods is read from the OpenAPI document,
/// so the answer matches what the document declares.
public struct MethodMiddleware: RouterMiddleware {
    /// The request context this middleware works on.
    public typealias Context = BridgeRequestContext

    /// Path templates split into segments (`{…}` matches any one segment), with their methods.
    static let routes: [(segments: [String], methods: [String])] = {
        struct Document: Decodable { var paths: [String: [String: JSONValue]] }
        guard let paths = try? JSONText.decode(Document.self, from: Data(EmbeddedFiles.openAPI.utf8)).paths else {
            return []
        }
        let verbs: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        return paths.map { path, item in
            (
                path.split(separator: "/").map(String.init),
                item.keys.filter(verbs.contains).map { $0.uppercased() }.sorted()
            )
        }
    }()

    /// The methods a path has, or nil for an unknown path.
    static func methods(for path: String) -> [String]? {
        let segments = path.split(separator: "/").map(String.init)
        return routes.first { route in
            route.segments.count == segments.count
                && zip(route.segments, segments).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }?.methods
    }

    /// Creates the middleware.
    public init() {}

    /// Passes the request on; turns "no such route" into 405 when the path exists with other methods.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        if let methods = Self.methods(for: path) {
            var allowed = methods
            if allowed.contains("GET") { allowed.append("HEAD") }
            if !allowed.contains(request.method.rawValue) {
                var error = APIError(
                    .methodNotAllowed, "method_not_allowed",
                    "\(request.method.rawValue) is not allowed on \(path); allowed: \(allowed.joined(separator: ", "))")
                error.headers[.allow] = allowed.joined(separator: ", ")
                throw error
            }
        }
        return try await next(request, context)
    }
}
