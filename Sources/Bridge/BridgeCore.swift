import Foundation
public import Logging
import Sensors
import Wire
public import WorkoutStore

/// What the API serves: the sensors, the sessions, the store and the live hub of one daemon.
public final class BridgeCore: Sendable {
    /// The daemon's configuration.
    public let configuration: BridgeConfiguration
    public let sensors: SensorManager
    public let sessions: SessionManager
    /// The class and its automatic sign-in.
    public let classes: ClassManager
    /// The store (nil when none could be opened).
    public let store: WorkoutStore?
    /// The live stream hub.
    public let hub: LiveHub
    /// Where the daemon logs.
    public let logger: Logger
    /// What `GET /metrics` serves (nil: no metrics).
    public let metrics: (any MetricsExposition)?
    /// What the daemon passes on to other devices.
    public let outputs = BridgeOutputs()
    /// Workout exports built at once (each holds its workout in memory), the rest waiting.
    public let exports = ExportGate()

    public init(
        configuration: BridgeConfiguration, sensors: SensorManager, sessions: SessionManager, classes: ClassManager,
        store: WorkoutStore?, hub: LiveHub, metrics: (any MetricsExposition)? = nil, logger: Logger
    ) {
        self.classes = classes
        self.metrics = metrics
        self.configuration = configuration
        self.sensors = sensors
        self.sessions = sessions
        self.store = store
        self.hub = hub
        self.logger = logger
    }

    /// The messages a late subscriber gets first: every sensor's status, every active session and the class.
    public func currentState() async -> [LiveMessage] {
        var messages = await sensors.list().map {
            LiveMessage(kind: .sensor, session: nil, sensor: $0.address, json: $0.liveLine())
        }
        for session in await sessions.active {
            messages.append(.session(await session.snapshot()))
        }
        if let running = await classes.snapshot { messages.append(LiveMessage(kind: .class, payload: running)) }
        return messages
    }

    /// One line for systemd's STATUS=: "2 sensors streaming, 1 session running".
    public func statusLine() async -> String {
        let availability = await sensors.availability
        if availability != .ready { return "waiting: \(availability)" }
        let ready = await sensors.readyCount
        let active = await sessions.activeCount
        let line =
            "\(ready) sensor\(ready == 1 ? "" : "s") streaming, \(active) session\(active == 1 ? "" : "s") running"
        let storage = await sessions.storeHealth()
        guard let problem = StoreHealthJSON.problem(storage) else { return line }
        return "degraded: \(problem) (\(storage.waiting + storage.spilled) samples waiting), " + line
    }
}
