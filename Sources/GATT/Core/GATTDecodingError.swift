/// A frame that a strict decoder refused, with the field and byte offset where it went wrong.
///
/// Every decoder in this module throws only this type, so callers can count and log
/// rejections by ``Reason`` without string matching.
public struct GATTDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why a frame was refused.
    public enum Reason: Hashable, Sendable {
        /// The frame is shorter than the smallest frame the characteristic allows.
        case tooShort(minimum: Int)
        /// A field the flags announce runs past the end of the frame.
        case truncated(needed: Int, available: Int)
        /// The RR-interval flag is set but no RR bytes follow.
        case missingRRIntervals
        /// Bytes are left over after the last field the flags announce.
        case trailingBytes(count: Int)
        /// A value lies outside its allowed range.
        case outOfRange(value: Int, allowed: ClosedRange<Int>)
        /// The frame length is not the one the characteristic requires.
        case invalidLength(expected: Int)
        /// A string field is not valid UTF-8.
        case invalidUTF8
        /// No reading of the variable-width fields makes the frame length consistent.
        case inconsistentLength
    }

    /// The characteristic whose frame was refused.
    public var characteristic: GATTCharacteristic
    /// The field being read, in the same camelCase as the decoded value's property.
    public var field: String
    /// The byte offset of that field in the frame.
    public var offset: Int
    /// The length of the whole frame.
    public var frameLength: Int
    /// Why the frame was refused.
    public var reason: Reason

    /// Creates an error for `field` at `offset` of a frame of `frameLength` bytes.
    public init(
        characteristic: GATTCharacteristic, field: String, offset: Int, frameLength: Int, reason: Reason
    ) {
        self.characteristic = characteristic
        self.field = field
        self.offset = offset
        self.frameLength = frameLength
        self.reason = reason
    }

    /// One line naming the characteristic, the field, the offset and the reason.
    public var description: String {
        let what: String
        switch reason {
        case .tooShort(let minimum):
            what = "frame too short: \(frameLength) bytes, at least \(minimum) needed"
        case .truncated(let needed, let available):
            what = "\(field) truncated at byte offset \(offset): needs \(needed) bytes, \(available) left"
        case .missingRRIntervals:
            what = "RR-interval flag set but no RR bytes at byte offset \(offset)"
        case .trailingBytes(let count):
            what = "\(count) trailing byte\(count == 1 ? "" : "s") after \(field) at byte offset \(offset)"
        case .outOfRange(let value, let allowed):
            what = "\(field) \(value) at byte offset \(offset) is outside \(allowed.lowerBound)...\(allowed.upperBound)"
        case .invalidLength(let expected):
            what = "\(field): frame is \(frameLength) bytes, exactly \(expected) expected"
        case .invalidUTF8:
            what = "\(field) at byte offset \(offset) is not valid UTF-8"
        case .inconsistentLength:
            what = "\(field) at byte offset \(offset): no field width gives a frame of \(frameLength) bytes"
        }
        return "\(characteristic.name) (\(characteristic.shortUUIDString)): \(what)"
    }
}
