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
}
