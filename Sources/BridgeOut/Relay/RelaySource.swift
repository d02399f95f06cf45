import Sensors

/// Where the readings that hrbridge passes on (to a Bluetooth app or an OSC receiver) come from.
public enum RelaySource: Hashable, Sendable, CustomStringConvertible {
    /// One strap, by its Bluetooth address (upper case, colon separated).
    case strap(address: String)
    /// The primary heart-rate strap of the running session, following strap changes.
    case session
    /// The simulator's first strap, for trying an app without a strap.
    case simulator

    /// Parses the configuration and command-line spelling: an address, `session` or `simulator`.
    public init(parsing text: String) throws(RelaySourceError) {
        let trimmed = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        switch trimmed.lowercased() {
        case "session": self = .session
        case "simulator": self = .simulator
        default:
            guard BluetoothAddress.isValid(trimmed) else { throw RelaySourceError(text: String(trimmed.prefix(64))) }
            self = .strap(address: trimmed.uppercased())
        }
    }

    /// The spelling ``init(parsing:)`` reads.
    public var description: String {
        switch self {
        case .strap(let address): address
        case .session: "session"
        case .simulator: "simulator"
        }
    }
}

/// A source that is neither an address nor `session` nor `simulator`.
public struct RelaySourceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was given (at most 64 characters of it).
    public var text: String

    public var description: String {
        "source \"\(text)\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF), \"session\" or \"simulator\""
    }
}
