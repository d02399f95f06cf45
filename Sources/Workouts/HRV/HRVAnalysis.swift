public import Foundation

/// One DFA α1 window: the beats of the 120 s before `end`.
public struct HRVWindow: Hashable, Sendable, Codable {
    /// Seconds from the first beat to the window's end.
    public var end: Double
    /// When the window ended, for a live or stored workout (nil for a series without dates).
    public var date: Date?
    /// Beats in the window after correction.
    public var beats: Int
    /// DFA α1 of the corrected window; nil with fewer than ``HRVAnalysis/minimumBeats`` beats.
    public var alpha1: Double?
    /// Artefacts found in the window, percent of its intervals.
    public var artefactPercent: Double
    /// Artefacts found in the window, by kind (nil in windows stored before they were counted).
    public var artefacts: RRArtefactCounts?
    /// At most ``HRVAnalysis/reliableArtefactPercent`` artefacts: the value can be trusted.
    public var isReliable: Bool
    /// Mean heart rate of the corrected window, bpm.
    public var heartRate: Double
    /// Mean power over the window, W, when power was recorded.
    public var power: Double?
    /// RMSSD of the corrected window, ms (nil under 3 intervals, and in windows stored before it was kept).
    public var rmssd: Double?
}

/// The whole HRV analysis of an RR series: artefacts found and corrected (Lipponen & Tarvainen),
/// time-domain figures of the corrected series, DFA α1 over sliding 2-minute windows every 5 s,
/// and the thresholds α1 gives. Pure; intervals in milliseconds.
public struct HRVAnalysis: Hashable, Sendable {
    /// The window's length, seconds.
    public static let windowLength = 120.0
    /// How often a window ends, seconds.
    public static let step = 5.0
    /// Fewer corrected beats than this in a window: no α1.
    public static let minimumBeats = 100
    /// More artefacts than this (percent) in a window: α1 kept but marked unreliable.
    public static let reliableArtefactPercent = 5.0
    /// Intervals the correction can mend, ms: short extra beats and missed ones are its work (it
    /// merges and splits them), but one longer than 5 s (a corrupt frame's 65535/1024 s, a link
    /// lost for a while) is a gap, no beat of the window: counted as a long/short artefact and left out.
    public static let plausibleIntervals = Double.leastNonzeroMagnitude...5000.0

    /// The correction of the whole series, its ``gaps`` left out.
    public var correction: RRArtefactCorrection.Result
    /// Intervals of the series outside ``plausibleIntervals`` (over 5 s: a gap, no beat), left out
    /// of ``correction`` and ``timeDomain`` as each window leaves them out, to be counted as artefacts.
    public var gaps: Int
    /// Time-domain figures of the corrected series.
    public var timeDomain: TimeDomainHRV?
    /// The α1 windows, in time order.
    public var windows: [HRVWindow]
    public var thresholds: HRVThresholds

    /// Analyses `intervals` (ms, in order); `power(t)` is the mean power over the window ending t
    /// seconds after the first beat, when there is a power meter.
    /// `ends`, when given, are the beats' places on the ``BeatTimeline`` (ticks after the first
    /// beat's start), so gaps in a recording are gaps here too.
    public init(intervals: [Double], ends: [Int64]? = nil, power: ((Double, Double) -> Double?)? = nil) {
        // As in each window: the correction would split a 64 s gap into "missed" beats.
        let plausible = intervals.filter { Self.plausibleIntervals.contains($0) }
        gaps = intervals.count - plausible.count
        correction = RRArtefactCorrection.correct(plausible)
        timeDomain = TimeDomainHRV(correction.corrected)
        windows = Self.windows(intervals, ends: ends, power: power)
        thresholds = HRVThresholds.estimate(windows)
    }

    /// α1 windows over `intervals`: each window's raw intervals are corrected on their own, as a
    /// live computation would see them. Beats end where the intervals sum to (exactly, on
    /// ``BeatClock`` ticks), or at `ends` (ticks after the first beat's start) when given, as
    /// ``BeatTimeline`` placed them.
    public static func windows(
        _ intervals: [Double], ends: [Int64]? = nil, power: ((Double, Double) -> Double?)? = nil
    ) -> [HRVWindow] {
        precondition(ends == nil || ends?.count == intervals.count, "one end per interval")
        var windowing = AlphaWindowing()
        var result: [HRVWindow] = []
        var time: Int64 = 0
        for (index, interval) in intervals.enumerated() {
            time = ends?[index] ?? time + BeatClock.ticks(milliseconds: interval)
            guard let due = windowing.add(milliseconds: interval, end: time) else { continue }
            let end = BeatClock.seconds(due.end)
            result.append(window(due.intervals, end: end, power: power?(end - windowLength, end)))
        }
        return result
    }

    /// One window's figures.
    ///
    /// Intervals outside ``plausibleIntervals`` are left out before the correction, which would
    /// take a 64 s one for missed beats and split it, and whose thresholds it would skew; each is
    /// counted as a long/short artefact of the window, so a window with one does not pass as clean.
    public static func window(_ raw: [Double], end: Double, power: Double?) -> HRVWindow {
        let plausible = raw.filter { plausibleIntervals.contains($0) }
        let implausible = raw.count - plausible.count
        let correction = RRArtefactCorrection.correct(plausible)
        let corrected = correction.corrected
        var artefacts = correction.artefacts.counts
        artefacts.longShort += implausible
        let artefactPercent =
            raw.isEmpty ? 0 : 100 * Double(correction.artefacts.count + implausible) / Double(raw.count)
        let mean = corrected.isEmpty ? 0 : corrected.reduce(0, +) / Double(corrected.count)
        let alpha1 = corrected.count >= minimumBeats ? DetrendedFluctuation.alpha(corrected) : nil
        return HRVWindow(
            end: end, date: nil, beats: corrected.count, alpha1: alpha1, artefactPercent: artefactPercent,
            artefacts: artefacts, isReliable: alpha1 != nil && artefactPercent <= reliableArtefactPercent,
            heartRate: mean > 0 ? 60_000 / mean : 0, power: power, rmssd: TimeDomainHRV(corrected)?.rmssd)
    }
}
