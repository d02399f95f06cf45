/// Sex as the energy equations use it.
public enum BiologicalSex: String, Hashable, Sendable, Codable {
    case female
    case male
}

/// The athlete a session belongs to: one active session per athlete at a time.
public struct UserProfile: Hashable, Sendable, Codable {
    /// A stable identifier (the athlete key for "one session per athlete").
    public var id: String
    /// A display name.
    public var name: String?
    /// Age in years.
    public var age: Int?
    /// Sex, for the energy equations.
    public var sex: BiologicalSex?
    /// Body mass in kilograms.
    public var weightKilograms: Double?
    /// Resting heart rate; with it, preferred zones use the heart-rate reserve.
    public var restingHeartRate: Double?
    /// Maximum heart rate; without it, 208 − 0.7 × age.
    public var maximumHeartRate: Double?
    /// Functional threshold power in watts, for preferred power zones.
    public var functionalThresholdPower: Double?

    /// Creates a profile.
    public init(
        id: String, name: String? = nil, age: Int? = nil, sex: BiologicalSex? = nil, weightKilograms: Double? = nil,
        restingHeartRate: Double? = nil, maximumHeartRate: Double? = nil, functionalThresholdPower: Double? = nil
    ) {
        self.id = id
        self.name = name
        self.age = age
        self.sex = sex
        self.weightKilograms = weightKilograms
        self.restingHeartRate = restingHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.functionalThresholdPower = functionalThresholdPower
    }

    /// The athlete key used when a session has no profile.
    public static let anonymousID = "default"

    /// Maximum heart rate: the given one, else Tanaka's 208 − 0.7 × age, else `nil`.
    public var effectiveMaximumHeartRate: Double? {
        if let maximumHeartRate { return maximumHeartRate }
        return age.map { 208 - 0.7 * Double($0) }
    }
}
