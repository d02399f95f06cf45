import Foundation
import JSONSupport
import Testing
import Wire

/// What `--json` commands print, read as the types that wrote it.
enum JSONLines {
    /// The non-empty lines of `text`.
    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// `line` as `Value`; throws naming the type, with the line, when it is not one.
    static func decode<Value: Decodable>(_ type: Value.Type, _ line: String) throws -> Value {
        do {
            return try JSONText.decode(type, from: Data(line.utf8))
        } catch {
            throw DecodingFailure(description: "not a \(type): \(line)\n\(error)")
        }
    }

    /// Each line's tags (`kind`, `session`, `sensor`), the rest as free-form JSON; throws on a line
    /// that is not a tagged message.
    static func tagged(_ lines: some Sequence<String>) throws -> [TaggedJSON<JSONValue>] {
        try lines.map { try decode(TaggedJSON<JSONValue>.self, $0) }
    }

    /// The lines tagged `kind`, each read as `payload`.
    static func messages<Payload: Decodable>(
        _ lines: some Sequence<String>, _ kind: LiveMessageKind, as payload: Payload.Type
    ) throws -> [TaggedJSON<Payload>] {
        try zip(lines, try tagged(lines)).filter { $0.1.kind == kind }.map {
            try decode(TaggedJSON<Payload>.self, $0.0)
        }
    }

    /// A line that is not what it should be.
    struct DecodingFailure: Error, CustomStringConvertible {
        var description: String
    }
}
