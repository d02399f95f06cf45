public import Foundation

/// One message of the live stream, rendered to JSON once and fanned out to every subscriber.
///
/// `kind` is `sample`, `measurement`, `sensor`, `session`, `event` or `zone`; `session` and
/// `sensor` are what stream filters match on.
public struct LiveMessage: Sendable, Equatable {
    /// What it is.
    public let kind: String
    /// The session it belongs to, when any.
    public let session: UUID?
    /// The sensor it comes from, when any.
    public let sensor: String?
    /// The whole message as one line of JSON (it carries `kind`, `session` and `sensor` too).
    public let json: String

    /// Renders `fields` with the routing keys added.
    public init(kind: String, session: UUID? = nil, sensor: String? = nil, fields: [String: Any]) {
        self.kind = kind
        self.session = session
        self.sensor = sensor
        var object = fields
        object["kind"] = kind
        if let session { object["session"] = session.uuidString.lowercased() }
        if let sensor { object["sensor"] = sensor }
        json = (try? JSONText.render(object)) ?? #"{"kind":"error","message":"unencodable message"}"#
    }

    /// Whether a subscriber with these filters wants this message (nil: everything).
    public func matches(session wanted: UUID?, sensor wantedSensor: String?) -> Bool {
        if let wanted, session != wanted { return false }
        if let wantedSensor, sensor?.uppercased() != wantedSensor.uppercased() { return false }
        return true
    }
}
