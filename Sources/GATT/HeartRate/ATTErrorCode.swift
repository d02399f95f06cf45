/// An Attribute Protocol error code, as a server returns it for a failed read or write.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The one-byte code.
    public var rawValue: UInt8

    /// Wraps a raw code.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The attribute cannot be written (0x03).
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    /// The link is not authenticated enough (0x05).
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    /// The request is not supported (0x06).
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    /// The link is not encrypted enough (0x0F).
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    /// Heart Rate Control Point: the written value is not supported (0x80).
    public static let controlPointNotSupported = ATTErrorCode(rawValue: 0x80)
    /// A Client Characteristic Configuration descriptor is set wrongly (0xFD).
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)

    /// `0x80` style.
    public var description: String {
        let digits = String(rawValue, radix: 16)
        return "0x" + (digits.count == 1 ? "0" + digits : digits)
    }
}
