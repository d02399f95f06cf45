import Foundation

/// Renders JSON values with sorted keys, so output is stable.
public enum JSONText {
    /// One line of JSON for a `JSONSerialization` value.
    public static func render(_ value: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
