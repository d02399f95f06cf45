package import Foundation
package import Sensors

/// How one raw-signal frame's values are kept in the store: a format byte, then each channel's
/// difference from its previous sample (the first from zero) as a zigzag varint.
///
/// An ECG moves a few µV from one sample to the next at 130 Hz, so most differences take one or
/// two bytes where the strap sent three (Benchmarks/README.md: bytes per hour of ECG).
public enum WaveformBlob {
    /// The only format written so far.
    static let format: UInt8 = 1
    /// Values one frame may hold: an H10 frame holds at most 73 ECG or ~70 acceleration samples;
    /// the PMD decoder's bound is 4,096 samples of up to 3 channels.
    public static let maximumValues = 4_096 * 3

    /// Why bytes read back are not a frame's values.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The blob is empty.
        case empty
        /// A format this build does not know.
        case unknownFormat(UInt8)
        /// The row's sample count or channel count is out of bounds.
        case badShape(samples: Int, channels: Int)
        /// The bytes end inside a value.
        case truncated(offset: Int)
        /// A varint longer than five bytes, or a value beyond 32 bits.
        case outOfRange(offset: Int)
        /// Bytes left over after the last value.
        case trailingBytes(Int)

        public var description: String {
            switch self {
            case .empty: "an empty waveform blob"
            case .unknownFormat(let format): "waveform blob format \(format)"
            case .badShape(let samples, let channels): "a waveform of \(samples) samples × \(channels) channels"
            case .truncated(let offset): "a waveform blob cut short at byte \(offset)"
            case .outOfRange(let offset): "a waveform value out of range at byte \(offset)"
            case .trailingBytes(let count): "\(count) bytes after a waveform blob's last value"
            }
        }
    }

    /// The bytes of interleaved `values` (`channels` per sample).
    public static func encode(_ values: [Int32], channels: Int) -> [UInt8] {
        var bytes: [UInt8] = [format]
        bytes.reserveCapacity(1 + values.count * 2)
        var previous = [Int64](repeating: 0, count: max(channels, 1))
        for (index, value) in values.enumerated() {
            let channel = index % max(channels, 1)
            let delta = Int64(value) - previous[channel]
            previous[channel] = Int64(value)
            // Zigzag: small magnitudes of either sign become small unsigned numbers.
            var unsigned = UInt64(bitPattern: (delta << 1) ^ (delta >> 63))
            while unsigned >= 0x80 {
                bytes.append(UInt8(unsigned & 0x7F) | 0x80)
                unsigned >>= 7
            }
            bytes.append(UInt8(unsigned))
        }
        return bytes
    }

    /// The interleaved values of `samples` samples of `channels` channels; every byte must be used.
    public static func decode(_ bytes: [UInt8], samples: Int, channels: Int) throws(Failure) -> [Int32] {
        guard let first = bytes.first else { throw .empty }
        guard first == format else { throw .unknownFormat(first) }
        guard (1...3).contains(channels), samples >= 0, samples * channels <= maximumValues else {
            throw .badShape(samples: samples, channels: channels)
        }
        let count = samples * channels
        var values = [Int32]()
        values.reserveCapacity(count)
        var previous = [Int64](repeating: 0, count: channels)
        var offset = 1
        for index in 0..<count {
            let start = offset
            var unsigned: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard offset < bytes.count else { throw .truncated(offset: offset) }
                let byte = bytes[offset]
                offset += 1
                unsigned |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
                // Two Int32s differ by less than 2^33: five bytes (35 bits) always suffice.
                guard shift < 35 else { throw .outOfRange(offset: start) }
            }
            let delta = Int64(bitPattern: unsigned >> 1) ^ -Int64(bitPattern: unsigned & 1)
            let channel = index % channels
            let value = previous[channel] + delta
            guard let narrow = Int32(exactly: value) else { throw .outOfRange(offset: start) }
            previous[channel] = value
            values.append(narrow)
        }
        guard offset == bytes.count else { throw .trailingBytes(bytes.count - offset) }
        return values
    }
}

extension StoreRows {
    /// A stored frame from its columns, with the same checks on both backends: a damaged blob, an
    /// unknown kind or a rate out of bounds is a ``StoreError/corrupt(_:)`` naming the frame.
    package static func waveform(
        sensor: SensorIdentity, kind: String, start: Date, interval: Double, sampleRate: Int64, count: Int64,
        continuous: Bool, sensorTimestamp: Int64, receivedAt: Date, data: [UInt8]
    ) throws(StoreError) -> SensorWaveform {
        let frame = "\(kind) frame of \(sensor.address) at \(start.timeIntervalSince1970)"
        guard let kind = WaveformKind(rawValue: kind) else { throw .corrupt("waveform kind '\(kind)'") }
        guard (1...10_000).contains(sampleRate), interval.isFinite, interval > 0, count >= 0,
            count <= Int64(WaveformBlob.maximumValues)
        else { throw .corrupt("\(frame): rate \(sampleRate), interval \(interval), \(count) samples") }
        let values: [Int32]
        do {
            values = try WaveformBlob.decode(data, samples: Int(count), channels: kind.channels)
        } catch {
            throw .corrupt("\(frame): \(error)")
        }
        return SensorWaveform(
            sensor: sensor, kind: kind, sampleRate: Int(sampleRate), values: values, start: start,
            interval: interval, continuous: continuous, sensorTimestamp: UInt64(bitPattern: sensorTimestamp),
            receivedAt: receivedAt)
    }
}
