/// A decoded value of any characteristic hrbridge knows: the output of the decoding layer.
public enum GATTValue: Hashable, Sendable {
    /// Heart Rate Measurement (0x2A37).
    case heartRateMeasurement(HeartRateMeasurement)
    /// Body Sensor Location (0x2A38).
    case bodySensorLocation(BodySensorLocation)
    /// Heart Rate Control Point (0x2A39), as written.
    case heartRateControlPoint(HeartRateControlPoint)
    /// Battery Level (0x2A19).
    case batteryLevel(BatteryLevel)
    /// One of the Device Information strings.
    case deviceInformation(GATTCharacteristic, String)
    /// Cycling Power Measurement (0x2A63).
    case cyclingPowerMeasurement(CyclingPowerMeasurement)
    /// CSC Measurement (0x2A5B).
    case cscMeasurement(CSCMeasurement)
    /// RSC Measurement (0x2A53).
    case rscMeasurement(RSCMeasurement)
    /// Indoor Bike Data (0x2AD2).
    case indoorBikeData(IndoorBikeData)
    /// Treadmill Data (0x2ACD).
    case treadmillData(TreadmillData)

    /// Decodes a frame of `characteristic` with that characteristic's strict decoder.
    public init(characteristic: GATTCharacteristic, bytes: [UInt8]) throws(GATTDecodingError) {
        switch characteristic {
        case .heartRateMeasurement: self = .heartRateMeasurement(try HeartRateMeasurement(bytes: bytes))
        case .bodySensorLocation: self = .bodySensorLocation(try BodySensorLocation(bytes: bytes))
        case .heartRateControlPoint:
            let reader = ByteReader(bytes, characteristic: characteristic)
            guard bytes.count == 1 else { throw reader.error("opCode", .invalidLength(expected: 1), at: 0) }
            guard let command = HeartRateControlPoint(rawValue: bytes[0]) else {
                throw reader.error("opCode", .outOfRange(value: Int(bytes[0]), allowed: 1...1), at: 0)
            }
            self = .heartRateControlPoint(command)
        case .batteryLevel: self = .batteryLevel(try BatteryLevel(bytes: bytes))
        case .manufacturerName, .modelNumber, .serialNumber, .firmwareRevision, .hardwareRevision, .softwareRevision:
            self = .deviceInformation(
                characteristic, try DeviceInformationString.decode(bytes, characteristic: characteristic))
        case .cyclingPowerMeasurement: self = .cyclingPowerMeasurement(try CyclingPowerMeasurement(bytes: bytes))
        case .cscMeasurement: self = .cscMeasurement(try CSCMeasurement(bytes: bytes))
        case .rscMeasurement: self = .rscMeasurement(try RSCMeasurement(bytes: bytes))
        case .indoorBikeData: self = .indoorBikeData(try IndoorBikeData(bytes: bytes))
        case .treadmillData: self = .treadmillData(try TreadmillData(bytes: bytes))
        }
    }

    /// The frame that encodes this value, for the characteristics with an encoder; `nil` for the
    /// Device Information strings and the Fitness Machine frames, which are only decoded.
    public var encoded: [UInt8]? {
        switch self {
        case .heartRateMeasurement(let measurement): measurement.encoded()
        case .bodySensorLocation(let location): location.encoded()
        case .heartRateControlPoint(let command): command.encoded()
        case .batteryLevel(let level): level.encoded()
        case .cyclingPowerMeasurement(let measurement): measurement.encoded()
        case .cscMeasurement(let measurement): measurement.encoded()
        case .rscMeasurement(let measurement): measurement.encoded()
        case .deviceInformation, .indoorBikeData, .treadmillData: nil
        }
    }
}
