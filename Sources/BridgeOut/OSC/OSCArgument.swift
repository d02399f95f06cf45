/// One argument of an OSC 1.0 message: the types VRChat and the heart-rate apps use.
public enum OSCArgument: Hashable, Sendable, CustomStringConvertible {
    /// `i`: a 32-bit big-endian two's-complement integer.
    case int32(Int32)
    /// `f`: a 32-bit big-endian IEEE 754 float.
    case float32(Float)
    /// `s`: UTF-8 text, NUL-terminated and padded to a multiple of 4 bytes.
    case string(String)
    /// `T` or `F`: a boolean carried by its type tag alone (no argument bytes).
    case bool(Bool)

    /// The type tag character.
    public var typeTag: Character {
        switch self {
        case .int32: "i"
        case .float32: "f"
        case .string: "s"
        case .bool(let value): value ? "T" : "F"
        }
    }

    /// The argument's bytes in the message's data section (none for `T`/`F`).
    func appendData(to bytes: inout [UInt8]) {
        switch self {
        case .int32(let value): Self.appendBigEndian(UInt32(bitPattern: value), to: &bytes)
        case .float32(let value): Self.appendBigEndian(value.bitPattern, to: &bytes)
        case .string(let text): Self.appendPadded(text, to: &bytes)
        case .bool: break
        }
    }

    /// `72`, `-0.435`, `"text"`, `true`.
    public var description: String {
        switch self {
        case .int32(let value): "\(value)"
        case .float32(let value): "\(value)"
        case .string(let text): "\"\(text)\""
        case .bool(let value): "\(value)"
        }
    }

    static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// An OSC-string: the UTF-8 bytes, then one to four NULs so the length is a multiple of 4.
    static func appendPadded(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
        bytes.append(0)
        while bytes.count % 4 != 0 { bytes.append(0) }
    }
}
