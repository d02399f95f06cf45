import Bridge
import BridgeClient
import BusHarness
import Foundation
import JSONSupport
import NIOHTTP1
import Synchronization
import Testing
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// `hrbridged` started for real on the mock adapter in a temporary directory: its own
/// config, store, Unix socket and a free TCP port with a read and a control token.
final class DaemonUnderTest: Sendable {
    static let readToken = "read-token-0123456789abcdef"
    static let controlToken = "control-token-0123456789abcdef"
    static let straps = ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02", "C0:FF:EE:00:00:03"]
    /// The second strap's advertised name: markup, as anyone in radio range may send. The pages
    /// must show it as text.
    static let hostileName = "<img src=x onerror=window.hacked=1>"

    let directory: URL
    let port: Int
    let process: Spawned

    var socketPath: String { directory.appendingPathComponent("api.sock").path }
    let storePath: String
    var unix: APIClient { APIClient(endpoint: .unix(socketPath)) }
    func tcp(_ token: String?) -> APIClient { APIClient(endpoint: .tcp(host: "127.0.0.1", port: port), token: token) }

    /// The command line, `hrbridge`, built beside the tests.
    static var binary: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("hrbridge").path
    }

    /// The service, `hrbridged`, built beside the tests.
    static var daemonBinary: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("hrbridged").path
    }

    /// Three virtual straps; with `dropouts`, the third one disconnects for 25 s of every minute
    /// from 40 s into the scenario on, so a page opened at any moment soon sees one.
    static func scenario(dropouts: Bool) -> String {
        let faults = stride(from: 40, to: 3600, by: 60).map {
            #"{"type": "disconnect", "at": "\#($0)s", "duration": "25s"}"#
        }
        // Without dropouts, the third strap sends a malformed frame every 10 s of its time.
        let malformed = stride(from: 5, to: 3600, by: 10).map { #"{"type": "malformedFrame", "at": "\#($0)s"}"# }
        let straps = Self.straps.enumerated().map { index, address in
            #"{"name": "\#(index == 1 ? hostileName : "Strap \(index + 1)")", "address": "\#(address)", "restingHeartRate": \#(55 + 5 * index), "#
                + #""maximumHeartRate": 185, "battery": 90, "age": 35, "weight": 70, "sex": "male", "#
                + #""segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]"#
                + (index == 2
                    ? #", "faults": [\#((dropouts ? faults : malformed).joined(separator: ", "))]"# : "")
                // The first strap's battery drains all hour (1 % a simulated minute): battery samples in every session.
                + (index == 0
                    ? #", "faults": [{"type": "batteryDrain", "at": "20s", "to": 30, "duration": "59m"}]"# : "")
                + "}"
        }
        return #"{"version": 1, "seed": 7, "straps": ["# + straps.joined(separator: ",\n") + "]}"
    }

    /// Starts a daemon; `reusing` keeps an earlier daemon's directory (store, config) and, with `samePort`, its port;
    /// `apiSettings` are more lines for its `[api]` table; `storeDirectory` holds the store
    /// elsewhere (a small disk); `scenario` replaces the three straps' (then `streaming` of them
    /// hold a link when the daemon is ready); `adapterSection` and `sensorsSection` replace the
    /// simulator's `[adapter]` and the three straps' `[[sensors]]`; `storeSection` replaces `[store]`.
    /// Its state directory (`STATE_DIRECTORY`: a gateway's journal) is its own directory.
    init(
        reusing previous: DaemonUnderTest? = nil, samePort: Bool = true, environment: [String: String] = [:],
        speed: Double = 5,
        classBoard: Bool = false, apiSettings: String = "", storeDirectory: String? = nil, moreSettings: String = "",
        scenario: String? = nil, streaming: Int? = 3, adapterSection: String? = nil, sensorsSection: String? = nil,
        storeSection: String? = nil
    ) async throws {
        let chosenPort: Int
        if let previous {
            directory = previous.directory
            chosenPort = samePort ? previous.port : try freeLoopbackPort()
            storePath = previous.storePath
            if !samePort {
                // The old port is free again for anyone on the machine (another suite's server may
                // hold it by now): a restart that needs no fixed URL takes a new one.
                let config = directory.appendingPathComponent("config.toml")
                let text = try String(contentsOf: config, encoding: .utf8)
                try Data(
                    text.replacingOccurrences(of: "tcp_port = \(previous.port)\n", with: "tcp_port = \(chosenPort)\n")
                        .utf8
                )
                .write(to: config)
            }
        } else {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "hrbridge-daemon-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            chosenPort = try freeLoopbackPort()
            storePath = (storeDirectory ?? directory.path) + "/store.sqlite"
            try Data((scenario ?? Self.scenario(dropouts: classBoard)).utf8).write(
                to: directory.appendingPathComponent("scenario.json"))
            try Data(
                """
                \(adapterSection ?? "[adapter]\nkind = \"mock\"\nscenario = \"\(directory.path)/scenario.json\"\nspeed = \(speed)")

                \(storeSection ?? "[store]\npath = \"\(storePath)\"")

                [api]
                socket = "\(directory.path)/api.sock"
                tcp_port = \(chosenPort)
                \(apiSettings)

                [[api.tokens]]
                token = "\(Self.readToken)"
                role = "read"

                [[api.tokens]]
                token = "\(Self.controlToken)"
                role = "control"

                [[athletes]]
                id = "alice"
                name = "Alice"
                age = 30
                max_hr = 190
                zones = [110, 130, 150, 170]

                [[athletes]]
                id = "bob"
                name = "Bob"
                max_hr = 185

                [[athletes]]
                id = "carol"
                name = "Carol"
                max_hr = 180

                \(sensorsSection ?? Self.sensorsSection(classBoard: classBoard))

                \(moreSettings)
                """.utf8
            ).write(to: directory.appendingPathComponent("config.toml"))
            // It holds tokens: readable by its owner only, or the daemon refuses it.
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o600], ofItemAtPath: directory.appendingPathComponent("config.toml").path)
        }
        let unix = APIClient(endpoint: .unix(directory.appendingPathComponent("api.sock").path))
        var environment = environment
        if environment["STATE_DIRECTORY"] == nil { environment["STATE_DIRECTORY"] = directory.path }
        // A port found free can be taken by another suite's server before the daemon binds it: a
        // daemon that may take any port gets another one then (a restart on its old port may not).
        let config = directory.appendingPathComponent("config.toml")
        var tcpPort = chosenPort
        var attempt = 1
        while true {
            do {
                // Ready: the daemon said so (interrupted sessions recovered, every listener up), and
                // the API answers on the socket with every strap streaming.
                process = try await Spawned.startPeer(
                    Self.daemonBinary, ["--config", config.path, "--log-level", "info"],
                    environment: environment, label: "daemon"
                ) { peer in
                    guard peer.output.contains(where: { $0.contains("hrbridged ready") }) else { return false }
                    guard let reply = try? await unix.send(.GET, "/v1/health"), reply.status == 200 else {
                        return false
                    }
                    // nil: the API answering is enough (a hub's count depends on what gateways send by then).
                    guard let streaming else { return true }
                    return reply.decode(HealthJSON.self)?.sensorsStreaming == streaming
                }
                break
            } catch let error as HarnessError
                where "\(error)".contains("Address already in use") && attempt < 3 && !(previous != nil && samePort)
            {
                attempt += 1
                let next = try freeLoopbackPort()
                let text = try String(contentsOf: config, encoding: .utf8)
                try Data(text.replacingOccurrences(of: "tcp_port = \(tcpPort)\n", with: "tcp_port = \(next)\n").utf8)
                    .write(to: config)
                tcpPort = next
            }
        }
        port = tcpPort
    }

    /// The three straps' `[[sensors]]` (the third is Carol's on the class board).
    static func sensorsSection(classBoard: Bool) -> String {
        """
        [[sensors]]
        address = "\(straps[0])"
        athlete = "alice"

        [[sensors]]
        address = "\(straps[1])"

        [[sensors]]
        address = "\(straps[2])"
        \(classBoard ? "athlete = \"carol\"" : "")
        """
    }

    /// Stops the daemon (SIGTERM) and removes its directory.
    func stop(removing: Bool = true) {
        process.stop()
        if removing { try? FileManager.default.removeItem(at: directory) }
    }
}

/// Collects a Server-Sent Events stream in the background.
final class EventCollector: Sendable {
    private let messages = Mutex<[String]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(_ client: APIClient, path: String) {
        let collector = Task { [self] in
            do {
                try await client.events(path) { _, data in
                    self.messages.withLock { $0.append(data) }
                    return !Task.isCancelled
                }
            } catch {}
        }
        task.withLock { $0 = collector }
    }

    /// The `data:` lines so far, as sent.
    var lines: [String] { messages.withLock { $0 } }

    /// Every message so far: its tags, and the rest as free-form JSON.
    func tagged() throws -> [TaggedJSON<JSONValue>] { try LiveLines.tagged(lines) }

    /// The messages of `kind` so far, each read as `payload` (throws on one that is not one).
    func messages<Payload: Decodable>(_ kind: LiveMessageKind, as payload: Payload.Type) throws
        -> [TaggedJSON<Payload>]
    {
        try LiveLines.decode(lines, kind, as: payload)
    }

    /// Every message as a dictionary (for tests of the raw shape).
    var all: [[String: Any]] {
        lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The messages of `kind` as dictionaries (for tests of the raw shape).
    func of(kind: String) -> [[String: Any]] { all.filter { $0["kind"] as? String == kind } }

    func cancel() { task.withLock { $0?.cancel() } }
}

/// Lines of the live stream (SSE `data:`, WebSocket frames) read as the wire types they carry:
/// `TaggedJSON` of the kind's payload (`sample`: `SampleJSON`, `session`: `SessionJSON`,
/// `hrv`: `WorkoutJSON.HRVWindow`, `plan`: `PlanJSON.Event`…).
enum LiveLines {
    private struct Kind: Decodable {
        var kind: LiveMessageKind
    }

    /// Each line's tags, the rest as free-form JSON; throws on a line that is not a tagged message.
    static func tagged(_ lines: [String]) throws -> [TaggedJSON<JSONValue>] {
        try lines.map { try decode(TaggedJSON<JSONValue>.self, $0) }
    }

    /// The lines of `kind`, each read as `payload`; throws on a line that is not a tagged message,
    /// or one of `kind` that is not a `payload`.
    static func decode<Payload: Decodable>(_ lines: [String], _ kind: LiveMessageKind, as payload: Payload.Type)
        throws -> [TaggedJSON<Payload>]
    {
        try lines.filter { try decode(Kind.self, $0).kind == kind }.map { try decode(TaggedJSON<Payload>.self, $0) }
    }

    private static func decode<Value: Decodable>(_ type: Value.Type, _ line: String) throws -> Value {
        do {
            return try JSONText.decode(type, from: Data(line.utf8))
        } catch {
            throw HarnessError("not a \(type): \(line)\n\(error)")
        }
    }
}

// Tests read replies as the wire types; `object` is for the few that check the raw shape (keys
// present, `null` kept) and `send(json:)` writes any object, including ones the API must refuse.
extension APIClient.Reply {
    /// The body as a JSON object.
    var object: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }

    /// The body as `Value`; throws naming the type, with the body, when it is not one.
    func decoded<Value: Decodable>(_ type: Value.Type) throws -> Value {
        do {
            return try JSONText.decode(type, from: body)
        } catch {
            throw HarnessError("HTTP \(status): not a \(type): \(String(decoding: body, as: UTF8.self))\n\(error)")
        }
    }

    /// The array of a list reply (`{"sensors":[…]}`) as `Element`s.
    func list<Element: Decodable>(_ key: String, of element: Element.Type) throws -> [Element] {
        guard let list = try decoded([String: [Element]].self)[key] else {
            throw HarnessError("no '\(key)' in \(String(decoding: body, as: UTF8.self))")
        }
        return list
    }
}

extension UUID {
    /// As the API writes it (lower case): for paths, filters and the store's rows.
    var wire: String { uuidString.lowercased() }
}

extension APIClient {
    /// Sends `json` (any JSON object, including ones the API must refuse).
    func send(_ method: HTTPMethod, _ path: String, json: [String: Any]) async throws -> Reply {
        try await sendRaw(method, path, body: try JSONSerialization.data(withJSONObject: json))
    }
}
