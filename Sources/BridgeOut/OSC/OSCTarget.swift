/// Where OSC goes: a host (name, IPv4 or IPv6 address) and a UDP port.
public struct OSCTarget: Hashable, Sendable, CustomStringConvertible {
    /// VRChat's receiving port.
    public static let vrchatPort: UInt16 = 9000
    /// VRChat on this machine.
    public static let localVRChat = OSCTarget(host: "127.0.0.1", port: vrchatPort)

    /// The host: `127.0.0.1`, `192.168.1.50`, `::1`, `quest.lan`.
    public var host: String
    /// The UDP port.
    public var port: UInt16

    /// A target as given.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, or `[v6-address]:port` (an IPv6 address needs the brackets).
    public init(parsing text: String) throws(OSCTargetError) {
        let trimmed = text.trimmingSpaces()
        let shown = String(trimmed.prefix(64))
        let host: Substring
        let port: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw .unclosedBracket(shown) }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.first == ":" else { throw .missingPort(shown) }
            port = rest.dropFirst()
        } else {
            let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            switch parts.count {
            case 1: throw .missingPort(shown)
            case 2:
                host = parts[0]
                port = parts[1]
            default: throw .unbracketedIPv6(shown)
            }
        }
        guard !host.isEmpty else { throw .emptyHost(shown) }
        guard !port.isEmpty else { throw .missingPort(shown) }
        guard port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber), let number = UInt16(port), number > 0 else {
            throw .badPort(shown, port: String(port.prefix(16)))
        }
        self.init(host: String(host), port: number)
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A target that is not `host:port`; each case carries what was given (at most 64 characters).
public enum OSCTargetError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing before the colon.
    case emptyHost(String)
    /// No `:port` (or nothing after the colon).
    case missingPort(String)
    /// The port is not a number from 1 to 65535.
    case badPort(String, port: String)
    /// Several colons without brackets: an IPv6 address must be written `[::1]:9000`.
    case unbracketedIPv6(String)
    /// A `[` without its `]`.
    case unclosedBracket(String)

    public var description: String {
        switch self {
        case .emptyHost(let text): "target \"\(text)\" has no host before the port (host:port)"
        case .missingPort(let text): "target \"\(text)\" has no port: write host:port, e.g. 127.0.0.1:9000"
        case .badPort(let text, let port): "target \"\(text)\": port \"\(port)\" is not a number from 1 to 65535"
        case .unbracketedIPv6(let text):
            "target \"\(text)\" has several colons: write an IPv6 address in brackets, e.g. [::1]:9000"
        case .unclosedBracket(let text): "target \"\(text)\" opens \"[\" without closing it"
        }
    }
}
