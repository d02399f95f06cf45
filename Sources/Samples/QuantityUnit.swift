/// A unit of measure with its dimension and factor to the dimension's base unit.
///
/// Units of one dimension convert into each other; across dimensions conversion throws.
public struct QuantityUnit: Hashable, Sendable, CustomStringConvertible, Codable {
    /// What a unit measures.
    public enum Dimension: String, Hashable, Sendable, Codable {
        /// Events per minute (base: count/min).
        case frequency
        /// Duration (base: s).
        case time
        /// Energy (base: kJ).
        case energy
        /// Power (base: W).
        case power
        /// Speed (base: m/s).
        case speed
        /// Length (base: m).
        case length
        /// A part of a whole (base: 1).
        case fraction
    }

    /// The printed symbol: `count/min`, `kJ`.
    public let symbol: String
    /// What the unit measures.
    public let dimension: Dimension
    /// How many base units one of this unit is.
    public let factor: Double

    private init(_ symbol: String, _ dimension: Dimension, _ factor: Double) {
        self.symbol = symbol
        self.dimension = dimension
        self.factor = factor
    }

    /// Beats or steps per minute.
    public static let countPerMinute = QuantityUnit("count/min", .frequency, 1)
    public static let revolutionsPerMinute = QuantityUnit("rpm", .frequency, 1)
    /// Seconds.
    public static let second = QuantityUnit("s", .time, 1)
    /// Milliseconds.
    public static let millisecond = QuantityUnit("ms", .time, 0.001)
    /// Kilojoules.
    public static let kilojoule = QuantityUnit("kJ", .energy, 1)
    /// Kilocalories (thermochemical, 4.184 kJ).
    public static let kilocalorie = QuantityUnit("kcal", .energy, 4.184)
    /// Watts.
    public static let watt = QuantityUnit("W", .power, 1)
    /// Metres per second.
    public static let metersPerSecond = QuantityUnit("m/s", .speed, 1)
    /// Kilometres per hour.
    public static let kilometersPerHour = QuantityUnit("km/h", .speed, 1 / 3.6)
    /// Metres.
    public static let meter = QuantityUnit("m", .length, 1)
    /// Kilometres.
    public static let kilometer = QuantityUnit("km", .length, 1000)
    public static let percent = QuantityUnit("%", .fraction, 0.01)

    /// Every unit hrbridge knows.
    public static let all: [QuantityUnit] = [
        .countPerMinute, .revolutionsPerMinute, .second, .millisecond, .kilojoule, .kilocalorie, .watt,
        .metersPerSecond, .kilometersPerHour, .meter, .kilometer, .percent,
    ]

    /// Finds a unit by symbol.
    public init?(symbol: String) {
        guard let unit = Self.all.first(where: { $0.symbol == symbol }) else { return nil }
        self = unit
    }

    /// Whether values convert between the two units.
    public func isCompatible(with other: QuantityUnit) -> Bool { dimension == other.dimension }

    /// The symbol.
    public var description: String { symbol }

    /// Decodes from the symbol.
    public init(from decoder: any Decoder) throws {
        let symbol = try decoder.singleValueContainer().decode(String.self)
        guard let unit = QuantityUnit(symbol: symbol) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "unknown unit '\(symbol)'"))
        }
        self = unit
    }

    /// Encodes as the symbol.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(symbol)
    }
}
