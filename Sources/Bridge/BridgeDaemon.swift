import BlueZ
import BridgeOut
import DBus
import Foundation
import GATT
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
public import Logging
import MQTT
import NIOCore
import PostgresStore
import RemoteSensors
import SensorSimulator
import Sensors
import ServiceLifecycle
import UnixSignals
import Wire
import WorkoutStore

#if canImport(Glibc)
    import Glibc
#endif

/// Why the daemon could not start; the command maps each to an exit status.
public enum DaemonError: Error, CustomStringConvertible {
    case store(String)
    /// Another process records into the store (a temporary condition: systemd retries).
    case storeBusy(String)
    case adapter(String)
    case listener(String)
    /// The `[mqtt]` client cannot be set up (a credential or certificate file).
    case mqtt(String)
    /// `[peripheral]` or `[osc]` cannot be set up (no system bus, no adapter for α1, a target that does not resolve).
    case output(String)

    /// A one-line description for messages and logs.
    public var description: String {
        switch self {
        case .store(let why): "store: \(why)"
        case .storeBusy(let why): "store: \(why)"
        case .adapter(let why): "adapter: \(why)"
        case .listener(let why): "API listener: \(why)"
        case .mqtt(let why): "MQTT: \(why)"
        case .output(let why): "output: \(why)"
        }
    }
}

/// `hrbridged`: the sensor manager, the session manager, the store, the API listeners and the
/// systemd notifier, run as one service group. SIGTERM/SIGINT end every session (saved), then exit.
public enum BridgeDaemon {
    /// Runs until SIGTERM or SIGINT.
    /// `metrics` renders `GET /metrics` (nil: the route answers 404).
    public static func run(
        configuration: BridgeConfiguration, metrics: (any MetricsExposition)? = nil, logger: Logger
    ) async throws {
        // Everything this process creates, the API socket first, is born with at most the socket's
        // mode (0660 by default): nothing is ever chmod-ed wider after the fact.
        umask(mode_t(0o777 & ~configuration.socketMode))
        let notifier = SystemdNotifier()
        let hub = LiveHub()
        let store = try openStore(configuration, logger: logger)
        // Held for the daemon's life: no other process records into or recovers from this store.
        let recordingLock: RecordingLock
        do {
            recordingLock = try RecordingLock(store: store.path)
        } catch let busy as RecordingLock.Busy {
            throw DaemonError.storeBusy(busy.description)
        } catch {
            throw DaemonError.store("\(store.path).lock: \(error)")
        }
        defer { withExtendedLifetime(recordingLock) {} }
        var dbus: DBusConnection?
        var placement: PeripheralPlacement?
        var availableAdapters: [String] = []
        let adapter: any SensorAdapter
        let clock: any WallClock
        // Straps to keep connected besides the configured ones: the simulator's when none is
        // configured; on BlueZ, the user's own (paired or trusted heart-rate straps).
        let offersKnown: Bool
        switch configuration.adapter {
        case .mock(let scenarioPath, let seed, let speed):
            clock = AcceleratedWallClock(speed: speed)
            var scenario = Scenario.default
            if let scenarioPath {
                do {
                    scenario = try ScenarioParser.load(path: scenarioPath)
                } catch {
                    throw DaemonError.adapter("\(error)")
                }
            }
            adapter = MockSensorAdapter(scenario: scenario, seed: seed, clock: clock, logger: logger)
            offersKnown = configuration.sensors.isEmpty
        case .mqtt(let remote):
            clock = SystemWallClock()
            // A hub: its straps are other gateways'.
            let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "hub"
            // A persistent session under a stable id: backfill a gateway sends while the hub is
            // away (the broker restarted and the gateway came back first) waits at the broker.
            var options = MQTTClient.Options(broker: remote.broker, clientID: "hrbridge-hub-\(host.prefix(40))")
            options.cleanSession = false
            options.username = remote.username
            if let path = remote.passwordFile {
                guard let password = PasswordFile.read(path) else {
                    throw DaemonError.adapter("\(path): cannot be read as a password file")
                }
                options.password = password
            }
            options.tlsCAFile = remote.tlsCA
            var settings = MQTTSensorAdapter.Settings(client: options, nodes: remote.nodes.map(Set.init))
            settings.expire = remote.expire
            do {
                let remoteAdapter = try MQTTSensorAdapter(settings: settings, clock: clock, logger: logger)
                try await remoteAdapter.start()
                adapter = remoteAdapter
            } catch {
                throw DaemonError.adapter("\(error)")
            }
            offersKnown = false
        case .bluez(let names, let repairOnKeyLoss):
            clock = SystemWallClock()
            let connection: DBusConnection
            do {
                connection = try DBusConnection(bus: .system, logger: logger)
            } catch {
                throw DaemonError.adapter("cannot reach the system D-Bus: \(error)")
            }
            dbus = connection
            // The adapter that serves apps holds no straps when another adapter can.
            var names = names
            if let settings = configuration.peripheral {
                let available = (try? await BlueZAdapter.adapterNames(on: connection)) ?? []
                placement = PeripheralPlacement.choose(
                    available: available, requested: settings.adapter, strapAdapters: names ?? [])
                if names == nil, let straps = placement?.straps { names = straps }
                availableAdapters = available
            }
            var options = BlueZAdapter.Options()
            // Zero adapters (or no bluetoothd) is a state, not a failure: the daemon comes up, says
            // "waiting: no Bluetooth adapter", and the pool starts working when one appears.
            options.waitsForAdapter = true
            options.repairsOnAuthenticationFailure = repairOnKeyLoss
            options.connectsUnknownDevices = true
            for sensor in configuration.sensors {
                if let bound = sensor.adapter { options.bindings[sensor.address] = bound }
                if sensor.priority != 0 { options.priorities[sensor.address] = sensor.priority }
            }
            do {
                adapter = try await BlueZAdapter.open(
                    adapters: names, connection: connection, options: options, clock: clock, logger: logger)
            } catch {
                throw DaemonError.adapter("\(error)")
            }
            offersKnown = true
        }
        let sensors = SensorManager(
            adapter: adapter, known: configuration.sensors, athletes: configuration.athletes, hub: hub, logger: logger)
        let sessions = SessionManager(
            configuration: configuration, sensors: sensors, store: store, clock: clock, hub: hub, logger: logger)
        let classes = ClassManager(
            configuration: configuration, sensors: sensors, sessions: sessions, clock: clock, hub: hub, logger: logger)
        let core = BridgeCore(
            configuration: configuration, sensors: sensors, sessions: sessions, classes: classes, store: store,
            hub: hub, metrics: metrics, logger: logger)
        await sensors.start(offersKnown: offersKnown)
        await sessions.recover()
        // A hub stores what gateways send again from their journals after the broker was away.
        let backfill = (adapter as? MQTTSensorAdapter).map { remote in
            Task {
                for await batch in remote.backfill() { await sessions.backfill(batch) }
            }
        }
        defer { backfill?.cancel() }

        var services: [any Service] = []
        let simulatorStrap = (adapter as? MockSensorAdapter)?.sensors.first?.address
        if let settings = configuration.peripheral {
            services.append(
                try await peripheralService(
                    settings, core: core, dbus: dbus, placement: placement, available: availableAdapters,
                    simulatorStrap: simulatorStrap, logger: logger))
        }
        if let settings = configuration.osc {
            do {
                services.append(
                    try OSCService(
                        settings: settings, core: core, clock: clock, simulatorStrap: simulatorStrap, logger: logger))
            } catch {
                throw DaemonError.output("[osc]: \(error)")
            }
        }
        // READY waits for every listener: a client that starts after READY finds the API up.
        let listening = AsyncStream<Void>.makeStream()
        let listeners = configuration.tcpPort == nil ? 1 : 2
        let bridge = BridgeService(
            core: core, notifier: notifier, dbus: dbus, listening: listening.stream, listeners: listeners,
            logger: logger)
        services.append(bridge)
        if let settings = configuration.mqtt {
            do {
                services.append(try MQTTBridge(core: core, settings: settings, logger: logger))
            } catch {
                throw DaemonError.mqtt("\(error)")
            }
        }
        services.append(try unixListener(core: core, listening: listening.continuation, logger: logger))
        if let port = configuration.tcpPort {
            let router = APIRouter.make(core: core, requiresToken: true)
            services.append(
                Application(
                    router: router, server: server(router, configuration),
                    configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
                    onServerRunning: { _ in listening.continuation.yield() },
                    logger: logger))
        }
        // Last: shut down first, so the sessions ending at shutdown are not taken for athletes leaving.
        services.append(classes)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            // A listener that cannot bind (port in use, socket directory not writable) ends the group.
            await dbus?.close()
            throw DaemonError.listener("\(error)")
        }
        await dbus?.close()
    }

    /// The heart-rate peripheral of `[peripheral]`, placed on an adapter, registered with the core.
    static func peripheralService(
        _ settings: PeripheralSettings, core: BridgeCore, dbus: DBusConnection?, placement: PeripheralPlacement?,
        available: [String], simulatorStrap: String?, logger: Logger
    ) async throws -> PeripheralService {
        let connection: DBusConnection
        if let dbus {
            connection = dbus
        } else {
            do {
                connection = try DBusConnection(bus: .system, logger: logger)
            } catch {
                throw DaemonError.output("[peripheral] needs the system D-Bus and bluetoothd: \(error)")
            }
        }
        var available = available
        if dbus == nil { available = (try? await BlueZAdapter.adapterNames(on: connection)) ?? [] }
        // Without bluetoothd yet, the named adapter (or hci0) is waited for.
        let placement =
            placement ?? PeripheralPlacement.choose(available: available, requested: settings.adapter)
            ?? PeripheralPlacement(peripheral: settings.adapter ?? "hci0", straps: nil, isShared: true)
        var alpha1Adapter: String?
        if settings.alpha1 {
            alpha1Adapter =
                settings.alpha1Adapter ?? available.last {
                    $0 != placement.peripheral && placement.straps?.contains($0) != true
                }
                ?? available.last { $0 != placement.peripheral }
            guard let chosen = alpha1Adapter, chosen != placement.peripheral else {
                throw DaemonError.output(
                    "[peripheral] alpha1 needs an adapter besides \(placement.peripheral) (apps tell sensors apart by address); "
                        + "BlueZ has \(available.isEmpty ? "none" : available.joined(separator: ", "))")
            }
        }
        logger.info(
            "heart-rate peripheral on \(placement.peripheral)",
            metadata: [
                "straps": "\(placement.straps?.joined(separator: ",") ?? "any adapter")",
                "alpha1": "\(alpha1Adapter ?? "off")",
            ])
        let service = PeripheralService(
            settings: settings, core: core, connection: connection, placement: placement, alpha1Adapter: alpha1Adapter,
            simulatorStrap: simulatorStrap, logger: logger)
        core.outputs.register(peripheral: service)
        return service
    }

    /// HTTP/1 with WebSocket upgrades, with the listener's connection limit (each listener its
    /// own: a flood on TCP leaves the Unix socket served) and the idle timeout (slow or silent
    /// clients are closed).
    static func server(_ router: Router<BridgeRequestContext>, _ configuration: BridgeConfiguration)
        -> HTTPServerBuilder
    {
        let gate = ConnectionGate(limit: configuration.maxConnections)
        let idle = TimeAmount.seconds(Int64(configuration.idleTimeout))
        let webSocketResponder = router.buildResponder()
        return HTTPServerBuilder { responder in
            GuardedChildChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(http1: .init(idleTimeout: idle))),
                gate: gate, headDeadline: idle)
        }
    }

    static func openStore(_ configuration: BridgeConfiguration, logger: Logger) throws -> WorkoutStore {
        if let url = configuration.storeURL {
            do {
                var location = try PostgresStoreLocation(url: url)
                if let path = configuration.storePasswordFile {
                    guard let password = PasswordFile.read(path) else {
                        throw DaemonError.store("\(path): cannot be read as a password file")
                    }
                    location.password = password
                }
                return WorkoutStore(backend: try PostgresStore(location, logger: logger))
            } catch let error as DaemonError {
                throw error
            } catch {
                throw DaemonError.store("\(error)")
            }
        }
        let path =
            configuration.storePath
            ?? ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map {
                "\($0)/store.sqlite"
            }
            ?? WorkoutStore.defaultPath
        do {
            return try WorkoutStore(path: path)
        } catch {
            throw DaemonError.store("\(path): \(error)")
        }
    }

    /// The Unix-socket listener: a stale socket file is replaced, the mode is set once it listens.
    static func unixListener(
        core: BridgeCore, listening: AsyncStream<Void>.Continuation, logger: Logger
    ) throws -> some Service {
        let path = core.configuration.effectiveSocketPath
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw DaemonError.listener("cannot create \(directory): \(error)")
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            // A symlink or a file is refused (lstat does not follow links), and so is a socket
            // another instance still answers on; only a stale socket is replaced.
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw DaemonError.listener("\(path) exists and is not a socket")
            }
            guard !Self.answers(path) else {
                throw DaemonError.listener("\(path) is the socket of a running hrbridged")
            }
            unlink(path)
        }
        let router = APIRouter.make(core: core, requiresToken: false)
        return Application(
            router: router, server: server(router, core.configuration),
            configuration: ApplicationConfiguration(address: .unixDomainSocket(path: path)),
            onServerRunning: { _ in
                logger.notice("API listening", metadata: ["socket": "\(path)"])
                listening.yield()
            },
            logger: logger)
    }

    /// Whether something accepts connections on the Unix socket at `path`.
    static func answers(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        } == 0
    }
}

/// The daemon's own service: READY once everything is up, STATUS on every change (no polling),
/// WATCHDOG at half of WATCHDOG_USEC while the D-Bus loop is healthy, and on shutdown STOPPING
/// and every session ended and saved.
struct BridgeService: Service {
    let core: BridgeCore
    let notifier: SystemdNotifier
    let dbus: DBusConnection?
    /// One element per listener that is up.
    let listening: AsyncStream<Void>
    let listeners: Int
    let logger: Logger

    func run() async throws {
        let messages = core.hub.subscribe()
        var up = 0
        for await _ in listening.cancelOnGracefulShutdown() {
            up += 1
            if up == listeners { break }
        }
        let line = await core.statusLine()
        notifier.ready(status: line)
        logger.notice("hrbridged ready", metadata: ["status": "\(line)"])
        let core = core
        let notifier = notifier
        let dbus = dbus
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var last = ""
                for await delivery in messages
                where [.sensor, .session, .adapter, .dropped].contains(delivery.kind) {
                    let line = await core.statusLine()
                    if line != last {
                        notifier.status(line)
                        last = line
                    }
                }
            }
            if let interval = notifier.watchdogInterval {
                group.addTask {
                    // With BlueZ, a ping means the D-Bus loop answered the last heartbeat: a wedged
                    // loop (or a lost bus) stops the pings, and systemd restarts us.
                    var answered = dbus?.heartbeats ?? 0
                    var first = true
                    while !Task.isCancelled {
                        if let dbus {
                            let now = dbus.heartbeats
                            if dbus.isConnected && (first || now > answered) { notifier.watchdog() }
                            answered = now
                            dbus.requestHeartbeat()
                        } else {
                            notifier.watchdog()
                        }
                        first = false
                        try? await Task.sleep(for: interval)
                    }
                }
            }
            group.addTask { try? await gracefulShutdown() }
            await group.next()
            group.cancelAll()
        }
        notifier.stopping()
        logger.notice("stopping: ending sessions")
        await core.classes.shutdown()
        await core.sessions.stopAll()
        await core.sensors.stop()
        core.hub.finish()
    }
}
