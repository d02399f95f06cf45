public import Foundation

/// DFA α1 followed live: the primary strap's beats of the last 2 minutes, a window evaluated
/// every 5 s of beat time on the exact ``BeatClock`` (``HRVAnalysis/window(_:end:power:)``:
/// artefacts corrected within the window, α1 over box sizes 4–16, reliability), and the series
/// of windows the thresholds are read from at the end. A pure value; time comes from the beats.
public struct DFAAlpha1Tracker: Hashable, Sendable {
    /// Every window evaluated so far, in time order (none kept when ``keepsWindows`` is off).
    public private(set) var windows: [HRVWindow] = []
    /// Whether ``windows`` keeps the series; off when a store keeps it instead.
    public var keepsWindows = true {
        didSet { if !keepsWindows { windows = [] } }
    }
    /// The latest window.
    public private(set) var latest: HRVWindow?
    private var timeline = BeatTimeline()
    private var windowing = AlphaWindowing()
    private var powers: [Reading] = []
    private var firstPower = 0

    struct Reading: Hashable, Sendable {
        var date: Date
        var watts: Double
    }

    /// An empty tracker.
    public init() {}

    /// The thresholds of the windows so far.
    public var thresholds: HRVThresholds { HRVThresholds.estimate(windows) }

    /// How far behind the newest power reading one is kept: a window ends at a beat's date, about
    /// now, so it reaches back one window length; the second one is slack for beats dated late.
    static let powerHorizon = 2 * HRVAnalysis.windowLength

    /// Adds a power reading (W) for the windows' mean power.
    public mutating func add(power watts: Double, at date: Date) {
        powers.append(Reading(date: date, watts: watts))
        // Trimmed here too: with no RR arriving (a strap heard only by its broadcast) no window
        // ever trims them, and a power meter would fill memory for the whole ride.
        let cutoff = date.addingTimeInterval(-Self.powerHorizon)
        while firstPower < powers.count, powers[firstPower].date < cutoff { firstPower += 1 }
        compactPowers()
    }

    /// Power readings held, used or not yet dropped (for tests: it must stay bounded).
    var heldPowerReadings: Int { powers.count }

    private mutating func compactPowers() {
        guard firstPower > 1024, firstPower * 2 > powers.count else { return }
        powers.removeFirst(firstPower)
        firstPower = 0
    }

    /// Adds one RR interval (seconds) that ended at `end`; returns the window it completes, if any.
    /// The beat is placed on the exact ``BeatTimeline``; `end` only tells where gaps are.
    public mutating func add(interval seconds: Double, end: Date) -> HRVWindow? {
        let ticks = BeatClock.ticks(seconds: seconds)
        let placed = timeline.place(interval: ticks, end: end)
        guard let due = windowing.add(milliseconds: BeatClock.milliseconds(ticks), end: placed),
            let dueDate = timeline.date(due.end), let windowStart = timeline.date(due.end - AlphaWindowing.length)
        else { return nil }
        while firstPower < powers.count, powers[firstPower].date <= windowStart { firstPower += 1 }
        let watts = powers[firstPower...].filter { $0.date <= dueDate }.map(\.watts)
        var window = HRVAnalysis.window(
            due.intervals, end: BeatClock.seconds(due.end),
            power: watts.isEmpty ? nil : watts.reduce(0, +) / Double(watts.count))
        window.date = dueDate
        latest = window
        if keepsWindows { windows.append(window) }
        compactPowers()
        return window
    }
}
