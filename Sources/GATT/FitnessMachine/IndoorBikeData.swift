/// One Indoor Bike Data (0x2AD2) notification: a fragment of the machine's record.
///
/// Flag bit 0 ("More Data") is **inverted**: instantaneous speed is present when it is 0.
/// Bit 2 is cadence, as every real capture shows (the 2017 XML swaps bits 1 and 2).
/// An absent field is `nil`, never 0: merge fragments with ``FitnessMachineRecord``.
/// Heart rate 0 means "no reading" and decodes as `nil`. Trailing bytes are ignored.
public struct IndoorBikeData: Hashable, Sendable {
    /// Whether the machine will send more fragments of this record (flag bit 0 set).
    public var moreData: Bool
    /// Instantaneous speed in 0.01 km/h.
    public var instantaneousSpeed: UInt16?
    /// Average speed in 0.01 km/h.
    public var averageSpeed: UInt16?
    /// Instantaneous cadence in ½ rpm.
    public var instantaneousCadence: UInt16?
    /// Average cadence in ½ rpm.
    public var averageCadence: UInt16?
    /// Total distance in metres (often a lifetime odometer).
    public var totalDistance: UInt32?
    /// Resistance level, raw: its scale differs between machines.
    public var resistanceLevel: Int16?
    /// Instantaneous power in watts (signed).
    public var instantaneousPower: Int16?
    /// Average power in watts (signed).
    public var averagePower: Int16?
    /// Energy in kcal.
    public var energy: FitnessMachineEnergy?
    /// Heart rate in beats per minute; `nil` when absent or 0.
    public var heartRate: UInt8?
    /// Metabolic equivalent in 0.1 MET.
    public var metabolicEquivalent: UInt8?
    /// Elapsed time in seconds.
    public var elapsedTime: UInt16?
    /// Remaining time in seconds.
    public var remainingTime: UInt16?

    /// Creates a fragment with only the fields given.
    public init(
        moreData: Bool = false, instantaneousSpeed: UInt16? = nil, averageSpeed: UInt16? = nil,
        instantaneousCadence: UInt16? = nil, averageCadence: UInt16? = nil, totalDistance: UInt32? = nil,
        resistanceLevel: Int16? = nil, instantaneousPower: Int16? = nil, averagePower: Int16? = nil,
        energy: FitnessMachineEnergy? = nil, heartRate: UInt8? = nil, metabolicEquivalent: UInt8? = nil,
        elapsedTime: UInt16? = nil, remainingTime: UInt16? = nil
    ) {
        self.moreData = moreData
        self.instantaneousSpeed = instantaneousSpeed
        self.averageSpeed = averageSpeed
        self.instantaneousCadence = instantaneousCadence
        self.averageCadence = averageCadence
        self.totalDistance = totalDistance
        self.resistanceLevel = resistanceLevel
        self.instantaneousPower = instantaneousPower
        self.averagePower = averagePower
        self.energy = energy
        self.heartRate = heartRate
        self.metabolicEquivalent = metabolicEquivalent
        self.elapsedTime = elapsedTime
        self.remainingTime = remainingTime
    }

    /// Instantaneous speed in metres per second.
    public var instantaneousSpeedMetersPerSecond: Double? { instantaneousSpeed.map { Double($0) / 360 } }
    /// Instantaneous cadence in revolutions per minute.
    public var instantaneousCadenceRPM: Double? { instantaneousCadence.map { Double($0) / 2 } }

    /// Decodes a fragment.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        var reader = ByteReader(bytes, characteristic: .indoorBikeData)
        try reader.require(minimumLength: 2)
        let flags = try reader.uint16("flags")
        func has(_ bit: Int) -> Bool { flags & (1 << bit) != 0 }
        moreData = has(0)
        instantaneousSpeed = !has(0) ? try reader.uint16("instantaneousSpeed") : nil
        averageSpeed = has(1) ? try reader.uint16("averageSpeed") : nil
        instantaneousCadence = has(2) ? try reader.uint16("instantaneousCadence") : nil
        averageCadence = has(3) ? try reader.uint16("averageCadence") : nil
        totalDistance = has(4) ? try reader.uint24("totalDistance") : nil
        resistanceLevel = has(5) ? try reader.int16("resistanceLevel") : nil
        instantaneousPower = has(6) ? try reader.int16("instantaneousPower") : nil
        averagePower = has(7) ? try reader.int16("averagePower") : nil
        energy = has(8) ? try FitnessMachineEnergy(reader: &reader) : nil
        let heartRate = has(9) ? try reader.uint8("heartRate") : 0
        self.heartRate = heartRate == 0 ? nil : heartRate
        metabolicEquivalent = has(10) ? try reader.uint8("metabolicEquivalent") : nil
        elapsedTime = has(11) ? try reader.uint16("elapsedTime") : nil
        remainingTime = has(12) ? try reader.uint16("remainingTime") : nil
    }
}
