/// What signs a configured strap into a class (`[class] join_via`).
public enum ClassJoinPath: String, Codable, Sendable, CaseIterable {
    /// A link to the strap: a broadcast neither signs it in nor keeps it in range, since any radio
    /// can repeat a strap's address and its heart rate.
    case link
    /// A link or the strap's heart-rate broadcast (an explicit opt-in: anyone nearby can forge one).
    case broadcast
}
