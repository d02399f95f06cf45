/// Decodes the Device Information strings (0x2A29, 0x2A24–0x2A28).
///
/// The strings are UTF-8 with no terminator, but devices pad them with NULs: the text is cut at
/// the first NUL and trimmed of surrounding white space.
public enum DeviceInformationString {
    /// The characteristics this decoder accepts.
    public static let characteristics: [GATTCharacteristic] = [
        .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision,
    ]

    /// Decodes one string value; bytes that are not UTF-8 throw `.invalidUTF8`.
    public static func decode(_ bytes: [UInt8], characteristic: GATTCharacteristic) throws(GATTDecodingError)
        -> String
    {
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        guard let text = String(validating: bytes[..<end], as: UTF8.self) else {
            let reader = ByteReader(bytes, characteristic: characteristic)
            throw reader.error(characteristic.fieldName, .invalidUTF8, at: 0)
        }
        let trimmed = text.drop(while: \.isWhitespace)
        return String(
            trimmed.prefix(
                trimmed.lastIndex(where: { !$0.isWhitespace }).map {
                    trimmed.distance(from: trimmed.startIndex, to: $0) + 1
                } ?? 0))
    }
}
