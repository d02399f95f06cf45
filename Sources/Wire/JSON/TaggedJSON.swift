public import Foundation

/// A payload's own keys plus `kind` (and `session`, `sensor` on the live stream), in one object:
/// how a stream of mixed lines says what each line is.
public struct TaggedJSON<Payload: Encodable>: Encodable {
    private enum Key: String, CodingKey { case kind, session, sensor }

    public var kind: LiveMessageKind
    public var session: UUID?
    public var sensor: String?
    public var payload: Payload

    public init(kind: LiveMessageKind, session: UUID? = nil, sensor: String? = nil, payload: Payload) {
        self.kind = kind
        self.session = session
        self.sensor = sensor
        self.payload = payload
    }

    /// The payload's keys, then the tags.
    public func encode(to encoder: any Encoder) throws {
        try payload.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(session?.uuidString.lowercased(), forKey: .session)
        try container.encodeIfPresent(sensor, forKey: .sensor)
    }
}

extension TaggedJSON: Decodable where Payload: Decodable {
    /// Reads a tagged line: the tags, and the payload from the same object (a payload key that is
    /// also a tag, such as a measurement's `sensor`, is read by both).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        kind = try container.decode(LiveMessageKind.self, forKey: .kind)
        if let text = try container.decodeIfPresent(String.self, forKey: .session) {
            guard let session = UUID(uuidString: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .session, in: container, debugDescription: "not a UUID: \(text)")
            }
            self.session = session
        } else {
            session = nil
        }
        sensor = try container.decodeIfPresent(String.self, forKey: .sensor)
        payload = try Payload(from: decoder)
    }
}

extension TaggedJSON: Sendable where Payload: Sendable {}

extension TaggedJSON: Equatable where Payload: Equatable {}
