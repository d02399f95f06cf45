public import Foundation
public import Wire

/// The topics of one bridge (its node) and of its Home Assistant, as strings for the client:
/// a thin view of Wire's ``Topic``, where every topic is built and parsed (stable: documented in
/// docs/mqtt.md).
public struct MQTTTopics: Sendable, Equatable {
    /// This bridge's name.
    public let node: String
    /// Home Assistant's discovery prefix.
    public let discoveryPrefix: String
    /// Where Home Assistant says it started (`online`).
    public let birthTopic: String

    public init(node: String, discoveryPrefix: String = "homeassistant", birthTopic: String = "homeassistant/status") {
        self.node = node
        self.discoveryPrefix = discoveryPrefix
        self.birthTopic = birthTopic
    }

    /// `hrbridge/<node>`: what every topic of this bridge starts with.
    public var root: String { "\(Topic.root)/\(node)" }
    /// `online`/`offline` (retained; `offline` is the Will).
    public var status: String { Topic.status(node: node).string }
    /// Commands: `…/cmd/session/start`, `…/cmd/session/<id>/<action>`.
    public var commandFilter: String { TopicFilter.commands(node: node).string }
    /// `hrbridge/<node>/cmd/`: what every command topic starts with (the filter without its `#`).
    public var commandPrefix: String { String(commandFilter.dropLast()) }
    /// Where every command's reply goes.
    public var response: String { Topic.commandResponse(node: node).string }
    /// Home Assistant's own status (`online` after it starts: discovery is published again).
    public var homeAssistantStatus: String { birthTopic }

    /// `c0ffee000001` for `C0:FF:EE:00:00:01`.
    public static func objectID(_ address: String) -> String { Topic.objectID(address) }

    /// `hrbridge/<node>/sensor/<id>/<leaf>`.
    public func sensor(_ address: String, _ leaf: Topic.SensorLeaf) -> String {
        Topic.sensor(node: node, address: address, leaf: leaf).string
    }

    /// The heart-rate peripheral on `adapter`: `hrbridge/<node>/peripheral/hci1` (retained state).
    public func peripheral(_ adapter: String) -> String { Topic.peripheral(node: node, adapter: adapter).string }

    /// `hrbridge/<node>/session/<uuid>/<leaf>`.
    public func session(_ id: UUID, _ leaf: Topic.SessionLeaf) -> String {
        Topic.session(node: node, id: id, leaf: leaf).string
    }

    /// `<prefix>/<component>/<node>_<id>/<object>/config`.
    public func discovery(_ component: String, address: String, object: String) -> String {
        Topic.discovery(prefix: discoveryPrefix, component: component, node: node, address: address, object: object)
            .string
    }

    /// A command topic read: what to do, and to which session.
    public enum Command: Sendable, Equatable {
        case start
        case action(String, session: String)
    }

    /// The command a topic names (parsed by ``Topic``, for this node), or why it names none.
    public func command(from topic: String) -> Result<Command, CommandTopicError> {
        switch Topic(topic) {
        case .startSession(let target)? where target == node: .success(.start)
        case .sessionCommand(let target, let session, let action)? where target == node:
            .success(.action(action, session: session))
        default: .failure(CommandTopicError(topic: topic))
        }
    }

    /// A topic under `cmd/` that is no command.
    public struct CommandTopicError: Error, Sendable, Equatable {
        public var topic: String
    }
}
