public import Samples

extension UserProfile {
    /// The athlete's default zones for `type`, or `nil` when the profile lacks what they need.
    ///
    /// Heart rate: five zones split at 60, 70, 80 and 90 % — of the heart-rate reserve
    /// (Karvonen: resting + % × (max − resting)) when the resting rate is known, else of the
    /// maximum (given, or 208 − 0.7 × age). Power: seven zones split at 55, 75, 90, 105, 120 and
    /// 150 % of functional threshold power.
    public func preferredZoneConfiguration(for type: QuantityType) -> ZoneConfiguration? {
        switch type {
        case .heartRate:
            guard let maximum = effectiveMaximumHeartRate else { return nil }
            let fractions = [0.6, 0.7, 0.8, 0.9]
            let boundaries: [Double]
            if let resting = restingHeartRate, resting < maximum {
                boundaries = fractions.map { (resting + $0 * (maximum - resting)).rounded() }
            } else {
                boundaries = fractions.map { ($0 * maximum).rounded() }
            }
            return try? ZoneConfiguration(quantityType: .heartRate, boundaryValues: boundaries)
        case .cyclingPower:
            guard let threshold = functionalThresholdPower, threshold > 0 else { return nil }
            let boundaries = [0.55, 0.75, 0.9, 1.05, 1.2, 1.5].map { ($0 * threshold).rounded() }
            return try? ZoneConfiguration(quantityType: .cyclingPower, boundaryValues: boundaries)
        default:
            return nil
        }
    }
}
