public import GATT
public import Sensors

/// A `SensorAdapter` with no radio whose events a test sends itself, routed by sensor address as
/// the real adapters route them.
public final class BroadcastingAdapter: SensorAdapter {
    public let name = "test"
    private let broadcaster = EventBroadcaster<SensorEvent>(routingKey: \.sensorAddress)

    public init() {}

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
    public func resetEnergyExpended(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func knownDevices() -> [KnownDevice] { [] }
    public func availability() -> AdapterAvailability { .ready }
    public func adapterStatuses() -> [AdapterStatus] { [] }
    public func setPriority(_ priority: Int?, for address: String) {}
}
