public import Foundation

/// Something that happened during a workout.
public struct WorkoutEvent: Hashable, Sendable, Codable {
    /// The kind of event.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// The workout paused.
        case pause
        /// The workout resumed.
        case resume
        /// A lap: laps never overlap.
        case lap
        /// A segment: segments may overlap.
        case segment
        /// A point in time worth remembering.
        case marker
    }

    /// The kind of event.
    public var kind: Kind
    /// When it happened: an instant for pause, resume and marker; a span for lap and segment.
    public var dateInterval: DateInterval
    /// Free-form metadata.
    public var metadata: [String: String]

    /// Creates an event spanning `dateInterval`.
    public init(kind: Kind, dateInterval: DateInterval, metadata: [String: String] = [:]) {
        self.kind = kind
        self.dateInterval = dateInterval
        self.metadata = metadata
    }

    /// Creates an instant event.
    public init(kind: Kind, date: Date, metadata: [String: String] = [:]) {
        self.init(kind: kind, dateInterval: DateInterval(start: date, duration: 0), metadata: metadata)
    }
}
