public import Foundation

/// ISO 8601 dates with fractional seconds, in UTC.
public enum ISO8601 {
    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `2026-11-22T03:10:46.123Z`: milliseconds, truncated, as Foundation's `ISO8601FormatStyle`
    /// prints them, but computed directly (civil date from the day number) rather than through the
    /// format-style machinery, which costs microseconds per line on the output hot path.
    public static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        // Years 1–9999 only; anything else (never a sensor's time) goes through Foundation.
        guard interval.isFinite, interval > -62_135_596_800, interval < 253_402_300_800 else {
            return date.formatted(style)
        }
        let whole = interval.rounded(.down)
        let seconds = Int64(whole)
        let millisecond = min(999, Int64(((interval - whole) * 1000).rounded(.down)))
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(days)
        var text = ""
        text.reserveCapacity(24)
        append(year, digits: 4, to: &text)
        text.append("-")
        append(month, digits: 2, to: &text)
        text.append("-")
        append(day, digits: 2, to: &text)
        text.append("T")
        append(secondOfDay / 3600, digits: 2, to: &text)
        text.append(":")
        append(secondOfDay % 3600 / 60, digits: 2, to: &text)
        text.append(":")
        append(secondOfDay % 60, digits: 2, to: &text)
        text.append(".")
        append(millisecond, digits: 3, to: &text)
        text.append("Z")
        return text
    }

    /// Reads a date with or without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        (try? style.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    /// Year, month, day of a day number counted from 1970-01-01 (proleptic Gregorian; Howard
    /// Hinnant's days-to-civil).
    static func civil(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func append(_ value: Int64, digits: Int, to text: inout String) {
        let decimal = String(value)
        if decimal.count < digits { text.append(String(repeating: "0", count: digits - decimal.count)) }
        text.append(decimal)
    }
}

extension Int64 {
    /// Division rounding towards negative infinity.
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
