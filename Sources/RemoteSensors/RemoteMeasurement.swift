public import Foundation
public import GATT
public import Sensors

/// One decoded frame as a gateway publishes it for hubs (`hrbridge/<node>/sensor/<id>/measurement`):
/// a compact binary envelope around the frame's own GATT bytes, which the hub decodes again with
/// the same strict decoder.
///
/// Layout (version 1, little-endian, 16 bytes then the value): version (1), flags (bit 0: heard in
/// an advertisement; bit 1: signed, a 32-byte tag follows the value, see ``EnvelopeSigner``; bit 2:
/// over a bonded link, never with bit 0; bit 3: the gateway's boot follows the value, only with
/// bit 1), sequence number (u32, per sensor, +1 per frame: a jump is a gap), arrival at the gateway
/// (i64, milliseconds since 1970), characteristic (u16, the 16-bit UUID), then the characteristic's
/// value as the strap sent it (at most ``maximumValueBytes``), then, signed, the boot (u64, with
/// bit 3) and the tag.
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
    /// Flag bit 3 (signed envelopes only): the gateway's ``boot`` (u64, little-endian) follows the
    /// value, before the tag.
    public static let bootFlag: UInt8 = 0b1000
    /// Bytes of a boot.
    public static let bootBytes = 8
    /// The largest boot read (and time: 2100 in milliseconds since 1970).
    public static let maximumBoot: UInt64 = 4_102_444_800_000
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
    /// The boot of the gateway that sent it, from a signed envelope (nil: none given): a number
    /// that grows at each start of the gateway (``GatewayBoot``), 1 to ``maximumBoot``. A
    /// gateway's sequence numbers start over when it restarts; its boot tells a hub which frames
    /// are older than the restart. Not part of ``encoded()``: ``EnvelopeSigner`` adds it.
    public var boot: UInt64?

    public init(
        sequence: UInt32, receivedAt: Date, via: MeasurementPath, bonded: Bool = false,
        characteristic: GATTCharacteristic, bytes: [UInt8], boot: UInt64? = nil
    ) {
        self.sequence = sequence
        self.receivedAt = receivedAt
        self.via = via
        self.bonded = bonded && via == .connection
        self.characteristic = characteristic
        self.bytes = bytes
        self.boot = boot
    }

    /// The message a gateway publishes for `measurement` (nil for a characteristic it does not forward).
    public init?(_ measurement: SensorMeasurement, sequence: UInt32) {
        guard case .heartRateMeasurement(let frame) = measurement.value else { return nil }
        self.init(
            sequence: sequence, receivedAt: measurement.receivedAt, via: measurement.via, bonded: measurement.bonded,
            characteristic: .heartRateMeasurement, bytes: frame.encoded())
    }

    /// The payload (unsigned: without the boot).
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
        let flags = payload[1]
        // A broadcast has no link, bonded or not: both bits together are no envelope of ours. A
        // boot comes only with a tag.
        guard flags & ~(1 | Self.signedFlag | Self.bondedFlag | Self.bootFlag) == 0,
            flags & (1 | Self.bondedFlag) != 1 | Self.bondedFlag,
            flags & Self.bootFlag == 0 || flags & Self.signedFlag != 0
        else { throw .unknownFlags(flags) }
        // A signed envelope's tag is checked (or not) by whoever holds the key: here it is cut off.
        let tagBytes = flags & Self.signedFlag != 0 ? EnvelopeSigner.tagBytes : 0
        let bootBytes = flags & Self.bootFlag != 0 ? Self.bootBytes : 0
        // The value ends where the boot (if any) begins.
        let end = payload.count - tagBytes - bootBytes
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
        var boot: UInt64?
        if bootBytes > 0 {
            let value = integer(end, UInt64.self)
            guard (1...Self.maximumBoot).contains(value) else { throw .badBoot(value) }
            boot = value
        }
        self.init(
            sequence: integer(2, UInt32.self), receivedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000),
            via: flags & 1 == 1 ? .advertisement : .connection, bonded: flags & Self.bondedFlag != 0,
            characteristic: characteristic,
            bytes: Array(payload[Self.headerBytes..<end]), boot: boot)
    }
}
