/// The kinds of quantity hrbridge records, in HealthKit's vocabulary.
public enum QuantityType: String, Hashable, Sendable, CaseIterable, Codable {
    /// Heart rate (count/min), discrete.
    case heartRate
    /// One beat-to-beat (RR) interval of the heartbeat series (s), discrete.
    case heartbeatSeries
    /// Active energy burned (kJ), cumulative.
    case activeEnergyBurned
    /// Cycling power (W), discrete.
    case cyclingPower
    /// Cycling cadence (rpm), discrete.
    case cyclingCadence
    /// Cycling speed (m/s), discrete.
    case cyclingSpeed
    /// Running speed (m/s), discrete.
    case runningSpeed
    /// Step cadence (count/min), discrete.
    case stepCadence
    /// Distance (m), cumulative.
    case distance
    /// Sensor battery level (%), discrete.
    case batteryLevel

    /// How samples of a type combine.
    public enum AggregationStyle: String, Hashable, Sendable, Codable {
        /// Each sample is a reading: combine with min, max, average, most recent.
        case discrete
        /// Each sample is an amount: combine with a sum.
        case cumulative
    }

    /// The unit hrbridge stores and prints the type in.
    public var canonicalUnit: QuantityUnit {
        switch self {
        case .heartRate, .stepCadence: .countPerMinute
        case .heartbeatSeries: .second
        case .activeEnergyBurned: .kilojoule
        case .cyclingPower: .watt
        case .cyclingCadence: .revolutionsPerMinute
        case .cyclingSpeed, .runningSpeed: .metersPerSecond
        case .distance: .meter
        case .batteryLevel: .percent
        }
    }

    /// A reading about the sensor itself, not the athlete (a battery): figures across devices
    /// mean nothing, so it is reported per device, by its last value.
    public var isPerDevice: Bool { self == .batteryLevel }

    /// How samples of this type combine.
    public var aggregationStyle: AggregationStyle {
        switch self {
        case .activeEnergyBurned, .distance: .cumulative
        default: .discrete
        }
    }
}

extension QuantityType {
    /// The type's place among ``allCases``. A raw-value enum hashes and compares its string, and
    /// the builder looks types up in dictionaries several times per sample: both go by this instead.
    public var ordinal: Int {
        switch self {
        case .heartRate: 0
        case .heartbeatSeries: 1
        case .activeEnergyBurned: 2
        case .cyclingPower: 3
        case .cyclingCadence: 4
        case .cyclingSpeed: 5
        case .runningSpeed: 6
        case .stepCadence: 7
        case .distance: 8
        case .batteryLevel: 9
        }
    }

    public static func == (lhs: QuantityType, rhs: QuantityType) -> Bool { lhs.ordinal == rhs.ordinal }

    public func hash(into hasher: inout Hasher) { hasher.combine(ordinal) }
}
