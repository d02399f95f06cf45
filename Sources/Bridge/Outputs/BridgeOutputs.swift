import Synchronization
public import Wire

/// What the daemon passes on to other devices (the Bluetooth peripheral, OSC), for the API,
/// MQTT and `/metrics` to report: the services register here when the daemon assembles them.
public final class BridgeOutputs: Sendable {
    private let peripheralSource = Mutex<(any PeripheralStateSource)?>(nil)

    public init() {}

    /// The heart-rate peripheral, when `[peripheral]` is enabled.
    public var peripheral: (any PeripheralStateSource)? { peripheralSource.withLock { $0 } }

    public func register(peripheral: any PeripheralStateSource) {
        peripheralSource.withLock { $0 = peripheral }
    }
}

/// Something that can say how the heart-rate peripheral is doing.
public protocol PeripheralStateSource: Sendable {
    func snapshot() async -> PeripheralJSON
}
