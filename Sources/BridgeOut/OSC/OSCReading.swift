public import FoundationEssentials
public import GATT

/// One heart-rate frame as the OSC feed needs it.
public struct OSCReading: Hashable, Sendable {
    /// Beats per minute; 0 when the strap has no reading.
    public var heartRate: Int
    /// The frame's RR intervals (1/1024 s), oldest first; the last one ends at ``receivedAt``.
    public var rrIntervals: [RRInterval]
    /// The strap's skin-contact state.
    public var contact: SensorContact
    /// When the host received the frame.
    public var receivedAt: Date

    /// A reading as given.
    public init(heartRate: Int, rrIntervals: [RRInterval] = [], contact: SensorContact, receivedAt: Date) {
        self.heartRate = heartRate
        self.rrIntervals = rrIntervals
        self.contact = contact
        self.receivedAt = receivedAt
    }
}
