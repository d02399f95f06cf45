/// A D-Bus value with its type: what a message argument holds.
public indirect enum DBusValue: Hashable, Sendable, CustomStringConvertible {
    /// `y`
    case byte(UInt8)
    /// `b`
    case boolean(Bool)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s`
    case string(String)
    /// `o`
    case objectPath(String)
    /// `g`
    case signature(String)
    /// `h`: a file descriptor the receiver owns and must close.
    case unixFD(Int32)
    /// `ay`, kept as bytes (the fast path for characteristic values).
    case bytes([UInt8])
    /// `a…`: an array of values of one signature.
    case array(elementSignature: String, [DBusValue])
    /// `a{…}`: a dictionary, in wire order.
    case dictionary(keySignature: String, valueSignature: String, [DBusDictionaryEntry])
    /// `(…)`
    case structure([DBusValue])
    /// `v`
    case variant(DBusValue)

    /// The value's type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let members): "(" + members.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// A readable rendering for logs.
    public var description: String {
        switch self {
        case .byte(let value): "\(value)"
        case .boolean(let value): "\(value)"
        case .int16(let value): "\(value)"
        case .uint16(let value): "\(value)"
        case .int32(let value): "\(value)"
        case .uint32(let value): "\(value)"
        case .int64(let value): "\(value)"
        case .uint64(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .objectPath(let value): value
        case .signature(let value): "g\"\(value)\""
        case .unixFD(let value): "fd \(value)"
        case .bytes(let value): "[" + value.map { String($0, radix: 16) }.joined(separator: " ") + "]"
        case .array(_, let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let members): "(" + members.map(\.description).joined(separator: ", ") + ")"
        case .variant(let value): "<\(value)>"
        }
    }
}

/// One entry of a D-Bus dictionary.
public struct DBusDictionaryEntry: Hashable, Sendable {
    /// The key (a basic type).
    public var key: DBusValue
    public var value: DBusValue

    /// Creates an entry.
    public init(key: DBusValue, value: DBusValue) {
        self.key = key
        self.value = value
    }
}

extension DBusValue {
    /// An `a{sv}` dictionary, the shape of D-Bus property maps and option arguments.
    public static func propertyMap(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            entries: entries.map { DBusDictionaryEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    /// `dictionary(keySignature:valueSignature:entries:)` with the entries labelled.
    public static func dictionary(keySignature: String, valueSignature: String, entries: [DBusDictionaryEntry])
        -> DBusValue
    {
        .dictionary(keySignature: keySignature, valueSignature: valueSignature, entries)
    }

    /// The value inside a variant, or the value itself.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The text of a string, object path or signature.
    public var string: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    /// The value of a boolean.
    public var bool: Bool? {
        if case .boolean(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type as `Int`.
    public var integer: Int? {
        switch unwrapped {
        case .byte(let value): Int(value)
        case .int16(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        default: nil
        }
    }

    /// The bytes of an `ay` (or of an array of bytes).
    public var bytes: [UInt8]? {
        switch unwrapped {
        case .bytes(let bytes): bytes
        case .array("y", let values): values.compactMap { if case .byte(let byte) = $0 { byte } else { nil } }
        default: nil
        }
    }

    /// The elements of an array (strings of `as`, paths of `ao`…).
    public var arrayElements: [DBusValue]? {
        switch unwrapped {
        case .array(_, let values): values
        case .bytes(let bytes): bytes.map(DBusValue.byte)
        default: nil
        }
    }

    /// A dictionary with string keys (`a{sv}`, `a{sa{sv}}`…), variants unwrapped one level.
    public var stringDictionary: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.string else { return nil }
            result[key] = entry.value.unwrapped
        }
        return result
    }

    /// A dictionary keyed by object path (`a{oa{sa{sv}}}`).
    public var objectPathDictionary: [String: DBusValue]? { stringDictionary }
}
