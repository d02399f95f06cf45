public import Foundation

/// DFA α1 followed live: the primary strap's beats of the last 2 minutes, a window evaluated
/// every 5 s of beat time (``HRVAnalysis/window(_:end:power:)``: artefacts corrected within the
/// window, α1 over box sizes 4–16, reliability), and the series of windows the thresholds are
/// read from at the end. A pure value; time comes from the beats.
public struct DFAAlpha1Tracker: Hashable, Sendable {
    /// Every window evaluated so far, in time order.
    public private(set) var windows: [HRVWindow] = []
    private var beats: [Beat] = []
    private var first = 0
    private var powers: [Reading] = []
    private var firstPower = 0
    private var origin: Date?
    private var nextEvaluation: Date?

    struct Beat: Hashable, Sendable {
        var end: Date
        var milliseconds: Double
    }

    struct Reading: Hashable, Sendable {
        var date: Date
        var watts: Double
    }

    /// An empty tracker.
    public init() {}

    /// The latest window.
    public var latest: HRVWindow? { windows.last }

    /// The thresholds of the windows so far.
    public var thresholds: HRVThresholds { HRVThresholds.estimate(windows) }

    /// Adds a power reading (W) for the windows' mean power.
    public mutating func add(power watts: Double, at date: Date) {
        powers.append(Reading(date: date, watts: watts))
    }

    /// Adds one RR interval (seconds) that ended at `end`; returns the window it completes, if any.
    public mutating func add(interval seconds: Double, end: Date) -> HRVWindow? {
        if origin == nil {
            origin = end.addingTimeInterval(-seconds)
            nextEvaluation = origin!.addingTimeInterval(HRVAnalysis.windowLength)
        }
        beats.append(Beat(end: end, milliseconds: seconds * 1000))
        guard let origin, let due = nextEvaluation, end >= due else { return nil }
        let windowStart = due.addingTimeInterval(-HRVAnalysis.windowLength)
        while first < beats.count, beats[first].end <= windowStart { first += 1 }
        while firstPower < powers.count, powers[firstPower].date <= windowStart { firstPower += 1 }
        let raw = beats[first...].filter { $0.end <= due }.map(\.milliseconds)
        let watts = powers[firstPower...].filter { $0.date <= due }.map(\.watts)
        var window = HRVAnalysis.window(
            raw, end: due.timeIntervalSince(origin),
            power: watts.isEmpty ? nil : watts.reduce(0, +) / Double(watts.count))
        window.date = due
        windows.append(window)
        // The next window ends 5 s later, or at the next beat after a gap.
        var next = due.addingTimeInterval(HRVAnalysis.step)
        while next <= end { next = next.addingTimeInterval(HRVAnalysis.step) }
        nextEvaluation = next
        compact()
        return window
    }

    /// Drops what no window can reach any more.
    private mutating func compact() {
        if first > 1024, first * 2 > beats.count {
            beats.removeFirst(first)
            first = 0
        }
        if firstPower > 1024, firstPower * 2 > powers.count {
            powers.removeFirst(firstPower)
            firstPower = 0
        }
    }
}
