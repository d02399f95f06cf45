import DBus
import Logging
import Metrics

/// A message from `org.bluez` without the shape BlueZ's API gives it: a signal or reply whose
/// arguments have other types, or a property of another type. It is refused (nothing of it is
/// applied), counted and logged, and the stream goes on.
public struct MalformedBlueZMessage: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was malformed.
    public enum Kind: String, Hashable, Sendable {
        /// A signal's arguments (`InterfacesAdded`, `PropertiesChanged`…).
        case signal
        /// A method reply's values (`GetManagedObjects`, `ReadValue`).
        case reply
        /// One property's value (`Device1.Connected`).
        case property
    }

    /// The D-Bus error name a refused reply is reported under.
    public static let errorName = "org.hrbridge.Error.MalformedReply"
    /// The longest received signature kept (a long one is cut: it only names what was wrong).
    static let signatureLimit = 64

    public var kind: Kind
    /// The signal or method (`InterfacesAdded`, `ReadValue`), or the property (`Device1.Connected`).
    public var member: String
    /// The object it concerned.
    public var path: String
    /// The signature BlueZ's API gives it (`oa{sa{sv}}`, `b`, `an integer`).
    public var expected: String
    /// The signature received (cut past ``signatureLimit`` characters).
    public var received: String

    /// A refusal; `received` is cut to ``signatureLimit`` characters.
    public init(kind: Kind, member: String, path: String, expected: String, received: String) {
        self.kind = kind
        self.member = member
        self.path = path
        self.expected = expected
        self.received =
            received.count > Self.signatureLimit ? String(received.prefix(Self.signatureLimit)) + "…" : received
    }

    /// The refusal of `values` (a signal's arguments or a reply) that should have been `expected`.
    init(_ kind: Kind, member: String, path: String, expected: String, values: [DBusValue]) {
        self.init(
            kind: kind, member: member, path: path, expected: expected, received: values.map(\.signature).joined())
    }

    /// `signal InterfacesAdded at /: expected oa{sa{sv}}, got s`.
    public var description: String {
        "\(kind) \(member) at \(path): expected \(expected), got \(received.isEmpty ? "nothing" : received)"
    }

    /// Counts `problems` in `hrbridge_bluez_malformed_total` and logs them: each kind and member
    /// at warning level the first time (`logged` remembers which), then at debug level.
    static func report(_ problems: [MalformedBlueZMessage], logger: Logger, logged: inout Set<String>) {
        for problem in problems {
            Counter(label: "hrbridge_bluez_malformed_total", dimensions: [("kind", problem.kind.rawValue)]).increment()
            let level: Logger.Level = logged.insert("\(problem.kind) \(problem.member)").inserted ? .warning : .debug
            logger.log(level: level, "BlueZ sent a malformed message; refused", metadata: ["problem": "\(problem)"])
        }
    }
}
