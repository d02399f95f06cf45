/// One notification of Polar's PMD data characteristic (`FB005C82-…`): a 10-byte header, then the
/// samples of one measurement.
///
/// Header: measurement type (low 6 bits of byte 0), the sensor's timestamp of the frame's **last**
/// sample (u64 little-endian, nanoseconds on the sensor's own clock, epoch 2000-01-01 when set),
/// frame type (low 7 bits of byte 9; bit 7 set: delta-compressed). The samples are read by
/// ``ECGFrame`` and ``AccelerationFrame``.
public struct PMDFrame: Hashable, Sendable {
    /// Bytes before the payload.
    public static let headerBytes = 10
    /// Samples one frame may carry at most: a 512-byte attribute holds far fewer; more is no frame.
    public static let maximumSamples = 4096

    /// The measurement type (byte 0, low 6 bits).
    public var measurementType: UInt8
    /// The sensor's time of the last sample, in nanoseconds.
    public var timestamp: UInt64
    /// The frame type (byte 9, low 7 bits).
    public var frameType: UInt8
    /// Whether the payload is delta-compressed (byte 9, bit 7).
    public var isCompressed: Bool
    /// The samples' bytes.
    public var payload: [UInt8]

    /// A frame as given.
    public init(measurementType: UInt8, timestamp: UInt64, frameType: UInt8, isCompressed: Bool, payload: [UInt8]) {
        self.measurementType = measurementType & 0x3F
        self.timestamp = timestamp
        self.frameType = frameType & 0x7F
        self.isCompressed = isCompressed
        self.payload = payload
    }

    /// Reads the header of a notification; only a frame shorter than the header is refused here.
    public init(bytes: [UInt8]) throws(PMDDecodingError) {
        guard bytes.count >= Self.headerBytes else {
            throw PMDDecodingError(
                measurement: bytes.first.map { $0 & 0x3F } ?? 0, offset: 0, frameLength: bytes.count,
                reason: .tooShort(bytes.count))
        }
        var timestamp: UInt64 = 0
        for index in 0..<8 { timestamp |= UInt64(bytes[1 + index]) << (8 * index) }
        self.init(
            measurementType: bytes[0], timestamp: timestamp, frameType: bytes[9], isCompressed: bytes[9] & 0x80 != 0,
            payload: Array(bytes[Self.headerBytes...]))
    }

    /// The measurement, when it is one this module knows.
    public var measurement: PMDMeasurementType? { PMDMeasurementType(rawValue: measurementType) }

    /// The notification's bytes.
    public func encoded() -> [UInt8] {
        var bytes = [measurementType]
        bytes.reserveCapacity(Self.headerBytes + payload.count)
        for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: timestamp >> (8 * index))) }
        bytes.append(frameType | (isCompressed ? 0x80 : 0))
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// An error about this frame at `payloadOffset` bytes into its payload.
    func error(at payloadOffset: Int, _ reason: PMDDecodingError.Reason) -> PMDDecodingError {
        PMDDecodingError(
            measurement: measurementType, offset: Self.headerBytes + payloadOffset,
            frameLength: Self.headerBytes + payload.count, reason: reason)
    }

    /// The payload as whole samples of `channels` signed little-endian values of `bytesPerValue`
    /// bytes each; a partial sample or none at all is refused.
    func rawSamples(channels: Int, bytesPerValue: Int) throws(PMDDecodingError) -> [[Int32]] {
        let sampleBytes = channels * bytesPerValue
        guard !payload.isEmpty else { throw error(at: 0, .empty) }
        guard payload.count % sampleBytes == 0 else {
            throw error(
                at: payload.count - payload.count % sampleBytes,
                .partialSample(payload: payload.count, sampleBytes: sampleBytes))
        }
        var samples: [[Int32]] = []
        samples.reserveCapacity(payload.count / sampleBytes)
        var offset = 0
        while offset < payload.count {
            var sample: [Int32] = []
            sample.reserveCapacity(channels)
            for _ in 0..<channels {
                sample.append(Self.signed(payload, at: offset, bytes: bytesPerValue))
                offset += bytesPerValue
            }
            samples.append(sample)
        }
        return samples
    }

    /// A signed little-endian value of `count` bytes (1 to 4) at `offset`.
    static func signed(_ bytes: [UInt8], at offset: Int, bytes count: Int) -> Int32 {
        var value: UInt32 = 0
        for index in 0..<count { value |= UInt32(bytes[offset + index]) << (8 * index) }
        return signExtended(value, bits: count * 8)
    }

    /// The low `bits` of `value` as a two's-complement number.
    static func signExtended(_ value: UInt32, bits: Int) -> Int32 {
        guard bits < 32 else { return Int32(bitPattern: value) }
        let shift = UInt32(32 - bits)
        return Int32(bitPattern: value << shift) >> Int32(shift)
    }
}
