/// A decoded Heart Rate Measurement (0x2A37) frame.
///
/// Decoding is strict (docs/formats.md, "Decoder policy"): a frame cut short, an RR flag with no RR bytes, or a
/// byte left over throws a ``GATTDecodingError`` naming the field and offset. Reserved flag bits are ignored.
public struct HeartRateMeasurement: Hashable, Sendable {
    /// The width of the heart-rate field, chosen by flag bit 0.
    public enum ValueFormat: Hashable, Sendable {
        /// One byte (flag bit 0 clear).
        case uint8
        /// Two bytes (flag bit 0 set).
        case uint16
    }

    /// The value the strap sends in Energy Expended once the counter is full.
    public static let energyExpendedSaturation: UInt16 = 0xFFFF

    /// Heart rate in beats per minute; 0 means the strap has no reading.
    public var heartRate: UInt16
    /// The width the heart rate was sent in.
    public var valueFormat: ValueFormat
    /// The sensor-contact state.
    public var sensorContact: SensorContact
    /// Energy expended since the last reset, in kJ, when the frame carries it.
    public var energyExpended: UInt16?
    /// The RR intervals in the frame, oldest first.
    public var rrIntervals: [RRInterval]

    /// Creates a measurement; the value format defaults to the narrowest that holds `heartRate`.
    public init(
        heartRate: UInt16, valueFormat: ValueFormat? = nil, sensorContact: SensorContact = .notSupported,
        energyExpended: UInt16? = nil, rrIntervals: [RRInterval] = []
    ) {
        self.heartRate = heartRate
        self.valueFormat = valueFormat ?? (heartRate > UInt8.max ? .uint16 : .uint8)
        self.sensorContact = sensorContact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
    }

    /// Whether the frame carries a heart rate at all (the strap sends 0 when it has none).
    public var isReading: Bool { heartRate != 0 }

    /// Whether Energy Expended has reached 0xFFFF and stays there until a reset.
    public var isEnergySaturated: Bool { energyExpended == Self.energyExpendedSaturation }

    /// Decodes a frame.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        var reader = ByteReader(bytes, characteristic: .heartRateMeasurement)
        try reader.require(minimumLength: 2)
        let flags = try reader.uint8("flags")
        if flags & 0x01 != 0 {
            valueFormat = .uint16
            heartRate = try reader.uint16("heartRate")
        } else {
            valueFormat = .uint8
            heartRate = UInt16(try reader.uint8("heartRate"))
        }
        sensorContact = SensorContact(flags: flags)
        energyExpended = flags & 0x08 != 0 ? try reader.uint16("energyExpended") : nil
        if flags & 0x10 != 0 {
            if reader.remaining == 0 {
                throw reader.error("rrIntervals", .missingRRIntervals)
            }
            if reader.remaining % 2 != 0 {
                throw reader.error("rrIntervals", .trailingBytes(count: 1), at: bytes.count - 1)
            }
            var intervals: [RRInterval] = []
            intervals.reserveCapacity(reader.remaining / 2)
            while reader.remaining > 0 {
                intervals.append(RRInterval(raw: try reader.uint16("rrIntervals")))
            }
            rrIntervals = intervals
        } else {
            rrIntervals = []
            try reader.requireEnd(after: energyExpended == nil ? "heartRate" : "energyExpended")
        }
    }

    /// Encodes the frame a strap would send; the inverse of ``init(bytes:)`` for every frame it accepts.
    public func encoded() -> [UInt8] {
        var flags = sensorContact.flagBits
        if valueFormat == .uint16 { flags |= 0x01 }
        if energyExpended != nil { flags |= 0x08 }
        if !rrIntervals.isEmpty { flags |= 0x10 }
        var writer = ByteWriter(capacity: 5 + 2 * rrIntervals.count)
        writer.uint8(flags)
        switch valueFormat {
        case .uint8: writer.uint8(UInt8(truncatingIfNeeded: heartRate))
        case .uint16: writer.uint16(heartRate)
        }
        if let energyExpended { writer.uint16(energyExpended) }
        for interval in rrIntervals { writer.uint16(interval.raw) }
        return writer.bytes
    }
}
