/// One Treadmill Data (0x2ACD) notification: a fragment of the machine's record.
///
/// Flag bit 0 ("More Data") is **inverted**: instantaneous speed is present when it is 0.
/// The pace fields' width is disputed (uint8 in the XML, uint16 in later readings): the decoder
/// picks the width that makes the frame length match exactly and throws `.inconsistentLength`
/// when neither does. Heart rate 0 decodes as `nil`. Without pace fields, trailing bytes are ignored.
public struct TreadmillData: Hashable, Sendable {
    /// A pace field, kept raw because its width and unit differ between machines.
    public struct Pace: Hashable, Sendable {
        /// The raw value.
        public var raw: UInt16
        /// How many bytes the machine sent it in (1 or 2).
        public var width: Int

        /// Creates a pace field.
        public init(raw: UInt16, width: Int) {
            self.raw = raw
            self.width = width
        }
    }

    /// Whether the machine will send more fragments of this record (flag bit 0 set).
    public var moreData: Bool
    /// Instantaneous speed in 0.01 km/h.
    public var instantaneousSpeed: UInt16?
    /// Average speed in 0.01 km/h.
    public var averageSpeed: UInt16?
    /// Total distance in metres (often a lifetime odometer).
    public var totalDistance: UInt32?
    /// Inclination in 0.1 %.
    public var inclination: Int16?
    /// Ramp angle in 0.1 degree.
    public var rampAngle: Int16?
    /// Positive elevation gain in 0.1 m.
    public var positiveElevationGain: UInt16?
    /// Negative elevation gain in 0.1 m.
    public var negativeElevationGain: UInt16?
    /// Instantaneous pace, raw.
    public var instantaneousPace: Pace?
    /// Average pace, raw.
    public var averagePace: Pace?
    /// Energy in kcal.
    public var energy: FitnessMachineEnergy?
    /// Heart rate in beats per minute; `nil` when absent or 0.
    public var heartRate: UInt8?
    /// Metabolic equivalent in 0.1 MET.
    public var metabolicEquivalent: UInt8?
    /// Elapsed time in seconds.
    public var elapsedTime: UInt16?
    /// Remaining time in seconds.
    public var remainingTime: UInt16?
    /// Force on belt in newtons.
    public var forceOnBelt: Int16?
    /// Power output in watts.
    public var powerOutput: Int16?

    /// Instantaneous speed in metres per second.
    public var instantaneousSpeedMetersPerSecond: Double? { instantaneousSpeed.map { Double($0) / 360 } }

    /// Decodes a fragment.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        var reader = ByteReader(bytes, characteristic: .treadmillData)
        try reader.require(minimumLength: 2)
        let flags = try reader.uint16("flags")
        func has(_ bit: Int) -> Bool { flags & (1 << bit) != 0 }
        let paceWidth = try Self.paceWidth(flags: flags, reader: reader)
        moreData = has(0)
        instantaneousSpeed = !has(0) ? try reader.uint16("instantaneousSpeed") : nil
        averageSpeed = has(1) ? try reader.uint16("averageSpeed") : nil
        totalDistance = has(2) ? try reader.uint24("totalDistance") : nil
        if has(3) {
            inclination = try reader.int16("inclination")
            rampAngle = try reader.int16("rampAngle")
        } else {
            inclination = nil
            rampAngle = nil
        }
        if has(4) {
            positiveElevationGain = try reader.uint16("positiveElevationGain")
            negativeElevationGain = try reader.uint16("negativeElevationGain")
        } else {
            positiveElevationGain = nil
            negativeElevationGain = nil
        }
        instantaneousPace = has(5) ? try Self.pace(&reader, width: paceWidth, field: "instantaneousPace") : nil
        averagePace = has(6) ? try Self.pace(&reader, width: paceWidth, field: "averagePace") : nil
        energy = has(7) ? try FitnessMachineEnergy(reader: &reader) : nil
        let heartRate = has(8) ? try reader.uint8("heartRate") : 0
        self.heartRate = heartRate == 0 ? nil : heartRate
        metabolicEquivalent = has(9) ? try reader.uint8("metabolicEquivalent") : nil
        elapsedTime = has(10) ? try reader.uint16("elapsedTime") : nil
        remainingTime = has(11) ? try reader.uint16("remainingTime") : nil
        if has(12) {
            forceOnBelt = try reader.int16("forceOnBelt")
            powerOutput = try reader.int16("powerOutput")
        } else {
            forceOnBelt = nil
            powerOutput = nil
        }
    }

    private static func pace(_ reader: inout ByteReader, width: Int, field: String) throws(GATTDecodingError) -> Pace {
        let raw = width == 1 ? UInt16(try reader.uint8(field)) : try reader.uint16(field)
        return Pace(raw: raw, width: width)
    }

    /// The pace width that makes the frame length match, or 1 when no pace field is present.
    private static func paceWidth(flags: UInt16, reader: ByteReader) throws(GATTDecodingError) -> Int {
        func has(_ bit: Int) -> Bool { flags & (1 << bit) != 0 }
        let paceFields = (has(5) ? 1 : 0) + (has(6) ? 1 : 0)
        guard paceFields > 0 else { return 1 }
        let widths: [(bit: Int, bytes: Int, present: Bool)] = [
            (0, 2, !has(0)), (1, 2, true), (2, 3, true), (3, 4, true), (4, 4, true), (7, 5, true), (8, 1, true),
            (9, 1, true), (10, 2, true), (11, 2, true), (12, 4, true),
        ]
        var fixed = 0
        var paceOffset = reader.offset
        for entry in widths where entry.bit == 0 ? entry.present : has(entry.bit) {
            fixed += entry.bytes
            if entry.bit < 5 { paceOffset += entry.bytes }
        }
        let paceBytes = reader.remaining - fixed
        // Too short for even one-byte paces: let the field reads report the truncation where it is.
        if paceBytes <= paceFields { return 1 }
        if paceBytes == 2 * paceFields { return 2 }
        let field = has(5) ? "instantaneousPace" : "averagePace"
        throw reader.error(field, .inconsistentLength, at: paceOffset)
    }
}
