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

    /// The values a person has: outside them, a typo (the configuration and `workout run` refuse it).
    public static let ages = 5...110
    public static let weightsInKilograms: ClosedRange<Double> = 20...300
    public static let restingHeartRates: ClosedRange<Double> = 25...150
    public static let maximumHeartRates: ClosedRange<Double> = 80...250
    public static let functionalThresholdPowers: ClosedRange<Double> = 30...700
    /// The longest athlete id.
    public static let idLength = 64

    /// Whether `id` can key an athlete: 1 to ``idLength`` letters, digits, `-` and `_` (it names
    /// files, topics and log lines).
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= idLength && id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
    }

    /// What is out of its bounds, one phrase each (empty: nothing). A value not a number (NaN) is out.
    public var problems: [String] {
        var found: [String] = []
        if !Self.isValidID(id) {
            found.append("athlete id '\(id.prefix(64))' may use letters, digits, - and _ only (1 to \(Self.idLength))")
        }
        if let age, !Self.ages.contains(age) {
            found.append("age \(age) is not within \(Self.ages.lowerBound)–\(Self.ages.upperBound)")
        }
        func check(_ value: Double?, _ range: ClosedRange<Double>, _ what: String) {
            if let value, !range.contains(value) {
                found.append("\(what) \(value) is not within \(Int(range.lowerBound))–\(Int(range.upperBound))")
            }
        }
        check(weightKilograms, Self.weightsInKilograms, "weight (kg)")
        check(restingHeartRate, Self.restingHeartRates, "resting heart rate")
        check(maximumHeartRate, Self.maximumHeartRates, "maximum heart rate")
        check(functionalThresholdPower, Self.functionalThresholdPowers, "FTP (W)")
        if let restingHeartRate, let maximumHeartRate, restingHeartRate >= maximumHeartRate {
            found.append("the resting heart rate must be below the maximum")
        }
        return found
    }

    /// Maximum heart rate: the given one, else Tanaka's 208 − 0.7 × age, else `nil`.
    public var effectiveMaximumHeartRate: Double? {
        if let maximumHeartRate { return maximumHeartRate }
        return age.map { 208 - 0.7 * Double($0) }
    }
}
