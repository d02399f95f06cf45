public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real mosquitto broker (Debian's `mosquitto`) on a free loopback port, for one test.
///
/// It keeps its sessions in a persistence file in its own directory, so ``restart()`` brings back
/// the queued messages of persistent subscribers as an operator's broker does. Stopped by PID.
public final class MosquittoBroker: Sendable {
    /// Where its configuration, persistence file and (with TLS) certificates live.
    public let directory: URL
    /// The plain listener's port.
    public let port: Int
    /// The TLS listener's port, when started with TLS.
    public let tlsPort: Int?
    /// The test CA that signs the TLS listener's certificate.
    public var caFile: String { directory.appendingPathComponent("ca.crt").path }
    private let process = Mutex<Spawned?>(nil)

    /// Whether this machine has the broker.
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto") }

    /// Starts a broker; with `tls`, a second listener on TLS with a certificate from a new test CA.
    /// A free port can be taken by another process before the broker binds it (loaded parallel
    /// tests): then it starts again on other ports.
    ///
    /// With `accounts` (user → password), anonymous clients are refused and `acl` (mosquitto's
    /// ACL file text) decides who reads and writes what, as a gym's broker should.
    public init(tls: Bool = false, accounts: [String: String] = [:], acl: String? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-mqtt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if tls { try await Self.makeCertificates(in: directory) }
        var access = ""
        if !accounts.isEmpty {
            let passwords = directory.appendingPathComponent("passwords")
            let lines = accounts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)\n" }.joined()
            try Data(lines.utf8).write(to: passwords)
            // Hashed in place by the broker project's own tool.
            let hasher = try Spawned("/usr/bin/mosquitto_passwd", ["-U", passwords.path], label: "mosquitto_passwd")
            guard await hasher.wait() == 0 else { throw HarnessError("mosquitto_passwd -U failed") }
            access = "allow_anonymous false\npassword_file \(passwords.path)\n"
            if let acl {
                try Data(acl.utf8).write(to: directory.appendingPathComponent("acl"))
                access += "acl_file \(directory.appendingPathComponent("acl").path)\n"
            }
        }
        var attempt = 1
        while true {
            let ports = (plain: try freeLoopbackPort(), tls: tls ? try freeLoopbackPort() : nil)
            try Self.writeConfiguration(in: directory, port: ports.plain, tlsPort: ports.tls, access: access)
            do {
                let broker = try await Self.launch(in: directory)
                (port, tlsPort) = ports
                process.withLock { $0 = broker }
                return
            } catch let error as HarnessError where attempt < 5 && "\(error)".contains("Address already in use") {
                attempt += 1
            }
        }
    }

    private static func writeConfiguration(in directory: URL, port: Int, tlsPort: Int?, access: String) throws {
        var configuration = """
            user root
            persistence true
            persistence_location \(directory.path)/
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            listener \(port) 127.0.0.1

            """
        // One set of rules for every listener: anonymous clients, or accounts and an ACL.
        configuration = "per_listener_settings false\n" + configuration
        configuration += access.isEmpty ? "allow_anonymous true\n" : access
        if let tlsPort {
            configuration += """
                listener \(tlsPort) 127.0.0.1
                cafile \(directory.path)/ca.crt
                certfile \(directory.path)/server.crt
                keyfile \(directory.path)/server.key

                """
        }
        try Data(configuration.utf8).write(to: directory.appendingPathComponent("mosquitto.conf"))
    }

    /// Starts the broker process and waits until it says it runs.
    private static func launch(in directory: URL) async throws -> Spawned {
        let config = directory.appendingPathComponent("mosquitto.conf").path
        return try await Spawned.startPeer("/usr/sbin/mosquitto", ["-c", config], label: "mosquitto") { peer in
            peer.output.contains { $0.contains(" running") }
        }
    }

    /// Starts the broker process again (after ``stop()``) and waits until it says it runs.
    public func start() async throws {
        let broker = try await Self.launch(in: directory)
        process.withLock { $0 = broker }
    }

    /// Stops the broker (SIGTERM: it saves its persistence file, as on a service restart).
    public func stop() {
        let broker = process.withLock { process -> Spawned? in
            defer { process = nil }
            return process
        }
        broker?.stop()
    }

    /// Freezes the broker (SIGSTOP): its connections stay open and nothing is answered, as a hung
    /// broker's. ``thaw()`` before stopping it.
    public func freeze() {
        process.withLock { process in _ = process.map { kill($0.pid, SIGSTOP) } }
    }

    /// Lets a frozen broker run again (SIGCONT).
    public func thaw() {
        process.withLock { process in _ = process.map { kill($0.pid, SIGCONT) } }
    }

    /// Replaces the ACL (a broker started with accounts and an ACL) and has the broker read it
    /// again (SIGHUP), as an operator does; returns once the broker says it reloaded. Messages
    /// are checked against the ACL as they are delivered, so it applies to connected clients too.
    public func replaceACL(_ acl: String) async throws {
        try Data(acl.utf8).write(to: directory.appendingPathComponent("acl"))
        let reloads = output.filter { $0.contains("Reloading config") }.count
        process.withLock { process in _ = process.map { kill($0.pid, SIGHUP) } }
        try await eventually("the broker reloaded its ACL") {
            output.filter { $0.contains("Reloading config") }.count > reloads
        }
    }

    /// Stops and starts it again on the same ports, sessions kept.
    public func restart() async throws {
        stop()
        try await start()
    }

    /// Stops it and removes its directory.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// What the broker printed so far.
    public var output: [String] { process.withLock { $0?.output ?? [] } }

    /// A test CA and a server certificate for 127.0.0.1/localhost, made with openssl.
    /// A new test CA (`ca.crt`) and a server certificate it signs for `localhost` and 127.0.0.1
    /// (`server.crt`, `server.key`) in `directory`.
    public static func makeCertificates(in directory: URL) async throws {
        let path = directory.path
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=hrbridge test CA",
                "-keyout", "\(path)/ca.key", "-out", "\(path)/ca.crt",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(path)/server.key",
                "-out", "\(path)/server.csr",
            ],
            [
                "x509", "-req", "-in", "\(path)/server.csr", "-CA", "\(path)/ca.crt", "-CAkey", "\(path)/ca.key",
                "-CAcreateserial", "-days", "2", "-out", "\(path)/server.crt", "-extfile", "\(path)/san.cnf",
            ],
        ]
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(
            to: directory.appendingPathComponent("san.cnf"))
        for arguments in steps {
            let openssl = try Spawned("/usr/bin/openssl", arguments, label: "openssl")
            let status = await openssl.wait()
            guard status == 0 else { throw HarnessError("openssl \(arguments[0]) failed: \(openssl.report)") }
        }
    }
}

/// Runs `body` with a broker, removed afterwards whatever happens.
public func withMosquitto<T>(tls: Bool = false, _ body: (MosquittoBroker) async throws -> T) async throws -> T {
    let broker = try await MosquittoBroker(tls: tls)
    do {
        let result = try await body(broker)
        broker.remove()
        return result
    } catch {
        broker.remove()
        throw error
    }
}
