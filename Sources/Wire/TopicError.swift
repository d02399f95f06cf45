/// Why a topic was refused by ``Topic/parse(_:)``. Quoted topic text is cut short: it is anyone's.
public enum TopicError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The topic is longer than ``Topic/maximumLength`` bytes (its length).
    case tooLong(Int)
    /// The topic holds `+`, `#` or NUL: wildcards belong to filters, never to a topic.
    case reservedCharacter(Character)
    /// A segment is empty (`a//b`, a leading or trailing `/`): the segment's index.
    case emptySegment(Int)
    /// A segment does not hold what its place needs (a node name, a sensor id, a UUID, a leaf).
    case badSegment(String)
    /// None of the project's topics has this shape.
    case unknownShape(String)

    /// What is wrong, for logs.
    public var description: String {
        switch self {
        case .tooLong(let bytes): "a \(bytes)-byte topic; at most \(Topic.maximumLength)"
        case .reservedCharacter(let character):
            "the topic holds \(character == "\0" ? "NUL" : "'\(character)'"), which no topic may"
        case .emptySegment(let index): "segment \(index) of the topic is empty"
        case .badSegment(let segment): "'\(segment.prefix(64))' is not what its place in the topic holds"
        case .unknownShape(let topic): "'\(topic.prefix(120))' is none of hrbridge's topics"
        }
    }
}
