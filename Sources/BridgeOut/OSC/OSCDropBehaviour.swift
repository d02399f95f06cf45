/// What the heart-rate parameters show while the source is dropped (`on_drop`).
public enum OSCDropBehaviour: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The heart rate (and RR interval) go to 0.
    case zero
    /// The last heart rate (and RR interval) stay.
    case hold

    /// The spelling in the configuration.
    public var description: String { rawValue }
}
