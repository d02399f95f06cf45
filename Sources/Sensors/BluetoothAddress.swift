/// Bluetooth address syntax: six pairs of ASCII hex digits separated by colons, either case.
public enum BluetoothAddress {
    /// Whether `text` is an address. ASCII only: `Character.isHexDigit` takes full-width digits too,
    /// and `UInt8("+f", radix: 16)` parses, so neither decides alone.
    public static func isValid<Text: StringProtocol>(_ text: Text) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(isHexDigit) }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }
}
