import Foundation
import Hummingbird
import JSONSupport
import NIOCore
import Workouts

/// A request body that is not what the API expects; the message names the field and what it must be.
struct RequestBodyError: Error, Sendable {
    var message: String
}

/// Any key of a JSON object, so a body's unknown fields can be named.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(_ name: String) { stringValue = name }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// Refuses a key not in `known`.
    func refuseUnknown(_ known: [String]) throws {
        if let unknown = allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw RequestBodyError(message: "unknown field '\(unknown)'; known: \(known.joined(separator: ", "))")
        }
    }

    /// The field's value when present; `null` or a value of the wrong type is `message`.
    func field<Value: Decodable>(_ name: String, _ type: Value.Type, _ message: String) throws -> Value? {
        let key = AnyKey(name)
        guard contains(key) else { return nil }
        do {
            guard try !decodeNil(forKey: key) else { throw RequestBodyError(message: message) }
            return try decode(type, forKey: key)
        } catch {
            throw RequestBodyError(message: message)
        }
    }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// `activity`, when present: one of the activity types.
    func activity() throws -> WorkoutActivityType? {
        let activities = WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = try field("activity", String.self, "'activity' must be one of \(activities)") else {
            return nil
        }
        guard let activity = WorkoutActivityType(rawValue: text) else {
            throw RequestBodyError(message: "'activity' must be one of \(activities)")
        }
        return activity
    }

    /// `location`, when present: indoor or outdoor.
    func location() throws -> WorkoutLocation? {
        guard let text = try field("location", String.self, "'location' must be indoor or outdoor") else { return nil }
        guard let location = WorkoutLocation(rawValue: text), location != .unknown else {
            throw RequestBodyError(message: "'location' must be indoor or outdoor")
        }
        return location
    }
}

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
