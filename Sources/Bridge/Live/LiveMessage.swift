public import Foundation
import JSONSupport
public import Wire

/// One message of the live stream, rendered to JSON once and fanned out to every subscriber.
///
/// `kind` says what it is (``LiveMessageKind``); `session` and `sensor` are what stream filters
/// match on.
public struct LiveMessage: Sendable, Equatable {
    /// One allocation shared by every subscriber queue that holds the message: a queue entry is
    /// one reference (8 bytes), so 200 stalled clients with 4 MiB of backlog each cost about
    /// 16 MB of entries rather than 144 MB of copied fields (Benchmarks/README.md).
    private final class Storage: Sendable {
        let kind: LiveMessageKind
        let session: UUID?
        let sensor: String?
        let json: String
        let parts: [LiveMessage]

        init(kind: LiveMessageKind, session: UUID?, sensor: String?, json: String, parts: [LiveMessage] = []) {
            self.kind = kind
            self.session = session
            self.sensor = sensor
            self.json = json
            self.parts = parts
        }
    }

    private let storage: Storage

    /// What it is.
    public var kind: LiveMessageKind { storage.kind }
    /// The session it belongs to, when any.
    public var session: UUID? { storage.session }
    /// The sensor it comes from, when any.
    public var sensor: String? { storage.sensor }
    /// The whole message as one line of JSON (it carries `kind`, `session` and `sensor` too).
    public var json: String { storage.json }
    /// The `session` messages a `figures` message is made of (none for other kinds): readers that
    /// publish per session (MQTT's retained state) take them one by one.
    public var parts: [LiveMessage] { storage.parts }

    /// Renders `payload` with the routing keys added among its own.
    public init(kind: LiveMessageKind, session: UUID? = nil, sensor: String? = nil, payload: some Encodable) {
        let routed = TaggedJSON(kind: kind, session: session, sensor: sensor, payload: payload)
        let json = (try? JSONText.line(routed)) ?? #"{"kind":"error","message":"unencodable message"}"#
        storage = Storage(kind: kind, session: session, sensor: sensor, json: json)
    }

    /// A session's state, for the live stream: written by hand when it is the frequent kind
    /// (``SessionJSON/liveLine()``), by the encoder otherwise.
    public static func session(_ snapshot: SessionJSON) -> LiveMessage {
        guard let line = snapshot.liveLine() else {
            return LiveMessage(kind: .session, session: snapshot.id, payload: snapshot)
        }
        return LiveMessage(kind: .session, session: snapshot.id, sensor: nil, json: line)
    }

    /// Sessions' figures in one message, `{"kind":"figures","sessions":[…]}`: each element is one
    /// of `parts`, a `session` message as it is. `session` names the one session of a message
    /// cut for a reader that follows it.
    public static func figures(_ parts: [LiveMessage], session: UUID? = nil) -> LiveMessage {
        var object = JSONObjectWriter(capacity: parts.reduce(64) { $0 + $1.json.utf8.count + 1 })
        object.add("kind", LiveMessageKind.figures.rawValue)
        if let session { object.add("session", session) }
        object.add("sessions", encoded: parts.map(\.json))
        return LiveMessage(
            storage: Storage(kind: .figures, session: session, sensor: nil, json: object.text(), parts: parts))
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// A message whose line was written by hand (the per-frame ones); `json` must carry the routing keys.
    public init(kind: LiveMessageKind, session: UUID?, sensor: String?, json: String) {
        storage = Storage(kind: kind, session: session, sensor: sensor, json: json)
    }

    /// Two messages are equal when they say the same thing.
    public static func == (lhs: LiveMessage, rhs: LiveMessage) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.kind == rhs.kind && lhs.session == rhs.session && lhs.sensor == rhs.sensor && lhs.json == rhs.json)
    }

    /// Whether a subscriber with these filters wants this message (nil: everything).
    public func matches(session wanted: UUID?, sensor wantedSensor: String?) -> Bool {
        if let wanted, session != wanted { return false }
        if let wantedSensor, sensor?.uppercased() != wantedSensor.uppercased() { return false }
        return true
    }
}
