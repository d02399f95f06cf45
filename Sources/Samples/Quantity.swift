/// A value with its unit.
public struct Quantity: Hashable, Sendable, CustomStringConvertible, Codable {
    public let unit: QuantityUnit
    /// The value in ``unit``.
    public let value: Double

    /// Creates a quantity.
    public init(unit: QuantityUnit, value: Double) {
        self.unit = unit
        self.value = value
    }

    /// The value converted to `target`; throws when the dimensions differ.
    public func doubleValue(for target: QuantityUnit) throws(QuantityError) -> Double {
        guard unit.isCompatible(with: target) else { throw .incompatibleUnits(unit, target) }
        if unit == target { return value }
        return value * unit.factor / target.factor
    }

    /// Whether the quantity converts to `unit`.
    public func isCompatible(with unit: QuantityUnit) -> Bool { self.unit.isCompatible(with: unit) }

    /// `85 count/min`.
    public var description: String { "\(value) \(unit.symbol)" }
}

/// Why a quantity or sample could not be made or converted.
public enum QuantityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The two units measure different things.
    case incompatibleUnits(QuantityUnit, QuantityUnit)
    /// A sample's quantity does not fit its type's dimension.
    case unitNotAllowed(QuantityUnit, for: QuantityType)
    /// A sample ends before it starts.
    case endBeforeStart

    /// One line for logs.
    public var description: String {
        switch self {
        case .incompatibleUnits(let from, let to): "cannot convert \(from.symbol) to \(to.symbol)"
        case .unitNotAllowed(let unit, let type): "unit \(unit.symbol) does not fit quantity type \(type.rawValue)"
        case .endBeforeStart: "sample ends before it starts"
        }
    }
}
