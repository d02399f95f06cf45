/// The GATT services hrbridge speaks.
public enum GATTService: UInt16, CaseIterable, Sendable {
    /// Heart Rate (0x180D).
    case heartRate = 0x180D
    /// Battery (0x180F).
    case battery = 0x180F
    /// Device Information (0x180A).
    case deviceInformation = 0x180A
    /// Cycling Power (0x1818).
    case cyclingPower = 0x1818
    /// Cycling Speed and Cadence (0x1816).
    case cyclingSpeedAndCadence = 0x1816
    /// Running Speed and Cadence (0x1814).
    case runningSpeedAndCadence = 0x1814
    /// Fitness Machine (0x1826).
    case fitnessMachine = 0x1826

    /// The service's 128-bit UUID.
    public var uuid: BluetoothUUID { BluetoothUUID(rawValue) }

    /// Finds the service a UUID names, if hrbridge knows it.
    public init?(uuid: BluetoothUUID) {
        guard let short = uuid.shortValue else { return nil }
        self.init(rawValue: short)
    }

    /// The service's name in the Bluetooth SIG's assigned numbers.
    public var name: String {
        switch self {
        case .heartRate: "Heart Rate"
        case .battery: "Battery"
        case .deviceInformation: "Device Information"
        case .cyclingPower: "Cycling Power"
        case .cyclingSpeedAndCadence: "Cycling Speed and Cadence"
        case .runningSpeedAndCadence: "Running Speed and Cadence"
        case .fitnessMachine: "Fitness Machine"
        }
    }
}
