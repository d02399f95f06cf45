import Foundation
public import JSONSupport
public import WorkoutStore
import Workouts

/// A stored workout in a list: `{"active","activity","athlete","elapsedTime","end","id","start"}`.
public struct WorkoutListingJSON: Codable, Sendable, Equatable {
    public var id: String
    public var athlete: String
    public var activity: String
    public var start: String
    @Nullable public var end: String?
    @Nullable public var elapsedTime: Double?
    public var active: Bool

    /// The stored workout's listing.
    public init(_ stored: StoredWorkout) {
        id = stored.id.uuidString.lowercased()
        athlete = stored.athlete
        activity = stored.configuration.activityType.rawValue
        start = ISO8601.format(stored.start)
        end = stored.end.map(ISO8601.format)
        elapsedTime = stored.elapsedTime
        active = stored.isActive
    }
}

/// One stored workout: its listing and, once finished, its summary (`GET /v1/workouts/{id}`).
public struct WorkoutDetailJSON: Codable, Sendable, Equatable {
    public var listing: WorkoutListingJSON
    public var summary: WorkoutJSON.Summary?

    private enum Key: String, CodingKey { case summary }

    /// The stored workout's detail.
    public init(_ stored: StoredWorkout) {
        listing = WorkoutListingJSON(stored)
        summary = stored.summary.map(WorkoutJSON.Summary.init)
    }

    /// The listing's keys and `summary` (null while recording).
    public func encode(to encoder: any Encoder) throws {
        try listing.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(summary, forKey: .summary)
    }

    /// Reads what ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        listing = try WorkoutListingJSON(from: decoder)
        summary = try decoder.container(keyedBy: Key.self).decodeIfPresent(WorkoutJSON.Summary.self, forKey: .summary)
    }
}
