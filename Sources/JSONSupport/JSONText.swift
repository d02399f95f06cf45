public import Foundation

/// The one way this project writes JSON: keys sorted bytewise (a stable order a reader can rely
/// on and a diff can compare), slashes unescaped, one line unless asked for pretty output.
public enum JSONText {
    private static let compact: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    private static let pretty: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return encoder
    }()

    /// One line of JSON. Throws only for a number JSON cannot hold (NaN, infinity).
    public static func line(_ value: some Encodable) throws -> String {
        String(decoding: try compact.encode(value), as: UTF8.self)
    }

    /// Indented JSON, for files people read and edit.
    public static func pretty(_ value: some Encodable) throws -> Data { try pretty.encode(value) }

    /// Reads a typed value; errors are `DecodingError`, or what the type's own decoder throws.
    public static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try JSONDecoder().decode(type, from: data)
    }
}
