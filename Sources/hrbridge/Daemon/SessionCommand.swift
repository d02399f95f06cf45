import ArgumentParser
import BridgeClient
import Foundation
import NIOHTTP1
import Sensors
import Wire
import Workouts

/// `hrbridge session …`: drives a running daemon through its API socket.
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Start, pause, resume, lap, stop and watch sessions of a running daemon.",
        discussion: """
            Talks to the daemon's API socket (--socket, $HRBRIDGE_SOCKET, else /run/hrbridge/api.sock).
            Prints the session as JSON. Exit status: 0 done; 69 no daemon on the socket; 77 permission
            denied on the socket (not in its group); 65 refused (the API's message is printed); 64 a bad
            option (a session id, a Bluetooth address, --count, --zones) before anything is asked.
            """,
        subcommands: [
            Start.self, Action.Pause.self, Action.Resume.self, Action.Lap.self, Action.Stop.self, Status.self,
            Watch.self,
        ]
    )

    struct Connection: ParsableArguments {
        @Option(help: "The daemon's API socket.")
        var socket: String?

        var client: APIClient {
            let path =
                socket ?? ProcessInfo.processInfo.environment["HRBRIDGE_SOCKET"]
                ?? DaemonSocket.defaultPath
            return APIClient(endpoint: .unix(path))
        }

        /// Sends the request; prints the JSON body, or the error and exits 65 (69 without a daemon).
        func send(_ method: HTTPMethod, _ path: String, json: SessionRequest? = nil) async throws {
            let reply: APIClient.Reply
            do {
                if let json {
                    reply = try await client.send(method, path, json: json)
                } else {
                    reply = try await client.send(method, path)
                }
            } catch {
                throw SessionCommand.unreachable(client.endpoint, error, hint: "; is `hrbridged` running?")
            }
            guard (200..<300).contains(reply.status) else {
                StandardError.write("hrbridge: \(reply.errorMessage ?? "HTTP \(reply.status)")")
                throw ExitCode(65)
            }
            if !reply.body.isEmpty { print(String(decoding: reply.body, as: UTF8.self)) }
        }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start a session on the given sensors.")
        @OptionGroup var connection: Connection
        @Option(name: .customLong("sensor"), help: "Sensor address (repeatable; default: the first streaming sensor).")
        var sensors: [String] = []
        @Option(help: "Activity type, e.g. running, cycling.") var activity = "running"
        @Option(help: "indoor or outdoor.") var location = "indoor"
        @Option(help: "Athlete identifier from the configuration.") var athlete: String?
        @Option(help: "Heart-rate zone boundaries in bpm, e.g. 120,140,160,175.") var zones: String?
        @Flag(help: "A guest session: never stored.") var guest = false

        func validate() throws {
            try AddressArguments.check(sensors, "--sensor")
            _ = try boundaries()
        }

        /// Every boundary a number: one dropped quietly ("16O") would move every zone above it.
        func boundaries() throws -> [Double]? {
            try zones.map { text in
                try text.split(separator: ",", omittingEmptySubsequences: false).map { part in
                    let trimmed = part.trimmingCharacters(in: .whitespaces)
                    guard let value = Double(trimmed), value.isFinite else {
                        throw ValidationError(
                            "--zones takes numbers (bpm) separated by commas, not '\(trimmed.prefix(32))'")
                    }
                    return value
                }
            }
        }

        func run() async throws {
            var chosen = sensors
            if chosen.isEmpty {
                let reply: APIClient.Reply
                do {
                    reply = try await connection.client.send(.GET, "/v1/sensors")
                } catch {
                    throw SessionCommand.unreachable(connection.client.endpoint, error)
                }
                let list = reply.decode([String: [SensorStatus]].self)
                let free = list?["sensors"]?.first { $0.state == .ready && $0.session == nil }
                guard let address = free?.address else {
                    StandardError.write("hrbridge: no free streaming sensor; name one with --sensor")
                    throw ExitCode(65)
                }
                chosen = [address]
            }
            guard let activityType = WorkoutActivityType(rawValue: activity) else {
                StandardError.write(
                    "hrbridge: '\(activity)' is not an activity; one of \(WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
                throw ExitCode(65)
            }
            guard let locationValue = WorkoutLocation(rawValue: location), locationValue != .unknown else {
                StandardError.write("hrbridge: the location is indoor or outdoor, not '\(location)'")
                throw ExitCode(65)
            }
            let body = SessionRequest(
                activity: activityType, location: locationValue, sensors: chosen, athlete: athlete,
                zones: try boundaries(), guest: guest)
            try await connection.send(.POST, "/v1/sessions", json: body)
        }
    }

    enum Action {
        struct Pause: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Pause a session.")
            @OptionGroup var connection: Connection
            @Argument(help: "Session id (default: the only active session).") var id: String?
            func run() async throws { try await perform("pause", id, connection) }
        }
        struct Resume: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Resume a paused session.")
            @OptionGroup var connection: Connection
            @Argument(help: "Session id (default: the only active session).") var id: String?
            func run() async throws { try await perform("resume", id, connection) }
        }
        struct Lap: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Mark a lap.")
            @OptionGroup var connection: Connection
            @Argument(help: "Session id (default: the only active session).") var id: String?
            func run() async throws { try await perform("lap", id, connection) }
        }
        struct Stop: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "End a session and save its workout.")
            @OptionGroup var connection: Connection
            @Argument(help: "Session id (default: the only active session).") var id: String?
            func run() async throws { try await perform("stop", id, connection) }
        }

        static func perform(_ action: String, _ id: String?, _ connection: Connection) async throws {
            let session = try await SessionCommand.resolve(id, connection)
            try await connection.send(.POST, "/v1/sessions/\(session)/\(action)")
        }
    }

    /// Says why the daemon did not answer and gives the exit status: 77 (EX_NOPERM) when the socket
    /// is not this user's to open, else 69 (EX_UNAVAILABLE).
    static func unreachable(_ endpoint: APIClient.Endpoint, _ error: any Error, hint: String = "") -> ExitCode {
        if let error = error as? APIClientError, case .permissionDenied = error {
            StandardError.write("hrbridge: \(error)")
            return ExitCode(77)
        }
        StandardError.write("hrbridge: no daemon answers on \(endpoint) (\(error))\(hint)")
        return ExitCode(69)
    }

    /// The given id, else the only active session's.
    static func resolve(_ id: String?, _ connection: Connection) async throws -> String {
        if let id { return try checked(id) }
        let reply: APIClient.Reply
        do {
            reply = try await connection.client.send(.GET, "/v1/sessions")
        } catch {
            throw unreachable(connection.client.endpoint, error)
        }
        struct Listed: Decodable { var id: String }
        let sessions = reply.decode([String: [Listed]].self)?["sessions"] ?? []
        guard sessions.count == 1, let only = sessions.first?.id else {
            StandardError.write(
                "hrbridge: \(sessions.isEmpty ? "no active session" : "\(sessions.count) active sessions"); give a session id"
            )
            throw ExitCode(65)
        }
        return only
    }

    /// A session id as the daemon gives them (a UUID); anything else is a usage error here, never
    /// text put into a request line.
    static func checked(_ id: String) throws -> String {
        guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id.prefix(64))' is not a session id") }
        return uuid.uuidString.lowercased()
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a session (default: every active one).")
        @OptionGroup var connection: Connection
        @Argument(help: "Session id.") var id: String?
        func validate() throws { if let id { _ = try SessionCommand.checked(id) } }
        func run() async throws {
            try await connection.send(.GET, id.map { "/v1/sessions/\($0)" } ?? "/v1/sessions")
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Follow the live stream (JSON lines): current state first, then every message.")
        @OptionGroup var connection: Connection
        @Option(help: "Only this session's messages.") var session: String?
        @Option(help: "Only this sensor's messages.") var sensor: String?
        @Option(help: "Stop after this many messages.") var count: Int?
        @Option(help: "Only these kinds, comma-separated (sensor,measurement,sample,session,figures,…), or all.")
        var kinds = "all"

        func validate() throws {
            if let session { _ = try SessionCommand.checked(session) }
            if let sensor, !BluetoothAddress.isValid(sensor) {
                throw ValidationError(
                    "--sensor '\(sensor.prefix(64))' is not a Bluetooth address such as C0:FF:EE:00:00:01")
            }
            if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
        }

        func run() async throws {
            var query: [String] = []
            if let session { query.append("session=\(session)") }
            if let sensor { query.append("sensor=\(sensor)") }
            let listed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ","))
            query.append("kinds=\(kinds.addingPercentEncoding(withAllowedCharacters: listed) ?? "all")")
            let path = "/v1/events" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            var seen = 0
            let limit = count
            do {
                try await connection.client.events(path) { _, data in
                    print(data)
                    fflush(nil)
                    seen += 1
                    return limit.map { seen < $0 } ?? true
                }
            } catch let error as APIClientError {
                if case .permissionDenied = error {
                    throw SessionCommand.unreachable(connection.client.endpoint, error)
                }
                StandardError.write("hrbridge: \(error)")
                throw ExitCode(65)
            } catch {
                throw SessionCommand.unreachable(connection.client.endpoint, error)
            }
        }
    }
}
