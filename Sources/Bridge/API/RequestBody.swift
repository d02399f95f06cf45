import Foundation
import Hummingbird
import JSONSupport
import NIOCore
import Wire

enum RequestBody {
    /// The request's JSON object body as `Body` (an empty body is an empty object), at most 64 KiB.
    static func decode<Body: Decodable>(_ type: Body.Type, from request: Request) async throws -> Body {
        try decode(type, from: await data(of: request))
    }

    /// The request's body bytes (an empty body is an empty object), at most ``limit``.
    static func data(of request: Request) async throws(APIError) -> Data {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "too_large", "the body is larger than 64 KiB")
        } catch {
            // The client went away mid-body, or its bytes were not HTTP: not a size problem.
            throw APIError.badRequest("the body could not be read: \(error)")
        }
        return buffer.readableBytes > 0 ? Data(buffer.readableBytesView) : Data("{}".utf8)
    }

    /// The largest body read (the API's and an MQTT command's).
    static let limit = 64 * 1024

    /// A JSON object body as `Body`, each mistake named.
    static func decode<Body: Decodable>(_ type: Body.Type, from data: Data) throws(APIError) -> Body {
        guard data.count <= limit else {
            throw APIError(.contentTooLarge, "too_large", "the body is larger than 64 KiB")
        }
        do {
            return try JSONText.decode(type, from: data.isEmpty ? Data("{}".utf8) : data)
        } catch let error as RequestBodyError {
            throw APIError.badRequest(error.message)
        } catch {
            throw APIError.badRequest("the body must be a JSON object")
        }
    }
}

/// The body of a request that takes no fields: nothing, or an empty JSON object (a field would be
/// ignored, so it is refused, naming it).
struct EmptyBody: Decodable {
    init(from decoder: any Decoder) throws { try decoder.container(keyedBy: AnyKey.self).refuseUnknown([]) }
}
