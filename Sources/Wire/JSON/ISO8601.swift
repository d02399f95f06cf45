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

    /// Reads a date with or without fractional seconds: any RFC 3339 `date-time` (what OpenAPI's
    /// `format: date-time` promises a client may send: years 0000–9999, any number of fraction
    /// digits, any offset), else what Foundation's ISO 8601 style reads.
    public static func parse(_ text: String) -> Date? {
        rfc3339(text) ?? (try? style.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    /// `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)`, `T` and `Z` in either case; a leap second
    /// (`:60`) is read as the last second of its minute. Nil for anything else or a date that
    /// does not exist (February 30th).
    static func rfc3339(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 64 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54 || bytes[10] == 0x74, bytes[13] == 0x3A,
            bytes[16] == 0x3A, let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour <= 23,
            minute <= 59, second <= 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if bytes[index] == 0x2E {
            index += 1
            var scale = 0.1
            let digitsStart = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > digitsStart else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case 0x5A, 0x7A:
            guard index + 1 == bytes.count else { return nil }
        case 0x2B, 0x2D:
            guard index + 6 == bytes.count, bytes[index + 3] == 0x3A, let hours = number(index + 1, 2),
                let minutes = number(index + 4, 2), hours <= 23, minutes <= 59
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == 0x2D ? -1 : 1)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The day number counted from 1970-01-01 of a civil date (Howard Hinnant's days-from-civil).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear.floorDivided(by: 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
