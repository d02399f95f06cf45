import Foundation
import Samples

/// The primary source's samples of a zone type, compact (16 bytes each), with time in zone.
///
/// The series is kept so a backdated pause or activity boundary can replay the attribution.
struct ZoneSeries: Sendable {
    let configuration: ZoneConfiguration?
    var dates: [Date] = []
    var values: [Double] = []
    var currentPosition: Int?
    var durations: [Double]
    var activityDurations: [Int: [Double]] = [:]
    var coveredSeconds = 0.0

    init(configuration: ZoneConfiguration?) {
        self.configuration = configuration
        durations = Array(repeating: 0, count: (configuration?.boundaries.count ?? -1) + 1)
    }

    mutating func insertSorted(date: Date, value: Double) {
        let index = dates.firstIndex { $0 > date } ?? dates.count
        dates.insert(date, at: index)
        values.insert(value, at: index)
    }

    mutating func resetDurations() {
        for index in durations.indices { durations[index] = 0 }
        activityDurations = [:]
        coveredSeconds = 0
    }

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

    /// Attributes the running parts of `[from, to)` at `value`; returns the seconds attributed.
    mutating func attribute(
        value: Double, from: Date, to: Date, timeline: PauseTimeline, activities: [ActivityRecord]
    ) -> Double {
        let position = configuration?.position(of: value)
        var total = 0.0
        timeline.forEachActiveSegment(from: from, to: to) { start, end in
            let seconds = end.timeIntervalSince(start)
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
                        overlapEnd.timeIntervalSince(overlapStart)
                }
            }
        }
        return total
    }

    func group(activity: Int?) -> ZoneGroup {
        let configuration = configuration!
        let seconds = activity.map { activityDurations[$0] ?? durations.map { _ in 0 } } ?? durations
        return ZoneGroup(
            configuration: configuration,
            durations: zip(configuration.zones, seconds).map { ZoneDuration(zone: $0, duration: $1) })
    }
}
