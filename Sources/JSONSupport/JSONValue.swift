/// A JSON document of unknown shape, keeping booleans and numbers apart so validation can name
/// each mistake (plan and scenario files, a request's nested plan, the OpenAPI document).
public enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Reads any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Writes it back as it was read.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// "a number", "an object"…: what a message says was found instead.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The members, when it is an object.
    public var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
    /// The elements, when it is an array.
    public var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    /// The text, when it is a string.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The number, when it is one (never a boolean).
    public var number: Double? { if case .number(let value) = self { value } else { nil } }
    /// The number, when it is a whole one that fits an `Int`.
    public var integer: Int? { if case .number(let value) = self { Int(exactly: value) } else { nil } }
    /// The flag, when it is a boolean.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
}
