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

    /// The correction of the whole series.
    public var correction: RRArtefactCorrection.Result
    /// Time-domain figures of the corrected series.
    public var timeDomain: TimeDomainHRV?
    /// The α1 windows, in time order.
    public var windows: [HRVWindow]
    public var thresholds: HRVThresholds

    /// Analyses `intervals` (ms, in order); `power(t)` is the mean power over the window ending t
    /// seconds after the first beat, when there is a power meter.
    public init(intervals: [Double], power: ((Double, Double) -> Double?)? = nil) {
        correction = RRArtefactCorrection.correct(intervals)
        timeDomain = TimeDomainHRV(correction.corrected)
        windows = Self.windows(intervals, power: power)
        thresholds = HRVThresholds.estimate(windows)
    }

    /// α1 windows over `intervals`: each window's raw intervals are corrected on their own, as a
    /// live computation would see them.
    public static func windows(_ intervals: [Double], power: ((Double, Double) -> Double?)? = nil) -> [HRVWindow] {
        var ends: [Double] = []
        ends.reserveCapacity(intervals.count)
        var time = 0.0
        for interval in intervals {
            time += interval / 1000
            ends.append(time)
        }
        guard let last = ends.last, last >= windowLength else { return [] }
        var result: [HRVWindow] = []
        var first = 0
        var upper = 0
        var end = windowLength
        while end <= last + 1e-9 {
            while upper < ends.count, ends[upper] <= end { upper += 1 }
            while first < upper, ends[first] <= end - windowLength { first += 1 }
            result.append(window(Array(intervals[first..<upper]), end: end, power: power?(end - windowLength, end)))
            end += step
        }
        return result
    }

    /// One window's figures.
    public static func window(_ raw: [Double], end: Double, power: Double?) -> HRVWindow {
        let correction = RRArtefactCorrection.correct(raw)
        let corrected = correction.corrected
        let mean = corrected.isEmpty ? 0 : corrected.reduce(0, +) / Double(corrected.count)
        let alpha1 = corrected.count >= minimumBeats ? DetrendedFluctuation.alpha(corrected) : nil
        return HRVWindow(
            end: end, date: nil, beats: corrected.count, alpha1: alpha1, artefactPercent: correction.artefactPercent,
            artefacts: correction.artefacts.counts,
            isReliable: alpha1 != nil && correction.artefactPercent <= reliableArtefactPercent,
            heartRate: mean > 0 ? 60_000 / mean : 0, power: power)
    }
}
