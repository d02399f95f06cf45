import Foundation

/// Where a PostgreSQL store is: parsed from `postgresql://user[:password]@host[:port]/database`
/// with optional query items `host=/socket/directory` and `port=N` (a Unix socket, as libpq reads them),
/// `sslmode=disable|prefer|require|verify-full`, `sslrootcert=/ca.crt` and `pool=N` (connections
/// kept, 1…32).
///
/// Encryption defaults to `verify-full` for every host that is not this machine (a Unix socket or a
/// loopback address: `disable`); `prefer`, which falls back to plain text, is refused for those.
///
/// A password is better kept out of the URL (`[store] password_file`); the ``redacted`` form is
/// what messages show.
public struct PostgresStoreLocation: Hashable, Sendable, CustomStringConvertible {
    /// How the connection is encrypted.
    public enum TLSMode: String, Hashable, Sendable {
        /// Plain (the default on a Unix socket or loopback).
        case disable
        /// TLS when the server offers it (loopback only: it falls back to plain text).
        case prefer
        /// TLS or no connection; the server's certificate checked as with `verify-full` (stricter
        /// than libpq's `require`, which checks nothing).
        case require
        /// TLS or no connection, the certificate chained to `sslrootcert` (or the system's CAs)
        /// and naming the host (the default for every host that is not this machine).
        case verifyFull = "verify-full"
    }

    /// The server's host name or address; nil with a Unix socket.
    public var host: String?
    /// The TCP port.
    public var port: Int
    /// The directory holding the server's Unix socket (`.s.PGSQL.<port>`).
    public var socketDirectory: String?
    /// The role.
    public var username: String
    /// Its password, when one is needed.
    public var password: String?
    /// The database.
    public var database: String
    /// How the connection is encrypted.
    public var tls: TLSMode
    /// The CA file the server's certificate must chain to (`sslrootcert`); nil: the system's CAs.
    public var rootCertificate: String?
    /// Connections kept open at most.
    public var poolSize: Int

    /// Whether the server is on this machine: a Unix socket, `localhost` or a loopback address.
    public var isLocal: Bool { Self.isLocal(host: host, socketDirectory: socketDirectory) }

    static func isLocal(host: String?, socketDirectory: String?) -> Bool {
        guard socketDirectory == nil, let host else { return true }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        // 127.0.0.0/8 only as four numbers: `127.db.example.net` is a name, and may be anywhere.
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        let loopbackV4 =
            octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
        return bare == "localhost" || bare == "::1" || loopbackV4
    }

    /// Why a password must not be sent to this server, if it must not: without TLS it would cross
    /// the network in the clear (a server asking for a cleartext password gets it as written).
    public var passwordRefusal: String? {
        guard !isLocal, tls == .disable else { return nil }
        return "a password would cross the network to \(host ?? "") in the clear: use sslmode=verify-full"
    }

    /// The Unix socket's path, when connecting through one.
    public var socketPath: String? { socketDirectory.map { "\($0)/.s.PGSQL.\(port)" } }

    /// The URL without the password, for messages.
    public var redacted: String {
        if let socketDirectory { return "postgresql://\(username)@/\(database)?host=\(socketDirectory)&port=\(port)" }
        return "postgresql://\(username)@\(host ?? ""):\(port)/\(database)"
    }

    /// The redacted URL.
    public var description: String { redacted }

    /// Why a store URL was refused.
    public struct Invalid: Error, Hashable, CustomStringConvertible {
        /// What is wrong with it.
        public let reason: String
        /// One line naming the problem.
        public var description: String { "invalid PostgreSQL store URL: \(reason)" }
    }

    /// Whether `text` names a PostgreSQL store (rather than a file).
    public static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// Parses a `postgresql://` URL; every part is checked and bounded.
    public init(url text: String) throws(Invalid) {
        guard text.utf8.count <= 2048 else { throw Invalid(reason: "longer than 2048 bytes") }
        guard Self.isPostgresURL(text), let components = URLComponents(string: text) else {
            throw Invalid(reason: "expected postgresql://user@host:port/database")
        }
        var socketDirectory: String?
        var tls: TLSMode?
        var rootCertificate: String?
        var poolSize = 4
        var queryPort: Int?
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "host":
                guard value.hasPrefix("/") else { throw Invalid(reason: "host= must be a socket directory (absolute)") }
                socketDirectory = value
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Invalid(
                        reason: "sslmode must be disable, prefer, require or verify-full, not \(value.debugDescription)"
                    )
                }
                tls = mode
            case "sslrootcert":
                guard value.hasPrefix("/") else { throw Invalid(reason: "sslrootcert must be an absolute path") }
                rootCertificate = value
            case "port":
                guard let number = Int(value) else {
                    throw Invalid(reason: "port must be a number, not \(value.debugDescription)")
                }
                queryPort = number
            case "pool":
                guard let size = Int(value), (1...32).contains(size) else {
                    throw Invalid(reason: "pool must be 1…32, not \(value.debugDescription)")
                }
                poolSize = size
            default:
                throw Invalid(reason: "unknown parameter \(item.name.debugDescription)")
            }
        }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 }
        guard host != nil || socketDirectory != nil else { throw Invalid(reason: "no host and no host=/socket/dir") }
        let port = queryPort ?? components.port ?? 5432
        guard (1...65_535).contains(port) else { throw Invalid(reason: "port \(port) out of range") }
        guard let user = components.user, !user.isEmpty else { throw Invalid(reason: "no user (postgresql://USER@…)") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw Invalid(reason: "no database (…/DATABASE)") }
        self.host = socketDirectory == nil ? host : nil
        self.port = port
        self.socketDirectory = socketDirectory
        self.username = user
        self.password = components.password
        self.database = database
        let local = Self.isLocal(host: self.host, socketDirectory: socketDirectory)
        let mode = tls ?? (local ? .disable : .verifyFull)
        if mode == .prefer, !local {
            throw Invalid(reason: "sslmode=prefer falls back to plain text over the network: use verify-full")
        }
        if rootCertificate != nil, ![.require, .verifyFull].contains(mode) || socketDirectory != nil {
            throw Invalid(reason: "sslrootcert needs TLS over TCP: sslmode=verify-full")
        }
        self.tls = mode
        self.rootCertificate = rootCertificate
        self.poolSize = poolSize
    }
}
