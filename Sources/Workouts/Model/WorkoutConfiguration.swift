public import Samples

/// What kind of workout it is.
public enum WorkoutActivityType: String, Hashable, Sendable, Codable, CaseIterable {
    case running
    case cycling
    case walking
    case rowing
    /// High-intensity interval training.
    case hiit
    /// Strength training.
    case strength
    /// Elliptical trainer.
    case elliptical
    case swimming
    /// Anything else.
    case other

    /// The quantity types a data source collects by default for this activity.
    public var defaultTypesToCollect: Set<QuantityType> {
        var types: Set<QuantityType> = [.heartRate, .heartbeatSeries, .activeEnergyBurned, .batteryLevel]
        switch self {
        case .cycling: types.formUnion([.cyclingPower, .cyclingCadence, .cyclingSpeed, .distance])
        case .running, .walking: types.formUnion([.runningSpeed, .stepCadence, .distance])
        case .rowing, .elliptical: types.formUnion([.cyclingPower, .distance])
        case .hiit, .strength, .swimming, .other: break
        }
        return types
    }
}

/// Indoors or outdoors.
public enum WorkoutLocation: String, Hashable, Sendable, Codable {
    /// Indoors (treadmill, trainer, gym).
    case indoor
    /// Outdoors.
    case outdoor
    /// Not said.
    case unknown
}

/// The activity type and location of a workout or of one of its activities.
public struct WorkoutConfiguration: Hashable, Sendable, Codable {
    public var activityType: WorkoutActivityType
    public var location: WorkoutLocation

    /// Creates a configuration.
    public init(activityType: WorkoutActivityType, location: WorkoutLocation = .unknown) {
        self.activityType = activityType
        self.location = location
    }
}
