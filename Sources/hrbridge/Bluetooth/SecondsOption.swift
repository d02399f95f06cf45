import ArgumentParser

/// A number of seconds from the command line: `.seconds(_:)` traps on NaN, infinity and values
/// past 2^64 seconds, so an option is checked before any wait is made of it.
enum SecondsOption {
    /// A year: longer than any scan, pairing or monitoring run, far below where a `Duration` overflows.
    static let maximum: Double = 365 * 24 * 3600

    /// Refuses `value` unless it is a finite number of seconds above 0 and at most a year.
    static func check(_ value: Double?, _ option: String) throws {
        guard let value else { return }
        guard value > 0, value <= maximum else {
            throw ValidationError("\(option) must be a number of seconds above 0 and at most \(Int(maximum)) (a year)")
        }
    }
}
