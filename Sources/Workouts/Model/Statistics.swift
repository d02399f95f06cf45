public import Foundation
public import Samples

/// Aggregates of one quantity type over a workout or an activity.
///
/// Discrete types (heart rate, power, cadence, speed) have minimum, maximum, average, most recent
/// and a duration-weighted average; cumulative types (energy, distance) have a sum. A per-device
/// type (battery level) has only the primary source's most recent value at the top level, and
/// each device's figures in ``bySource``.
public struct Statistics: Hashable, Sendable, Codable {
    /// The quantity type.
    public var type: QuantityType
    /// The unit every value is in (the type's canonical unit).
    public var unit: QuantityUnit
    /// How many samples were aggregated.
    public var sampleCount: Int
    /// The start of the earliest sample.
    public var startDate: Date?
    /// The end of the latest sample.
    public var endDate: Date?
    /// Smallest value (discrete types).
    public var minimum: Double?
    /// Largest value (discrete types).
    public var maximum: Double?
    /// Arithmetic mean of the values (discrete types).
    public var average: Double?
    /// Mean weighted by how long each value held (until the next sample of its source, at most 5 s).
    public var durationWeightedAverage: Double?
    /// The latest value by arrival (discrete types).
    public var mostRecent: Double?
    /// When the latest value was measured.
    public var mostRecentDate: Date?
    /// Sum of the values (cumulative types).
    public var sum: Double?
    /// The same aggregates for each source that fed the type.
    public var bySource: [SampleSource: Statistics]

    /// Empty statistics for `type`.
    public init(type: QuantityType) {
        self.type = type
        self.unit = type.canonicalUnit
        self.sampleCount = 0
        self.bySource = [:]
    }
}
