/// A sensor as hrbridge knows it: identity is adapter + address; name and alias are for display.
public struct SensorIdentity: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The adapter that sees the sensor: `hci0`, `mock`.
    public var adapter: String
    /// The Bluetooth address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// The advertised name or the user's alias.
    public var name: String?

    /// Creates an identity.
    public init(adapter: String, address: String, name: String? = nil) {
        self.adapter = adapter
        self.address = address
        self.name = name
    }

    /// `Polar H10 (hci0/AA:BB:…)`.
    public var description: String { name.map { "\($0) (\(adapter)/\(address))" } ?? "\(adapter)/\(address)" }

    /// Same adapter and address: the name does not count.
    public static func == (lhs: SensorIdentity, rhs: SensorIdentity) -> Bool {
        lhs.adapter == rhs.adapter && lhs.address == rhs.address
    }

    /// Hashes adapter and address.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(adapter)
        hasher.combine(address)
    }
}
