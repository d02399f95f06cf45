public import Sensors

/// Where a sensor is, as the API, the live stream and MQTT show it (`state` of a sensor).
public enum SensorState: String, Codable, Sendable, CaseIterable {
    /// Discovered, not connected.
    case seen
    /// A connection attempt is under way.
    case connecting
    /// Connected; notifications not on yet.
    case connected
    /// Measurements flow.
    case ready
    /// Not connected (the status says why).
    case disconnected
    /// No longer listed: forgotten, or a remote gateway's strap that expired.
    case gone

    /// The state a connection state shows as.
    public init(_ state: ConnectionState) {
        switch state {
        case .disconnected: self = .disconnected
        case .connecting: self = .connecting
        case .connected: self = .connected
        case .ready: self = .ready
        }
    }
}
