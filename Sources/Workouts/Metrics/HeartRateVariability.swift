public import Foundation

/// RMSSD and SDNN of the accepted RR intervals.
public struct HeartRateVariability: Hashable, Sendable, Codable {
    /// Root mean square of successive differences, in seconds.
    public var rmssd: Double?
    /// Standard deviation of the intervals, in seconds.
    public var sdnn: Double?
    /// Intervals that passed the artefact rule.
    public var acceptedIntervals: Int
    /// Intervals rejected as artefacts.
    public var rejectedIntervals: Int

    /// Creates a result.
    public init(rmssd: Double?, sdnn: Double?, acceptedIntervals: Int, rejectedIntervals: Int) {
        self.rmssd = rmssd
        self.sdnn = sdnn
        self.acceptedIntervals = acceptedIntervals
        self.rejectedIntervals = rejectedIntervals
    }
}

/// Computes HRV from RR intervals, incrementally, for the whole workout and a rolling window.
///
/// Artefact rule: an interval is accepted when it lies in 0.3–2.0 s and differs by at most 20 %
/// from the previous accepted one. A rejected interval breaks the chain: the next accepted one
/// has no successive difference. After 5 rejections in a row the reference is dropped, so one
/// outlier cannot lock the filter out. SDNN is the sample standard deviation (n − 1).
public struct HeartRateVariabilityAccumulator: Sendable {
    /// Fewer successive differences than this in the rolling window: no RMSSD (one difference is
    /// one beat-to-beat change, not variability; the artefact method also needs 10 intervals).
    public static let minimumRollingDifferences = 10
    /// The rolling window's length in seconds.
    public let windowLength: TimeInterval
    private var previousAccepted: Double?
    private var chainIntact = false
    private var consecutiveRejections = 0
    private var count = 0
    private var mean = 0.0
    private var squaredDeviations = 0.0
    private var squaredDifferences = 0.0
    private var differenceCount = 0
    private var rejected = 0
    private var window: [(end: Date, interval: Double, squaredDifference: Double?)] = []
    private var windowStart = 0

    /// Creates an accumulator with a rolling window of `windowLength` seconds.
    public init(windowLength: TimeInterval = 60) {
        self.windowLength = windowLength
    }

    /// Whether `interval` passes the artefact rule against `previous`.
    public static func accepts(_ interval: Double, previous: Double?) -> Bool {
        guard interval >= 0.3, interval <= 2.0 else { return false }
        guard let previous else { return true }
        return abs(interval - previous) <= 0.2 * previous
    }

    /// Adds one RR interval that ended at `end`.
    public mutating func add(interval: Double, end: Date) {
        guard Self.accepts(interval, previous: previousAccepted) else {
            rejected += 1
            chainIntact = false
            consecutiveRejections += 1
            if consecutiveRejections >= 5 { previousAccepted = nil }
            return
        }
        consecutiveRejections = 0
        var squaredDifference: Double?
        if chainIntact, let previous = previousAccepted {
            let difference = interval - previous
            squaredDifference = difference * difference
            squaredDifferences += difference * difference
            differenceCount += 1
        }
        count += 1
        let delta = interval - mean
        mean += delta / Double(count)
        squaredDeviations += delta * (interval - mean)
        previousAccepted = interval
        chainIntact = true
        window.append((end, interval, squaredDifference))
        trimWindow(before: end.addingTimeInterval(-windowLength))
    }

    private mutating func trimWindow(before cutoff: Date) {
        while windowStart < window.count, window[windowStart].end < cutoff { windowStart += 1 }
        if windowStart > 256, windowStart * 2 > window.count {
            window.removeFirst(windowStart)
            windowStart = 0
        }
    }

    /// HRV over every interval so far.
    public var workout: HeartRateVariability {
        HeartRateVariability(
            rmssd: differenceCount > 0 ? (squaredDifferences / Double(differenceCount)).squareRoot() : nil,
            sdnn: count > 1 ? (squaredDeviations / Double(count - 1)).squareRoot() : nil,
            acceptedIntervals: count, rejectedIntervals: rejected)
    }

    /// HRV over the intervals that ended in the last ``windowLength`` seconds before `date`; RMSSD
    /// only from ``minimumRollingDifferences`` successive differences on.
    public func rolling(at date: Date) -> HeartRateVariability {
        let cutoff = date.addingTimeInterval(-windowLength)
        var intervals: [Double] = []
        var squares = 0.0
        var differences = 0
        var index = windowStart
        while index < window.count {
            let entry = window[index]
            if entry.end >= cutoff, entry.end <= date {
                // A difference counts only when both of its beats are inside the window.
                if let squared = entry.squaredDifference, !intervals.isEmpty {
                    squares += squared
                    differences += 1
                }
                intervals.append(entry.interval)
            }
            index += 1
        }
        let mean = intervals.isEmpty ? 0 : intervals.reduce(0, +) / Double(intervals.count)
        let variance =
            intervals.count > 1
            ? intervals.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(intervals.count - 1) : nil
        return HeartRateVariability(
            rmssd: differences >= Self.minimumRollingDifferences ? (squares / Double(differences)).squareRoot() : nil,
            sdnn: variance.map { $0.squareRoot() }, acceptedIntervals: intervals.count, rejectedIntervals: 0)
    }
}
