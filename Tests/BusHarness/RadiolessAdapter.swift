public import GATT
public import Sensors
import Synchronization

/// A `SensorAdapter` with no radio, for tests that push events themselves: it connects nothing,
/// records the link-slot priorities it is given, and passes the events a test sends to its
/// subscribers, routed by sensor address as the real adapters route them.
public final class RadiolessAdapter: SensorAdapter {
    public let name = "test"
    private let priorities = Mutex<[String]>([])
    private let broadcaster = EventBroadcaster<SensorEvent>(routingKey: \.sensorAddress)

    public init() {}

    /// `ADDRESS=priority` (or `ADDRESS=configured` for `nil`), in the order given.
    public var givenPriorities: [String] { priorities.withLock { $0 } }

    /// Passes `event` to the subscribers that asked for it.
    public func send(_ event: SensorEvent) { broadcaster.yield(event) }
    /// Ends every subscription.
    public func finish() { broadcaster.finish() }
    /// How many subscribers are attached.
    public var subscriberCount: Int { broadcaster.subscriberCount }

    public func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }
    public func events(from addresses: Set<String>) -> AsyncStream<SensorEvent> {
        broadcaster.subscribe(keys: addresses)
    }
    public func startDiscovery(services: Set<GATTService>) throws(SensorAdapterError) {}
    public func stopDiscovery() throws(SensorAdapterError) {}
    public func connect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func disconnect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func pair(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func trust(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func knownDevices() -> [KnownDevice] { [] }
    public func availability() -> AdapterAvailability { .ready }
    public func adapterStatuses() -> [AdapterStatus] { [] }
    public func startWaveform(_ request: WaveformRequest, for sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .waveformUnavailable(sensor, request.kind, "no radio")
    }
    public func stopWaveform(_ kind: WaveformKind, for sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func setPriority(_ priority: Int?, for address: String) {
        priorities.withLock { $0.append("\(address)=\(priority.map(String.init) ?? "configured")") }
    }
}
