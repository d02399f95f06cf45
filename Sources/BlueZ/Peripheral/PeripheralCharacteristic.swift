import GATT

/// A characteristic hrbridge publishes as a peripheral, and how it may be used.
enum PeripheralCharacteristic: Hashable, Sendable, CaseIterable {
    /// Heart Rate Measurement (0x2A37): notify only; bluetoothd adds the CCC descriptor itself.
    case heartRateMeasurement
    /// Body Sensor Location (0x2A38): read, one byte.
    case bodySensorLocation
    /// Heart Rate Control Point (0x2A39): write; `0x01` resets energy expended.
    case controlPoint
    /// Battery Level (0x2A19): read and notify.
    case batteryLevel
    /// Manufacturer Name String (0x2A29): read.
    case manufacturerName
    /// Model Number String (0x2A24): read.
    case modelNumber

    var characteristic: GATTCharacteristic {
        switch self {
        case .heartRateMeasurement: .heartRateMeasurement
        case .bodySensorLocation: .bodySensorLocation
        case .controlPoint: .heartRateControlPoint
        case .batteryLevel: .batteryLevel
        case .manufacturerName: .manufacturerName
        case .modelNumber: .modelNumber
        }
    }

    /// BlueZ's `Flags` property.
    var flags: [String] {
        switch self {
        case .heartRateMeasurement: ["notify"]
        case .bodySensorLocation, .manufacturerName, .modelNumber: ["read"]
        case .controlPoint: ["write"]
        case .batteryLevel: ["read", "notify"]
        }
    }

    var isReadable: Bool { flags.contains("read") }
    var notifies: Bool { flags.contains("notify") }
    var isWritable: Bool { flags.contains("write") }
}
