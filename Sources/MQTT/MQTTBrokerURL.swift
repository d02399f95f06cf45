import Foundation

/// Where the broker is: `mqtt://host:1883` (plain TCP) or `mqtts://host:8883` (TLS).
///
/// Credentials never go in the URL (they would end up in logs and `ps`): the configuration names
/// a user and a password file instead.
public struct MQTTBrokerURL: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address (an IPv6 address without brackets).
    public var host: String
    public var port: Int
    /// Whether the connection is TLS.
    public var usesTLS: Bool

    public init(host: String, port: Int, usesTLS: Bool) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
    }

    /// Parses `text`, naming what is wrong when it is not a broker URL.
    public init(parsing text: String) throws(MQTTError) {
        guard text.count <= 512, let components = URLComponents(string: text), let scheme = components.scheme
        else { throw .invalidURL(text, reason: "not a URL such as mqtt://localhost:1883") }
        switch scheme.lowercased() {
        case "mqtt": usesTLS = false
        case "mqtts": usesTLS = true
        default: throw .invalidURL(text, reason: "the scheme must be mqtt:// or mqtts://, not \(scheme)://")
        }
        guard components.user == nil, components.password == nil else {
            // Shown without them: the message goes to the terminal and the journal.
            var shown = components
            shown.user = nil
            shown.password = nil
            throw .invalidURL(
                shown.string ?? "\(scheme)://…",
                reason: "credentials do not belong in the URL: use username and password_file")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil
        else { throw .invalidURL(text, reason: "a broker URL has no path, query or fragment") }
        var host = components.host ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw .invalidURL(text, reason: "no host") }
        self.host = host
        let port = components.port ?? (usesTLS ? 8883 : 1883)
        guard (1...65535).contains(port) else {
            throw .invalidURL(text, reason: "port \(port) is out of range 1–65535")
        }
        self.port = port
    }

    /// The URL as written back (`mqtt://host:port`).
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "mqtts" : "mqtt")://\(shownHost):\(port)"
    }
}
