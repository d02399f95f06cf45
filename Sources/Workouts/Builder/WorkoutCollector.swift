public import Foundation
public import Samples
public import Sensors

/// The live builder's logic as a pure value: statistics, events, activities, zones, HRV and energy.
///
/// Every call is synchronous and takes explicit dates, so tests drive it without clocks or tasks.
/// Statistics are O(1) per sample. Zone time and estimated energy are attributed incrementally;
/// a backdated pause, resume or activity boundary replays the compact zone series once.
///
/// **Attribution rule** (time in zone, estimated energy): each sample of the zone type from the
/// primary source covers the time from its start until the next such sample, at most
/// ``maximumSampleSpacing`` seconds; longer gaps are counted in no zone. Paused time is never
/// covered. The last sample is closed at ``end(at:)``. So the zone durations sum exactly to the
/// covered time, which is what ``coveredTime(for:)`` reports.
///
/// **Replay horizon**: the samples of the last ``zoneReplayHorizon`` seconds (before the newest)
/// are kept for replays; older ones are settled. A pause, activity boundary or sample dated before
/// the kept samples changes the attribution from the oldest kept sample on: zone time before it
/// stays as attributed (a sample that old still counts in the statistics, not in the zones).
/// Memory for zones stays flat however long the workout runs.
public struct WorkoutCollector: Sendable {
    /// Where the collector is in its life.
    public enum Phase: Hashable, Sendable {
        /// Before `begin`.
        case notStarted
        /// Collecting samples and events.
        case collecting
        /// Collection ended; ready to finish or discard.
        case ended
        /// Finished into a ``Workout``.
        case finished
        case discarded
    }

    /// How long one zone sample covers at most, in seconds.
    public var maximumSampleSpacing: TimeInterval = 5
    /// How far behind the newest sample a backdated change still replays zone time exactly, in seconds.
    public var zoneReplayHorizon: TimeInterval = 300

    /// The workout's configuration.
    public let configuration: WorkoutConfiguration
    /// The athlete.
    public let profile: UserProfile?
    /// The current phase.
    public private(set) var phase = Phase.notStarted
    /// Start of collection.
    public private(set) var startDate: Date?
    /// End of collection.
    public private(set) var endDate: Date?
    /// Events in date order.
    public private(set) var events: [WorkoutEvent] = []
    /// Metadata added so far.
    public private(set) var metadata: [String: String] = [:]
    /// The primary source of each type: the first to deliver, unless set.
    public private(set) var primarySources: [QuantityType: SampleSource] = [:]

    /// The workout's identifier (kept across crash recovery).
    public let id: UUID
    private var timeline = PauseTimeline()
    private var statisticsByType: [QuantityType: StatisticsAccumulator] = [:]
    private var activities: [ActivityRecord] = []
    private var zoneConfigurations: [QuantityType: ZoneConfiguration] = [:]
    private var zoneSeries: [QuantityType: ZoneSeries] = [:]
    private var heartRateVariability = HeartRateVariabilityAccumulator()
    private var alpha1 = DFAAlpha1Tracker()
    private var energyEstimator: EnergyEstimator?
    private var estimatedKilojoules = 0.0
    /// The estimated energy of the settled heart-rate samples: where a replay starts.
    private var settledKilojoules = 0.0
    private var sourcesSeen: [SampleSource] = []

    /// Creates a collector; preferred zones come from the profile unless custom zones are set.
    public init(configuration: WorkoutConfiguration, profile: UserProfile? = nil, id: UUID = UUID()) {
        self.id = id
        self.configuration = configuration
        self.profile = profile
        energyEstimator = EnergyEstimator(profile: profile)
        for type in [QuantityType.heartRate, .cyclingPower] {
            if let zones = profile?.preferredZoneConfiguration(for: type) { zoneConfigurations[type] = zones }
        }
    }

    // MARK: Set-up

    /// Sets custom zones for this workout only; `nil` restores the preferred zones. Before `begin` only.
    public mutating func setCustomZoneConfiguration(
        _ zones: ZoneConfiguration?, for type: QuantityType
    ) throws(WorkoutBuilderError) {
        guard phase == .notStarted else { throw .zonesLockedAfterBeginCollection }
        zoneConfigurations[type] = zones ?? profile?.preferredZoneConfiguration(for: type)
    }

    /// The zones in force for `type`.
    public func zoneConfiguration(for type: QuantityType) -> ZoneConfiguration? { zoneConfigurations[type] }

    /// Makes `source` the primary source of `type` (zones, HRV and energy follow it).
    public mutating func setPrimarySource(_ source: SampleSource, for type: QuantityType) {
        primarySources[type] = source
    }

    /// Begins collection at `date`.
    public mutating func begin(at date: Date) throws(WorkoutBuilderError) {
        try requireNotClosed()
        guard phase == .notStarted else { throw .collectionAlreadyStarted }
        phase = .collecting
        startDate = date
        for (type, configuration) in zoneConfigurations {
            zoneSeries[type] = ZoneSeries(configuration: configuration)
        }
    }

    // MARK: Samples

    /// Adds samples; returns the updates they cause: the types collected (first; left out when
    /// `reportingCollected` is false, as for a builder whose readers skip them), zone changes, HRV windows.
    public mutating func add(
        _ samples: [QuantitySample], reportingCollected: Bool = true
    ) throws(WorkoutBuilderError) -> [BuilderUpdate] {
        let start = try requireCollecting()
        // All or nothing: a refused batch must not leave some of its samples counted.
        if let early = samples.first(where: { $0.end < start }) { throw .dateBeforeStart(early.end) }
        var updates: [BuilderUpdate] = []
        if reportingCollected, !samples.isEmpty { updates.append(.collected(Set(samples.map(\.type)))) }
        for sample in samples {
            if !sourcesSeen.contains(sample.source) { sourcesSeen.append(sample.source) }
            statisticsByType[sample.type, default: StatisticsAccumulator(type: sample.type)].add(sample)
            // A sample that began before the workout (an energy increment since the reading
            // before) counts in the activity the workout began with, as it counts in the workout.
            if let activity = activityIndex(containing: max(sample.start, start)) {
                activities[activity].statistics[sample.type, default: StatisticsAccumulator(type: sample.type)]
                    .add(sample)
            }
            let known = primarySources[sample.type]
            var primary = known ?? sample.source
            // The primary strap reached through another adapter (a gateway's node, another hci):
            // a source is its adapter and address, and the primary is the strap.
            if primary != sample.source, primary.address == sample.source.address { primary = sample.source }
            if known != primary { primarySources[sample.type] = primary }
            guard sample.source == primary else { continue }
            if sample.type == .heartbeatSeries {
                heartRateVariability.add(interval: sample.canonicalValue, end: sample.end)
                if let window = alpha1.add(interval: sample.canonicalValue, end: sample.end) {
                    updates.append(.heartRateVariability(window))
                }
            } else if sample.type == .cyclingPower {
                alpha1.add(power: sample.canonicalValue, at: sample.start)
            }
            if zoneSeries[sample.type] != nil || (sample.type == .heartRate && energyEstimator != nil) {
                if let update = addZoneSample(sample) { updates.append(.zone(update)) }
            }
        }
        return updates
    }

    private mutating func addZoneSample(_ sample: QuantitySample) -> ZoneUpdate? {
        let type = sample.type
        if zoneSeries[type] == nil { zoneSeries[type] = ZoneSeries(configuration: nil) }
        let value = sample.canonicalValue
        if let last = zoneSeries[type]!.dates.last, sample.start < last {
            insertBackdated(type, date: sample.start, value: value)
            return nil
        }
        if let lastDate = zoneSeries[type]!.dates.last, let lastValue = zoneSeries[type]!.values.last {
            attribute(
                type: type, value: lastValue, from: lastDate, to: min(sample.start, lastDate + maximumSampleSpacing))
        }
        // Mutated in place through the dictionary: copying the series out would copy its arrays.
        let update = zoneSeries[type]!.append(date: sample.start, value: value, type: type)
        settle(type, before: sample.start - zoneReplayHorizon)
        return update
    }

    /// A sample dated before the newest: only the interval of the sample before it changes (it now
    /// ends at the new one), so that one is taken back and attributed again, and the new one's is
    /// added — a binary search and three attributions, however many samples are kept.
    private mutating func insertBackdated(_ type: QuantityType, date: Date, value: Double) {
        guard let index = zoneSeries[type]!.insertSorted(date: date, value: value) else { return }
        // A successor exists: the sample is dated before the newest.
        let next = zoneSeries[type]!.dates[index + 1]
        if index > 0 {
            let previous = zoneSeries[type]!.dates[index - 1]
            let previousValue = zoneSeries[type]!.values[index - 1]
            let end = previous + maximumSampleSpacing
            attribute(type: type, value: previousValue, from: previous, to: min(end, next), sign: -1)
            attribute(type: type, value: previousValue, from: previous, to: min(end, date))
        }
        attribute(type: type, value: value, from: date, to: min(date + maximumSampleSpacing, next))
    }

    /// Folds the attribution of the samples older than `cutoff` into the settled tally and drops them.
    private mutating func settle(_ type: QuantityType, before cutoff: Date) {
        let count = zoneSeries[type]!.settleableCount(before: cutoff)
        guard count > 0 else { return }
        var settled = zoneSeries[type]!.settled
        let configuration = zoneSeries[type]!.configuration
        for index in 0..<count {
            let from = zoneSeries[type]!.dates[index]
            // Each settled sample has a successor: settling keeps at least the newest one.
            let to = min(from + maximumSampleSpacing, zoneSeries[type]!.dates[index + 1])
            let value = zoneSeries[type]!.values[index]
            let seconds = settled.attribute(
                position: configuration?.position(of: value), from: from, to: to, timeline: timeline,
                activities: activities)
            if type == .heartRate, let energyEstimator {
                settledKilojoules += energyEstimator.kilojoulesPerMinute(heartRate: value) * seconds / 60
            }
        }
        zoneSeries[type]!.settled = settled
        zoneSeries[type]!.dropSettled(count)
    }

    /// Attributes `[from, to)` at `value` to zones and estimated energy, skipping paused time
    /// (`sign` -1 takes an attribution back).
    private mutating func attribute(type: QuantityType, value: Double, from: Date, to: Date, sign: Double = 1) {
        guard to > from, zoneSeries[type] != nil else { return }
        let seconds = zoneSeries[type]!.attribute(
            value: value, from: from, to: to, timeline: timeline, activities: activities, sign: sign)
        if type == .heartRate, let energyEstimator {
            estimatedKilojoules += energyEstimator.kilojoulesPerMinute(heartRate: value) * seconds / 60
        }
    }

    /// Recomputes every attribution from the compact series: after a backdated change.
    private mutating func replayAttribution() {
        estimatedKilojoules = settledKilojoules
        for type in Array(zoneSeries.keys) {
            zoneSeries[type]!.resetToSettled()
            let count = zoneSeries[type]!.dates.count
            for index in 0..<count {
                let from = zoneSeries[type]!.dates[index]
                var to = from + maximumSampleSpacing
                if index + 1 < count {
                    to = min(to, zoneSeries[type]!.dates[index + 1])
                } else if endDate == nil {
                    continue
                }
                // Samples dated after the end (a fast clock ran ahead of the stop) cover nothing.
                if let endDate { to = min(to, endDate) }
                attribute(type: type, value: zoneSeries[type]!.values[index], from: from, to: to)
            }
        }
    }

    private var lastZoneSampleDate: Date? { zoneSeries.values.compactMap(\.dates.last).max() }

    // MARK: Events and metadata

    /// Adds events; returns the ones accepted (a pause while paused, or a resume while running, is ignored).
    public mutating func add(events newEvents: [WorkoutEvent]) throws(WorkoutBuilderError) -> [WorkoutEvent] {
        let start = try requireCollecting()
        var accepted: [WorkoutEvent] = []
        for event in newEvents {
            guard event.dateInterval.start >= start else { throw .dateBeforeStart(event.dateInterval.start) }
            switch event.kind {
            case .pause, .resume:
                let date = event.dateInterval.start
                guard timeline.insert(isPause: event.kind == .pause, at: date) else { continue }
                if let last = lastZoneSampleDate, date < last { replayAttribution() }
            case .lap:
                for existing in events where existing.kind == .lap {
                    let overlap = min(existing.dateInterval.end, event.dateInterval.end)
                        .timeIntervalSince(max(existing.dateInterval.start, event.dateInterval.start))
                    if overlap > 0 { throw .lapsOverlap(existing.dateInterval) }
                }
            case .segment, .marker:
                break
            }
            let index = events.firstIndex { $0.dateInterval.start > event.dateInterval.start } ?? events.count
            events.insert(event, at: index)
            accepted.append(event)
        }
        return accepted
    }

    /// Adds metadata; later values replace earlier ones.
    public mutating func add(metadata newMetadata: [String: String]) throws(WorkoutBuilderError) {
        _ = try requireCollecting()
        metadata.merge(newMetadata) { _, new in new }
    }

    /// Whether the workout is paused at `date`.
    public func isPaused(at date: Date) -> Bool { timeline.isPaused(at: date) }

    // MARK: Activities

    /// Begins an activity at `date`; the previous one must have ended.
    public mutating func beginActivity(
        _ configuration: WorkoutConfiguration, at date: Date
    ) throws(WorkoutBuilderError) -> WorkoutActivity {
        let start = try requireCollecting()
        guard date >= start else { throw .dateBeforeStart(date) }
        if let last = activities.last {
            guard let end = last.end else { throw .activityInProgress }
            guard date >= end else { throw .activityOverlaps(date) }
        }
        activities.append(ActivityRecord(configuration: configuration, start: date))
        if let last = lastZoneSampleDate, date < last { replayAttribution() }
        return activity(at: activities.count - 1)
    }

    /// Ends the current activity at `date`.
    public mutating func endActivity(at date: Date) throws(WorkoutBuilderError) -> WorkoutActivity {
        _ = try requireCollecting()
        guard let index = activities.indices.last, activities[index].end == nil else { throw .noActivityInProgress }
        guard date >= activities[index].start else { throw .dateBeforeStart(date) }
        activities[index].end = date
        if let last = lastZoneSampleDate, date < last { replayAttribution() }
        return activity(at: index)
    }

    /// The activity in progress, if any.
    public var currentActivity: WorkoutActivity? {
        guard let index = activities.indices.last, activities[index].end == nil else { return nil }
        return activity(at: index)
    }

    /// Every activity so far.
    public var allActivities: [WorkoutActivity] { activities.indices.map(activity(at:)) }

    private func activityIndex(containing date: Date) -> Int? {
        for index in activities.indices.reversed() where activities[index].start <= date {
            if let end = activities[index].end, date >= end { return nil }
            return index
        }
        return nil
    }

    private func activity(at index: Int) -> WorkoutActivity {
        let record = activities[index]
        let reference = record.end ?? endDate ?? lastZoneSampleDate ?? record.start
        return WorkoutActivity(
            id: record.id, configuration: record.configuration, start: record.start, end: record.end,
            elapsedTime: max(0, reference.timeIntervalSince(record.start))
                - timeline.pausedDuration(from: record.start, to: reference),
            statistics: Dictionary(
                uniqueKeysWithValues: record.statistics.map {
                    ($0.key, $0.value.statistics(primary: primarySources[$0.key]))
                }),
            zoneGroups: zoneSeries.keys.sorted { $0.rawValue < $1.rawValue }.compactMap {
                zoneSeries[$0]?.configuration == nil ? nil : zoneSeries[$0]?.group(activity: index)
            })
    }

    // MARK: Ending

    /// Ends collection at `date`: closes the last zone sample and any open activity.
    public mutating func end(at date: Date) throws(WorkoutBuilderError) {
        let start = try requireCollecting()
        guard date >= start else { throw .dateBeforeStart(date) }
        endDate = date
        phase = .ended
        if let index = activities.indices.last, activities[index].end == nil {
            activities[index].end = max(date, activities[index].start)
        }
        if let last = lastZoneSampleDate, last > date {
            replayAttribution()
            return
        }
        for (type, series) in zoneSeries {
            guard let lastDate = series.dates.last, let lastValue = series.values.last else { continue }
            attribute(type: type, value: lastValue, from: lastDate, to: min(date, lastDate + maximumSampleSpacing))
        }
    }

    /// Finishes the workout; collection must have ended.
    public mutating func finish() throws(WorkoutBuilderError) -> Workout {
        try requireNotClosed()
        guard phase == .ended, let startDate, let endDate else { throw .collectionNotEnded }
        phase = .finished
        return Workout(
            id: id, configuration: configuration, profile: profile, start: startDate, end: endDate,
            elapsedTime: elapsedTime(at: endDate), events: events, activities: allActivities,
            statistics: allStatistics, zoneGroups: zoneGroups, heartRateVariability: heartRateVariability.workout,
            activeEnergy: activeEnergy, sources: sourcesSeen, metadata: metadata, dfaAlpha1: alpha1.windows,
            hrvThresholds: alpha1.windows.isEmpty ? nil : alpha1.thresholds, primarySources: primarySources)
    }

    /// Discards the workout.
    public mutating func discard() throws(WorkoutBuilderError) {
        try requireNotClosed()
        phase = .discarded
    }

    // MARK: Queries

    /// Statistics for `type`, or `nil` before its first sample.
    public func statistics(for type: QuantityType) -> Statistics? {
        statisticsByType[type]?.statistics(primary: primarySources[type])
    }

    /// The last moment the workout holds: its latest sample's end (any type, any source), event's
    /// end or activity boundary; its start before any; nil before it began.
    public var lastRecordedDate: Date? {
        guard let startDate else { return nil }
        var latest = startDate
        for accumulator in statisticsByType.values {
            if let end = accumulator.overall.endDate { latest = max(latest, end) }
        }
        for event in events { latest = max(latest, event.dateInterval.end) }
        for activity in activities { latest = max(latest, activity.end ?? activity.start) }
        return latest
    }

    /// Statistics for every type collected.
    public var allStatistics: [QuantityType: Statistics] {
        Dictionary(
            uniqueKeysWithValues: statisticsByType.map {
                ($0.key, $0.value.statistics(primary: primarySources[$0.key]))
            })
    }

    /// Elapsed time at `date`, excluding pauses: exact, even with backdated pauses.
    public func elapsedTime(at date: Date) -> TimeInterval {
        guard let startDate else { return 0 }
        let until = min(date, endDate ?? date)
        guard until > startDate else { return 0 }
        return until.timeIntervalSince(startDate) - timeline.pausedDuration(from: startDate, to: until)
    }

    /// Time in zone for every configured zone type.
    public var zoneGroups: [ZoneGroup] {
        zoneSeries.keys.sorted { $0.rawValue < $1.rawValue }.compactMap {
            zoneSeries[$0]?.configuration == nil ? nil : zoneSeries[$0]?.group(activity: nil)
        }
    }

    /// The samples of `type` kept for replays (those within ``zoneReplayHorizon`` of the newest).
    public func keptZoneSampleCount(for type: QuantityType) -> Int { zoneSeries[type]?.dates.count ?? 0 }

    /// The seconds of `type` covered by samples under the attribution rule (the sum of its zone durations).
    public func coveredTime(for type: QuantityType) -> TimeInterval { zoneSeries[type]?.coveredSeconds ?? 0 }

    /// HRV of the whole workout so far.
    public var workoutHeartRateVariability: HeartRateVariability { heartRateVariability.workout }

    /// The latest DFA α1 window of the primary strap (every 5 s once 2 minutes of beats are in).
    public var latestAlpha1: HRVWindow? { alpha1.latest }

    /// Every DFA α1 window so far (none once ``keepsAlpha1Windows`` is off).
    public var alpha1Windows: [HRVWindow] { alpha1.windows }

    /// Whether the collector keeps the DFA α1 series for ``finish()`` (on by default). A recorder
    /// with a store turns it off and keeps the series in the store (each window comes out as a
    /// ``BuilderUpdate/heartRateVariability(_:)``); the finished workout then has no series and
    /// no thresholds until the recorder puts them back. Turning it off drops the windows kept.
    public var keepsAlpha1Windows: Bool {
        get { alpha1.keepsWindows }
        set { alpha1.keepsWindows = newValue }
    }

    /// HRV over the rolling window ending at `date`.
    public func rollingHeartRateVariability(at date: Date) -> HeartRateVariability {
        heartRateVariability.rolling(at: date)
    }

    /// Active energy: the primary strap's Energy Expended when it sends it, else the Keytel estimate.
    public var activeEnergy: ActiveEnergy {
        if let source = primarySources[.activeEnergyBurned],
            let sum = statisticsByType[.activeEnergyBurned]?.sum(for: source)
        {
            return ActiveEnergy(kilojoules: sum, source: .sensor)
        }
        if energyEstimator != nil, zoneSeries[.heartRate]?.dates.isEmpty == false {
            return ActiveEnergy(kilojoules: estimatedKilojoules, source: .estimatedFromHeartRate)
        }
        return ActiveEnergy(kilojoules: nil, source: .unavailable)
    }

    // MARK: Order

    private func requireNotClosed() throws(WorkoutBuilderError) {
        if phase == .finished { throw .workoutFinished }
        if phase == .discarded { throw .workoutDiscarded }
    }

    private func requireCollecting() throws(WorkoutBuilderError) -> Date {
        try requireNotClosed()
        switch phase {
        case .notStarted: throw .collectionNotStarted
        case .ended: throw .collectionEnded
        default: return startDate!
        }
    }
}
