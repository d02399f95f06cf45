/// One Bluetooth adapter as the bridge uses it: its state, its links and what happened on it.
public struct AdapterStatus: Hashable, Sendable, Codable {
    /// `hci0`, `mock`.
    public var name: String
    /// Whether it can be used now.
    public var availability: AdapterAvailability
    /// LE links the controller holds now (every client's, not only hrbridge's).
    public var linksInUse: Int
    /// The sensors hrbridge streams through it now.
    public var sensors: [String]
    /// The links it held when it last refused one for want of slots, while it is still that full.
    public var linkLimit: Int?
    /// `Connect` calls made through it.
    public var connectAttempts: Int
    /// `Connect` calls that failed (any reason).
    public var connectFailures: Int
    /// `Connect` calls refused because the controller had no free link slot.
    public var slotRefusals: Int
    /// Links that dropped while streaming.
    public var linksLost: Int

    /// A status as given.
    public init(
        name: String, availability: AdapterAvailability, linksInUse: Int = 0, sensors: [String] = [],
        linkLimit: Int? = nil, connectAttempts: Int = 0, connectFailures: Int = 0, slotRefusals: Int = 0,
        linksLost: Int = 0
    ) {
        self.name = name
        self.availability = availability
        self.linksInUse = linksInUse
        self.sensors = sensors
        self.linkLimit = linkLimit
        self.connectAttempts = connectAttempts
        self.connectFailures = connectFailures
        self.slotRefusals = slotRefusals
        self.linksLost = linksLost
    }

    /// Whether every link slot is taken (a `Connect` would be refused).
    public var isFull: Bool { linkLimit.map { linksInUse >= $0 } ?? false }
}
