import Foundation
import Samples
import Sensors

/// Running aggregates of one type: O(1) per sample, with a per-source breakdown.
struct StatisticsAccumulator: Sendable {
    /// How long a discrete value counts for the duration-weighted average at most.
    static let maximumHold: TimeInterval = 5

    struct Aggregate: Sendable {
        var count = 0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var sum = 0.0
        var weightedSum = 0.0
        var weightedSeconds = 0.0
        var lastValue: Double?
        var lastDate: Date?
        var startDate: Date?
        var endDate: Date?

        mutating func add(_ value: Double, start: Date, end: Date) {
            count += 1
            minimum = min(minimum, value)
            maximum = max(maximum, value)
            sum += value
            lastValue = value
            lastDate = start
            startDate = startDate.map { min($0, start) } ?? start
            endDate = endDate.map { max($0, end) } ?? end
        }

        /// Adds a value after holding the previous one until `start`, at most `maximumHold`;
        /// returns what the hold added, for the aggregate over every source.
        mutating func addHolding(_ value: Double, start: Date, end: Date) -> (weightedValue: Double, seconds: Double) {
            var held = (weightedValue: 0.0, seconds: 0.0)
            if let lastValue, let lastDate {
                let hold = min(max(start.timeIntervalSince(lastDate), 0), StatisticsAccumulator.maximumHold)
                held = (lastValue * hold, hold)
                weightedSum += held.weightedValue
                weightedSeconds += hold
            }
            add(value, start: start, end: end)
            return held
        }

        /// Both aggregates as one (one strap's figures heard through two adapters).
        func merging(_ other: Aggregate) -> Aggregate {
            guard other.count > 0 else { return self }
            guard count > 0 else { return other }
            var merged = self
            merged.count += other.count
            merged.minimum = min(minimum, other.minimum)
            merged.maximum = max(maximum, other.maximum)
            merged.sum += other.sum
            merged.weightedSum += other.weightedSum
            merged.weightedSeconds += other.weightedSeconds
            if let date = other.lastDate, lastDate.map({ date >= $0 }) ?? true {
                merged.lastValue = other.lastValue
                merged.lastDate = date
            }
            merged.startDate = [startDate, other.startDate].compactMap { $0 }.min()
            merged.endDate = [endDate, other.endDate].compactMap { $0 }.max()
            return merged
        }

        func statistics(type: QuantityType) -> Statistics {
            var result = Statistics(type: type)
            result.sampleCount = count
            result.startDate = startDate
            result.endDate = endDate
            guard count > 0 else { return result }
            switch type.aggregationStyle {
            case .cumulative:
                result.sum = sum
            case .discrete:
                result.minimum = minimum
                result.maximum = maximum
                result.average = sum / Double(count)
                result.durationWeightedAverage = weightedSeconds > 0 ? weightedSum / weightedSeconds : nil
                result.mostRecent = lastValue
                result.mostRecentDate = lastDate
            }
            return result
        }
    }

    let type: QuantityType
    private(set) var overall = Aggregate()
    private(set) var bySource: [SampleSource: Aggregate] = [:]

    init(type: QuantityType) { self.type = type }

    mutating func add(_ sample: QuantitySample) {
        let value = sample.canonicalValue
        // In place: one lookup of the source, no copy of its aggregate out and back.
        let held = bySource[sample.source, default: Aggregate()].addHolding(value, start: sample.start, end: sample.end)
        overall.weightedSum += held.weightedValue
        overall.weightedSeconds += held.seconds
        overall.add(value, start: sample.start, end: sample.end)
    }

    /// The statistics over every source; for a cumulative type, the amount of one source only —
    /// `primary` (the workout's source for the type), never a sum over sources: a chest strap and an
    /// arm band on one person both count the same kilojoules (HealthKit's rule: one source per
    /// interval, by priority). Each source's own figures stay in `bySource`. A per-device type (a
    /// battery) has no figures across devices: the top level carries the primary source's last
    /// value only, each device's own in `bySource`.
    func statistics(primary: SampleSource?) -> Statistics {
        var result = overall.statistics(type: type)
        if type.aggregationStyle == .cumulative, let primary, let counted = strap(primary), counted.count > 0 {
            result = counted.statistics(type: type)
        }
        if type.isPerDevice {
            let own = primary.flatMap { bySource[$0] }?.statistics(type: type)
            result.minimum = nil
            result.maximum = nil
            result.average = nil
            result.durationWeightedAverage = nil
            result.mostRecent = own?.mostRecent
            result.mostRecentDate = own?.mostRecentDate
        }
        result.bySource = bySource.mapValues { $0.statistics(type: type) }
        return result
    }

    func sum(for source: SampleSource) -> Double? {
        strap(source).flatMap { $0.count > 0 ? $0.sum : nil }
    }

    /// The figures of `source`'s strap through every adapter that heard it: a strap that moved to
    /// another adapter or gateway mid-workout is one source of its amounts, not two.
    private func strap(_ source: SampleSource) -> Aggregate? {
        let heard = bySource.filter { $0.key.address == source.address }.values
        return heard.isEmpty ? nil : heard.reduce(Aggregate()) { $0.merging($1) }
    }
}
