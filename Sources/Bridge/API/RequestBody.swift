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
        } catch {
            throw APIError(.contentTooLarge, "too_large", "the body is larger than 64 KiB")
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

/// A body the endpoint does not read: any JSON object.
struct IgnoredBody: Decodable {
    init(from decoder: any Decoder) throws { _ = try decoder.container(keyedBy: AnyKey.self) }
}
