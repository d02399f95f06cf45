/// Where a heart-rate sensor sits on the body (0x2A38).
public enum BodySensorLocation: Hashable, Sendable {
    /// Other (0).
    case other
    /// Chest (1).
    case chest
    /// Wrist (2).
    case wrist
    /// Finger (3).
    case finger
    /// Hand (4).
    case hand
    /// Ear lobe (5).
    case earLobe
    /// Foot (6).
    case foot
    /// A value the specification does not define yet, kept as sent.
    case unknown(UInt8)

    /// Creates the location for a raw value.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .chest
        case 2: self = .wrist
        case 3: self = .finger
        case 4: self = .hand
        case 5: self = .earLobe
        case 6: self = .foot
        default: self = .unknown(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .other: 0
        case .chest: 1
        case .wrist: 2
        case .finger: 3
        case .hand: 4
        case .earLobe: 5
        case .foot: 6
        case .unknown(let raw): raw
        }
    }

    /// A camelCase name for output: `chest`, `earLobe`, `unknown`.
    public var name: String {
        switch self {
        case .other: "other"
        case .chest: "chest"
        case .wrist: "wrist"
        case .finger: "finger"
        case .hand: "hand"
        case .earLobe: "earLobe"
        case .foot: "foot"
        case .unknown: "unknown"
        }
    }

    /// Decodes the one-byte value.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        let reader = ByteReader(bytes, characteristic: .bodySensorLocation)
        guard bytes.count == 1 else { throw reader.error("bodySensorLocation", .invalidLength(expected: 1), at: 0) }
        self.init(rawValue: bytes[0])
    }

    /// Encodes the one-byte value.
    public func encoded() -> [UInt8] { [rawValue] }
}
