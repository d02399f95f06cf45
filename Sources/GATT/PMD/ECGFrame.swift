/// The raw ECG of one PMD frame (measurement type 0): the H10's 130 Hz samples in µV.
///
/// Only frame type 0 exists for ECG: signed 24-bit little-endian samples. Polar's own parser has
/// no compressed ECG, so a compressed frame is refused rather than guessed at.
public struct ECGFrame: Hashable, Sendable {
    /// The sensor's time of the last sample, in nanoseconds.
    public var timestamp: UInt64
    /// The samples in µV, oldest first.
    public var microvolts: [Int32]

    /// Samples as given.
    public init(timestamp: UInt64, microvolts: [Int32]) {
        self.timestamp = timestamp
        self.microvolts = microvolts
    }

    /// Reads a frame's samples; anything but raw type 0 ECG with whole samples is refused.
    public init(_ frame: PMDFrame) throws(PMDDecodingError) {
        guard frame.measurement == .ecg else {
            throw frame.error(at: -PMDFrame.headerBytes, .unsupportedMeasurement(frame.measurementType))
        }
        guard frame.frameType == 0, !frame.isCompressed else {
            throw frame.error(at: -1, .unsupportedFrameType(frame.frameType, compressed: frame.isCompressed))
        }
        let samples = try frame.rawSamples(channels: 1, bytesPerValue: 3)
        self.init(timestamp: frame.timestamp, microvolts: samples.map { $0[0] })
    }

    /// Reads a notification.
    public init(bytes: [UInt8]) throws(PMDDecodingError) {
        try self.init(try PMDFrame(bytes: bytes))
    }

    /// The frame this is (type 0), as the strap sends it.
    public func frame() -> PMDFrame {
        var payload: [UInt8] = []
        payload.reserveCapacity(3 * microvolts.count)
        for value in microvolts {
            for index in 0..<3 { payload.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        return PMDFrame(
            measurementType: PMDMeasurementType.ecg.rawValue, timestamp: timestamp, frameType: 0, isCompressed: false,
            payload: payload)
    }
}
