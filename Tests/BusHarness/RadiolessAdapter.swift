public import GATT
public import Sensors
import Synchronization

/// A `SensorAdapter` with no radio, for tests that push events themselves: it connects nothing and
/// records the link-slot priorities it is given.
public final class RadiolessAdapter: SensorAdapter {
    public let name = "test"
    private let priorities = Mutex<[String]>([])

    public init() {}

    /// `ADDRESS=priority` (or `ADDRESS=configured` for `nil`), in the order given.
    public var givenPriorities: [String] { priorities.withLock { $0 } }

    public func events() -> AsyncStream<SensorEvent> { AsyncStream { $0.finish() } }
    public func events(from addresses: Set<String>) -> AsyncStream<SensorEvent> { events() }
    public func startDiscovery(services: Set<GATTService>) throws(SensorAdapterError) {}
    public func stopDiscovery() throws(SensorAdapterError) {}
    public func connect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func disconnect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func pair(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func trust(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func resetEnergyExpended(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func knownDevices() -> [KnownDevice] { [] }
    public func availability() -> AdapterAvailability { .ready }
    public func adapterStatuses() -> [AdapterStatus] { [] }
    public func setPriority(_ priority: Int?, for address: String) {
        priorities.withLock { $0.append("\(address)=\(priority.map(String.init) ?? "configured")") }
    }
}
