public import FoundationEssentials

/// One frame of a raw signal, its samples placed on the host clock.
///
/// Sample `i` of channel `c` is `values[i * kind.channels + c]`, taken at
/// `start + i * interval`. The times come from the strap's own clock (the frame's timestamp of its
/// last sample and the spacing of consecutive frames), mapped to the host by a ``WaveformClock``:
/// they do not carry the radio's jitter.
public struct SensorWaveform: Hashable, Sendable {
    /// The strap it came from.
    public var sensor: SensorIdentity
    /// The signal.
    public var kind: WaveformKind
    /// The nominal sample rate in Hz.
    public var sampleRate: Int
    /// Interleaved samples, µV or mG.
    public var values: [Int32]
    /// The host time of the first sample.
    public var start: Date
    /// Host seconds from one sample to the next.
    public var interval: Double
    /// Whether the first sample follows the previous frame's last one with no sample missing;
    /// `false` after a gap (lost frames, a reconnect, a restarted stream) and for a stream's first frame.
    public var continuous: Bool
    /// The strap's timestamp of the last sample, in nanoseconds of its own clock.
    public var sensorTimestamp: UInt64
    /// When the host received the frame.
    public var receivedAt: Date

    /// A frame as given.
    public init(
        sensor: SensorIdentity, kind: WaveformKind, sampleRate: Int, values: [Int32], start: Date, interval: Double,
        continuous: Bool, sensorTimestamp: UInt64, receivedAt: Date
    ) {
        self.sensor = sensor
        self.kind = kind
        self.sampleRate = sampleRate
        self.values = values
        self.start = start
        self.interval = interval
        self.continuous = continuous
        self.sensorTimestamp = sensorTimestamp
        self.receivedAt = receivedAt
    }

    /// Samples in the frame.
    public var sampleCount: Int { values.count / kind.channels }

    /// The host time of sample `index`.
    public func time(ofSample index: Int) -> Date { start.addingTimeInterval(Double(index) * interval) }
}
