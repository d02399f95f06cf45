public import Samples

/// Changes since an anchor, for clients that sync.
public struct SampleChanges: Sendable {
    /// Samples added since the anchor, with their store identifiers.
    public var added: [(id: Int64, sample: QuantitySample)]
    /// Identifiers of samples deleted since the anchor.
    public var deleted: [Int64]
    /// The anchor to pass next time.
    public var anchor: Int64

    /// Changes up to `anchor`.
    public init(added: [(id: Int64, sample: QuantitySample)], deleted: [Int64], anchor: Int64) {
        self.added = added
        self.deleted = deleted
        self.anchor = anchor
    }

    /// One answer from what a backend read past `start`: additions (each row's id, and its sample
    /// when the row decoded) and tombstones (anchor, deleted sample's id), each in id or anchor
    /// order and each at most `limit` long. Additions and tombstones share one sequence, so the
    /// first `limit` changes of the two together go out, and the anchor is the last one's: an
    /// anchor never passes a change not handed out. When neither list was cut at `limit` and
    /// together they fit, everything up to `horizon` (what the store has seen) is covered.
    package static func page(
        added: [(id: Int64, sample: QuantitySample?)], tombstones: [(anchor: Int64, sampleID: Int64)], limit: Int,
        start: Int64, horizon: Int64
    ) -> SampleChanges {
        var cut = Int64.max
        if added.count >= limit, let last = added.last { cut = min(cut, last.id) }
        if tombstones.count >= limit, let last = tombstones.last { cut = min(cut, last.anchor) }
        let keys = (added.map(\.id) + tombstones.map(\.anchor)).filter { $0 <= cut }.sorted()
        if keys.count > limit { cut = keys[limit - 1] }
        let anchor = cut == Int64.max ? max(horizon, start) : cut
        return SampleChanges(
            added: added.compactMap { row in row.id <= anchor ? row.sample.map { (id: row.id, sample: $0) } : nil },
            deleted: tombstones.filter { $0.anchor <= anchor }.map(\.sampleID), anchor: anchor)
    }
}
