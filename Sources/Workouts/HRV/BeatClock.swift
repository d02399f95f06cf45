public import Foundation

/// Beat times on an exact integer clock, so a beat that ends on a window's edge is on it, not
/// a rounding error beside it.
///
/// One tick is 1/128,000 s: whole milliseconds (×128) and the straps' 1/1024 s units (×125) both
/// land on whole ticks, so sums of intervals never drift and comparisons at window edges are exact.
public enum BeatClock {
    /// Ticks in one second.
    public static let ticksPerSecond: Int64 = 128_000

    /// `seconds` in ticks, to the nearest tick.
    public static func ticks(seconds: Double) -> Int64 { Int64((seconds * Double(ticksPerSecond)).rounded()) }

    /// `milliseconds` in ticks, to the nearest tick.
    public static func ticks(milliseconds: Double) -> Int64 {
        Int64((milliseconds * Double(ticksPerSecond / 1000)).rounded())
    }

    /// `ticks` in milliseconds (exact for whole milliseconds and 1/1024 s units).
    public static func milliseconds(_ ticks: Int64) -> Double { Double(ticks) / Double(ticksPerSecond / 1000) }

    /// `ticks` in seconds.
    public static func seconds(_ ticks: Int64) -> Double { Double(ticks) / Double(ticksPerSecond) }
}

/// Places beats on the exact clock: each beat ends where the one before ended plus its own
/// interval, as the strap counted it. Only when the beats' dates say time went on without them
/// (a dropped link, beats the strap did not report) does the timeline follow the dates instead.
///
/// The same rule runs live (``DFAAlpha1Tracker``) and over a stored workout (`hrv analyze`), so
/// both see the same windows.
public struct BeatTimeline: Hashable, Sendable {
    /// How far the dates may stray from the summed intervals (receipt jitter, clock drift)
    /// before the beats are taken to have left a gap.
    public static let gapTolerance = BeatClock.ticksPerSecond * 2

    /// The start of the first beat.
    public private(set) var origin: Date?
    /// Where the last beat ended, ticks after the origin.
    public private(set) var lastEnd: Int64 = 0

    /// An empty timeline.
    public init() {}

    /// Places a beat of `interval` ticks whose sample says it ended at `end`; returns its end,
    /// ticks after the origin.
    public mutating func place(interval: Int64, end: Date) -> Int64 {
        guard let origin else {
            origin = end.addingTimeInterval(-BeatClock.seconds(interval))
            lastEnd = interval
            return interval
        }
        let expected = lastEnd + interval
        let dated = BeatClock.ticks(seconds: end.timeIntervalSince(origin))
        // Beats never go back in time; a date far from the sum is a gap (or a clock set).
        lastEnd = abs(dated - expected) > Self.gapTolerance ? max(dated, lastEnd + 1) : expected
        return lastEnd
    }

    /// The date of `ticks` after the origin.
    public func date(_ ticks: Int64) -> Date? { origin?.addingTimeInterval(BeatClock.seconds(ticks)) }
}
