/// A decoded Battery Level (0x2A19): one byte, 0–100 %.
public struct BatteryLevel: Hashable, Sendable {
    /// The charge in percent, 0–100.
    public var percent: UInt8

    /// Creates a level; values above 100 are clamped, since no battery holds more.
    public init(percent: UInt8) { self.percent = min(percent, 100) }

    /// Decodes the value; a length other than 1 or a value above 100 throws.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        let reader = ByteReader(bytes, characteristic: .batteryLevel)
        guard bytes.count == 1 else { throw reader.error("batteryLevel", .invalidLength(expected: 1), at: 0) }
        guard bytes[0] <= 100 else {
            throw reader.error("batteryLevel", .outOfRange(value: Int(bytes[0]), allowed: 0...100), at: 0)
        }
        percent = bytes[0]
    }

    /// Encodes the value.
    public func encoded() -> [UInt8] { [percent] }
}
