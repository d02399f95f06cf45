public import Foundation
public import Samples
public import Sensors
import Synchronization

/// Builds a workout while it happens: samples from a data source (or by hand), events, metadata,
/// activities; statistics, zones, HRV and energy as they go. A thin actor over ``WorkoutCollector``
/// that publishes ``BuilderUpdate``s and forwards every accepted sample to an optional sink.
public actor LiveWorkoutBuilder {
    private var collector: WorkoutCollector
    private nonisolated let id: UUID
    private let clock: any WallClock
    private let updatesBroadcaster = ConsumptionTrackingBroadcaster<BuilderUpdate>(routingKey: { update in
        // `.collected` comes with every batch of samples: only subscribers that ask get it.
        if case .collected = update { LiveWorkoutBuilder.collectedKey } else { nil }
    })
    private static let collectedKey = "collected"
    /// Whether ``updates(includingCollected:)`` ever handed out `.collected`: until then the types
    /// of a batch are not worked out (it stays set, so a reader never misses one).
    private nonisolated let collectedWanted = Atomic(false)
    private let sampleSink: (@Sendable ([QuantitySample]) -> Void)?

    /// Creates a builder.
    ///
    /// - Parameter sampleSink: receives every accepted batch of samples (a store, a JSON printer).
    public init(
        configuration: WorkoutConfiguration, profile: UserProfile? = nil, clock: any WallClock,
        sampleSink: (@Sendable ([QuantitySample]) -> Void)? = nil, id: UUID? = nil
    ) {
        let collector = WorkoutCollector(configuration: configuration, profile: profile, id: id ?? UUID())
        self.collector = collector
        self.id = collector.id
        self.clock = clock
        self.sampleSink = sampleSink
    }

    /// Continues from a collector rebuilt after a crash (see `WorkoutRecovery`).
    public init(
        recovering collector: WorkoutCollector, clock: any WallClock,
        sampleSink: (@Sendable ([QuantitySample]) -> Void)? = nil
    ) {
        self.collector = collector
        self.id = collector.id
        self.clock = clock
        self.sampleSink = sampleSink
    }

    /// The workout's identifier.
    public nonisolated var workoutID: UUID { id }

    /// Builder updates from now on; without `includingCollected`, every update but
    /// ``BuilderUpdate/collected(_:)`` (one per batch of samples, which a recorder does not need
    /// to wake up for).
    public nonisolated func updates(includingCollected: Bool = true) -> AsyncStream<BuilderUpdate> {
        if includingCollected { collectedWanted.store(true, ordering: .relaxed) }
        return updatesBroadcaster.subscribe(keys: includingCollected ? nil : [])
    }

    /// Returns once every ``updates()`` subscriber has handled every update so far (a stepped
    /// simulation waits for this, so the updates of one second are out before the next).
    public nonisolated func waitUntilUpdatesConsumed() async { await updatesBroadcaster.waitUntilConsumed() }

    /// The workout's configuration.
    public var configuration: WorkoutConfiguration { collector.configuration }

    /// Sets custom zones for this workout; before `beginCollection` only.
    public func setCustomZoneConfiguration(_ zones: ZoneConfiguration?, for type: QuantityType)
        throws(WorkoutBuilderError)
    {
        try collector.setCustomZoneConfiguration(zones, for: type)
    }

    /// The zones in force for `type`.
    public func zoneConfiguration(for type: QuantityType) -> ZoneConfiguration? {
        collector.zoneConfiguration(for: type)
    }

    /// Begins collection.
    public func beginCollection(at date: Date) throws(WorkoutBuilderError) { try collector.begin(at: date) }

    /// Adds samples (from the data source, or by hand).
    public func add(_ samples: [QuantitySample]) throws(WorkoutBuilderError) {
        // A set of types per batch costs more than the rest of it: made only when someone reads it.
        let updates = try collector.add(samples, reportingCollected: collectedWanted.load(ordering: .relaxed))
        sampleSink?(samples)
        for update in updates { updatesBroadcaster.yield(update) }
    }

    /// Adds what a live source delivers: samples that end before the start of collection (the RR
    /// intervals of beats before it, in the first frame) are left out rather than refusing the
    /// batch; returns how many were left out.
    @discardableResult
    public func addLive(_ samples: [QuantitySample]) throws(WorkoutBuilderError) -> Int {
        guard let start = collector.startDate else { throw .collectionNotStarted }
        // Only a strap's first frame has any: the others are added without a copy.
        let current = samples.allSatisfy { $0.end >= start } ? samples : samples.filter { $0.end >= start }
        if !current.isEmpty { try add(current) }
        return samples.count - current.count
    }

    /// Adds events; returns those accepted.
    @discardableResult
    public func addEvents(_ events: [WorkoutEvent]) throws(WorkoutBuilderError) -> [WorkoutEvent] {
        let accepted = try collector.add(events: events)
        for event in accepted { updatesBroadcaster.yield(.event(event)) }
        return accepted
    }

    /// Adds metadata.
    public func addMetadata(_ metadata: [String: String]) throws(WorkoutBuilderError) {
        try collector.add(metadata: metadata)
    }

    /// Begins an activity.
    public func beginActivity(_ configuration: WorkoutConfiguration, at date: Date) throws(WorkoutBuilderError)
        -> WorkoutActivity
    {
        let activity = try collector.beginActivity(configuration, at: date)
        updatesBroadcaster.yield(.activityBegan(activity))
        return activity
    }

    /// Ends the current activity.
    public func endActivity(at date: Date) throws(WorkoutBuilderError) -> WorkoutActivity {
        let activity = try collector.endActivity(at: date)
        updatesBroadcaster.yield(.activityEnded(activity))
        return activity
    }

    /// Ends collection.
    public func endCollection(at date: Date) throws(WorkoutBuilderError) { try collector.end(at: date) }

    /// Finishes the workout; collection must have ended.
    public func finishWorkout() throws(WorkoutBuilderError) -> Workout {
        let workout = try collector.finish()
        updatesBroadcaster.finish()
        return workout
    }

    /// Discards the workout.
    public func discardWorkout() throws(WorkoutBuilderError) {
        try collector.discard()
        updatesBroadcaster.finish()
    }

    /// Statistics for `type`.
    public func statistics(for type: QuantityType) -> Statistics? { collector.statistics(for: type) }
    /// Statistics for every type.
    public var allStatistics: [QuantityType: Statistics] { collector.allStatistics }
    /// Elapsed time at `date`, excluding pauses.
    public func elapsedTime(at date: Date) -> TimeInterval { collector.elapsedTime(at: date) }
    /// Elapsed time now, by the injected clock.
    public var elapsedTime: TimeInterval { collector.elapsedTime(at: clock.now()) }
    /// Time in zone.
    public var zoneGroups: [ZoneGroup] { collector.zoneGroups }
    public var currentActivity: WorkoutActivity? { collector.currentActivity }
    /// Every activity.
    public var activities: [WorkoutActivity] { collector.allActivities }
    /// Events so far.
    public var events: [WorkoutEvent] { collector.events }
    /// HRV so far.
    public var heartRateVariability: HeartRateVariability { collector.workoutHeartRateVariability }

    /// The latest DFA α1 window of the primary strap.
    public var latestAlpha1: HRVWindow? { collector.latestAlpha1 }
    /// HRV over the last 60 s.
    public func rollingHeartRateVariability(at date: Date) -> HeartRateVariability {
        collector.rollingHeartRateVariability(at: date)
    }
    /// Active energy so far.
    public var activeEnergy: ActiveEnergy { collector.activeEnergy }
    /// Whether paused at `date`.
    public func isPaused(at date: Date) -> Bool { collector.isPaused(at: date) }
    /// The primary source per type.
    public var primarySources: [QuantityType: SampleSource] { collector.primarySources }
    /// Stops keeping the DFA α1 series in memory (a store keeps it); returns the windows kept so far.
    public func handOverAlpha1Windows() -> [HRVWindow] {
        let windows = collector.alpha1Windows
        collector.keepsAlpha1Windows = false
        return windows
    }
    /// Makes `source` primary for `type`.
    public func setPrimarySource(_ source: SampleSource, for type: QuantityType) {
        collector.setPrimarySource(source, for: type)
    }
    /// The figures a live view shows, at `date`.
    public func liveFigures(at date: Date) -> LiveFigures {
        LiveFigures(
            elapsedTime: collector.elapsedTime(at: date), statistics: collector.allStatistics,
            heartRateZones: collector.zoneConfiguration(for: .heartRate), zoneGroups: collector.zoneGroups,
            heartRateVariability: collector.workoutHeartRateVariability, latestAlpha1: collector.latestAlpha1,
            activeEnergy: collector.activeEnergy, laps: collector.events.reduce(0) { $0 + ($1.kind == .lap ? 1 : 0) })
    }
    /// The collector's state, for views that need several figures at once.
    public var snapshot: WorkoutCollector { collector }
}
