public import Samples
public import WorkoutStore

/// `GET /v1/samples/changes`: the stored samples of one type added and deleted since an anchor,
/// as HealthKit's anchored object query hands them out. A client keeps `anchor` and passes it
/// back next time, so it is sent each change once.
public struct SampleChangesJSON: Codable, Sendable, Equatable {
    /// A sample added since the anchor, with the store's identifier (what `deleted` names later).
    public struct Added: Codable, Sendable, Equatable {
        public var id: Int64
        public var sample: SampleJSON
    }

    /// The quantity type asked for.
    public var type: String
    /// The anchor to pass next time.
    public var anchor: Int64
    /// Samples added since the anchor, oldest identifier first.
    public var added: [Added]
    /// Identifiers of samples deleted since the anchor (with their workout).
    public var deleted: [Int64]

    /// The changes' JSON.
    public init(type: QuantityType, _ changes: SampleChanges) {
        self.type = type.rawValue
        anchor = changes.anchor
        added = changes.added.map { Added(id: $0.id, sample: SampleJSON($0.sample)) }
        deleted = changes.deleted
    }
}
