/// Reads little-endian fields from a frame, naming the field in every error.
struct ByteReader {
    let bytes: [UInt8]
    let characteristic: GATTCharacteristic
    private(set) var offset: Int

    init(_ bytes: [UInt8], characteristic: GATTCharacteristic) {
        self.bytes = bytes
        self.characteristic = characteristic
        self.offset = 0
    }

    var remaining: Int { bytes.count - offset }

    func error(_ field: String, _ reason: GATTDecodingError.Reason, at offset: Int? = nil) -> GATTDecodingError {
        GATTDecodingError(
            characteristic: characteristic, field: field, offset: offset ?? self.offset,
            frameLength: bytes.count, reason: reason)
    }

    /// Throws `.tooShort` unless the frame has at least `minimum` bytes.
    func require(minimumLength minimum: Int) throws(GATTDecodingError) {
        if bytes.count < minimum { throw error("flags", .tooShort(minimum: minimum), at: 0) }
    }

    /// Throws `.trailingBytes` if anything is left after `field`.
    func requireEnd(after field: String) throws(GATTDecodingError) {
        if remaining > 0 { throw error(field, .trailingBytes(count: remaining)) }
    }

    private mutating func take(_ count: Int, _ field: String) throws(GATTDecodingError) -> Int {
        guard remaining >= count else {
            throw error(field, .truncated(needed: count, available: remaining))
        }
        let start = offset
        offset += count
        return start
    }

    mutating func uint8(_ field: String) throws(GATTDecodingError) -> UInt8 {
        bytes[try take(1, field)]
    }

    mutating func uint16(_ field: String) throws(GATTDecodingError) -> UInt16 {
        let at = try take(2, field)
        return UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    mutating func int16(_ field: String) throws(GATTDecodingError) -> Int16 {
        Int16(bitPattern: try uint16(field))
    }

    mutating func uint24(_ field: String) throws(GATTDecodingError) -> UInt32 {
        let at = try take(3, field)
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16
    }

    mutating func uint32(_ field: String) throws(GATTDecodingError) -> UInt32 {
        let at = try take(4, field)
        return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16
            | UInt32(bytes[at + 3]) << 24
    }

    /// Skips `count` bytes that belong to a field this decoder does not expose.
    mutating func skip(_ count: Int, _ field: String) throws(GATTDecodingError) {
        _ = try take(count, field)
    }
}
