/// How a measurement reached the host.
public enum MeasurementPath: String, Hashable, Sendable, Codable, CaseIterable {
    /// A notification on a connected link: full data (RR intervals, energy, battery).
    case connection
    /// A strap's advertisement, heard without a connection: heart rate only, no RR intervals.
    case advertisement
}
