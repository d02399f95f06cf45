/// How hard the broker tries to deliver a message.
public enum MQTTQoS: Int32, Sendable {
    /// At most once: live values, where the next one replaces a lost one.
    case atMostOnce = 0
    /// At least once: events and configuration, resent until the broker acknowledges them.
    case atLeastOnce = 1
}

/// One message to publish or one that arrived.
public struct MQTTMessage: Sendable, Equatable {
    /// The topic (no wildcards when publishing).
    public var topic: String
    /// The payload bytes (empty: on a retained topic, removes what the broker keeps).
    public var payload: [UInt8]
    public var qos: MQTTQoS
    /// Whether the broker keeps it for later subscribers.
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    /// A message whose payload is text (JSON, a number, `online`).
    public init(topic: String, text: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }

    /// The payload as UTF-8 text, when it is.
    public var text: String? { String(validating: payload, as: UTF8.self) }
}
