/// The energy triple Fitness Machine data carries: total, per hour and per minute, all in kcal.
public struct FitnessMachineEnergy: Hashable, Sendable {
    /// Total energy since the start of the session, in kcal.
    public var total: UInt16
    /// Energy rate in kcal per hour.
    public var perHour: UInt16
    /// Energy rate in kcal per minute.
    public var perMinute: UInt8

    /// Creates an energy triple.
    public init(total: UInt16, perHour: UInt16, perMinute: UInt8) {
        self.total = total
        self.perHour = perHour
        self.perMinute = perMinute
    }

    static let width = 5

    init(reader: inout ByteReader) throws(GATTDecodingError) {
        total = try reader.uint16("totalEnergy")
        perHour = try reader.uint16("energyPerHour")
        perMinute = try reader.uint8("energyPerMinute")
    }
}
