import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes diagnostics to standard error, one line each.
enum StandardError {
    static func write(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// ISO 8601 dates with fractional seconds, in UTC.
enum ISO8601 {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    static func format(_ date: Date) -> String { date.formatted(style) }

    static func parse(_ text: String) -> Date? {
        (try? style.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}

/// Renders JSON values with sorted keys, so output is stable.
enum JSONText {
    static func render(_ value: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
