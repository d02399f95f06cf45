public import Samples

/// What the live builder announces while it collects.
public enum BuilderUpdate: Hashable, Sendable {
    /// Samples of these types were collected.
    case collected(Set<QuantityType>)
    /// An event was added.
    case event(WorkoutEvent)
    /// The current zone changed.
    case zone(ZoneUpdate)
    case activityBegan(WorkoutActivity)
    case activityEnded(WorkoutActivity)
    /// A DFA α1 window of the primary strap was evaluated (every 5 s).
    case heartRateVariability(HRVWindow)
}
