/// The GATT characteristics hrbridge decodes or writes.
public enum GATTCharacteristic: UInt16, CaseIterable, Sendable {
    /// Heart Rate Measurement (0x2A37), notified.
    case heartRateMeasurement = 0x2A37
    /// Body Sensor Location (0x2A38), read.
    case bodySensorLocation = 0x2A38
    /// Heart Rate Control Point (0x2A39), written.
    case heartRateControlPoint = 0x2A39
    /// Battery Level (0x2A19), read and notified.
    case batteryLevel = 0x2A19
    /// Manufacturer Name String (0x2A29).
    case manufacturerName = 0x2A29
    /// Model Number String (0x2A24).
    case modelNumber = 0x2A24
    /// Serial Number String (0x2A25).
    case serialNumber = 0x2A25
    /// Firmware Revision String (0x2A26).
    case firmwareRevision = 0x2A26
    /// Hardware Revision String (0x2A27).
    case hardwareRevision = 0x2A27
    /// Software Revision String (0x2A28).
    case softwareRevision = 0x2A28
    /// Cycling Power Measurement (0x2A63), notified.
    case cyclingPowerMeasurement = 0x2A63
    /// CSC Measurement (0x2A5B), notified.
    case cscMeasurement = 0x2A5B
    /// RSC Measurement (0x2A53), notified.
    case rscMeasurement = 0x2A53
    /// Fitness Machine Indoor Bike Data (0x2AD2), notified.
    case indoorBikeData = 0x2AD2
    /// Fitness Machine Treadmill Data (0x2ACD), notified.
    case treadmillData = 0x2ACD

    /// The characteristic's 128-bit UUID.
    public var uuid: BluetoothUUID { BluetoothUUID(rawValue) }

    /// The 16-bit UUID as four lowercase hex digits, with `0x`: `0x2a37`.
    public var shortUUIDString: String { "0x" + uuid.shortDescription }

    /// Finds the characteristic a UUID names, if hrbridge knows it.
    public init?(uuid: BluetoothUUID) {
        guard let short = uuid.shortValue else { return nil }
        self.init(rawValue: short)
    }

    /// Finds a characteristic by UUID (`2a37`, `0x2A37`, 128-bit) or command-line name (`heart-rate-measurement`).
    public init?(argument: String) {
        let lowered = argument.lowercased()
        if let match = Self.allCases.first(where: { $0.commandLineName == lowered }) {
            self = match
        } else if let uuid = BluetoothUUID(lowered), let match = Self(uuid: uuid) {
            self = match
        } else {
            return nil
        }
    }

    /// The service the characteristic belongs to.
    public var service: GATTService {
        switch self {
        case .heartRateMeasurement, .bodySensorLocation, .heartRateControlPoint: .heartRate
        case .batteryLevel: .battery
        case .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision:
            .deviceInformation
        case .cyclingPowerMeasurement: .cyclingPower
        case .cscMeasurement: .cyclingSpeedAndCadence
        case .rscMeasurement: .runningSpeedAndCadence
        case .indoorBikeData, .treadmillData: .fitnessMachine
        }
    }

    /// The characteristic's name in the Bluetooth SIG's assigned numbers.
    public var name: String {
        switch self {
        case .heartRateMeasurement: "Heart Rate Measurement"
        case .bodySensorLocation: "Body Sensor Location"
        case .heartRateControlPoint: "Heart Rate Control Point"
        case .batteryLevel: "Battery Level"
        case .manufacturerName: "Manufacturer Name String"
        case .modelNumber: "Model Number String"
        case .serialNumber: "Serial Number String"
        case .firmwareRevision: "Firmware Revision String"
        case .hardwareRevision: "Hardware Revision String"
        case .softwareRevision: "Software Revision String"
        case .cyclingPowerMeasurement: "Cycling Power Measurement"
        case .cscMeasurement: "CSC Measurement"
        case .rscMeasurement: "RSC Measurement"
        case .indoorBikeData: "Indoor Bike Data"
        case .treadmillData: "Treadmill Data"
        }
    }

    /// The kebab-case name the command line accepts: `heart-rate-measurement`.
    public var commandLineName: String {
        switch self {
        case .heartRateMeasurement: "heart-rate-measurement"
        case .bodySensorLocation: "body-sensor-location"
        case .heartRateControlPoint: "heart-rate-control-point"
        case .batteryLevel: "battery-level"
        case .manufacturerName: "manufacturer-name"
        case .modelNumber: "model-number"
        case .serialNumber: "serial-number"
        case .firmwareRevision: "firmware-revision"
        case .hardwareRevision: "hardware-revision"
        case .softwareRevision: "software-revision"
        case .cyclingPowerMeasurement: "cycling-power-measurement"
        case .cscMeasurement: "csc-measurement"
        case .rscMeasurement: "rsc-measurement"
        case .indoorBikeData: "indoor-bike-data"
        case .treadmillData: "treadmill-data"
        }
    }
}

extension GATTCharacteristic {
    /// The camelCase name used for the decoded value in JSON and errors: `manufacturerName`.
    public var fieldName: String { String(describing: self) }
}
