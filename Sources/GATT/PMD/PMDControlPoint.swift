/// Polar's PMD control point (`FB005C81-…`): the commands a client writes, and the answers the
/// strap indicates back (never read: a read returns the features, ``PMDFeatures``).
public enum PMDControlPoint {
    /// The PMD service.
    public static let service = BluetoothUUID(high: 0xFB00_5C80_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    /// The control point: read (features), write (commands), indicate (answers).
    public static let controlPoint = BluetoothUUID(high: 0xFB00_5C81_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    /// The data characteristic: notifications of ``PMDFrame``s.
    public static let data = BluetoothUUID(high: 0xFB00_5C82_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    /// The least ATT MTU an ECG frame fits in: 10 header bytes + 73 × 3 + the 3-byte notification header.
    public static let minimumMTU = 232

    /// A request's operation code.
    public enum Operation: UInt8, Hashable, Sendable {
        case getSettings = 0x01
        case start = 0x02
        case stop = 0x03
    }

    /// One stream setting: its type code and value.
    public enum Setting: Hashable, Sendable {
        /// Samples per second (type 0, u16).
        case sampleRate(UInt16)
        /// Bits per value (type 1, u16).
        case resolution(UInt16)
        /// Full scale, in G for acceleration (type 2, u16).
        case range(UInt16)
        /// Full scale in thousandths (type 3, u32).
        case rangeMilliunit(UInt32)
        /// Channels (type 4, u8).
        case channels(UInt8)
        /// The factor compressed values are scaled by (type 5, float32).
        case factor(Float)

        /// The setting's type code.
        public var type: UInt8 {
            switch self {
            case .sampleRate: 0
            case .resolution: 1
            case .range: 2
            case .rangeMilliunit: 3
            case .channels: 4
            case .factor: 5
            }
        }

        /// Bytes of one value of a setting type; nil for a type this module does not read.
        static func valueSize(of type: UInt8) -> Int? {
            switch type {
            case 0, 1, 2: 2
            case 3, 5: 4
            case 4: 1
            default: nil
            }
        }

        /// `type, count = 1, value LE`, as requests carry it.
        func encoded() -> [UInt8] {
            let value: UInt32 =
                switch self {
                case .sampleRate(let value), .resolution(let value), .range(let value): UInt32(value)
                case .rangeMilliunit(let value): value
                case .channels(let value): UInt32(value)
                case .factor(let value): value.bitPattern
                }
            let size = Self.valueSize(of: type)!
            return [type, 1] + (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
    }

    /// A request.
    public enum Command: Hashable, Sendable {
        /// The settings a measurement offers.
        case getSettings(PMDMeasurementType)
        /// Starts a measurement with these settings.
        case start(PMDMeasurementType, [Setting])
        /// Stops a measurement.
        case stop(PMDMeasurementType)

        /// The operation.
        public var operation: Operation {
            switch self {
            case .getSettings: .getSettings
            case .start: .start
            case .stop: .stop
            }
        }

        /// The measurement it is about.
        public var measurement: PMDMeasurementType {
            switch self {
            case .getSettings(let type), .start(let type, _), .stop(let type): type
            }
        }

        /// The bytes written.
        public func encoded() -> [UInt8] {
            var bytes = [operation.rawValue, measurement.rawValue]
            if case .start(_, let settings) = self { for setting in settings { bytes += setting.encoded() } }
            return bytes
        }

        /// An H10's ECG start: 130 Hz, 14 bits.
        public static let startECG = Command.start(.ecg, [.sampleRate(130), .resolution(14)])

        /// An H10's acceleration start at `rate` Hz and `range` G, 16 bits.
        public static func startAcceleration(rate: UInt16, range: UInt16) -> Command {
            .start(.acceleration, [.sampleRate(rate), .resolution(16), .range(range)])
        }
    }

    /// What the strap said to a request.
    public enum Status: UInt8, Hashable, Sendable, CustomStringConvertible {
        case success = 0
        case invalidOperation = 1
        case invalidMeasurementType = 2
        case notSupported = 3
        case invalidLength = 4
        case invalidParameter = 5
        case alreadyInState = 6
        case invalidResolution = 7
        case invalidSampleRate = 8
        case invalidRange = 9
        case invalidMTU = 10
        case invalidNumberOfChannels = 11
        case invalidState = 12
        case deviceInCharger = 13

        /// Polar's words for it.
        public var description: String {
            switch self {
            case .success: "success"
            case .invalidOperation: "invalid op code"
            case .invalidMeasurementType: "invalid measurement type"
            case .notSupported: "not supported"
            case .invalidLength: "invalid length"
            case .invalidParameter: "invalid parameter"
            case .alreadyInState: "already in state"
            case .invalidResolution: "invalid resolution"
            case .invalidSampleRate: "invalid sample rate"
            case .invalidRange: "invalid range"
            case .invalidMTU: "invalid MTU"
            case .invalidNumberOfChannels: "invalid number of channels"
            case .invalidState: "invalid state"
            case .deviceInCharger: "device in charger"
            }
        }
    }

    /// An indication: `F0 op type status more [settings…]`.
    public struct Response: Hashable, Sendable {
        /// The request's operation code, as echoed.
        public var operation: UInt8
        /// The request's measurement type, as echoed.
        public var measurementType: UInt8
        /// The answer; nil for a code this module does not know.
        public var status: Status?
        /// The raw status code.
        public var statusCode: UInt8
        /// Whether more indications follow.
        public var more: Bool
        /// Settings the answer lists (every value of each), in order; a type this module does not read
        /// ends the list.
        public var settings: [(type: UInt8, values: [UInt32])]

        /// Reads an indication; anything that is not a response to a request is refused.
        public init(bytes: [UInt8]) throws(PMDControlPointError) {
            guard bytes.count >= 4 else { throw .tooShort(bytes.count) }
            guard bytes[0] == 0xF0 else { throw .notAResponse(bytes[0]) }
            operation = bytes[1]
            measurementType = bytes[2] & 0x3F
            statusCode = bytes[3]
            status = Status(rawValue: bytes[3])
            more = bytes.count > 4 && bytes[4] != 0
            settings = []
            var offset = 5
            while offset + 2 <= bytes.count, settings.count < 16 {
                let type = bytes[offset]
                let count = Int(bytes[offset + 1])
                guard let size = Setting.valueSize(of: type), count > 0,
                    offset + 2 + count * size <= bytes.count
                else { break }
                var values: [UInt32] = []
                for index in 0..<count {
                    let start = offset + 2 + index * size
                    values.append((0..<size).reduce(UInt32(0)) { $0 | UInt32(bytes[start + $1]) << (8 * $1) })
                }
                settings.append((type, values))
                offset += 2 + count * size
            }
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.operation == rhs.operation && lhs.measurementType == rhs.measurementType
                && lhs.statusCode == rhs.statusCode && lhs.more == rhs.more
                && lhs.settings.elementsEqual(rhs.settings) { $0.type == $1.type && $0.values == $1.values }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(operation)
            hasher.combine(measurementType)
            hasher.combine(statusCode)
        }

        /// Whether it answers `command`.
        public func answers(_ command: Command) -> Bool {
            operation == command.operation.rawValue && measurementType == command.measurement.rawValue
        }

        /// The factor a start answer gives (compressed acceleration is scaled by it), else 1.
        public var factor: Float {
            settings.first { $0.type == 5 }.flatMap(\.values.first).map(Float.init(bitPattern:)) ?? 1
        }
    }
}

/// A control point indication that is not a response.
public enum PMDControlPointError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer than the 4 bytes of a response header.
    case tooShort(Int)
    /// The first byte is not 0xF0.
    case notAResponse(UInt8)
    /// A features read that is not `0x0F` and a bitmap.
    case notFeatures([UInt8])

    public var description: String {
        switch self {
        case .tooShort(let count): "PMD control point: \(count) bytes, a response has at least 4"
        case .notAResponse(let first): "PMD control point: first byte \(first), a response starts with 0xF0"
        case .notFeatures(let bytes): "PMD control point read: \(bytes.prefix(8)) is not 0x0F and a feature bitmap"
        }
    }
}

/// What a read of the PMD control point says the strap can measure: `0x0F` and a bitmap.
public struct PMDFeatures: Hashable, Sendable {
    /// The measurements offered.
    public var measurements: Set<PMDMeasurementType>

    /// Features as given.
    public init(measurements: Set<PMDMeasurementType>) { self.measurements = measurements }

    /// Reads the control point's value; anything but `0x0F` and a bitmap is refused.
    public init(bytes: [UInt8]) throws(PMDControlPointError) {
        guard bytes.count >= 2, bytes.count <= 64, bytes[0] == 0x0F else { throw .notFeatures(bytes) }
        var found: Set<PMDMeasurementType> = []
        for type in PMDMeasurementType.allCases {
            let bit = Int(type.rawValue)
            let byte = 1 + bit / 8
            if byte < bytes.count, bytes[byte] & (1 << (bit % 8)) != 0 { found.insert(type) }
        }
        measurements = found
    }

    /// The read value: `0x0F` and the bitmap.
    public func encoded() -> [UInt8] {
        var bitmap: [UInt8] = [0, 0]
        for type in measurements { bitmap[Int(type.rawValue) / 8] |= 1 << (type.rawValue % 8) }
        return [0x0F] + bitmap
    }
}
