public import Samples

/// Heart-rate or power zones given by ascending upper boundaries: N boundaries make N + 1 zones,
/// 3 to 9 of them, the first open below and the last open above.
public struct ZoneConfiguration: Hashable, Sendable, Codable {
    /// Heart rate or cycling power.
    public let quantityType: QuantityType
    /// Upper boundaries of zones 1 … N−1, in the type's canonical unit, strictly ascending.
    public let boundaries: [Double]

    /// The fewest zones a configuration may have.
    public static let minimumZoneCount = 3
    /// The most zones a configuration may have.
    public static let maximumZoneCount = 9

    /// Creates zones from boundaries with units; each must fit the type's dimension.
    public init(quantityType: QuantityType, boundaries: [Quantity]) throws(ZoneConfigurationError) {
        var values: [Double] = []
        for (index, boundary) in boundaries.enumerated() {
            guard boundary.isCompatible(with: quantityType.canonicalUnit) else {
                throw .wrongUnit(index: index, unit: boundary.unit, expected: quantityType.canonicalUnit)
            }
            values.append(boundary.value * boundary.unit.factor / quantityType.canonicalUnit.factor)
        }
        try self.init(quantityType: quantityType, boundaryValues: values)
    }

    /// Creates zones from boundaries in the type's canonical unit (count/min or W).
    public init(quantityType: QuantityType, boundaryValues: [Double]) throws(ZoneConfigurationError) {
        guard quantityType == .heartRate || quantityType == .cyclingPower else { throw .unsupportedType(quantityType) }
        let zoneCount = boundaryValues.count + 1
        guard zoneCount >= Self.minimumZoneCount else { throw .tooFewZones(zoneCount) }
        guard zoneCount <= Self.maximumZoneCount else { throw .tooManyZones(zoneCount) }
        for (index, value) in boundaryValues.enumerated() {
            guard value.isFinite, value > 0 else { throw .notPositive(index: index, value: value) }
            if index > 0, value <= boundaryValues[index - 1] {
                throw .notAscending(index: index, value: value, previous: boundaryValues[index - 1])
            }
        }
        self.quantityType = quantityType
        self.boundaries = boundaryValues
    }

    /// The zones, in order.
    public var zones: [WorkoutZone] {
        (0...boundaries.count).map { position in
            WorkoutZone(
                index: position + 1, lower: position == 0 ? nil : boundaries[position - 1],
                upper: position == boundaries.count ? nil : boundaries[position])
        }
    }

    /// The 0-based position of the zone holding `value` (a boundary value belongs to the zone above).
    public func position(of value: Double) -> Int {
        var low = 0
        var high = boundaries.count
        while low < high {
            let middle = (low + high) / 2
            if value < boundaries[middle] { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

/// Why a zone configuration was refused.
public enum ZoneConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Zones exist for heart rate and cycling power only.
    case unsupportedType(QuantityType)
    /// Fewer than 3 zones.
    case tooFewZones(Int)
    /// More than 9 zones.
    case tooManyZones(Int)
    /// A boundary's unit does not fit the type.
    case wrongUnit(index: Int, unit: QuantityUnit, expected: QuantityUnit)
    /// A boundary is zero, negative or not finite.
    case notPositive(index: Int, value: Double)
    /// A boundary is not above the one before it.
    case notAscending(index: Int, value: Double, previous: Double)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .unsupportedType(let type): "zones are for heartRate or cyclingPower, not \(type.rawValue)"
        case .tooFewZones(let count): "\(count) zones: at least 3 are needed (2 or more boundaries)"
        case .tooManyZones(let count): "\(count) zones: at most 9 are allowed (8 boundaries)"
        case .wrongUnit(let index, let unit, let expected):
            "boundary \(index + 1) is in \(unit.symbol), which does not convert to \(expected.symbol)"
        case .notPositive(let index, let value): "boundary \(index + 1) (\(value)) must be a positive number"
        case .notAscending(let index, let value, let previous):
            "boundary \(index + 1) (\(value)) must be above boundary \(index) (\(previous))"
        }
    }
}
