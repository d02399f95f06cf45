public import GATT

/// The adapter abstraction both BlueZ and the simulator implement: C-free, D-Bus-free.
///
/// Events from every sensor the adapter handles arrive on ``events()``; commands are async and
/// throw ``SensorAdapterError``.
public protocol SensorAdapter: Sendable {
    /// The adapter's name: `hci0`, `mock`.
    var name: String { get }

    /// A new subscription to the adapter's events; each call gets every event from then on.
    func events() -> AsyncStream<SensorEvent>
    /// A new subscription to the events of the sensors at `addresses` and the adapter's own ones:
    /// a session hears only the straps it records, so nothing is decoded into samples to be dropped.
    func events(from addresses: Set<String>) -> AsyncStream<SensorEvent>

    /// Starts discovering sensors that advertise any of `services`.
    func startDiscovery(services: Set<GATTService>) async throws(SensorAdapterError)
    /// Stops discovering.
    func stopDiscovery() async throws(SensorAdapterError)
    /// Connects a sensor, resolves its services and subscribes to its measurements.
    func connect(_ sensor: SensorIdentity) async throws(SensorAdapterError)
    /// Disconnects a sensor.
    func disconnect(_ sensor: SensorIdentity) async throws(SensorAdapterError)
    /// Pairs (bonds) with a sensor.
    func pair(_ sensor: SensorIdentity) async throws(SensorAdapterError)
    /// Marks a sensor trusted, so it may reconnect by itself.
    func trust(_ sensor: SensorIdentity) async throws(SensorAdapterError)
    /// Removes a sensor and its bond.
    func forget(_ sensor: SensorIdentity) async throws(SensorAdapterError)

    /// The devices the adapter knows (seen, paired, cached).
    func knownDevices() async -> [KnownDevice]
    /// Whether the adapter (any adapter of a pool) can be used now.
    func availability() async -> AdapterAvailability
    /// Each radio behind the adapter with its links and counters.
    func adapterStatuses() async -> [AdapterStatus]
    /// Sets who gets a freed link slot first (higher first; `nil`: back to the configured one).
    func setPriority(_ priority: Int?, for address: String) async
    /// Where late measurements come from, when the adapter offers them (nil: it does not).
    var backfillSource: (any BackfillSource)? { get }
    /// Starts a raw signal on a strap that offers it (``SensorEvent/waveformsAvailable(_:_:)``);
    /// the adapter starts it again after every reconnect until ``stopWaveform(_:for:)``.
    func startWaveform(_ request: WaveformRequest, for sensor: SensorIdentity) async throws(SensorAdapterError)
    /// Stops a raw signal (the strap's battery lasts longer without it).
    func stopWaveform(_ kind: WaveformKind, for sensor: SensorIdentity) async throws(SensorAdapterError)
}

extension SensorAdapter {
    /// Most adapters hear measurements only as they happen.
    public var backfillSource: (any BackfillSource)? { nil }
}

/// Why an adapter command failed.
public enum SensorAdapterError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The adapter does not know this sensor.
    case unknownSensor(SensorIdentity)
    /// The sensor is not connected.
    case notConnected(SensorIdentity)
    /// The adapter is off, gone, or the stack is not running.
    case adapterUnavailable(String)
    /// The stack reported an error, with its name and message.
    case failed(name: String, message: String)
    /// A raw signal cannot be streamed from the sensor, with the reason.
    case waveformUnavailable(SensorIdentity, WaveformKind, String)

    /// One line for logs.
    public var description: String {
        switch self {
        case .unknownSensor(let sensor): "unknown sensor \(sensor)"
        case .notConnected(let sensor): "sensor \(sensor) is not connected"
        case .adapterUnavailable(let why): "adapter unavailable: \(why)"
        case .failed(let name, let message): "\(name): \(message)"
        case .waveformUnavailable(let sensor, let kind, let why): "no \(kind.rawValue) from \(sensor): \(why)"
        }
    }
}
