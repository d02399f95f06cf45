public import Foundation
public import Samples

/// One activity of a multi-activity workout (warm-up, main set, cool-down; or swim, bike, run).
public struct WorkoutActivity: Hashable, Sendable, Codable, Identifiable {
    /// A unique identifier.
    public var id: UUID
    /// The activity's type and location.
    public var configuration: WorkoutConfiguration
    /// When it began.
    public var start: Date
    /// When it ended; `nil` while in progress.
    public var end: Date?
    /// Elapsed time, excluding pauses, in seconds.
    public var elapsedTime: TimeInterval
    /// Statistics of the samples that started within the activity (one that began before the
    /// workout counts in the activity the workout began with).
    public var statistics: [QuantityType: Statistics]
    /// Time in zone within the activity.
    public var zoneGroups: [ZoneGroup]

    /// Creates an activity value.
    public init(
        id: UUID, configuration: WorkoutConfiguration, start: Date, end: Date?, elapsedTime: TimeInterval,
        statistics: [QuantityType: Statistics], zoneGroups: [ZoneGroup]
    ) {
        self.id = id
        self.configuration = configuration
        self.start = start
        self.end = end
        self.elapsedTime = elapsedTime
        self.statistics = statistics
        self.zoneGroups = zoneGroups
    }
}

/// A finished workout: what `finishWorkout()` returns and what the store keeps.
public struct Workout: Hashable, Sendable, Codable, Identifiable {
    /// A unique identifier.
    public var id: UUID
    /// The workout's type and location.
    public var configuration: WorkoutConfiguration
    /// The athlete, when known.
    public var profile: UserProfile?
    /// Start of collection.
    public var start: Date
    /// End of collection.
    public var end: Date
    /// Elapsed time, excluding pauses, in seconds.
    public var elapsedTime: TimeInterval
    /// Pause, resume, lap, segment and marker events, in date order.
    public var events: [WorkoutEvent]
    /// The activities, in order.
    public var activities: [WorkoutActivity]
    /// Statistics per quantity type.
    public var statistics: [QuantityType: Statistics]
    /// Time in zone per zone type.
    public var zoneGroups: [ZoneGroup]
    /// Heart-rate variability of the whole workout.
    public var heartRateVariability: HeartRateVariability
    /// Active energy and its origin.
    public var activeEnergy: ActiveEnergy
    /// DFA α1 of the primary strap's beats, a 2-minute window every 5 s (nil in workouts stored
    /// before it was computed).
    public var dfaAlpha1: [HRVWindow]?
    /// HRVT1 and HRVT2 read off the α1 windows.
    public var hrvThresholds: HRVThresholds?
    /// Artefacts found in the primary strap's beats, percent (the mean over the α1 windows).
    public var artefactPercent: Double? {
        guard let windows = dfaAlpha1, !windows.isEmpty else { return nil }
        return windows.map(\.artefactPercent).reduce(0, +) / Double(windows.count)
    }
    /// The sensors that contributed samples.
    public var sources: [SampleSource]
    /// The source each type's figures follow: zones, HRV and every cumulative amount (energy,
    /// distance) come from it alone (nil in workouts stored before it was kept).
    public var primarySources: [QuantityType: SampleSource]?
    /// Free-form metadata.
    public var metadata: [String: String]

    /// The source `type`'s amounts and figures come from: the one recorded at the end, or for a
    /// workout stored before that was kept, the source whose own sum is the workout's (the
    /// builder copies the primary's), else the only source of the type.
    public func primarySource(for type: QuantityType) -> SampleSource? {
        if let source = primarySources?[type] { return source }
        guard let statistics = statistics[type] else { return nil }
        if let sum = statistics.sum, let match = statistics.bySource.first(where: { $0.value.sum == sum }) {
            return match.key
        }
        return statistics.bySource.count == 1 ? statistics.bySource.keys.first : nil
    }

    /// Creates a workout value.
    public init(
        id: UUID, configuration: WorkoutConfiguration, profile: UserProfile?, start: Date, end: Date,
        elapsedTime: TimeInterval, events: [WorkoutEvent], activities: [WorkoutActivity],
        statistics: [QuantityType: Statistics], zoneGroups: [ZoneGroup], heartRateVariability: HeartRateVariability,
        activeEnergy: ActiveEnergy, sources: [SampleSource], metadata: [String: String],
        dfaAlpha1: [HRVWindow]? = nil, hrvThresholds: HRVThresholds? = nil,
        primarySources: [QuantityType: SampleSource]? = nil
    ) {
        self.id = id
        self.configuration = configuration
        self.profile = profile
        self.start = start
        self.end = end
        self.elapsedTime = elapsedTime
        self.events = events
        self.activities = activities
        self.statistics = statistics
        self.zoneGroups = zoneGroups
        self.heartRateVariability = heartRateVariability
        self.activeEnergy = activeEnergy
        self.dfaAlpha1 = dfaAlpha1
        self.hrvThresholds = hrvThresholds
        self.sources = sources
        self.primarySources = primarySources
        self.metadata = metadata
    }
}
