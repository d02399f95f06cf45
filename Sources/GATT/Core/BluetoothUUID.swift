/// A Bluetooth UUID, held in its 128-bit form.
///
/// 16- and 32-bit UUIDs are aliases inside the Bluetooth Base UUID
/// `00000000-0000-1000-8000-00805F9B34FB`; they parse from and print to their short form.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible, LosslessStringConvertible {
    /// The first 64 bits, big-endian.
    public let high: UInt64
    /// The last 64 bits, big-endian.
    public let low: UInt64

    private static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    private static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    /// Creates a UUID from its two 64-bit halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates the 128-bit form of a 16-bit SIG-assigned UUID.
    public init(_ short: UInt16) {
        self.init(UInt32(short))
    }

    /// Creates the 128-bit form of a 32-bit SIG-assigned UUID.
    public init(_ short: UInt32) {
        self.init(high: Self.baseHigh | UInt64(short) << 32, low: Self.baseLow)
    }

    /// Parses `2a37`, `0x2A37`, an 8-digit 32-bit form, or a 128-bit form with or without dashes.
    public init?(_ text: String) {
        var hex = Substring(text)
        if hex.hasPrefix("0x") || hex.hasPrefix("0X") { hex = hex.dropFirst(2) }
        let isCanonical128 = hex.count == 36
        if isCanonical128 {
            let dashPositions: Set<Int> = [8, 13, 18, 23]
            for (index, character) in hex.enumerated() where dashPositions.contains(index) != (character == "-") {
                return nil
            }
            hex = Substring(hex.filter { $0 != "-" })
        }
        guard hex.allSatisfy(\.isHexDigit) else { return nil }
        switch hex.count {
        case 4:
            guard let value = UInt16(hex, radix: 16) else { return nil }
            self.init(value)
        case 8 where !isCanonical128:
            guard let value = UInt32(hex, radix: 16) else { return nil }
            self.init(value)
        case 32:
            guard let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16) else {
                return nil
            }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// The 16-bit alias, when this UUID is one.
    public var shortValue: UInt16? {
        guard let value = value32, value <= UInt32(UInt16.max) else { return nil }
        return UInt16(value)
    }

    /// The 32-bit alias, when this UUID is one (every 16-bit alias is one too).
    public var value32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(high >> 32)
    }

    /// The full lowercase 128-bit form, as BlueZ prints it on D-Bus.
    public var description: String {
        let digits = hexDigits(high, width: 16) + hexDigits(low, width: 16)
        var result = ""
        result.reserveCapacity(36)
        for (index, character) in digits.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { result.append("-") }
            result.append(character)
        }
        return result
    }

    /// The shortest form: 4 hex digits for a 16-bit alias, 8 for a 32-bit alias, else the 128-bit form.
    public var shortDescription: String {
        if let short = shortValue { return hexDigits(UInt64(short), width: 4) }
        if let value = value32 { return hexDigits(UInt64(value), width: 8) }
        return description
    }
}

private func hexDigits(_ value: UInt64, width: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
