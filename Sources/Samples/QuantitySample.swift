public import FoundationEssentials

/// A measured quantity over a time span, from one sensor.
public struct QuantitySample: Hashable, Sendable, Codable {
    /// What was measured.
    public let type: QuantityType
    /// The value; its unit fits ``type``'s dimension.
    public let quantity: Quantity
    /// When the measurement starts.
    public let start: Date
    /// When it ends (equal to ``start`` for an instantaneous reading).
    public let end: Date
    /// The sensor it came from.
    public let source: SampleSource
    /// Contact state, raw RR value, and similar facts.
    public let metadata: SampleMetadata

    /// Creates a sample; throws when the unit does not fit the type or the sample ends before it starts.
    public init(
        type: QuantityType, quantity: Quantity, start: Date, end: Date, source: SampleSource,
        metadata: SampleMetadata = SampleMetadata()
    ) throws(QuantityError) {
        guard quantity.isCompatible(with: type.canonicalUnit) else {
            throw .unitNotAllowed(quantity.unit, for: type)
        }
        guard end >= start else { throw .endBeforeStart }
        self.type = type
        self.quantity = quantity
        self.start = start
        self.end = end
        self.source = source
        self.metadata = metadata
    }

    /// Builds a sample in the type's canonical unit, which always fits.
    init(
        type: QuantityType, value: Double, start: Date, end: Date, source: SampleSource,
        metadata: SampleMetadata = SampleMetadata()
    ) {
        self.type = type
        self.quantity = Quantity(unit: type.canonicalUnit, value: value)
        self.start = start
        self.end = max(start, end)
        self.source = source
        self.metadata = metadata
    }

    /// The value in the type's canonical unit.
    public var canonicalValue: Double { (try? quantity.doubleValue(for: type.canonicalUnit)) ?? quantity.value }

    /// The span the sample covers, in seconds.
    public var duration: TimeInterval { end.timeIntervalSince(start) }
}
