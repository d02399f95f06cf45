public import FoundationEssentials
public import GATT

/// Why a sensor's connection changed.
public enum DisconnectReason: Hashable, Sendable, CustomStringConvertible {
    /// hrbridge asked for it.
    case requested
    /// The link dropped: out of range, strap taken off, battery out.
    case linkLost
    /// A connection attempt timed out.
    case timeout
    /// The adapter went away or was powered off.
    case adapterUnavailable
    /// Anything else, with the stack's words.
    case failed(String)

    /// A short phrase for logs and status lines.
    public var description: String {
        switch self {
        case .requested: "requested"
        case .linkLost: "link lost"
        case .timeout: "timeout"
        case .adapterUnavailable: "adapter unavailable"
        case .failed(let message): "failed: \(message)"
        }
    }
}

/// Where a sensor's connection is.
public enum ConnectionState: Hashable, Sendable {
    /// Not connected, with the reason it is not.
    case disconnected(DisconnectReason)
    /// A connection attempt is under way.
    case connecting
    /// Connected; services may not be resolved yet.
    case connected
    /// Connected with services resolved and notifications on: measurements flow.
    case ready
}

/// One decoded frame from a sensor, with the host time it was received.
public struct SensorMeasurement: Hashable, Sendable {
    /// The sensor it came from.
    public var sensor: SensorIdentity
    /// The characteristic that carried it.
    public var characteristic: GATTCharacteristic
    /// The decoded value.
    public var value: GATTValue
    /// When the host received the notification.
    public var receivedAt: Date
    /// How it came: a notification on a link, or an advertisement heard without one.
    public var via: MeasurementPath
    /// Whether its link is to a bonded strap (BlueZ holds its key, so the link is encrypted with
    /// it): only then is the strap the one paired, not anyone repeating its address.
    public var bonded: Bool

    /// Creates a measurement.
    public init(
        sensor: SensorIdentity, characteristic: GATTCharacteristic, value: GATTValue, receivedAt: Date,
        via: MeasurementPath = .connection, bonded: Bool = false
    ) {
        self.sensor = sensor
        self.characteristic = characteristic
        self.value = value
        self.receivedAt = receivedAt
        self.via = via
        self.bonded = bonded && via == .connection
    }
}

/// A sensor seen while discovering.
public struct DiscoveredSensor: Hashable, Sendable {
    /// Who it is.
    public var identity: SensorIdentity
    /// Signal strength in dBm, when known.
    public var rssi: Int?
    /// The services it advertises.
    public var services: Set<GATTService>

    /// Creates a discovery record.
    public init(identity: SensorIdentity, rssi: Int?, services: Set<GATTService>) {
        self.identity = identity
        self.rssi = rssi
        self.services = services
    }
}

/// Device Information strings read once per connection.
public struct DeviceInformation: Hashable, Sendable, Codable {
    /// Manufacturer name (0x2A29).
    public var manufacturerName: String?
    /// Model number (0x2A24).
    public var modelNumber: String?
    /// Serial number (0x2A25).
    public var serialNumber: String?
    /// Firmware revision (0x2A26).
    public var firmwareRevision: String?
    /// Hardware revision (0x2A27).
    public var hardwareRevision: String?
    /// Software revision (0x2A28).
    public var softwareRevision: String?

    /// Creates a record.
    public init(
        manufacturerName: String? = nil, modelNumber: String? = nil, serialNumber: String? = nil,
        firmwareRevision: String? = nil, hardwareRevision: String? = nil, softwareRevision: String? = nil
    ) {
        self.manufacturerName = manufacturerName
        self.modelNumber = modelNumber
        self.serialNumber = serialNumber
        self.firmwareRevision = firmwareRevision
        self.hardwareRevision = hardwareRevision
        self.softwareRevision = softwareRevision
    }
}

/// Everything an adapter reports, in the order it happened.
public enum SensorEvent: Hashable, Sendable {
    /// A sensor matching the discovery filter was seen for the first time.
    case discovered(DiscoveredSensor)
    /// A known sensor advertised again, with its signal strength.
    case updated(SensorIdentity, rssi: Int?)
    /// A sensor is no longer seen.
    case lost(SensorIdentity)
    /// A sensor's connection changed.
    case connectionChanged(SensorIdentity, ConnectionState)
    /// A sensor's services are resolved and subscribed.
    case servicesReady(SensorIdentity, Set<GATTService>)
    /// A decoded frame.
    case measurement(SensorMeasurement)
    /// Battery level in percent.
    case batteryLevel(SensorIdentity, UInt8)
    /// Device Information strings.
    case deviceInformation(SensorIdentity, DeviceInformation)
    /// Where the sensor sits on the body.
    case bodySensorLocation(SensorIdentity, BodySensorLocation)
    /// A frame the decoder refused: counted and logged, and the stream goes on.
    case decodingFailed(SensorIdentity, GATTDecodingError, bytes: [UInt8])
    /// A sensor's advertised manufacturer data that the broadcast decoder refused.
    case advertisementRefused(SensorIdentity, AdvertisementDecodingError)
    /// The adapter became usable, or stopped being usable (powered off, unplugged, bluetoothd gone).
    case adapterChanged(String, AdapterAvailability)
    /// A heart-rate strap became paired while the adapter ran (by hrbridge or another client, such
    /// as `hrbridge pair` beside the daemon): it is now the user's own.
    case paired(SensorIdentity)
    /// The raw signals a strap offers (its PMD control point read after connecting).
    case waveformsAvailable(SensorIdentity, Set<WaveformKind>)
    /// A frame of a raw signal, placed on the host clock.
    case waveform(SensorWaveform)
    /// A raw-signal frame the strict decoder refused: counted and logged, and the stream goes on.
    case waveformRefused(SensorIdentity, WaveformKind, PMDDecodingError)
}

extension SensorEvent {
    /// The address of the sensor the event is about (nil for the adapter's own state): what a
    /// session's subscription is routed by.
    public var sensorAddress: String? {
        switch self {
        case .discovered(let sensor): sensor.identity.address
        case .updated(let sensor, _), .lost(let sensor), .connectionChanged(let sensor, _),
            .servicesReady(let sensor, _),
            .batteryLevel(let sensor, _), .deviceInformation(let sensor, _), .bodySensorLocation(let sensor, _),
            .decodingFailed(let sensor, _, _), .advertisementRefused(let sensor, _), .paired(let sensor),
            .waveformsAvailable(let sensor, _), .waveformRefused(let sensor, _, _):
            sensor.address
        case .waveform(let waveform): waveform.sensor.address
        case .measurement(let measurement): measurement.sensor.address
        case .adapterChanged: nil
        }
    }
}
