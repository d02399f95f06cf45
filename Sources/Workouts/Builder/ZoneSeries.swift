import Foundation
import Samples

/// The primary source's samples of a zone type, compact (16 bytes each), with time in zone.
///
/// The samples of the last ``WorkoutCollector/zoneReplayHorizon`` are kept so a backdated pause,
/// activity boundary or late sample can replay their attribution; older ones are settled: their
/// attribution is folded into ``settled`` and they are dropped, so memory stays flat in a long workout.
struct ZoneSeries: Sendable {
    /// Samples settled at once: dropping from the front of an array moves the rest, so in batches.
    static let settleBatch = 256

    let configuration: ZoneConfiguration?
    var dates: [Date] = []
    var values: [Double] = []
    var currentPosition: Int?
    /// Everything attributed so far.
    var tally: ZoneTally
    /// What the settled samples attributed: where a replay starts.
    var settled: ZoneTally
    /// Samples settled so far.
    var settledCount = 0

    init(configuration: ZoneConfiguration?) {
        self.configuration = configuration
        tally = ZoneTally(zones: (configuration?.boundaries.count ?? -1) + 1)
        settled = tally
    }

    var durations: [Double] { tally.durations }
    var coveredSeconds: Double { tally.coveredSeconds }

    /// Inserts a backdated sample after any of the same date, found by binary search; its index,
    /// or nil when it falls before the kept samples (already settled).
    mutating func insertSorted(date: Date, value: Double) -> Int? {
        if settledCount > 0, let first = dates.first, date < first { return nil }
        var low = 0
        var high = dates.count
        while low < high {
            let middle = (low + high) / 2
            if dates[middle] > date { high = middle } else { low = middle + 1 }
        }
        dates.insert(date, at: low)
        values.insert(value, at: low)
        return low
    }

    /// Back to what the settled samples attributed, for a replay of the kept ones.
    mutating func resetToSettled() { tally = settled }

    /// Appends a sample; returns a zone update when its zone differs from the previous sample's.
    mutating func append(date: Date, value: Double, type: QuantityType) -> ZoneUpdate? {
        dates.append(date)
        values.append(value)
        guard let configuration else { return nil }
        let position = configuration.position(of: value)
        guard position != currentPosition else { return nil }
        let previous = currentPosition
        currentPosition = position
        let group = group(activity: nil)
        return ZoneUpdate(
            type: type, current: group.durations[position], previous: previous.map { group.durations[$0] },
            group: group, lastSampleProcessedDate: date)
    }

    /// Attributes the running parts of `[from, to)` at `value` (`sign` -1 takes them back);
    /// returns the seconds attributed.
    mutating func attribute(
        value: Double, from: Date, to: Date, timeline: PauseTimeline, activities: [ActivityRecord], sign: Double = 1
    ) -> Double {
        tally.attribute(
            position: configuration?.position(of: value), from: from, to: to, timeline: timeline,
            activities: activities, sign: sign)
    }

    /// How many kept samples lie wholly before `cutoff` and may be settled (a batch at least).
    func settleableCount(before cutoff: Date) -> Int {
        guard dates.count > Self.settleBatch, dates[Self.settleBatch - 1] < cutoff else { return 0 }
        var low = Self.settleBatch
        var high = dates.count - 1
        while low < high {
            let middle = (low + high) / 2
            if dates[middle] < cutoff { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Drops the first `count` samples, whose attribution the caller folded into ``settled``.
    mutating func dropSettled(_ count: Int) {
        dates.removeFirst(count)
        values.removeFirst(count)
        settledCount += count
    }

    func group(activity: Int?) -> ZoneGroup {
        let configuration = configuration!
        let seconds = activity.map { tally.activityDurations[$0] ?? tally.durations.map { _ in 0 } } ?? tally.durations
        return ZoneGroup(
            configuration: configuration,
            durations: zip(configuration.zones, seconds).map { ZoneDuration(zone: $0, duration: $1) })
    }
}

/// Seconds attributed to each zone, overall and per activity, and the seconds covered.
struct ZoneTally: Sendable {
    var durations: [Double]
    var activityDurations: [Int: [Double]] = [:]
    var coveredSeconds = 0.0

    init(zones: Int) { durations = Array(repeating: 0, count: max(zones, 0)) }

    /// Attributes the running parts of `[from, to)` to the zone at `position` (none when nil),
    /// or with `sign` -1 takes them back; returns the running seconds, counted in a zone or not.
    mutating func attribute(
        position: Int?, from: Date, to: Date, timeline: PauseTimeline, activities: [ActivityRecord], sign: Double = 1
    ) -> Double {
        var total = 0.0
        timeline.forEachActiveSegment(from: from, to: to) { start, end in
            let seconds = end.timeIntervalSince(start) * sign
            total += seconds
            guard let position else { return }
            durations[position] += seconds
            coveredSeconds += seconds
            for index in activities.indices.reversed() {
                let activity = activities[index]
                if let activityEnd = activity.end, activityEnd <= start { break }
                let overlapStart = max(activity.start, start)
                let overlapEnd = min(activity.end ?? end, end)
                if overlapEnd > overlapStart {
                    activityDurations[index, default: durations.map { _ in 0 }][position] +=
                        overlapEnd.timeIntervalSince(overlapStart) * sign
                }
            }
        }
        return total
    }
}
