import Samples

/// Active energy from heart rate, with the equations of Keytel et al. (2005), "Prediction of energy
/// expenditure from heart rate monitoring during submaximal exercise", J Sports Sci 23(3):289–297
/// (the model without VO₂max):
///
///     male:   kJ/min = −55.0969 + 0.6309 × HR + 0.1988 × weight + 0.2017 × age
///     female: kJ/min = −20.4022 + 0.4472 × HR − 0.1263 × weight + 0.0740 × age
///
/// HR in beats/min, weight in kg, age in years. A negative result (very low heart rates) is 0:
/// the equations were fitted to exercise, not rest. A heart rate no heart beats at (outside
/// ``MeasurementSampler/plausibleHeartRates``, as in a sample stored before the sampler dropped
/// them) is 0 too: one such reading would add thousands of kJ.
public struct EnergyEstimator: Hashable, Sendable {
    /// Sex, for the choice of equation.
    public let sex: BiologicalSex
    /// Age in years.
    public let age: Double
    /// Body mass in kilograms.
    public let weightKilograms: Double

    /// Creates an estimator.
    public init(sex: BiologicalSex, age: Double, weightKilograms: Double) {
        self.sex = sex
        self.age = age
        self.weightKilograms = weightKilograms
    }

    /// An estimator for the profile, or `nil` when it lacks sex, age or weight.
    public init?(profile: UserProfile?) {
        guard let profile, let sex = profile.sex, let age = profile.age, let weight = profile.weightKilograms else {
            return nil
        }
        self.init(sex: sex, age: Double(age), weightKilograms: weight)
    }

    /// Energy rate in kJ per minute at `heartRate`.
    public func kilojoulesPerMinute(heartRate: Double) -> Double {
        guard MeasurementSampler.plausibleHeartRates.contains(heartRate) else { return 0 }
        let rate: Double
        switch sex {
        case .male: rate = -55.0969 + 0.6309 * heartRate + 0.1988 * weightKilograms + 0.2017 * age
        case .female: rate = -20.4022 + 0.4472 * heartRate - 0.1263 * weightKilograms + 0.0740 * age
        }
        return max(0, rate)
    }
}

/// Where a workout's active energy figure came from.
public enum EnergySource: String, Hashable, Sendable, Codable {
    /// Summed from the strap's Energy Expended increments.
    case sensor
    /// Estimated from heart rate with the Keytel equations.
    case estimatedFromHeartRate
    /// Neither: no Energy Expended and no profile to estimate with.
    case unavailable
}

/// A workout's active energy and how it was obtained.
public struct ActiveEnergy: Hashable, Sendable, Codable {
    public var kilojoules: Double?
    /// Where the figure came from.
    public var source: EnergySource

    /// Creates a figure.
    public init(kilojoules: Double?, source: EnergySource) {
        self.kilojoules = kilojoules
        self.source = source
    }

    public var kilocalories: Double? { kilojoules.map { $0 / 4.184 } }
}
