import FoundationEssentials

extension Topic {
    /// Reads a topic heard from a broker. Refused, with what is wrong: a topic longer than
    /// ``maximumLength``, one holding a wildcard or NUL, an empty segment, a node that is no node
    /// name, a sensor id that is not 12 hex digits, a leaf not listed, any other shape.
    ///
    /// A first segment `hrbridge` is read as the project's own tree; anything else as Home
    /// Assistant's, whose prefix is configurable (and may hold `/`).
    public static func parse(_ text: String) throws(TopicError) -> Topic {
        let bytes = text.utf8.count
        guard bytes <= maximumLength else { throw .tooLong(bytes) }
        if let reserved = text.utf8.first(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 == 0 }) {
            throw .reservedCharacter(Character(Unicode.Scalar(reserved)))
        }
        let segments = text.split(separator: "/", omittingEmptySubsequences: false)
        if let empty = segments.firstIndex(where: \.isEmpty) { throw .emptySegment(empty) }
        return segments[0] == root ? try own(segments, text) : try homeAssistant(segments, text)
    }

    /// The topic `text` names, or nil when ``parse(_:)`` refuses it.
    public init?(_ text: String) {
        guard let topic = try? Self.parse(text) else { return nil }
        self = topic
    }

    /// `hrbridge/<node>/…`.
    private static func own(_ segments: [Substring], _ text: String) throws(TopicError) -> Topic {
        guard segments.count >= 3 else { throw .unknownShape(text) }
        let node = String(segments[1])
        guard isNodeName(node) else { throw .badSegment(node) }
        switch (segments[2], segments.count) {
        case ("status", 3):
            return .status(node: node)
        case ("sensor", 5):
            guard let address = address(fromObjectID: segments[3]) else { throw .badSegment(String(segments[3])) }
            guard let leaf = SensorLeaf(rawValue: String(segments[4])) else { throw .badSegment(String(segments[4])) }
            return .sensor(node: node, address: address, leaf: leaf)
        case ("peripheral", 4):
            return .peripheral(node: node, adapter: String(segments[3]))
        case ("session", 5):
            guard let id = UUID(uuidString: String(segments[3])) else { throw .badSegment(String(segments[3])) }
            guard let leaf = SessionLeaf(rawValue: String(segments[4])) else { throw .badSegment(String(segments[4])) }
            return .session(node: node, id: id, leaf: leaf)
        case ("cmd", 4) where segments[3] == "response":
            return .commandResponse(node: node)
        case ("cmd", 5) where segments[3] == "session" && segments[4] == "start":
            return .startSession(node: node)
        case ("cmd", 6) where segments[3] == "session":
            return .sessionCommand(node: node, session: String(segments[4]), action: String(segments[5]))
        default:
            throw .unknownShape(text)
        }
    }

    /// `<prefix>/status` and `<prefix>/<component>/<node>_<id>/<object>/config`.
    private static func homeAssistant(_ segments: [Substring], _ text: String) throws(TopicError) -> Topic {
        let count = segments.count
        if count >= 2, segments[count - 1] == "status" {
            return .homeAssistantStatus(prefix: segments[..<(count - 1)].joined(separator: "/"))
        }
        guard count >= 5, segments[count - 1] == "config" else { throw .unknownShape(text) }
        let component = segments[count - 4]
        let nodeAndID = segments[count - 3]
        let object = segments[count - 2]
        // Home Assistant allows only these characters in ids.
        for id in [component, object] where !isNodeName(id) { throw .badSegment(String(id)) }
        guard let underscore = nodeAndID.lastIndex(of: "_"), isNodeName(nodeAndID[..<underscore]),
            let address = address(fromObjectID: nodeAndID[nodeAndID.index(after: underscore)...])
        else { throw .badSegment(String(nodeAndID)) }
        return .discovery(
            prefix: segments[..<(count - 4)].joined(separator: "/"), component: String(component),
            node: String(nodeAndID[..<underscore]), address: address, object: String(object))
    }
}
