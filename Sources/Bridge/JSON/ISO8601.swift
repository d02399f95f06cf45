public import Foundation

/// ISO 8601 dates with fractional seconds, in UTC.
public enum ISO8601 {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `2026-11-22T03:10:46.123Z`.
    public static func format(_ date: Date) -> String { date.formatted(style) }

    /// Reads a date with or without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        (try? style.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
