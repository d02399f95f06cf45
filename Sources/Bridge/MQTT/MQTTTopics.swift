public import Foundation

/// The topic names the bridge publishes and listens on (stable: documented in docs/mqtt.md).
///
/// Sensors appear by their address without colons, lower case (`c0ffee000001`): the form Home
/// Assistant allows in ids, and free of characters some tools treat specially in topics.
public struct MQTTTopics: Sendable, Equatable {
    /// This bridge's name.
    public let node: String
    /// Home Assistant's discovery prefix.
    public let discoveryPrefix: String

    public init(node: String, discoveryPrefix: String = "homeassistant") {
        self.node = node
        self.discoveryPrefix = discoveryPrefix
    }

    /// `hrbridge/<node>`.
    public var root: String { "hrbridge/\(node)" }
    /// `online`/`offline` (retained; `offline` is the Will).
    public var status: String { "\(root)/status" }
    /// Commands: `…/cmd/session/start`, `…/cmd/session/<id>/<action>`.
    public var commandFilter: String { "\(root)/cmd/#" }
    /// Where every command's reply goes.
    public var response: String { "\(root)/cmd/response" }
    /// Home Assistant's own status (`online` after it starts: discovery is published again).
    public var homeAssistantStatus: String { "\(discoveryPrefix)/status" }

    /// `c0ffee000001` for `C0:FF:EE:00:00:01`.
    public static func objectID(_ address: String) -> String {
        address.lowercased().filter { $0 != ":" }
    }

    /// `hrbridge/<node>/sensor/<id>/<leaf>`: `state`, `availability`.
    public func sensor(_ address: String, _ leaf: String) -> String {
        "\(root)/sensor/\(Self.objectID(address))/\(leaf)"
    }

    /// The heart-rate peripheral on `adapter`: `hrbridge/<node>/peripheral/hci1` (retained state).
    public func peripheral(_ adapter: String) -> String { "\(root)/peripheral/\(adapter)" }

    /// `hrbridge/<node>/session/<uuid>/<leaf>`: `state`, `event`, `zone`, `plan`, `hrv`.
    public func session(_ id: UUID, _ leaf: String) -> String {
        "\(root)/session/\(id.uuidString.lowercased())/\(leaf)"
    }

    /// `<prefix>/<component>/<node>_<id>/<object>/config`.
    public func discovery(_ component: String, address: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(node)_\(Self.objectID(address))/\(object)/config"
    }

    /// A command topic read: what to do, and to which session.
    public enum Command: Sendable, Equatable {
        case start
        case action(String, session: String)
    }

    /// The command a topic names, or why it names none.
    public func command(from topic: String) -> Result<Command, CommandTopicError> {
        let prefix = "\(root)/cmd/"
        guard topic.hasPrefix(prefix) else { return .failure(CommandTopicError(topic: topic)) }
        let parts = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        if parts == ["session", "start"] { return .success(.start) }
        if parts.count == 3, parts[0] == "session", !parts[1].isEmpty, !parts[2].isEmpty {
            return .success(.action(String(parts[2]), session: String(parts[1])))
        }
        return .failure(CommandTopicError(topic: topic))
    }

    /// A topic under `cmd/` that is no command.
    public struct CommandTopicError: Error, Sendable, Equatable {
        public var topic: String
    }
}
