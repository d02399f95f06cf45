public import JSONSupport
import Samples
public import Workouts

/// A configured athlete as the API shows it: profile, the maximum in force, and the zones in force.
public struct AthleteJSON: Codable, Sendable, Equatable {
    public var id: String
    @Nullable public var name: String?
    @Nullable public var age: Int?
    @Nullable public var sex: String?
    /// kg.
    @Nullable public var weight: Double?
    @Nullable public var restingHeartRate: Double?
    /// Configured, else estimated from age.
    @Nullable public var maximumHeartRate: Double?
    public var zones: [WorkoutJSON.Zone]

    /// The athlete's JSON: `zones` overrides the profile's preferred heart-rate zones.
    public init(profile: UserProfile, zones customZones: ZoneConfiguration?) {
        id = profile.id
        name = profile.name
        age = profile.age
        sex = profile.sex?.rawValue
        weight = profile.weightKilograms
        restingHeartRate = profile.restingHeartRate
        maximumHeartRate = profile.effectiveMaximumHeartRate
        zones =
            (customZones ?? profile.preferredZoneConfiguration(for: .heartRate))?.zones.map(WorkoutJSON.Zone.init)
            ?? []
    }
}
