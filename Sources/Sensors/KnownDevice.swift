public import GATT

/// A device an adapter knows (seen, paired or cached), as `hrbridge devices` lists it.
public struct KnownDevice: Hashable, Sendable {
    /// Adapter, address and name.
    public var identity: SensorIdentity
    /// Last signal strength.
    public var rssi: Int?
    /// Fitness services it advertises or exposes.
    public var services: Set<GATTService>
    public var paired: Bool
    public var trusted: Bool
    /// Bonded (keys stored).
    public var bonded: Bool
    public var connected: Bool
    /// GATT services resolved.
    public var servicesResolved: Bool
    /// `public` or `random`, as BlueZ reports it (nil where the adapter has no such notion): what
    /// `[[sensors]] address_type` pins.
    public var addressType: String?

    /// A device as given.
    public init(
        identity: SensorIdentity, rssi: Int? = nil, services: Set<GATTService>, paired: Bool = false,
        trusted: Bool = false, bonded: Bool = false, connected: Bool = false, servicesResolved: Bool = false,
        addressType: String? = nil
    ) {
        self.addressType = addressType
        self.identity = identity
        self.rssi = rssi
        self.services = services
        self.paired = paired
        self.trusted = trusted
        self.bonded = bonded
        self.connected = connected
        self.servicesResolved = servicesResolved
    }

    /// Whether the user made it theirs (paired or trusted): the daemon keeps such straps connected.
    public var isOwned: Bool { paired || trusted }
}
