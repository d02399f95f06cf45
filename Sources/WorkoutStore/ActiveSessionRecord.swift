public import Foundation
public import Samples
public import Sensors
public import Workouts

/// What the recovery journal keeps about an active session.
public struct ActiveSessionRecord: Hashable, Sendable, Codable {
    /// The workout's identifier.
    public var workoutID: UUID
    public var configuration: WorkoutConfiguration
    /// The athlete.
    public var profile: UserProfile?
    /// When collection began.
    public var start: Date
    /// The session state when last journaled (running or paused).
    public var state: WorkoutSessionState
    /// Custom zones set for this workout.
    public var customZones: [ZoneConfiguration]
    /// Primary source per quantity type.
    public var primarySources: [String: SampleSource]
    /// Every sensor the session records, in its order (the first is its primary strap): recovery
    /// follows them all, not only the ones that were primary for some type when it was journaled.
    /// Empty in a row journaled before this was kept.
    public var sensors: [SampleSource]

    /// Creates a record.
    public init(
        workoutID: UUID, configuration: WorkoutConfiguration, profile: UserProfile?, start: Date,
        state: WorkoutSessionState, customZones: [ZoneConfiguration] = [], primarySources: [String: SampleSource] = [:],
        sensors: [SampleSource] = []
    ) {
        self.workoutID = workoutID
        self.configuration = configuration
        self.profile = profile
        self.start = start
        self.state = state
        self.customZones = customZones
        self.primarySources = primarySources
        self.sensors = sensors
    }
}
