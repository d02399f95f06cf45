/// A decoded RSC Measurement (0x2A53) frame.
///
/// Cadence is read as steps per minute: foot pods send 160–180 while running, whatever the XML's
/// "1/minute (or RPM)" suggests. Bytes after the last flagged field are ignored.
public struct RSCMeasurement: Hashable, Sendable {
    /// Instantaneous speed in 1/256 m/s.
    public var speed: UInt16
    /// Instantaneous cadence in steps per minute.
    public var cadence: UInt8
    /// Stride length in centimetres.
    public var strideLength: UInt16?
    /// Total distance in decimetres (cumulative).
    public var totalDistance: UInt32?
    /// Whether the athlete is running (flag bit 2) rather than walking.
    public var isRunning: Bool

    /// Creates a measurement.
    public init(
        speed: UInt16, cadence: UInt8, strideLength: UInt16? = nil, totalDistance: UInt32? = nil,
        isRunning: Bool = true
    ) {
        self.speed = speed
        self.cadence = cadence
        self.strideLength = strideLength
        self.totalDistance = totalDistance
        self.isRunning = isRunning
    }

    /// Speed in metres per second.
    public var speedMetersPerSecond: Double { Double(speed) / 256 }
    /// Stride length in metres.
    public var strideLengthMeters: Double? { strideLength.map { Double($0) / 100 } }
    /// Total distance in metres.
    public var totalDistanceMeters: Double? { totalDistance.map { Double($0) / 10 } }

    /// Decodes a frame.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        var reader = ByteReader(bytes, characteristic: .rscMeasurement)
        try reader.require(minimumLength: 1)
        let flags = try reader.uint8("flags")
        speed = try reader.uint16("speed")
        cadence = try reader.uint8("cadence")
        strideLength = flags & 0x01 != 0 ? try reader.uint16("strideLength") : nil
        totalDistance = flags & 0x02 != 0 ? try reader.uint32("totalDistance") : nil
        isRunning = flags & 0x04 != 0
    }

    /// Encodes the frame a foot pod would send.
    public func encoded() -> [UInt8] {
        var flags: UInt8 = isRunning ? 0x04 : 0
        if strideLength != nil { flags |= 0x01 }
        if totalDistance != nil { flags |= 0x02 }
        var writer = ByteWriter(capacity: 10)
        writer.uint8(flags)
        writer.uint16(speed)
        writer.uint8(cadence)
        if let strideLength { writer.uint16(strideLength) }
        if let totalDistance { writer.uint32(totalDistance) }
        return writer.bytes
    }
}
