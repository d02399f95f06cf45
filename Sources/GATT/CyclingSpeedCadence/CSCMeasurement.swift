/// A decoded CSC Measurement (0x2A5B) frame: wheel and crank counters, event times in 1/1024 s.
///
/// Bytes after the last flagged field are ignored (some sensors append padding).
public struct CSCMeasurement: Hashable, Sendable {
    /// Ticks per second of both event times.
    public static let ticksPerSecond = 1024.0

    /// Cumulative wheel revolutions (32-bit) and last wheel event time.
    public var wheel: RevolutionData?
    /// Cumulative crank revolutions (16-bit) and last crank event time.
    public var crank: RevolutionData?

    /// Creates a measurement.
    public init(wheel: RevolutionData? = nil, crank: RevolutionData? = nil) {
        self.wheel = wheel
        self.crank = crank
    }

    /// Decodes a frame.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        var reader = ByteReader(bytes, characteristic: .cscMeasurement)
        try reader.require(minimumLength: 1)
        let flags = try reader.uint8("flags")
        if flags & 0x01 != 0 {
            let revolutions = try reader.uint32("wheelRevolutions")
            wheel = RevolutionData(revolutions: revolutions, lastEventTime: try reader.uint16("wheelEventTime"))
        } else {
            wheel = nil
        }
        if flags & 0x02 != 0 {
            let revolutions = UInt32(try reader.uint16("crankRevolutions"))
            crank = RevolutionData(revolutions: revolutions, lastEventTime: try reader.uint16("crankEventTime"))
        } else {
            crank = nil
        }
    }

    /// Encodes the frame a sensor would send.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 11)
        writer.uint8((wheel != nil ? 0x01 : 0) | (crank != nil ? 0x02 : 0))
        if let wheel {
            writer.uint32(wheel.revolutions)
            writer.uint16(wheel.lastEventTime)
        }
        if let crank {
            writer.uint16(UInt16(truncatingIfNeeded: crank.revolutions))
            writer.uint16(crank.lastEventTime)
        }
        return writer.bytes
    }
}
