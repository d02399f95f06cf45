/// The acceleration of one PMD frame (measurement type 2), in mG per axis.
///
/// Raw frames: type 0 is 3 × int8, type 1 3 × int16 (the H10's), type 2 3 × int24, each signed
/// little-endian in mG. Delta-compressed frames (``PMDDeltaDecoder``) carry values at the stream's
/// `resolution`: compressed type 0 in G, scaled by `factor` × 1000 to mG; compressed type 1 in
/// mG, scaled by `factor` when it is not 1. `resolution` and `factor` come from the stream's
/// settings (the start command's answer).
public struct AccelerationFrame: Hashable, Sendable {
    /// One sample.
    public struct Sample: Hashable, Sendable {
        public var x: Int32
        public var y: Int32
        public var z: Int32

        /// A sample in mG.
        public init(x: Int32, y: Int32, z: Int32) {
            self.x = x
            self.y = y
            self.z = z
        }
    }

    /// The sensor's time of the last sample, in nanoseconds.
    public var timestamp: UInt64
    /// The samples in mG, oldest first.
    public var samples: [Sample]

    /// Samples as given.
    public init(timestamp: UInt64, samples: [Sample]) {
        self.timestamp = timestamp
        self.samples = samples
    }

    /// Reads a frame's samples; a layout it does not know, a partial sample or a bad delta block
    /// is refused with its reason.
    public init(_ frame: PMDFrame, resolution: Int = 16, factor: Float = 1) throws(PMDDecodingError) {
        guard frame.measurement == .acceleration else {
            throw frame.error(at: -PMDFrame.headerBytes, .unsupportedMeasurement(frame.measurementType))
        }
        let values: [[Int32]]
        if frame.isCompressed {
            guard frame.frameType <= 1, (1...32).contains(resolution) else {
                throw frame.error(at: -1, .unsupportedFrameType(frame.frameType, compressed: true))
            }
            let decoded = try PMDDeltaDecoder.samples(of: frame, channels: 3, resolution: resolution)
            let scale: Float = frame.frameType == 0 ? factor * 1000 : factor
            values = scale == 1 ? decoded : decoded.map { $0.map { Self.scaled($0, by: scale) } }
        } else {
            guard frame.frameType <= 2 else {
                throw frame.error(at: -1, .unsupportedFrameType(frame.frameType, compressed: false))
            }
            values = try frame.rawSamples(channels: 3, bytesPerValue: Int(frame.frameType) + 1)
        }
        guard values.count <= PMDFrame.maximumSamples else {
            throw frame.error(at: 0, .tooManySamples(values.count))
        }
        self.init(timestamp: frame.timestamp, samples: values.map { Sample(x: $0[0], y: $0[1], z: $0[2]) })
    }

    /// Reads a notification.
    public init(bytes: [UInt8], resolution: Int = 16, factor: Float = 1) throws(PMDDecodingError) {
        try self.init(try PMDFrame(bytes: bytes), resolution: resolution, factor: factor)
    }

    /// `value` × `scale`, rounded, within Int32.
    private static func scaled(_ value: Int32, by scale: Float) -> Int32 {
        let product = (Double(value) * Double(scale)).rounded()
        guard product.isFinite else { return 0 }
        return Int32(max(Double(Int32.min), min(Double(Int32.max), product)))
    }
}
