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
import Threads
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
        let store = try await openStore(configuration, logger: logger)
        // Held for the daemon's life: no other process records into or recovers from this store.
        let recordingLock: RecordingLock
        do {
            recordingLock = try RecordingLock(path: store.lockPath)
        } catch let busy as RecordingLock.Busy {
            await closeStore(store)
            throw DaemonError.storeBusy(busy.description)
        } catch {
            await closeStore(store)
            throw DaemonError.store("\(store.lockPath): \(error)")
        }
        defer { withExtendedLifetime(recordingLock) {} }
        let assembly = try await configuration.adapter.factory.make(configuration, store: store, logger: logger)
        let core = core(
            configuration: configuration, assembly: assembly, store: store, hub: hub, metrics: metrics,
            logger: logger)
        let services = try await services(core: core, assembly: assembly, notifier: notifier, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as DaemonError {
            // The adapter could not start its traffic.
            await assembly.dbus?.close()
            await closeStore(store)
            throw error
        } catch {
            // A listener that cannot bind (port in use, socket directory not writable) ends the group.
            await assembly.dbus?.close()
            await closeStore(store)
            throw DaemonError.listener("\(error)")
        }
        await assembly.dbus?.close()
        // Last: every session was saved by the services' shutdown.
        await closeStore(store)
    }

    /// Ends the store's connections: a server's pool, or an SQLite file checkpointed and closed.
    static func closeStore(_ store: WorkoutStore) async {
        await store.backend.close()
    }

    /// The sensor, session and class managers on the adapter, with the store and the live hub.
    static func core(
        configuration: BridgeConfiguration, assembly: AdapterAssembly, store: WorkoutStore, hub: LiveHub,
        metrics: (any MetricsExposition)?, logger: Logger
    ) -> BridgeCore {
        let sensors = SensorManager(
            adapter: assembly.adapter, known: configuration.sensors, athletes: configuration.athletes, hub: hub,
            logger: logger)
        let sessions = SessionManager(
            configuration: configuration, sensors: sensors, store: store, clock: assembly.clock, hub: hub,
            logger: logger)
        let classes = ClassManager(
            configuration: configuration, sensors: sensors, sessions: sessions, clock: assembly.clock, hub: hub,
            logger: logger)
        return BridgeCore(
            configuration: configuration, sensors: sensors, sessions: sessions, classes: classes, store: store,
            hub: hub, metrics: metrics, logger: logger)
    }

    /// The daemon's services in start order. The group stops them in reverse on SIGTERM: systemd
    /// hears STOPPING, the class stops signing in, every session ends and is saved, the live
    /// stream ends, then the listeners, the outputs and MQTT (which publish the sessions' ends),
    /// and the sensors last.
    static func services(
        core: BridgeCore, assembly: AdapterAssembly, notifier: SystemdNotifier, logger: Logger
    ) async throws -> [any Service] {
        let configuration = core.configuration
        let sensorsReady = ReadinessSignal()
        let sessionsReady = ReadinessSignal()
        var services: [any Service] = [
            SensorService(sensors: core.sensors, assembly: assembly, ready: sensorsReady)
        ]
        if let settings = configuration.mqtt {
            do {
                // Made on a thread of its own: it scans the journal (up to `journal_megabytes`), reads
                // the key and keeps the boot with a synced write, none of it for Swift concurrency's threads.
                let clock = assembly.clock
                let made = try await DetachedThread.run(named: "hrbridge.mqtt") {
                    Result { try MQTTBridge(core: core, settings: settings, clock: clock, logger: logger) }
                }
                services.append(try made.get())
            } catch {
                throw DaemonError.mqtt("\(error)")
            }
        }
        let simulatorStrap = (assembly.adapter as? MockSensorAdapter)?.sensors.first?.address
        if let settings = configuration.peripheral {
            services.append(
                try await peripheralService(
                    settings, core: core, dbus: assembly.dbus, placement: assembly.placement,
                    available: assembly.availableAdapters, simulatorStrap: simulatorStrap, logger: logger))
        }
        if let settings = configuration.osc {
            do {
                services.append(
                    try OSCService(
                        settings: settings, core: core, clock: assembly.clock, simulatorStrap: simulatorStrap,
                        logger: logger))
            } catch {
                throw DaemonError.output("[osc]: \(error)")
            }
        }
        if let settings = configuration.lsl {
            do {
                services.append(
                    try LabStreamingService(settings: settings, core: core, clock: assembly.clock, logger: logger))
            } catch {
                throw DaemonError.output("[lsl]: \(error)")
            }
        }
        // READY waits for every listener: a client that starts after READY finds the API up.
        let listening = AsyncStream<Void>.makeStream()
        services.append(try unixListener(core: core, listening: listening.continuation, logger: logger))
        if let port = configuration.tcpPort {
            let router = APIRouter.make(core: core, requiresToken: true)
            services.append(
                Application(
                    router: router,
                    server: server(APIRouter.makeWebSocket(core: core, requiresToken: true), configuration),
                    configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)),
                    onServerRunning: { _ in listening.continuation.yield() },
                    logger: logger))
        }
        services.append(LiveHubService(hub: core.hub))
        services.append(SessionService(sessions: core.sessions, sensorsReady: sensorsReady, ready: sessionsReady))
        // After the sessions: it stops first, so the sessions ending at shutdown are not taken for
        // athletes leaving.
        services.append(core.classes)
        // A hub stores what gateways send again from their journals after the broker was away.
        if let source = assembly.adapter.backfillSource {
            services.append(BackfillService(source: source, sessions: core.sessions))
        }
        services.append(
            NotifierService(
                core: core, notifier: notifier, dbus: assembly.dbus, listening: listening.stream,
                listeners: configuration.tcpPort == nil ? 1 : 2, sessionsReady: sessionsReady, logger: logger))
        return services
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
                connection = try await DBusConnection.connect(bus: .system, logger: logger)
            } catch {
                throw DaemonError.output("[peripheral] needs the system D-Bus and bluetoothd: \(error)")
            }
        }
        var available = available
        if dbus == nil { available = (try? await BlueZAdapter.adapterNames(on: connection)) ?? [] }
        // Without bluetoothd yet, the named adapter (or hci0) is waited for.
        var placement =
            placement ?? PeripheralPlacement.choose(available: available, requested: settings.adapter)
            ?? PeripheralPlacement(peripheral: settings.adapter ?? "hci0", straps: nil, isShared: true)
        // Straps not held through BlueZ (the simulator, a hub's gateways) share no adapter with apps.
        if dbus == nil { placement.isShared = false }
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
    /// clients are closed). A request asking for an upgrade is answered by `webSocketRouter`
    /// alone (``APIRouter/makeWebSocket(core:requiresToken:)``): on any other route it would run
    /// that route's handler without its body, and its answer would be lost.
    static func server(_ webSocketRouter: Router<BridgeRequestContext>, _ configuration: BridgeConfiguration)
        -> HTTPServerBuilder
    {
        let gate = ConnectionGate(limit: configuration.maxConnections)
        let idle = TimeAmount.seconds(Int64(configuration.idleTimeout))
        let webSocketResponder = webSocketRouter.buildResponder()
        return HTTPServerBuilder { responder in
            GuardedChildChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(http1: .init(idleTimeout: idle))),
                gate: gate, headDeadline: idle)
        }
    }

    static func openStore(_ configuration: BridgeConfiguration, logger: Logger) async throws -> WorkoutStore {
        if let url = configuration.storeURL {
            do {
                var location = try PostgresStoreLocation(url: url)
                if let path = configuration.storePasswordFile {
                    guard let password = PasswordFile.read(path) else {
                        throw DaemonError.store("\(path): cannot be read as a password file")
                    }
                    location.password = password
                }
                // systemd's StateDirectory= (the unit's /var/lib/hrbridge), else the user's.
                let state =
                    ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
                    ?? PostgresStore.defaultStateDirectory
                return WorkoutStore(
                    backend: try await PostgresStore.open(location, stateDirectory: state, logger: logger))
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

    /// The mode of a directory the daemon makes for its socket: the owner's, and reading and
    /// searching (never writing) for the group and others the socket's mode lets in.
    static func socketDirectoryMode(_ socketMode: Int) -> Int {
        0o700 | (socketMode & 0o070 != 0 ? 0o050 : 0) | (socketMode & 0o007 != 0 ? 0o005 : 0)
    }

    /// The Unix-socket listener: a stale socket file is replaced, the mode is set once it listens.
    static func unixListener(
        core: BridgeCore, listening: AsyncStream<Void>.Continuation, logger: Logger
    ) throws -> some Service {
        let path = core.configuration.effectiveSocketPath
        let directory = (path as NSString).deletingLastPathComponent
        do {
            // Set, not left to the umask (the socket's, which has no search bit): whoever may use
            // the socket may reach it.
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: Self.socketDirectoryMode(core.configuration.socketMode)])
        } catch {
            throw DaemonError.listener("cannot create \(directory): \(error.localizedDescription)")
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
            router: router,
            server: server(APIRouter.makeWebSocket(core: core, requiresToken: false), core.configuration),
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
