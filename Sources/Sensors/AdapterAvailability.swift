/// Whether the radio behind an adapter can be used, as the bridge reports it.
///
/// A bridge keeps running in every state but ``ready`` and says which one it is in: sessions wait
/// and reconnect by themselves once the adapter is usable again.
public enum AdapterAvailability: String, Hashable, Sendable, Codable, CustomStringConvertible {
    /// Present and powered: connections can be made.
    case ready
    /// Present but powered off (or blocked by rfkill).
    case poweredOff
    /// The system has no such adapter (none plugged in, or it was unplugged).
    case absent
    /// The Bluetooth service itself (bluetoothd) is not running.
    case serviceStopped

    /// A short phrase for status lines: "no Bluetooth adapter".
    public var description: String {
        switch self {
        case .ready: "ready"
        case .poweredOff: "adapter powered off"
        case .absent: "no Bluetooth adapter"
        case .serviceStopped: "bluetoothd not running"
        }
    }
}
