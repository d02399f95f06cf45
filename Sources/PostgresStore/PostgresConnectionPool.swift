import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization
import WorkoutStore

/// A fixed number of PostgreSQL connections shared by the store's synchronous callers.
///
/// A caller borrows one connection for a whole operation (a transaction), or waits for one. A
/// connection that failed is closed and not reused; the next borrower opens a new one, so a
/// restarted server is picked up without a restart of hrbridge.
final class PostgresConnectionPool: Sendable {
    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var nextID = 0
        var closed = false
    }

    private let location: PostgresStoreLocation
    private let configuration: PostgresConnection.Configuration
    private let group: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())
    private let available = NSCondition()
    /// How long a caller waits for a free connection.
    private let checkoutTimeout: TimeInterval = 30

    init(location: PostgresStoreLocation, group: any EventLoopGroup, logger: Logger) throws(StoreError) {
        self.location = location
        self.group = group
        self.logger = logger
        if let socket = location.socketPath {
            configuration = PostgresConnection.Configuration(
                unixSocketPath: socket, username: location.username, password: location.password,
                database: location.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch location.tls {
            case .disable: tls = .disable
            case .prefer, .require:
                do {
                    let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                    tls = location.tls == .prefer ? .prefer(context) : .require(context)
                } catch {
                    throw .cannotOpen(path: location.redacted, reason: "TLS: \(error)")
                }
            }
            var configuration = PostgresConnection.Configuration(
                host: location.host ?? "localhost", port: location.port, username: location.username,
                password: location.password, database: location.database, tls: tls)
            configuration.options.connectTimeout = .seconds(5)
            self.configuration = configuration
        }
    }

    /// Runs `body` on a borrowed connection; a connection that failed in it is dropped.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkout()
        do {
            let result = try body(connection)
            checkin(connection, broken: false)
            return result
        } catch {
            checkin(connection, broken: connection.isClosed || PostgresErrors.isConnectionLevel(error))
            throw error
        }
    }

    /// Closes every connection; later calls fail.
    func close() {
        let idle = state.withLock { state -> [PostgresConnection] in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle {
            let closing: EventLoopFuture<Void> = connection.close()
            try? closing.wait()
        }
        available.broadcast()
    }

    private enum Reservation {
        case reuse(PostgresConnection)
        case open(Int)
        case wait
        case closed
    }

    private func checkout() throws -> PostgresConnection {
        let deadline = Date().addingTimeInterval(checkoutTimeout)
        while true {
            let reservation = state.withLock { state -> Reservation in
                if state.closed { return .closed }
                while let connection = state.idle.popLast() {
                    if !connection.isClosed { return .reuse(connection) }
                    state.open -= 1
                }
                guard state.open < location.poolSize else { return .wait }
                state.open += 1
                state.nextID += 1
                return .open(state.nextID)
            }
            switch reservation {
            case .reuse(let connection): return connection
            case .closed: throw StoreError.unreachable("\(location.redacted): the store is closed")
            case .open(let id):
                do {
                    return try PostgresConnection.connect(
                        on: group.next(), configuration: configuration, id: id, logger: logger
                    ).wait()
                } catch {
                    state.withLock { $0.open -= 1 }
                    available.broadcast()
                    throw PostgresConnectFailure(underlying: error)
                }
            case .wait:
                available.lock()
                let signalled = available.wait(until: min(deadline, Date().addingTimeInterval(0.5)))
                available.unlock()
                if !signalled && Date() >= deadline {
                    throw StoreError.unreachable(
                        "\(location.redacted): no free connection for \(Int(checkoutTimeout)) s")
                }
            }
        }
    }

    private func checkin(_ connection: PostgresConnection, broken: Bool) {
        let keep = state.withLock { state -> Bool in
            if broken || state.closed {
                state.open -= 1
                return false
            }
            state.idle.append(connection)
            return true
        }
        if !keep { let _: EventLoopFuture<Void> = connection.close() }
        available.lock()
        available.signal()
        available.unlock()
    }
}

/// A new connection could not be made (the server is down, or cannot be reached).
struct PostgresConnectFailure: Error {
    let underlying: any Error
}
