public import Foundation
public import Samples

/// What a live view of a workout shows, read from the builder at once: one hop to the builder
/// instead of one per figure, and all of them from the same instant.
public struct LiveFigures: Sendable {
    public var elapsedTime: TimeInterval
    public var statistics: [QuantityType: Statistics]
    /// The heart-rate zones in force.
    public var heartRateZones: ZoneConfiguration?
    public var zoneGroups: [ZoneGroup]
    public var heartRateVariability: HeartRateVariability
    public var latestAlpha1: HRVWindow?
    public var activeEnergy: ActiveEnergy
    /// Laps marked so far.
    public var laps: Int
}
