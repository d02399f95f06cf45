public import GATT
public import Sensors

/// What a sample carries besides its value: the facts a consumer needs to trust or filter it.
public struct SampleMetadata: Hashable, Sendable, Codable {
    /// The strap's sensor-contact state when the heart rate was measured.
    public var sensorContact: SensorContact?
    /// The RR interval as sent, in 1/1024 s (heartbeat series samples).
    public var rawRRInterval: UInt16?
    /// The counter went down since the previous reading and was taken as reset.
    public var counterReset: Bool?
    /// How the frame it came from reached the host: a link's notification, or a broadcast anyone
    /// could have sent (nil: not known, as for samples stored before it was recorded).
    public var via: MeasurementPath?

    /// Creates metadata.
    public init(
        sensorContact: SensorContact? = nil, rawRRInterval: UInt16? = nil, counterReset: Bool? = nil,
        via: MeasurementPath? = nil
    ) {
        self.sensorContact = sensorContact
        self.rawRRInterval = rawRRInterval
        self.counterReset = counterReset
        self.via = via
    }

    /// Whether nothing is set.
    public var isEmpty: Bool { sensorContact == nil && rawRRInterval == nil && counterReset == nil && via == nil }
}

extension SensorContact: Codable {}
