/// The last known state of a fitness machine, merged from split frames.
///
/// A machine may send one record as several notifications, each with its own flags. An absent
/// field is not zero: merging keeps the last value seen for every field. ``isComplete`` turns
/// true when a fragment without "More Data" arrives.
public struct FitnessMachineRecord: Hashable, Sendable {
    /// Speed in 0.01 km/h.
    public var instantaneousSpeed: UInt16?
    /// Cadence in ½ rpm (bikes only).
    public var instantaneousCadence: UInt16?
    /// Total distance in metres.
    public var totalDistance: UInt32?
    /// Power in watts.
    public var instantaneousPower: Int16?
    /// Energy in kcal.
    public var energy: FitnessMachineEnergy?
    /// Heart rate in beats per minute.
    public var heartRate: UInt8?
    /// Elapsed time in seconds.
    public var elapsedTime: UInt16?
    /// Inclination in 0.1 % (treadmills only).
    public var inclination: Int16?
    /// Whether the last fragment closed the record.
    public private(set) var isComplete = false

    /// An empty record.
    public init() {}

    /// Merges an Indoor Bike Data fragment.
    public mutating func merge(_ fragment: IndoorBikeData) {
        instantaneousSpeed = fragment.instantaneousSpeed ?? instantaneousSpeed
        instantaneousCadence = fragment.instantaneousCadence ?? instantaneousCadence
        totalDistance = fragment.totalDistance ?? totalDistance
        instantaneousPower = fragment.instantaneousPower ?? instantaneousPower
        energy = fragment.energy ?? energy
        heartRate = fragment.heartRate ?? heartRate
        elapsedTime = fragment.elapsedTime ?? elapsedTime
        isComplete = !fragment.moreData
    }

    /// Merges a Treadmill Data fragment.
    public mutating func merge(_ fragment: TreadmillData) {
        instantaneousSpeed = fragment.instantaneousSpeed ?? instantaneousSpeed
        totalDistance = fragment.totalDistance ?? totalDistance
        instantaneousPower = fragment.powerOutput ?? instantaneousPower
        energy = fragment.energy ?? energy
        heartRate = fragment.heartRate ?? heartRate
        elapsedTime = fragment.elapsedTime ?? elapsedTime
        inclination = fragment.inclination ?? inclination
        isComplete = !fragment.moreData
    }

    /// Forgets everything, as after a reconnect.
    public mutating func reset() { self = FitnessMachineRecord() }
}
