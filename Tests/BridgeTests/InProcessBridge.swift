import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ServiceLifecycle
import Wire

@testable import Bridge

/// The daemon's core without a process: the simulator's three straps (`DaemonUnderTest`'s
/// scenario and configuration), the sensor, session and class services in one service group,
/// a store in a temporary directory, and the API router answered in-process by
/// HummingbirdTesting. For tests of routes, bodies and errors; what needs a process (signals,
/// sockets, systemd, a browser) starts `hrbridged`.
final class InProcessBridge: Sendable {
    let directory: URL
    let core: BridgeCore
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    /// Ready once every strap streams.
    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(DaemonUnderTest.scenario(dropouts: false).utf8).write(
            to: directory.appendingPathComponent("scenario.json"))
        let path = directory.appendingPathComponent("config.toml")
        try Data(
            """
            [adapter]
            kind = "mock"
            scenario = "\(directory.path)/scenario.json"
            speed = 5

            [store]
            path = "\(directory.path)/store.sqlite"

            [[api.tokens]]
            token = "\(DaemonUnderTest.readToken)"
            role = "read"

            [[api.tokens]]
            token = "\(DaemonUnderTest.controlToken)"
            role = "control"

            [[athletes]]
            id = "alice"
            max_hr = 190

            \(DaemonUnderTest.sensorsSection(classBoard: false))
            """.utf8
        ).write(to: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path.path)
        let configuration = try ConfigurationLoader.load(path: path.path)
        let logger = Logger(label: "in-process") { _ in SwiftLogNoOpLogHandler() }
        let hub = LiveHub()
        let store = try await BridgeDaemon.openStore(configuration, logger: logger)
        let assembly = try await configuration.adapter.factory.make(configuration, store: store, logger: logger)
        let core = BridgeDaemon.core(
            configuration: configuration, assembly: assembly, store: store, hub: hub, metrics: nil, logger: logger)
        self.core = core
        let sensors = core.sensors
        // Subscribed before anything runs: no sensor message is missed while waiting for the straps.
        let messages = hub.subscribe(kinds: [.sensor])
        let sensorsReady = ReadinessSignal()
        let sessionsReady = ReadinessSignal()
        let services: [any Service] = [
            SensorService(sensors: sensors, assembly: assembly, ready: sensorsReady),
            LiveHubService(hub: hub),
            SessionService(sessions: core.sessions, sensorsReady: sensorsReady, ready: sessionsReady),
            core.classes,
        ]
        let group = ServiceGroup(services: services, logger: logger)
        self.group = group
        running = Task { try await group.run() }
        await sessionsReady.signalled()
        for await _ in messages where await sensors.readyCount == DaemonUnderTest.straps.count { break }
    }

    /// The API as one listener serves it (`requiresToken`: TCP's rules), answered in-process
    /// (`.live`: by a server on a loopback port, for what needs a real connection).
    func test<Value: Sendable>(
        requiresToken: Bool = false, mode: TestingSetup = .router,
        _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        let application = Application(router: APIRouter.make(core: core, requiresToken: requiresToken))
        return try await application.test(mode, body)
    }

    /// Runs `body` with a bridge, stopped afterwards also when `body` throws.
    static func with<Value>(_ body: (InProcessBridge) async throws -> Value) async throws -> Value {
        let bridge = try await InProcessBridge()
        let value: Value
        do {
            value = try await body(bridge)
        } catch {
            try? await bridge.stop()
            throw error
        }
        try await bridge.stop()
        return value
    }

    /// Runs `service` (an output on this core) in a group of its own while `body` runs, then shuts
    /// it down gracefully and waits for it to end.
    func running<Value>(_ service: some Service, _ body: () async throws -> Value) async throws -> Value {
        let group = ServiceGroup(
            services: [service], logger: Logger(label: "in-process") { _ in SwiftLogNoOpLogHandler() })
        let running = Task { try await group.run() }
        let value: Value
        do {
            value = try await body()
        } catch {
            await group.triggerGracefulShutdown()
            try? await running.value
            throw error
        }
        await group.triggerGracefulShutdown()
        try await running.value
        return value
    }

    /// Ends every session (saved) and the services, and removes the directory.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
        try? FileManager.default.removeItem(at: directory)
    }
}

extension TestClientProtocol {
    /// A request with a JSON body (`body` encoded as it is) and an optional bearer token.
    func send(
        _ method: HTTPRequest.Method, _ uri: String, json body: [String: Any]? = nil, token: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        let bytes = try body.map { ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: $0)) }
        if bytes != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: bytes)
    }
}

extension TestResponse {
    /// The body as `Value` (our own wire types), nil when it is not one.
    func decode<Value: Decodable>(_ type: Value.Type) -> Value? {
        try? JSONDecoder().decode(type, from: Data(body.readableBytesView))
    }

    /// The error code of an error body.
    var errorCode: String? { decode(ErrorJSON.self)?.error.code }
}
