import Foundation
public import HTTPTypes
public import Hummingbird

/// An API error: an HTTP status and a JSON body `{"error":{"code":…,"message":…}}`.
public struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable machine-readable error code.
    public var code: String
    /// What is wrong, in words.
    public var message: String
    /// Extra response headers.
    public var headers: HTTPFields = [:]

    /// Creates it from its parts.
    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The JSON error response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json"
        let body = (try? JSONText.render(["error": ["code": code, "message": message]])) ?? "{}"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "invalid_request", message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not_found", message) }

    /// The answer to a session or sensor error.
    init(_ error: SessionError) {
        switch error {
        case .unknownSession, .unknownSensor, .unknownAthlete: self.init(.notFound, error.code, error.description)
        case .sensorInUse, .athleteBusy: self.init(.conflict, error.code, error.description)
        case .noSensors, .invalid: self.init(.badRequest, error.code, error.description)
        case .notAllowed: self.init(.conflict, error.code, error.description)
        }
    }
}
