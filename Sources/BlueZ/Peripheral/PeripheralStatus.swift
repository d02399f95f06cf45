/// The peripheral's state and counters, for `/v1/health`, `/metrics` and MQTT.
public struct PeripheralStatus: Sendable, Hashable {
    /// The adapter it serves on.
    public var adapter: String
    /// Whether bluetoothd holds both the GATT application and the advertisement.
    public var registered: Bool
    /// Whether the advertisement is on the air (registered, adapter present and powered).
    public var advertising: Bool
    /// Why it is not advertising; `nil` while it is.
    public var reason: String?
    /// Whether a central is subscribed to Heart Rate Measurement notifications.
    public var notifying: Bool
    /// Centrals connected to the adapter, not counting excluded addresses (our own straps).
    public var connectedCentrals: Int
    /// Heart Rate Measurement notifications sent.
    public var framesSent: Int
    /// Measurements not sent because nobody was subscribed.
    public var framesDropped: Int
    /// Control-point writes refused with ATT error 0x80.
    public var refusedWrites: Int
    /// Method calls refused because their sender was not bluetoothd (`org.bluez`'s owner).
    public var refusedCalls: Int
    /// RR intervals left out of a notification that would not fit the default ATT payload.
    public var rrIntervalsTrimmed: Int

    /// Creates a status.
    public init(
        adapter: String, registered: Bool = false, advertising: Bool = false, reason: String? = nil,
        notifying: Bool = false, connectedCentrals: Int = 0, framesSent: Int = 0, framesDropped: Int = 0,
        refusedWrites: Int = 0, refusedCalls: Int = 0, rrIntervalsTrimmed: Int = 0
    ) {
        self.adapter = adapter
        self.registered = registered
        self.advertising = advertising
        self.reason = reason
        self.notifying = notifying
        self.connectedCentrals = connectedCentrals
        self.framesSent = framesSent
        self.framesDropped = framesDropped
        self.refusedWrites = refusedWrites
        self.refusedCalls = refusedCalls
        self.rrIntervalsTrimmed = rrIntervalsTrimmed
    }
}
