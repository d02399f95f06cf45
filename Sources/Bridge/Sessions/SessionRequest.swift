public import Foundation
public import Workouts

/// What a client asks for when it creates a session.
public struct SessionRequest: Sendable {
    /// The activity type.
    public var activity: WorkoutActivityType = .running
    /// Indoor or outdoor.
    public var location: WorkoutLocation = .indoor
    /// Sensor addresses; each is bound to this session alone.
    public var sensors: [String]
    /// The athlete; nil: the configured owner of the first sensor, else the anonymous athlete.
    public var athlete: String?
    /// Heart-rate zone boundaries in bpm (overrides the athlete's).
    public var zones: [Double]?
    /// A guest session: streamed live, never written to the store.
    public var guest = false
    /// A structured workout to run (the plan file format, version 1); the session ends with it.
    public var plan: Data?

    /// Creates it from its parts.
    public init(
        activity: WorkoutActivityType = .running, location: WorkoutLocation = .indoor, sensors: [String],
        athlete: String? = nil, zones: [Double]? = nil, guest: Bool = false
    ) {
        self.activity = activity
        self.location = location
        self.sensors = sensors
        self.athlete = athlete
        self.zones = zones
        self.guest = guest
    }
}
