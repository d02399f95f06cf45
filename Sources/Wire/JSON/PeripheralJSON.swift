import Foundation
public import JSONSupport

/// hrbridge as a Bluetooth heart-rate sensor: `peripheral` in `GET /v1/health`, the live
/// `peripheral` message and its MQTT topic.
public struct PeripheralJSON: Codable, Sendable, Equatable {
    /// The adapter that serves apps.
    public var adapter: String
    /// Whether bluetoothd holds our application and advertisement.
    public var registered: Bool
    public var advertising: Bool
    /// Why it is not advertising (`bluetoothd stopped`, `adapter hci1 missing`, …).
    @Nullable public var reason: String?
    /// Whether an app subscribed to heart-rate notifications.
    public var notifying: Bool
    /// Apps (centrals) connected to the adapter.
    public var centrals: Int
    /// `session`, `simulator` or a strap's address, as configured.
    public var source: String
    /// The strap passed on now (for `session`: the running session's primary strap).
    @Nullable public var following: String?
    /// Whether that strap's link is up.
    public var sourceUp: Bool
    /// Heart-rate frames of the strap, frames sent to apps, and frames nobody was subscribed to.
    public var framesIn: Int
    public var framesSent: Int
    public var framesDropped: Int
    /// Control-point writes refused with the ATT error.
    public var refusedWrites: Int
    /// The second sensor that carries DFA α1 × 100, when configured.
    @Nullable public var alpha1: Alpha1?

    /// The α1 sensor.
    public struct Alpha1: Codable, Sendable, Equatable {
        public var adapter: String
        public var registered: Bool
        public var advertising: Bool
        public var notifying: Bool
        public var framesSent: Int
        /// The last α1 passed on (null before the session's first window).
        @Nullable public var value: Double?

        public init(
            adapter: String, registered: Bool, advertising: Bool, notifying: Bool, framesSent: Int, value: Double?
        ) {
            self.adapter = adapter
            self.registered = registered
            self.advertising = advertising
            self.notifying = notifying
            self.framesSent = framesSent
            self.value = value
        }
    }

    public init(
        adapter: String, registered: Bool, advertising: Bool, reason: String?, notifying: Bool, centrals: Int,
        source: String, following: String?, sourceUp: Bool, framesIn: Int, framesSent: Int, framesDropped: Int,
        refusedWrites: Int, alpha1: Alpha1? = nil
    ) {
        self.adapter = adapter
        self.registered = registered
        self.advertising = advertising
        self.reason = reason
        self.notifying = notifying
        self.centrals = centrals
        self.source = source
        self.following = following
        self.sourceUp = sourceUp
        self.framesIn = framesIn
        self.framesSent = framesSent
        self.framesDropped = framesDropped
        self.refusedWrites = refusedWrites
        self.alpha1 = alpha1
    }
}
