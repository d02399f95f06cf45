public import Foundation
import JSONSupport
public import Wire

/// One message of the live stream, rendered to JSON once and fanned out to every subscriber.
///
/// `kind` is `sample`, `measurement`, `sensor`, `session`, `event` or `zone`; `session` and
/// `sensor` are what stream filters match on.
public struct LiveMessage: Sendable, Equatable {
    /// One allocation shared by every subscriber queue that holds the message: a queue entry is
    /// one reference (8 bytes), so 200 stalled clients with 4 MiB of backlog each cost about
    /// 16 MB of entries rather than 144 MB of copied fields (Benchmarks/README.md).
    private final class Storage: Sendable {
        let kind: LiveMessageKind
        let session: UUID?
        let sensor: String?
        let json: String

        init(kind: LiveMessageKind, session: UUID?, sensor: String?, json: String) {
            self.kind = kind
            self.session = session
            self.sensor = sensor
            self.json = json
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
