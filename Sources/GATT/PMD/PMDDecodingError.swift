/// A Polar Measurement Data frame that a strict decoder refused: which part, where, and why.
public struct PMDDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why a frame was refused.
    public enum Reason: Hashable, Sendable {
        /// Shorter than the 10-byte header.
        case tooShort(Int)
        /// A measurement type this decoder does not read.
        case unsupportedMeasurement(UInt8)
        /// A frame type (low 7 bits of byte 9) the measurement has no layout for.
        case unsupportedFrameType(UInt8, compressed: Bool)
        /// The payload is not a whole number of samples of `sampleBytes` bytes.
        case partialSample(payload: Int, sampleBytes: Int)
        /// No sample at all.
        case empty
        /// A compressed block announces a bit width of 0 or beyond 32.
        case bitWidth(Int)
        /// A compressed block needs more bytes (its header or its deltas) than are left.
        case truncatedBlock(needed: Int, available: Int)
        /// More samples than a frame can hold (``PMDFrame/maximumSamples``).
        case tooManySamples(Int)

        /// A label value from a fixed set, for counters.
        public var metricName: String {
            switch self {
            case .tooShort: "pmd_too_short"
            case .unsupportedMeasurement: "pmd_unsupported_measurement"
            case .unsupportedFrameType: "pmd_unsupported_frame_type"
            case .partialSample: "pmd_partial_sample"
            case .empty: "pmd_empty"
            case .bitWidth: "pmd_bit_width"
            case .truncatedBlock: "pmd_truncated_block"
            case .tooManySamples: "pmd_too_many_samples"
            }
        }
    }

    /// The measurement being read.
    public var measurement: UInt8
    /// The byte offset in the frame where it went wrong.
    public var offset: Int
    /// The whole frame's length.
    public var frameLength: Int
    /// Why it was refused.
    public var reason: Reason

    /// An error at `offset` of a frame of `frameLength` bytes.
    public init(measurement: UInt8, offset: Int, frameLength: Int, reason: Reason) {
        self.measurement = measurement
        self.offset = offset
        self.frameLength = frameLength
        self.reason = reason
    }

    /// One line naming the measurement, the offset and the reason.
    public var description: String {
        let what: String
        switch reason {
        case .tooShort(let length): what = "\(length) bytes, a PMD frame has a 10-byte header"
        case .unsupportedMeasurement(let type): what = "measurement type \(type) is not read"
        case .unsupportedFrameType(let type, let compressed):
            what = "\(compressed ? "compressed " : "")frame type \(type) has no layout here"
        case .partialSample(let payload, let sampleBytes):
            what = "a payload of \(payload) bytes is not a whole number of \(sampleBytes)-byte samples"
        case .empty: what = "no sample"
        case .bitWidth(let width): what = "a delta block of \(width) bits per value (1 to 32 allowed)"
        case .truncatedBlock(let needed, let available):
            what = "a delta block needs \(needed) bytes at byte offset \(offset), \(available) left"
        case .tooManySamples(let count): what = "\(count) samples, more than a frame holds"
        }
        let name = PMDMeasurementType(rawValue: measurement).map { "\($0)" } ?? "type \(measurement)"
        return "PMD \(name) frame of \(frameLength) bytes: \(what)"
    }
}
