public import Foundation
public import Samples

/// One zone of a zone configuration: `index` counts from 1; the first zone has no lower bound and
/// the last no upper bound. A value belongs to the zone whose range `lower ..< upper` holds it.
public struct WorkoutZone: Hashable, Sendable, Codable {
    /// 1-based position.
    public var index: Int
    /// Inclusive lower bound, in the type's canonical unit; `nil` for the first zone.
    public var lower: Double?
    /// Exclusive upper bound; `nil` for the last zone.
    public var upper: Double?

    /// Creates a zone.
    public init(index: Int, lower: Double?, upper: Double?) {
        self.index = index
        self.lower = lower
        self.upper = upper
    }
}

/// Time spent in one zone.
public struct ZoneDuration: Hashable, Sendable, Codable {
    public var zone: WorkoutZone
    /// Seconds attributed to it.
    public var duration: Double

    /// Creates a duration.
    public init(zone: WorkoutZone, duration: Double) {
        self.zone = zone
        self.duration = duration
    }
}

/// A zone configuration with the time spent in each zone.
public struct ZoneGroup: Hashable, Sendable, Codable {
    /// The zones.
    public var configuration: ZoneConfiguration
    /// One duration per zone, in zone order.
    public var durations: [ZoneDuration]

    /// Creates a group.
    public init(configuration: ZoneConfiguration, durations: [ZoneDuration]) {
        self.configuration = configuration
        self.durations = durations
    }

    /// The sum of the durations.
    public var totalDuration: Double { durations.reduce(0) { $0 + $1.duration } }
}

/// Sent by the builder only when the current zone changes.
public struct ZoneUpdate: Hashable, Sendable, Codable {
    /// The quantity type (heart rate or cycling power).
    public var type: QuantityType
    /// The zone now, with its cumulative duration.
    public var current: ZoneDuration
    /// The zone before, with its cumulative duration; `nil` for the first sample.
    public var previous: ZoneDuration?
    /// Cumulative durations of every zone.
    public var group: ZoneGroup
    /// The time of the last sample processed.
    public var lastSampleProcessedDate: Date

    /// Creates an update.
    public init(
        type: QuantityType, current: ZoneDuration, previous: ZoneDuration?, group: ZoneGroup,
        lastSampleProcessedDate: Date
    ) {
        self.type = type
        self.current = current
        self.previous = previous
        self.group = group
        self.lastSampleProcessedDate = lastSampleProcessedDate
    }
}
