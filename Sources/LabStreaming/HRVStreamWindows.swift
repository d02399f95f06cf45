public import Foundation
public import GATT
public import Workouts

/// A strap's heart-rate variability as its heart-rate frames arrive, for its HRV stream: each
/// frame's beats placed as the RR stream stamps them (the last ending at the frame's arrival, each
/// earlier one an interval before) and fed to a ``DFAAlpha1Tracker``, which evaluates the last
/// 2 minutes of beats every 5 s of beats. A pure value.
public struct HRVStreamWindows: Sendable {
    private var tracker: DFAAlpha1Tracker

    /// No beats yet.
    public init() {
        tracker = DFAAlpha1Tracker()
        tracker.keepsWindows = false
    }

    /// Takes one frame's RR intervals (oldest first) that arrived at `receivedAt`; returns the
    /// windows they complete, each with its end's date.
    public mutating func add(_ intervals: [RRInterval], receivedAt: Date) -> [HRVWindow] {
        var end = receivedAt.addingTimeInterval(-intervals.dropFirst().reduce(0) { $0 + $1.seconds })
        var windows: [HRVWindow] = []
        for (index, interval) in intervals.enumerated() {
            if index > 0 { end = end.addingTimeInterval(interval.seconds) }
            if let window = tracker.add(interval: interval.seconds, end: end) { windows.append(window) }
        }
        return windows
    }
}
