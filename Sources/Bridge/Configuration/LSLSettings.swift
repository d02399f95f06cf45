public import LabStreaming

/// `[lsl]`: the Lab Streaming Layer outlets (nil in the configuration: off).
public struct LSLSettings: Hashable, Sendable {
    /// liblsl's path; nil: ``LSLLibrary/candidates(environment:)``.
    public var library: String?
    /// The streams offered.
    public var kinds: Set<LSLStreamKind> = Set(LSLStreamKind.allCases)
    /// Acceleration's sample rate in Hz.
    public var accRate = 50
    /// Acceleration's range in G.
    public var accRange = 8
    /// The host part of every `source_id`; nil: the machine's host name.
    public var host: String?

    public init() {}
}
