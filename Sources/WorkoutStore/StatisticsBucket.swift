public import Foundation

/// Bucket widths for a statistics collection.
public enum StatisticsInterval: String, Hashable, Sendable, CaseIterable {
    /// One minute.
    case minute
    /// One hour.
    case hour
    /// One day (86,400 s from the anchor; no daylight-saving shifts).
    case day
    /// One week (7 days from the anchor).
    case week

    /// Length in seconds.
    public var seconds: Double {
        switch self {
        case .minute: 60
        case .hour: 3600
        case .day: 86_400
        case .week: 604_800
        }
    }
}

/// One bucket of a statistics collection.
public struct StatisticsBucket: Hashable, Sendable {
    /// The bucket's start.
    public var start: Date
    /// The bucket's end.
    public var end: Date
    /// Samples in the bucket.
    public var count: Int
    /// Average (discrete types).
    public var average: Double?
    /// Minimum (discrete types).
    public var minimum: Double?
    /// Maximum (discrete types).
    public var maximum: Double?
    /// Sum (cumulative types).
    public var sum: Double?

    /// A bucket.
    public init(
        start: Date, end: Date, count: Int, average: Double?, minimum: Double?, maximum: Double?, sum: Double?
    ) {
        self.start = start
        self.end = end
        self.count = count
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.sum = sum
    }
}
