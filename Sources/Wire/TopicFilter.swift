/// The subscriptions hrbridge makes: topic filters with MQTT's wildcards, built in one place with
/// the ``Topic``s they match.
public enum TopicFilter: Hashable, Sendable {
    /// `hrbridge/+/status`: every gateway's status.
    case everyStatus
    /// `hrbridge/+/sensor/+/<leaf>`: one leaf of every gateway's sensors.
    case everySensor(Topic.SensorLeaf)
    /// `hrbridge/<node>/cmd/#`: a node's commands (and, under them, their replies).
    case commands(node: String)

    /// The filter's text.
    public var string: String {
        switch self {
        case .everyStatus: "\(Topic.root)/+/status"
        case .everySensor(let leaf): "\(Topic.root)/+/sensor/+/\(leaf.rawValue)"
        case .commands(let node): "\(Topic.root)/\(node)/cmd/#"
        }
    }

    /// Whether a message on `topic` is one the filter subscribes to.
    public func matches(_ topic: Topic) -> Bool {
        switch (self, topic) {
        case (.everyStatus, .status): true
        case (.everySensor(let wanted), .sensor(_, _, let leaf)): wanted == leaf
        case (.commands(let node), .startSession(let other)), (.commands(let node), .commandResponse(let other)),
            (.commands(let node), .sessionCommand(let other, _, _)):
            node == other
        default: false
        }
    }
}
