public import Foundation
public import GATT
public import Sensors

/// One decoded frame as a gateway publishes it for hubs (`hrbridge/<node>/sensor/<id>/measurement`):
/// a compact binary envelope around the frame's own GATT bytes, which the hub decodes again with
/// the same strict decoder.
///
/// Layout (version 1, little-endian, 16 bytes then the value): version (1), flags (bit 0: heard in
/// an advertisement; bit 1: signed, a 32-byte tag follows the value, see ``EnvelopeSigner``; bit 2:
/// over a bonded link, never with bit 0), sequence number (u32, per sensor, +1 per frame: a jump is a gap), arrival at
/// the gateway (i64, milliseconds since 1970), characteristic (u16, the 16-bit UUID), then the
/// characteristic's value as the strap sent it (at most ``maximumValueBytes``).
public struct RemoteMeasurement: Hashable, Sendable {
    /// The envelope's version.
    public static let version: UInt8 = 1
    /// Bytes before the value.
    public static let headerBytes = 16
    /// The largest value a GATT attribute holds.
    public static let maximumValueBytes = 512
    /// Flag bit 1: the envelope ends with its gateway's tag.
    public static let signedFlag: UInt8 = 0b10
    /// Flag bit 2: the frame came over a link to a bonded strap.
    public static let bondedFlag: UInt8 = 0b100
    /// The characteristics a gateway forwards.
    public static let forwarded: Set<GATTCharacteristic> = [.heartRateMeasurement]

    public var sequence: UInt32
    /// When the frame reached the gateway.
    public var receivedAt: Date
    public var via: MeasurementPath
    /// Whether it came over a link to a bonded strap (the gateway's BlueZ holds its key).
    public var bonded: Bool
    public var characteristic: GATTCharacteristic
    /// The value's bytes, as the strap sent them (or, for a broadcast, as a link would have).
    public var bytes: [UInt8]

    public init(
        sequence: UInt32, receivedAt: Date, via: MeasurementPath, bonded: Bool = false,
        characteristic: GATTCharacteristic, bytes: [UInt8]
    ) {
        self.sequence = sequence
        self.receivedAt = receivedAt
        self.via = via
        self.bonded = bonded && via == .connection
        self.characteristic = characteristic
        self.bytes = bytes
    }

    /// The message a gateway publishes for `measurement` (nil for a characteristic it does not forward).
    public init?(_ measurement: SensorMeasurement, sequence: UInt32) {
        guard case .heartRateMeasurement(let frame) = measurement.value else { return nil }
        self.init(
            sequence: sequence, receivedAt: measurement.receivedAt, via: measurement.via, bonded: measurement.bonded,
            characteristic: .heartRateMeasurement, bytes: frame.encoded())
    }

    /// The payload.
    public func encoded() -> [UInt8] {
        var payload: [UInt8] = [Self.version, (via == .advertisement ? 1 : 0) | (bonded ? Self.bondedFlag : 0)]
        payload.reserveCapacity(Self.headerBytes + bytes.count)
        withUnsafeBytes(of: sequence.littleEndian) { payload.append(contentsOf: $0) }
        let milliseconds = Int64((receivedAt.timeIntervalSince1970 * 1000).rounded())
        withUnsafeBytes(of: milliseconds.littleEndian) { payload.append(contentsOf: $0) }
        withUnsafeBytes(of: characteristic.rawValue.littleEndian) { payload.append(contentsOf: $0) }
        payload.append(contentsOf: bytes)
        return payload
    }

    /// Reads a payload; anything else than this layout is refused with what is wrong.
    public init(payload: [UInt8]) throws(RemoteMeasurementError) {
        guard payload.count >= Self.headerBytes else { throw .tooShort(payload.count) }
        guard payload[0] == Self.version else { throw .unknownVersion(payload[0]) }
        // A broadcast has no link, bonded or not: both bits together are no envelope of ours.
        guard payload[1] & ~(1 | Self.signedFlag | Self.bondedFlag) == 0,
            payload[1] & (1 | Self.bondedFlag) != 1 | Self.bondedFlag
        else { throw .unknownFlags(payload[1]) }
        // A signed envelope's tag is checked (or not) by whoever holds the key: here it is cut off.
        let end = payload.count - (payload[1] & Self.signedFlag != 0 ? EnvelopeSigner.tagBytes : 0)
        guard end >= Self.headerBytes else { throw .tooShort(payload.count) }
        guard end - Self.headerBytes <= Self.maximumValueBytes else {
            throw .valueTooLong(end - Self.headerBytes)
        }
        func integer<Value: FixedWidthInteger>(_ offset: Int, _: Value.Type) -> Value {
            var value = Value.zero
            for index in 0..<MemoryLayout<Value>.size {
                value |= Value(truncatingIfNeeded: payload[offset + index]) << (8 * index)
            }
            return value
        }
        let milliseconds = integer(6, Int64.self)
        // 1970 to 2100: anything else is no clock reading.
        guard (0...4_102_444_800_000).contains(milliseconds) else { throw .timeOutOfRange(milliseconds) }
        let uuid = integer(14, UInt16.self)
        guard let characteristic = GATTCharacteristic(rawValue: uuid), Self.forwarded.contains(characteristic) else {
            throw .unknownCharacteristic(uuid)
        }
        self.init(
            sequence: integer(2, UInt32.self), receivedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000),
            via: payload[1] & 1 == 1 ? .advertisement : .connection, bonded: payload[1] & Self.bondedFlag != 0,
            characteristic: characteristic,
            bytes: Array(payload[Self.headerBytes..<end]))
    }
}
