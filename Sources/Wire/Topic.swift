public import FoundationEssentials

/// Every MQTT topic hrbridge publishes or reads, built and parsed in one place (the list is
/// docs/mqtt.md's). ``string`` builds a topic; ``parse(_:)`` reads one and refuses anything that is
/// not exactly one of these shapes, since a topic heard from a broker is anyone's text.
///
/// Sensors appear by their address without colons, lower case (`c0ffee000001`): the form Home
/// Assistant allows in ids, and free of characters some tools treat specially in topics.
public enum Topic: Hashable, Sendable {
    /// `hrbridge/<node>/status`: `online`/`offline`, retained; `offline` is the Will.
    case status(node: String)
    /// `hrbridge/<node>/sensor/<id>/<leaf>`: a strap's state, availability, measurements, backfill.
    case sensor(node: String, address: String, leaf: SensorLeaf)
    /// `hrbridge/<node>/peripheral/<adapter>`: the heart-rate peripheral on `adapter` (retained state).
    case peripheral(node: String, adapter: String)
    /// `hrbridge/<node>/session/<uuid>/<leaf>`: a session's state, events, zones, plan steps, HRV.
    case session(node: String, id: UUID, leaf: SessionLeaf)
    /// `hrbridge/<node>/cmd/session/start`: the command that starts a session.
    case startSession(node: String)
    /// `hrbridge/<node>/cmd/session/<session>/<action>`: a command to one session.
    case sessionCommand(node: String, session: String, action: String)
    /// `hrbridge/<node>/cmd/response`: where every command's reply goes.
    case commandResponse(node: String)
    /// `<prefix>/status`: Home Assistant's own status (`online` after it starts).
    case homeAssistantStatus(prefix: String)
    /// `<prefix>/<component>/<node>_<id>/<object>/config`: one Home Assistant discovery config.
    case discovery(prefix: String, component: String, node: String, address: String, object: String)

    /// The first segment of every topic of the project's own.
    public static let root = "hrbridge"

    /// The longest topic read, in UTF-8 bytes: every real one is far shorter, so a longer one is
    /// refused before it is split.
    public static let maximumLength = 256

    /// The topic's text. Segments are written as given: build only from names checked where they
    /// were configured (a node is 1 to 64 letters, digits, `-` and `_`; see ``isNodeName(_:)``).
    public var string: String {
        switch self {
        case .status(let node): "\(Self.root)/\(node)/status"
        case .sensor(let node, let address, let leaf):
            "\(Self.root)/\(node)/sensor/\(Self.objectID(address))/\(leaf.rawValue)"
        case .peripheral(let node, let adapter): "\(Self.root)/\(node)/peripheral/\(adapter)"
        case .session(let node, let id, let leaf):
            "\(Self.root)/\(node)/session/\(id.uuidString.lowercased())/\(leaf.rawValue)"
        case .startSession(let node): "\(Self.root)/\(node)/cmd/session/start"
        case .sessionCommand(let node, let session, let action): "\(Self.root)/\(node)/cmd/session/\(session)/\(action)"
        case .commandResponse(let node): "\(Self.root)/\(node)/cmd/response"
        case .homeAssistantStatus(let prefix): "\(prefix)/status"
        case .discovery(let prefix, let component, let node, let address, let object):
            "\(prefix)/\(component)/\(node)_\(Self.objectID(address))/\(object)/config"
        }
    }

    /// `c0ffee000001` for `C0:FF:EE:00:00:01`: how a sensor appears in topics and ids.
    public static func objectID(_ address: String) -> String {
        address.lowercased().filter { $0 != ":" }
    }

    /// `C0:FF:EE:00:00:01` from `c0ffee000001` (either case); nil unless exactly 12 hex digits.
    public static func address(fromObjectID id: some StringProtocol) -> String? {
        // Byte by byte: a hub parses one topic per frame.
        guard id.utf8.count == 12 else { return nil }
        var address: [UInt8] = []
        address.reserveCapacity(17)
        for (index, byte) in id.utf8.enumerated() {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - 0x20
            default: return nil
            }
            if index > 0 && index % 2 == 0 { address.append(UInt8(ascii: ":")) }
            address.append(digit)
        }
        return String(decoding: address, as: UTF8.self)
    }

    /// Letters, digits, `-` and `_`, 1 to 64 of them: what a node (a gateway) may be called.
    public static func isNodeName(_ text: some StringProtocol) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }
}

extension Topic: CustomStringConvertible {
    /// ``string``.
    public var description: String { string }
}
