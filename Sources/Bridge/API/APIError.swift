import Foundation
public import HTTPTypes
public import Hummingbird
import JSONSupport
import Wire
public import WorkoutStore

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

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// What a client sent, as a message shows it: quoted, escaped, at most 64 characters.
    static func shown(_ text: String) -> String { String(text.prefix(64)).debugDescription }

    /// The JSON error response.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json"
        let body = (try? JSONText.line(ErrorJSON(code: code, message: message))) ?? "{}"
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
        case .storage(let storeError): self.init(storeError, retry: "nothing started; try again once it accepts")
        }
    }

    /// The answer to a store error: 507 for a full disk, 503 for another passing fault, 500 for a
    /// corrupt store; `retry` says what to do once the fault is gone.
    public init(_ error: StoreError, retry: String? = nil) {
        let message = retry.map { "\(error); \($0)" } ?? "\(error)"
        switch error {
        case .diskFull: self.init(.init(code: 507, reasonPhrase: "Insufficient Storage"), "disk_full", message)
        case .corrupt: self.init(.internalServerError, "store_corrupt", message)
        case .unknownWorkout: self.init(.notFound, "not_found", message)
        case .notPermissibleForGuestUser: self.init(.forbidden, "guest", message)
        case .scheduleFull: self.init(.conflict, "schedule_full", message)
        case .database, .cannotOpen, .unreachable: self.init(.serviceUnavailable, "store_unavailable", message)
        }
    }
}
