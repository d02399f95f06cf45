public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real PostgreSQL server (Debian's `postgresql`) for one test: `initdb` into a temporary
/// directory, the postmaster on a Unix socket in that directory (no TCP: a port freed by a
/// restart could be taken by another test meanwhile), trust
/// authentication for the role `hrbridge`. Stopped by PID (SIGINT: PostgreSQL's fast shutdown,
/// which writes everything committed). As root, the server runs as the `postgres` user (it
/// refuses root) through `setpriv`, which execs it, so the PID is the postmaster's.
public final class PostgresServer: Sendable {
    /// Where the cluster and the socket live.
    public let directory: URL
    /// The port number in the socket's name (`.s.PGSQL.<port>`).
    public let port: Int
    /// With TLS: the same port on `localhost`, which takes TLS connections only (`hostssl`).
    public var tcpPort: Int? { tls ? port : nil }
    /// With TLS: the test CA that signed the server's certificate.
    public var caFile: String { directory.appendingPathComponent("certs/ca.crt").path }
    private let tls: Bool
    private let process = Mutex<Spawned?>(nil)
    private let binaries: String

    /// Debian's PostgreSQL binaries (the newest installed major version), when installed.
    public static var binaryDirectory: String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().last.map { "\(root)/\($0)/bin" }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0 + "/postgres") ? $0 : nil }
    }

    /// Whether this machine has the server.
    public static var isInstalled: Bool { binaryDirectory != nil }

    /// The store URL for database `database` through the Unix socket.
    public func url(database: String = "hrbridge") -> String {
        "postgresql://hrbridge@/\(database)?host=\(directory.path)&port=\(port)&pool=4"
    }

    /// Makes a new cluster and starts it; the database `hrbridge` exists. With `tls`, it also
    /// listens on `localhost` with a certificate from a new test CA, and takes only TLS there.
    public init(tls: Bool = false) async throws {
        self.tls = tls
        guard let binaries = Self.binaryDirectory else { throw HarnessError("PostgreSQL is not installed") }
        self.binaries = binaries
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        if getuid() == 0 {
            let user = getpwnam("postgres")
            guard let user else { throw HarnessError("running as root and there is no postgres user") }
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let initdb = try Spawned(
            Self.asServerUser[0],
            Self.asServerUser.dropFirst() + [
                binaries + "/initdb", "-D", directory.path + "/data", "-U", "hrbridge", "--auth=trust", "-E", "UTF8",
                "--no-sync", "--no-instructions",
            ], label: "initdb")
        guard await initdb.wait(timeout: HarnessDeadline.peerStart) == 0 else {
            throw HarnessError("initdb failed: \(initdb.report)")
        }
        if tls { try await prepareTLS() }
        try await start()
        try await createDatabase("hrbridge")
    }

    /// The certificate and key in the data directory (the server's own, key 0600) and rules that
    /// take TCP connections over TLS only.
    private func prepareTLS() async throws {
        let certificates = directory.appendingPathComponent("certs")
        try FileManager.default.createDirectory(at: certificates, withIntermediateDirectories: true)
        try await MosquittoBroker.makeCertificates(in: certificates)
        let data = directory.appendingPathComponent("data")
        for name in ["server.crt", "server.key"] {
            let target = data.appendingPathComponent(name)
            try FileManager.default.copyItem(at: certificates.appendingPathComponent(name), to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
            if getuid() == 0, let user = getpwnam("postgres") {
                chown(target.path, user.pointee.pw_uid, user.pointee.pw_gid)
            }
        }
        let rules = """
            local all all trust
            hostssl all all 127.0.0.1/32 trust
            hostssl all all ::1/128 trust
            host all all 0.0.0.0/0 reject
            host all all ::/0 reject

            """
        try Data(rules.utf8).write(to: data.appendingPathComponent("pg_hba.conf"))
    }

    /// `setpriv` to the postgres user when running as root; empty otherwise.
    private static var asServerUser: [String] {
        getuid() == 0
            ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
            : ["/usr/bin/env"]
    }

    /// Starts the postmaster and waits until it accepts connections.
    public func start() async throws {
        let command =
            Self.asServerUser + [
                binaries + "/postgres", "-D", directory.path + "/data", "-p", "\(port)", "-k", directory.path, "-c",
                "listen_addresses=\(tls ? "localhost" : "")", "-c", "fsync=off", "-c", "max_connections=60",
            ] + (tls ? ["-c", "ssl=on", "-c", "ssl_cert_file=server.crt", "-c", "ssl_key_file=server.key"] : [])
        let server = try await Spawned.startPeer(command[0], Array(command.dropFirst()), label: "postgres") {
            $0.output.contains { $0.contains("database system is ready to accept connections") }
        }
        process.withLock { $0 = server }
    }

    /// Creates a database (each test uses its own).
    public func createDatabase(_ name: String) async throws {
        let create = try Spawned(
            binaries + "/psql",
            [
                "-h", directory.path, "-p", "\(port)", "-U", "hrbridge", "-d", "postgres", "-c",
                "CREATE DATABASE \"\(name)\"",
            ], label: "psql")
        guard await create.wait(timeout: HarnessDeadline.peerStart) == 0 else {
            throw HarnessError("CREATE DATABASE \(name) failed: \(create.report)")
        }
    }

    /// Runs one SQL statement with psql and returns its unaligned output rows.
    public func query(_ sql: String, database: String = "hrbridge") async throws -> [String] {
        let psql = try Spawned(
            binaries + "/psql",
            ["-h", directory.path, "-p", "\(port)", "-U", "hrbridge", "-d", database, "-At", "-c", sql],
            label: "psql")
        guard await psql.wait(timeout: HarnessDeadline.peerStart) == 0 else {
            throw HarnessError("psql failed: \(psql.report)")
        }
        return psql.output
    }

    /// Runs an SQL script as a person would with `psql -X -q -At -v ON_ERROR_STOP=1 -f FILE`:
    /// `variables` are passed as `-v NAME=VALUE` (`:'NAME'` in the script), `environment` is added
    /// to psql's (`PGTZ`, …). Returns the unaligned output rows; a failing statement throws.
    public func runScript(
        _ sql: String, variables: [String: String] = [:], environment: [String: String] = [:],
        database: String = "hrbridge"
    ) async throws -> [String] {
        let file = directory.appendingPathComponent("script-\(UUID().uuidString).sql")
        try Data(sql.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let psql = try Spawned(
            binaries + "/psql",
            ["-h", directory.path, "-p", "\(port)", "-U", "hrbridge", "-d", database, "-X", "-q", "-At"]
                + ["-v", "ON_ERROR_STOP=1"] + variables.sorted { $0.key < $1.key }.flatMap { ["-v", "\($0)=\($1)"] }
                + ["-f", file.path],
            environment: environment, label: "psql")
        guard await psql.wait(timeout: HarnessDeadline.exit) == 0 else {
            throw HarnessError("psql -f failed: \(psql.report)")
        }
        return psql.output
    }

    /// Fast shutdown by PID (SIGINT), SIGKILL only if it does not end.
    public func stop() async {
        // A server a test paused (SIGSTOP) and left paused cannot stop, nor can its backends.
        signalEveryProcess(SIGCONT)
        guard
            let server = process.withLock({ process -> Spawned? in
                defer { process = nil }
                return process
            })
        else { return }
        kill(server.pid, SIGINT)
        if await server.wait(timeout: HarnessDeadline.exit) == nil { server.stop() }
    }

    /// Stops and starts it again on the same socket, data kept.
    public func restart() async throws {
        await stop()
        try await start()
    }

    /// Stops it and removes its directory.
    public func remove() async {
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Sends `signal` to the postmaster and every backend it forked (SIGSTOP: a server that stops
    /// answering with its connections open, as a hung host does; SIGCONT: back).
    public func signalEveryProcess(_ signal: Int32) {
        guard let postmaster = process.withLock({ $0?.pid }) else { return }
        var targets = [postmaster]
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in processes {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let afterName = stat.range(of: ") ", options: .backwards)
            else { continue }
            let fields = stat[afterName.upperBound...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { targets.append(pid) }
        }
        for pid in targets { kill(pid, signal) }
    }

    /// What the server printed so far.
    public var output: [String] { process.withLock { $0?.output ?? [] } }
}

/// Runs `body` with a PostgreSQL server started for it, removed afterwards however `body` ends.
public func withPostgres<T>(_ body: (PostgresServer) async throws -> T) async throws -> T {
    let server = try await PostgresServer()
    do {
        let result = try await body(server)
        await server.remove()
        return result
    } catch {
        await server.remove()
        throw error
    }
}
